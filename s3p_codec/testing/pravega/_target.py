"""Pravega as ``live.fuzz`` drives it against a running segment store: what to send, how to
read answers.

The only part of the Pravega cases that knows about a live peer (setup, probe, answer reader).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from s3p_codec import Role, pravega
from s3p_codec.testing._strategies import Malformed, Valid
from s3p_codec.testing.pravega._wire import HELLO
from s3p_codec.testing.pravega.for_servers import (
    malformed,
    malformed_rules,
    request_rules,
    requests,
)
from s3p_codec.testing.target import CodecReader, Reader


class _Reader(CodecReader):
    def __init__(self, sent: Malformed | Valid) -> None:
        # The requests went out as raw bytes, not through this codec: read acks unchecked.
        conn = pravega.Connection(Role.CLIENT, check_acks=False)
        conn.send(pravega.Hello())
        # A malformed case's valid preamble (SetupAppend, a first good block) is answered
        # before the broken frame is seen; a server that accepts the broken frame is still
        # caught, as it does not close.
        preamble: tuple[type, ...] = (pravega.Hello, pravega.AppendSetup, pravega.DataAppended)
        super().__init__(conn, preamble if isinstance(sent, Malformed) else (pravega.Hello,))


class Target:
    """Pravega as the live fuzzer drives it."""

    name = "pravega"
    default_port = 12345

    def __init__(self, limits: pravega.Limits | None = None) -> None:
        self.limits = limits or pravega.Limits()

    def _valid(self, command: pravega.Command) -> Valid:
        return Valid(type(command).__name__, HELLO + pravega.encode(command), command)

    def setup(self) -> list[Valid]:
        """Requests sent once before fuzzing, each on its own connection."""
        return [self._valid(pravega.CreateSegment(1, "fuzz/fuzz/0"))]

    def malformed(self) -> st.SearchStrategy[Malformed]:
        """Malformed byte streams and the answer each must get."""
        return malformed(self.limits)

    def valid(self) -> st.SearchStrategy[Valid]:
        # ReadSegment of an open segment's tail waits for data: keep it out of live traffic.
        """Well-formed requests, each of which must get a well-formed answer."""
        return requests().filter(lambda c: not isinstance(c, pravega.ReadSegment)).map(self._valid)

    def rules(self) -> dict[str, st.SearchStrategy[Any]]:
        """The rule families, malformed and valid, that ``malformed()`` and ``valid()`` draw
        from (each request type ``valid()`` sends is a rule of its own)."""
        named: dict[str, st.SearchStrategy[Any]] = {
            f"malformed: {name}": cases for name, cases in malformed_rules(self.limits).items()
        }
        for kind, events in request_rules().items():
            if kind != "ReadSegment":  # as in valid(): a read of the tail waits
                named[f"valid: {kind}"] = events.map(self._valid)
        return named

    def probe(self) -> Valid:
        """A cheap request that a healthy server always answers without an error."""
        return self._valid(pravega.GetStreamSegmentInfo(2, "fuzz/fuzz/0"))

    def reader(self, sent: Malformed | Valid) -> Reader:
        """A fresh reader for the answer to ``sent``."""
        return _Reader(sent)

    def follow_up(self, sent: Malformed | Valid) -> Valid | None:
        """What to send on the same connection after a non-fatal error (None: nothing)."""
        return None
