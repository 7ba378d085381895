"""``Connection(role)``: the client or server connection for one end of a conversation.

``Connection`` is a real class, the base of ``ClientConnection`` and ``ServerConnection``, so
``isinstance(conn, durable.Connection)`` holds for either. Called itself, it builds the class
registered for the role (``Connection(Role.CLIENT, host=...)`` is a ``ClientConnection``);
the two subclasses keep their own constructors. The dispatch lives in a metaclass ``__call__``
because a ``__new__`` that returned a subclass instance would have that instance's
``__init__`` called again with the role as first argument. Each subclass names its role when it
is defined (``class ClientConnection(Connection, role=Role.CLIENT)``), so this module needs
neither of them at import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, overload

from s3p_codec._core.types import Role
from s3p_codec.durable.limits import Limits

if TYPE_CHECKING:
    from s3p_codec.durable.client import ClientConnection
    from s3p_codec.durable.server import ServerConnection
    from s3p_codec.durable.spans import EventSpans

__all__ = ["Connection"]


class _ByRole(type):
    """Calling ``Connection`` itself builds the connection of the role it is given."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Connection:
            return Connection._for_role(*args, **kwargs)
        return super().__call__(*args, **kwargs)


class Connection(metaclass=_ByRole):
    """One end of a Durable Streams HTTP/1.1 connection: ``Connection(Role.CLIENT, limits,
    host=..., spans=...)`` gives a ``ClientConnection`` (``host`` is its ``Host`` header,
    ``spans`` an optional ``EventSpans``), ``Connection(Role.SERVER, limits)`` a
    ``ServerConnection``; ``spans`` with the server role raises TypeError."""

    _roles: ClassVar[dict[Role, type[Connection]]] = {}

    def __init_subclass__(cls, role: Role | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if role is not None:
            Connection._roles[role] = cls

    # The overloads type ``Connection(role, ...)``; at run time ``_ByRole`` dispatches, and this
    # ``__new__`` only ever makes an instance of a subclass.
    @overload
    def __new__(
        cls,
        role: Literal[Role.CLIENT],
        limits: Limits | None = None,
        *,
        host: str = "localhost",
        spans: EventSpans | None = None,
    ) -> ClientConnection: ...

    @overload
    def __new__(
        cls, role: Literal[Role.SERVER], limits: Limits | None = None, *, host: str = "localhost"
    ) -> ServerConnection: ...

    @overload
    def __new__(  # type: ignore[misc]  # either subclass, as the function this class replaced
        cls,
        role: Role,
        limits: Limits | None = None,
        *,
        host: str = "localhost",
        spans: EventSpans | None = None,
    ) -> ClientConnection | ServerConnection: ...

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        return super().__new__(cls)

    @staticmethod
    def _for_role(
        role: Role,
        limits: Limits | None = None,
        *,
        host: str = "localhost",
        spans: EventSpans | None = None,
    ) -> Any:
        made: Any = Connection._roles[Role.CLIENT if role is Role.CLIENT else Role.SERVER]
        if role is Role.CLIENT:
            return made(limits, host=host, spans=spans)
        if spans is not None:
            raise TypeError("spans measure the responses a client reads; a server reads none")
        return made(limits)
