"""``Connection(role)``: the client or server connection for one end of a conversation."""

from __future__ import annotations

from typing import Literal, overload

from s3p_codec._core.types import Role
from s3p_codec.durable.client import ClientConnection
from s3p_codec.durable.limits import Limits
from s3p_codec.durable.server import ServerConnection

__all__ = ["Connection"]


@overload
def Connection(
    role: Literal[Role.CLIENT], limits: Limits | None = None, *, host: str = "localhost"
) -> ClientConnection: ...


@overload
def Connection(
    role: Literal[Role.SERVER], limits: Limits | None = None, *, host: str = "localhost"
) -> ServerConnection: ...


@overload
def Connection(
    role: Role, limits: Limits | None = None, *, host: str = "localhost"
) -> ClientConnection | ServerConnection: ...


def Connection(
    role: Role, limits: Limits | None = None, *, host: str = "localhost"
) -> ClientConnection | ServerConnection:
    """A client-role (``host`` is its ``Host`` header) or server-role connection."""
    if role is Role.CLIENT:
        return ClientConnection(limits, host=host)
    return ServerConnection(limits)
