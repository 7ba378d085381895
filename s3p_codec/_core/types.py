"""Roles, directions and the ``NEED_DATA`` sentinel shared by every codec."""

from __future__ import annotations

import enum
from typing import Literal, TypeAlias

__all__ = ["NEED_DATA", "Direction", "NeedData", "Role"]


class Role(enum.Enum):
    """Which end of a conversation a connection speaks for."""

    CLIENT = "client"
    SERVER = "server"

    @property
    def peer(self) -> Role:
        """The role on the other end of the wire."""
        return Role.SERVER if self is Role.CLIENT else Role.CLIENT


class Direction(enum.Enum):
    """Which way bytes travel; used by Observers, which see both sides of a conversation."""

    CLIENT_TO_SERVER = "client_to_server"
    SERVER_TO_CLIENT = "server_to_client"

    @property
    def sender(self) -> Role:
        """The role that writes bytes travelling this way."""
        return Role.CLIENT if self is Direction.CLIENT_TO_SERVER else Role.SERVER

    @property
    def reverse(self) -> Direction:
        """The opposite direction."""
        if self is Direction.CLIENT_TO_SERVER:
            return Direction.SERVER_TO_CLIENT
        return Direction.CLIENT_TO_SERVER

    @classmethod
    def sent_by(cls, role: Role) -> Direction:
        """The direction of bytes written by ``role``."""
        return cls.CLIENT_TO_SERVER if role is Role.CLIENT else cls.SERVER_TO_CLIENT


class _NeedDataType(enum.Enum):
    # An enum member rather than a bare object() so that ``event is NEED_DATA`` narrows types.
    NEED_DATA = "NEED_DATA"

    def __repr__(self) -> str:
        return "NEED_DATA"

    __str__ = __repr__


NEED_DATA: Literal[_NeedDataType.NEED_DATA] = _NeedDataType.NEED_DATA
"""Returned by ``next_event()`` when the buffered bytes hold no complete event yet."""

NeedData: TypeAlias = Literal[_NeedDataType.NEED_DATA]
"""The type of :data:`NEED_DATA`, for annotations: ``def next_event(self) -> Event | NeedData``."""
