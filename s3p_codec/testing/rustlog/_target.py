"""RustLog as ``live.fuzz`` drives it against a running server: what to send, how to read answers.

The only part of the RustLog cases that knows about a live peer (setup, probe, answer reader,
and the ``Ping`` that follows a recoverable error).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from s3p_codec import rustlog
from s3p_codec.testing._strategies import Malformed, Valid
from s3p_codec.testing.rustlog._wire import _client
from s3p_codec.testing.rustlog.for_servers import (
    edge_cases,
    malformed,
    malformed_rules,
    request_rules,
    requests,
)
from s3p_codec.testing.target import CodecReader, Reader


class _Reader(CodecReader):
    def __init__(self, sent: Malformed | Valid) -> None:
        conn = _client()
        request = sent.event if isinstance(sent, Valid) else rustlog.Ping()
        conn.send(request)  # type: ignore[arg-type]
        # A fatal error answered before closing may not match the Ping the reader expects:
        # reported as a problem, with what was answered before.
        super().__init__(conn)

    def code_of(self, event: object) -> int | None:
        return event.code if isinstance(event, rustlog.Error) else None


class Target:
    """RustLog as the live fuzzer drives it."""

    name = "rustlog"
    default_port = 9092

    def __init__(self, limits: rustlog.Limits | None = None) -> None:
        self.limits = limits or rustlog.Limits()

    def _valid(self, event: rustlog.Request) -> Valid:
        return Valid(type(event).__name__, _client().send(event), event)

    def setup(self) -> list[Valid]:
        """Requests sent once before fuzzing, each on its own connection."""
        return [self._valid(rustlog.CreateTopic("fuzz", 1))]

    def malformed(self) -> st.SearchStrategy[Malformed]:
        """Malformed byte streams and the answer each must get."""
        return malformed(self.limits)

    def valid(self) -> st.SearchStrategy[Valid]:
        """Well-formed requests, each of which must get a well-formed answer."""
        return st.one_of(requests().map(self._valid), edge_cases())

    def rules(self) -> dict[str, st.SearchStrategy[Any]]:
        """The rule families, malformed and valid, that ``malformed()`` and ``valid()`` draw
        from (each request type is a rule of its own)."""
        named: dict[str, st.SearchStrategy[Any]] = {
            f"malformed: {name}": cases for name, cases in malformed_rules(self.limits).items()
        }
        for kind, events in request_rules().items():
            named[f"valid: {kind}"] = events.map(self._valid)
        named["valid: edge cases"] = edge_cases()
        return named

    def probe(self) -> Valid:
        """A cheap request that a healthy server always answers without an error."""
        return self._valid(rustlog.Ping())

    def reader(self, sent: Malformed | Valid) -> Reader:
        """A fresh reader for the answer to ``sent``."""
        return _Reader(sent)

    def follow_up(self, sent: Malformed | Valid) -> Valid | None:
        """A ``Ping``: after a recoverable error the connection must still answer."""
        return self.probe()
