"""The shape of one protocol's fuzz target: what ``s3p_codec.testing.live`` needs to know.

Each protocol module of ``s3p_codec.testing`` has a ``Target`` class of this shape. A user who
speaks a protocol of their own can write one and hand it to ``live.fuzz``.
"""

from __future__ import annotations

from typing import Protocol

from hypothesis import strategies as st

from s3p_codec.testing.strategies import Answer, Malformed, Valid

__all__ = ["Reader", "Target"]


class Reader(Protocol):
    """Reads the server's bytes for one conversation with a client-role codec."""

    def feed(self, data: bytes) -> Answer:
        """Add bytes (``b""``: the server closed) and say what has been answered so far."""
        ...


class Target(Protocol):
    """One protocol as the live fuzzer drives it."""

    name: str
    default_port: int

    def setup(self) -> list[Valid]:
        """Requests sent once before fuzzing, each on its own connection (create a stream)."""
        ...

    def malformed(self) -> st.SearchStrategy[Malformed]:
        """Malformed byte streams and the answer each must get."""
        ...

    def valid(self) -> st.SearchStrategy[Valid]:
        """Well-formed requests, each of which must get a well-formed answer."""
        ...

    def probe(self) -> Valid:
        """A cheap request that a healthy server always answers without an error."""
        ...

    def reader(self, sent: Malformed | Valid) -> Reader:
        """A fresh reader for the answer to ``sent`` (sent on a fresh connection)."""
        ...

    def follow_up(self, sent: Malformed | Valid) -> Valid | None:
        """What to send on the same connection after a non-fatal error (None: nothing)."""
        ...
