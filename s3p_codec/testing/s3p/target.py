"""S3P as ``live.fuzz`` drives it against a running server: what to send, how to read answers.

The only part of the S3P cases that knows about a live peer (setup, probe, answer reader).
"""

from __future__ import annotations

import attrs
from hypothesis import strategies as st

from s3p_codec import Role, s3p
from s3p_codec.testing.s3p.for_servers import edge_cases, malformed, requests
from s3p_codec.testing.strategies import Malformed, Valid
from s3p_codec.testing.target import CodecReader


class _Reader(CodecReader):
    def __init__(self, sent: Malformed | Valid) -> None:
        conn = s3p.Connection(Role.CLIENT)
        request = sent.event if isinstance(sent, Valid) else s3p.Read(b"s")
        assert isinstance(request, s3p.Create | s3p.Append | s3p.Read | s3p.Trim | s3p.Delete)
        conn.send(request)
        super().__init__(conn)

    def code_of(self, event: object) -> str | None:
        return event.code if isinstance(event, s3p.ErrorReply) else None


def _no_block(request: s3p.Request) -> s3p.Request:
    """READs never block in live fuzzing (an empty stream would hold the answer back)."""
    if isinstance(request, s3p.Read) and request.block_ms:
        return attrs.evolve(request, block_ms=0)
    return request


class Target:
    """S3P as the live fuzzer drives it (give the limits of the server under test)."""

    name = "s3p"
    default_port = 7500

    def __init__(self, limits: s3p.Limits | None = None) -> None:
        self.limits = limits or s3p.Limits()

    def _valid(self, event: s3p.Request) -> Valid:
        return Valid(type(event).__name__, s3p.Connection(Role.CLIENT).send(event), event)

    def setup(self) -> list[Valid]:
        """Requests sent once before fuzzing, each on its own connection."""
        return [self._valid(s3p.Create(b"fuzz"))]

    def malformed(self) -> st.SearchStrategy[Malformed]:
        """Malformed byte streams and the answer each must get."""
        return malformed(self.limits)

    def valid(self) -> st.SearchStrategy[Valid]:
        """Well-formed requests, each of which must get a well-formed answer."""
        plain = requests(self.limits).map(lambda r: self._valid(_no_block(r)))
        return st.one_of(plain, edge_cases(self.limits))

    def probe(self) -> Valid:
        """A cheap request that a healthy server always answers without an error."""
        return self._valid(s3p.Read(b"fuzz", count=1))

    def reader(self, sent: Malformed | Valid) -> _Reader:
        """A fresh reader for the answer to ``sent``."""
        return _Reader(sent)

    def follow_up(self, sent: Malformed | Valid) -> Valid | None:
        """What to send on the same connection after a non-fatal error (None: nothing)."""
        return None
