"""The shape of one protocol's fuzz target: what ``s3p_codec.testing.live`` needs to know.

Each protocol module of ``s3p_codec.testing`` has a ``Target`` class of this shape. A user who
speaks a protocol of their own can write one and hand it to ``live.fuzz``.
"""

from __future__ import annotations

from typing import Any, Protocol

import attrs
from hypothesis import strategies as st

from s3p_codec import ProtocolError
from s3p_codec.testing._strategies import Answer, Malformed, Valid

__all__ = ["CodecReader", "Reader", "Target"]


class Reader(Protocol):
    """Reads the server's bytes for one conversation with a client-role codec."""

    def feed(self, data: bytes) -> Answer:
        """Add bytes (``b""``: the server closed) and say what has been answered so far."""
        ...


class CodecReader:
    """A ``Reader`` over a client-role codec that has sent its request: each event is an
    answer (``code_of`` tells an error reply's code), except events of the ``preamble`` types
    before the first answer; any protocol error ends the conversation as a problem."""

    def __init__(self, conn: Any, preamble: tuple[type, ...] = ()) -> None:
        self._conn = conn
        self._preamble = preamble
        self._answer = Answer()

    def code_of(self, event: object) -> str | int | None:
        """The error code ``event`` carries, or None for a normal reply."""
        return None

    def feed(self, data: bytes) -> Answer:
        """Feed the server's bytes (``b""``: it closed) to the client codec; return the answer so
        far.
        """
        if self._answer.problem:
            return self._answer
        try:
            self._conn.receive_data(data)
            for event in self._conn.events():
                if isinstance(event, self._preamble) and not self._answer.complete:
                    continue  # the answer to a preamble, not to the case
                self._answer = Answer(True, self.code_of(event), False, None, repr(event)[:200])
        except ProtocolError as exc:
            self._answer = attrs.evolve(self._answer, finished=True, problem=str(exc)[:200])
            return self._answer
        if not data:
            self._answer = attrs.evolve(self._answer, finished=True)
        return self._answer


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

    # Optional: ``rules() -> dict[str, SearchStrategy[Malformed | Valid]]``, the rule families
    # by name (together what ``malformed()`` and ``valid()`` draw from); ``live.fuzz`` runs each
    # once before repeating any. Without it, ``malformed()`` and ``valid()`` are the two rules.

    def reader(self, sent: Malformed | Valid) -> Reader:
        """A fresh reader for the answer to ``sent`` (sent on a fresh connection)."""
        ...

    def follow_up(self, sent: Malformed | Valid) -> Valid | None:
        """What to send on the same connection after a non-fatal error (None: nothing)."""
        ...
