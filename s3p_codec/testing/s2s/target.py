"""S2S as ``live.fuzz`` drives it against a running server: what to send, how to read answers.

The only part of the S2S cases that knows about a live peer (stream setup, probe, and a reader
of append-session responses over HTTP/1.1).
"""

from __future__ import annotations

from typing import Any

import attrs
from hypothesis import strategies as st

from s3p_codec import ProtocolError, Role, s2s
from s3p_codec.testing.s2s._wire import HEAD, STREAM, TOKEN, _chunk, _client
from s3p_codec.testing.s2s.for_servers import (
    append_inputs,
    edge_cases,
    malformed,
    malformed_rules,
)
from s3p_codec.testing.strategies import Answer, Malformed, Valid
from s3p_codec.testing.target import Reader


class _Reader:
    def __init__(self, sent: Malformed | Valid) -> None:
        self._conn = _client()
        self._conn.send(s2s.SessionRequest(s2s.Session.APPEND, STREAM, token=TOKEN))
        self._answer = Answer()
        self._setup = isinstance(sent, Valid) and sent.event is None
        if isinstance(sent, Valid) and isinstance(sent.event, s2s.AppendInput):
            self._conn.send(sent.event)  # so that its AppendAck is expected
        self._head = b""

    def feed(self, data: bytes) -> Answer:
        if self._setup:  # a plain REST call: any complete HTTP status line and head is enough
            self._head += data
            done = b"\r\n\r\n" in self._head or not data
            self._answer = Answer(done, None, not data, None, self._head[:60].decode("latin-1"))
            return self._answer
        if self._answer.problem or self._answer.finished:
            return self._answer
        try:
            self._conn.receive_data(data)
            for event in self._conn.events():
                if isinstance(event, s2s.SessionResponse):
                    continue
                self._answer = Answer(True, None, False, None, repr(event)[:200])
        except s2s.SessionTerminated as exc:
            summary = f"{exc.terminal.status} {exc.terminal.code}: {exc.terminal.message}"
            self._answer = Answer(True, exc.terminal.code, True, None, summary[:200])
        except ProtocolError as exc:
            self._answer = attrs.evolve(self._answer, finished=True, problem=str(exc)[:200])
        if not data and not self._answer.finished:
            self._answer = attrs.evolve(self._answer, finished=True)
        return self._answer


class Target:
    """S2S (append sessions over HTTP/1.1) as the live fuzzer drives it."""

    name = "s2s"
    default_port = 8080

    def __init__(self, limits: s2s.Limits | None = None) -> None:
        self.limits = limits or s2s.Limits()

    def setup(self) -> list[Valid]:
        """Requests sent once before fuzzing, each on its own connection."""
        ensure = (
            b"PUT /v1/streams/%s HTTP/1.1\r\nhost: 127.0.0.1\r\n"
            b"authorization: Bearer fuzz\r\ncontent-length: 0\r\n\r\n"
        )
        return [Valid("ensure stream", ensure % STREAM.encode(), None)]

    def malformed(self) -> st.SearchStrategy[Malformed]:
        """Malformed byte streams and the answer each must get."""
        return malformed(self.limits)

    def _valid(self, event: s2s.AppendInput) -> Valid:
        session = s2s.Connection(Role.CLIENT, s2s.Session.APPEND)
        return Valid("AppendInput", HEAD + _chunk(session.send(event)), event)

    def valid(self) -> st.SearchStrategy[Valid]:
        """Well-formed requests, each of which must get a well-formed answer."""
        return st.one_of(append_inputs().map(self._valid), edge_cases())

    def rules(self) -> dict[str, st.SearchStrategy[Any]]:
        """The rule families, malformed and valid, that ``malformed()`` and ``valid()`` draw
        from."""
        named: dict[str, st.SearchStrategy[Any]] = {
            f"malformed: {name}": cases for name, cases in malformed_rules(self.limits).items()
        }
        named["valid: AppendInput"] = append_inputs().map(self._valid)
        named["valid: edge cases"] = edge_cases(self.limits)
        return named

    def probe(self) -> Valid:
        """A cheap request that a healthy server always answers without an error."""
        return self._valid(s2s.AppendInput((s2s.AppendRecord(b"probe"),)))

    def reader(self, sent: Malformed | Valid) -> Reader:
        """A fresh reader for the answer to ``sent``."""
        return _Reader(sent)

    def follow_up(self, sent: Malformed | Valid) -> Valid | None:
        """What to send on the same connection after a non-fatal error (None: nothing)."""
        return None
