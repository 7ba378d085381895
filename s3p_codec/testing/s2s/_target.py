"""S2S as ``live.fuzz`` drives it against a running server: what to send, how to read answers.

The only part of the S2S cases that knows about a live peer (stream setup, probe, and a reader
of append-session responses over HTTP/1.1).

A terminal frame usually ends a case, but where the server must close the connection after it,
the reader keeps the case open until the end of stream, so that ``live.fuzz`` waits for it
(within the case time-out) and reports a connection kept open as "connection closed after a
fatal error". The S2S text: "After receiving or sending a terminal frame, the session must be
closed. No further frames should be sent or expected." Over HTTP/1.1 the session is one
request whose chunked body the client is still sending: when the terminal frame comes before
the body's last chunk, closing the connection is the only way to close the session (RFC 9112
9.3: "A server MUST read the entire request message body or close the connection after sending
its response"; reading on would be expecting further frames). When the body had ended (the
cases cut inside a frame), the session is closed by the response alone and the connection may
serve another request, so that is not checked. Neither is a refused session head (no session
opened; the server may read and discard the body), unless the response says
``Connection: close`` (RFC 9112 9.6: a server that sends it "MUST initiate closure of the
connection"). Over HTTP/2 a session is a stream, closed without closing the connection; this
target speaks HTTP/1.1.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
from hypothesis import strategies as st

from s3p_codec import ProtocolError, Role, s2s
from s3p_codec.testing._strategies import Answer, Malformed, Valid
from s3p_codec.testing.s2s._wire import HEAD, STREAM, TOKEN, _chunk, _client
from s3p_codec.testing.s2s.for_servers import (
    _live_inputs,
    edge_cases,
    malformed,
    malformed_rules,
)
from s3p_codec.testing.target import Reader

_LAST_CHUNK = b"0\r\n\r\n"
_CLOSE = re.compile(rb"(?im)^connection:[^\r\n]*\bclose\b")
_HEAD_MAX = 64 * 1024  # response head bytes kept to look for Connection: close


class _Reader:
    def __init__(self, sent: Malformed | Valid) -> None:
        self._conn = _client()
        self._conn.send(s2s.SessionRequest(s2s.Session.APPEND, STREAM, token=TOKEN))
        self._answer = Answer()
        self._setup = isinstance(sent, Valid) and sent.event is None
        if isinstance(sent, Valid) and isinstance(sent.event, s2s.AppendInput):
            self._conn.send(sent.event)  # so that its AppendAck is expected
        self._head = b""
        # A session ended while the request body is still open must close the connection.
        self._body_open = isinstance(sent, Malformed) and not sent.data.endswith(_LAST_CHUNK)
        self._opened = False  # a 200 SessionResponse came: a session, not a refused head
        self._ended = False  # terminal frame read; waiting for the end of stream

    def _says_close(self) -> bool:
        head = self._head.split(b"\r\n\r\n", 1)[0]
        return _CLOSE.search(head) is not None

    def feed(self, data: bytes) -> Answer:
        if self._setup:  # a plain REST call: any complete HTTP status line and head is enough
            self._head += data
            done = b"\r\n\r\n" in self._head or not data
            self._answer = Answer(done, None, not data, None, self._head[:60].decode("latin-1"))
            return self._answer
        if self._answer.problem or self._answer.finished:
            return self._answer
        if self._ended:  # bytes after the terminal frame are not read; the end of stream ends it
            if not data:
                self._answer = attrs.evolve(self._answer, finished=True)
            return self._answer
        if len(self._head) < _HEAD_MAX:
            self._head += data[: _HEAD_MAX - len(self._head)]
        try:
            self._conn.receive_data(data)
            for event in self._conn.events():
                if isinstance(event, s2s.SessionResponse):
                    self._opened = True
                    continue
                self._answer = Answer(True, None, False, None, repr(event)[:200])
        except s2s.SessionTerminated as exc:
            summary = f"{exc.terminal.status} {exc.terminal.code}: {exc.terminal.message}"[:200]
            why = ""
            if self._opened and self._body_open:
                why = "S2S: the session must be closed; its request body is still open"
            elif self._says_close():
                why = "RFC 9112 9.6: it said Connection: close"
            if why and data:
                self._ended = True
                self._answer = Answer(True, exc.terminal.code, False, None, f"{summary} ({why})")
            else:
                self._answer = Answer(True, exc.terminal.code, True, None, summary)
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
        return st.one_of(_live_inputs().map(self._valid), edge_cases())

    def rules(self) -> dict[str, st.SearchStrategy[Any]]:
        """The rule families, malformed and valid, that ``malformed()`` and ``valid()`` draw
        from."""
        named: dict[str, st.SearchStrategy[Any]] = {
            f"malformed: {name}": cases for name, cases in malformed_rules(self.limits).items()
        }
        named["valid: AppendInput"] = _live_inputs().map(self._valid)
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
