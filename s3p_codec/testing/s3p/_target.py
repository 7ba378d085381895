"""S3P as ``live.fuzz`` drives it against a running server: what to send, how to read answers.

The only part of the S3P cases that knows about a live peer (setup, probe, answer reader).
``Target(version="0.2.0")`` fuzzes a v0.2.0 server: its commands, its error codes, and a
recoverable case (CREATE of the stream made at setup: ``ERR_STREAM_EXISTS``, after which the
connection must still serve the probe).
"""

from __future__ import annotations

from typing import Any

import attrs
from hypothesis import strategies as st

from s3p_codec import Role, s3p
from s3p_codec.testing._strategies import Malformed, Valid
from s3p_codec.testing.s3p.for_servers import (
    edge_cases,
    malformed,
    malformed_rules,
    request_rules,
    requests,
)
from s3p_codec.testing.target import CodecReader, Reader


class _Reader(CodecReader):
    def __init__(self, sent: Malformed | Valid, version: str) -> None:
        conn = s3p.Connection(Role.CLIENT, version=version)
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
    """S3P as the live fuzzer drives it (give the limits and the version of the server under
    test; ValueError for a version S3P does not have)."""

    name = "s3p"
    default_port = 7500

    def __init__(self, limits: s3p.Limits | None = None, version: str = "0.1.0") -> None:
        self.limits = limits or s3p.Limits()
        self.version = s3p.Version(version).value

    def _valid(self, event: s3p.Request) -> Valid:
        wire = s3p.Connection(Role.CLIENT, version=self.version).send(event)
        return Valid(type(event).__name__, wire, event)

    def setup(self) -> list[Valid]:
        """Requests sent once before fuzzing, each on its own connection."""
        return [self._valid(s3p.Create(b"fuzz"))]

    def malformed(self) -> st.SearchStrategy[Malformed]:
        """Malformed byte streams and the answer each must get."""
        cases = malformed(self.limits, self.version)
        if self.version == s3p.Version.V0_2_0:
            exists = Malformed(
                "CREATE of an existing stream (recoverable)",
                self._valid(s3p.Create(b"fuzz")).data,
                s3p.ErrorCode.STREAM_EXISTS,
                fatal=False,
            )
            return st.one_of(cases, st.just(exists))
        return cases

    def valid(self) -> st.SearchStrategy[Valid]:
        """Well-formed requests, each of which must get a well-formed answer."""
        plain = requests(self.limits, self.version).map(lambda r: self._valid(_no_block(r)))
        return st.one_of(plain, edge_cases(self.limits, self.version))

    def rules(self) -> dict[str, st.SearchStrategy[Any]]:
        """The rule families, malformed and valid, that ``malformed()`` and ``valid()`` draw
        from (each command type is a rule of its own)."""
        named: dict[str, st.SearchStrategy[Any]] = {
            f"malformed: {name}": cases
            for name, cases in malformed_rules(self.limits, self.version).items()
        }
        if self.version == s3p.Version.V0_2_0:
            named["malformed: CREATE of an existing stream (recoverable)"] = st.just(
                Malformed(
                    "CREATE of an existing stream (recoverable)",
                    self._valid(s3p.Create(b"fuzz")).data,
                    s3p.ErrorCode.STREAM_EXISTS,
                    fatal=False,
                )
            )
        for kind, events in request_rules(self.limits, self.version).items():
            named[f"valid: {kind}"] = events.map(lambda r: self._valid(_no_block(r)))
        named["valid: edge cases"] = edge_cases(self.limits, self.version)
        return named

    def probe(self) -> Valid:
        """A cheap request that a healthy server always answers without an error."""
        return self._valid(s3p.Read(b"fuzz", count=1))

    def reader(self, sent: Malformed | Valid) -> Reader:
        """A fresh reader for the answer to ``sent``."""
        if isinstance(sent, Malformed) and not sent.fatal:
            return _Reader(Valid("CREATE", sent.data, s3p.Create(b"fuzz")), self.version)
        return _Reader(sent, self.version)

    def follow_up(self, sent: Malformed | Valid) -> Valid | None:
        """After a recoverable error, the connection must still answer the probe."""
        if isinstance(sent, Malformed) and not sent.fatal:
            return self.probe()
        return None
