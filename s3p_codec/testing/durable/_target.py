"""Durable Streams as ``live.fuzz`` drives it against a running server: what to send, how to
read answers.

The only part of the Durable Streams cases that knows about a live peer (stream setup, probe,
and an HTTP/1.1 reader of the status each case gets).

A complete response usually ends a case, but where HTTP/1.1 obliges the server to close the
connection after it, the reader keeps the case open until the end of stream, so that
``live.fuzz`` waits for it (within the case time-out) and reports a connection kept open as
"connection closed after a fatal error". Two MUSTs of RFC 9112 say when:

- section 9.6: "A server that sends a "close" connection option MUST initiate closure of the
  connection ... after it sends the response containing the "close" connection option" (the
  example server says ``Connection: close`` after every HTTP framing error);
- section 6.3: with "an invalid Content-Length header field ... the message framing is invalid
  and the recipient MUST treat it as an unrecoverable error ... the server MUST respond with a
  400 (Bad Request) status code and then close the connection" (``MUST_CLOSE``).

Every other malformed case (a bad header value, a missing stream, a 405, a request head over
the limit, a bad chunk size, no Host) breaks no rule that requires closing when the server does
not say ``Connection: close`` (RFC 9112 section 2.2 only says a server "SHOULD respond with a
400 (Bad Request) response and close the connection" to octets that are not HTTP), so it is
not checked: the connection may be kept for the next request.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs
import h11
from hypothesis import strategies as st

from s3p_codec import durable
from s3p_codec.testing._strategies import Answer, Malformed, Valid
from s3p_codec.testing.durable._subscriptions import subscription_decisions
from s3p_codec.testing.durable._wire import STREAM, _client
from s3p_codec.testing.durable.for_servers import (
    JSON_STREAM,
    decisions,
    malformed,
    malformed_rules,
    request_rules,
    requests,
    stream_decisions,
)
from s3p_codec.testing.target import Reader

#: Malformed cases after whose answer the server MUST close, whatever it says: RFC 9112 6.3.
MUST_CLOSE = frozenset({"Content-Length not a number"})
_MUST_CLOSE_WHY = "RFC 9112 6.3: invalid Content-Length, 400 and then close"
_SAYS_CLOSE_WHY = "RFC 9112 9.6: it said Connection: close"

_METHODS = {
    durable.Create: b"PUT",
    durable.Append: b"POST",
    durable.Read: b"GET",
    durable.Head: b"HEAD",
    durable.Delete: b"DELETE",
}


class _Reader:
    def __init__(self, sent: Malformed | Valid) -> None:
        method = _METHODS.get(type(sent.event), b"GET") if isinstance(sent, Valid) else b"GET"
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
        self._h11.send(h11.Request(method=method, target="/", headers=[("host", "x")]))
        self._h11.send(h11.EndOfMessage())
        self._answer = Answer()
        self._must_close = isinstance(sent, Malformed) and sent.label in MUST_CLOSE
        self._why = _MUST_CLOSE_WHY if self._must_close else ""
        self._ended = False  # the response is complete; waiting for the end of stream

    def feed(self, data: bytes) -> Answer:
        if self._answer.problem or self._answer.finished:
            return self._answer
        if self._ended:  # bytes after the response are not read; the end of stream ends it
            if not data:
                self._answer = attrs.evolve(self._answer, finished=True)
            return self._answer
        try:
            self._h11.receive_data(data)
            while True:
                event = self._h11.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    break
                if isinstance(event, h11.Response):
                    code = event.status_code if event.status_code >= 400 else None
                    self._answer = Answer(True, code, False, None, f"HTTP {event.status_code}")
                    if _says_close(event.headers) and not self._must_close:
                        self._must_close, self._why = True, _SAYS_CLOSE_WHY
                elif isinstance(event, h11.ConnectionClosed):
                    self._answer = attrs.evolve(self._answer, finished=True)
                    break
                elif isinstance(event, h11.EndOfMessage):
                    if self._must_close and data:
                        # The server must close now: the case ends at the end of stream.
                        self._ended = True
                        summary = f"{self._answer.summary} ({self._why})"
                        self._answer = attrs.evolve(self._answer, summary=summary)
                    else:
                        self._answer = attrs.evolve(self._answer, finished=True)
                    break
        except h11.RemoteProtocolError as exc:
            self._answer = attrs.evolve(self._answer, finished=True, problem=f"HTTP/1.1: {exc}")
        if not data and not self._answer.finished:
            self._answer = attrs.evolve(self._answer, finished=True)
        return self._answer


def _says_close(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether a response head carries the "close" connection option (RFC 9112 9.6)."""
    return any(
        name == b"connection" and b"close" in (v.strip() for v in value.lower().split(b","))
        for name, value in headers
    )


class Target:
    """Durable Streams as the live fuzzer drives it (``decisions`` included)."""

    name = "durable"
    default_port = 4437

    def __init__(self, limits: durable.Limits | None = None) -> None:
        self.limits = limits or durable.Limits()

    def _valid(self, request: durable.Request) -> Valid:
        return Valid(type(request).__name__, _client().send(request), request)

    def setup(self) -> list[Valid]:
        """Requests sent once before fuzzing, each on its own connection."""
        return [
            self._valid(durable.Create(STREAM, content_type="text/plain")),
            self._valid(durable.Create(JSON_STREAM, content_type="application/json")),
        ]

    def malformed(self) -> st.SearchStrategy[Malformed]:
        """Malformed byte streams and the answer each must get."""
        return st.one_of(malformed(self.limits), decisions())

    def valid(self) -> st.SearchStrategy[Valid]:
        """Well-formed requests, each of which must get a well-formed answer."""
        return requests().map(self._valid)

    def rules(self) -> dict[str, st.SearchStrategy[Any]]:
        """The rule families, malformed and valid, that ``malformed()`` and ``valid()`` draw
        from (each request type is a rule of its own)."""
        named: dict[str, st.SearchStrategy[Any]] = {
            f"malformed: {name}": cases for name, cases in malformed_rules(self.limits).items()
        }
        named["malformed: stream state decisions"] = stream_decisions()
        named["malformed: subscription decisions"] = subscription_decisions()
        for kind, events in request_rules().items():
            named[f"valid: {kind}"] = events.map(self._valid)
        return named

    def probe(self) -> Valid:
        """A cheap request that a healthy server always answers without an error."""
        return self._valid(durable.Read(STREAM, "now"))

    def reader(self, sent: Malformed | Valid) -> Reader:
        """A fresh reader for the answer to ``sent``."""
        return _Reader(sent)

    def follow_up(self, sent: Malformed | Valid) -> Valid | None:
        """What to send on the same connection after a non-fatal error (None: nothing)."""
        return None
