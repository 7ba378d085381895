"""The bound on requests an Observer keeps waiting for their replies.

A capture of a client that pipelines without end (or whose replies were lost for good) would
otherwise grow an Observer's pairing queue for ever. Each Observer keeps only what pairing needs
per request (its pair id and the shape of its reply, never its payload), at most ``max_pending``
of them; beyond, the oldest is forgotten (its reply, if it comes, is unpaired), and one
``ObservedError`` per overflow says so, so the capture shows a row where pairing was given up.
"""

from __future__ import annotations

import enum

from s3p_codec._core.errors import RemoteProtocolError
from s3p_codec._core.observe import ObservedError
from s3p_codec._core.types import Direction

__all__ = ["MAX_PENDING", "PendingBound", "check_max_pending"]

MAX_PENDING = 100_000
"""Requests one Observer keeps awaiting a reply, by default (``Observer(max_pending=...)``)."""


def check_max_pending(value: object) -> int:
    """``value`` if it is a positive int; ValueError otherwise (a bound of 0 pairs nothing)."""
    if type(value) is not int or value < 1:
        raise ValueError(f"max_pending must be a positive int, got {value!r}")
    return value


class PendingBound:
    """Says when a queue of ``limit`` waiting requests is full, and reports it once per overflow
    (again only after the queue fell back under half the bound): one row, not one per request."""

    __slots__ = ("code", "forgotten", "limit", "overflowing")

    def __init__(self, limit: int, code: enum.Enum) -> None:
        self.limit = check_max_pending(limit)
        self.code = code
        self.overflowing = False
        self.forgotten = 0  # requests forgotten, over the Observer's life

    def admit(self, waiting: int, start: int) -> tuple[bool, ObservedError | None]:
        """One more request (beginning at ``start``) is to join ``waiting`` ones: whether the
        oldest must be forgotten first, and the error to report, if this overflow is new."""
        if waiting < self.limit:
            if self.overflowing and waiting < self.limit // 2:
                self.overflowing = False
            return False, None
        self.forgotten += 1
        if self.overflowing:
            return True, None
        self.overflowing = True
        error = RemoteProtocolError(
            f"more than {self.limit} requests await a reply (max_pending): the oldest are"
            " forgotten, and their replies will be unpaired",
            code=self.code,
            fatal=False,
        )
        return True, ObservedError(Direction.CLIENT_TO_SERVER, error, start, 0, True)
