"""Durable Streams as ``live.fuzz`` drives it against a running server: what to send, how to
read answers.

The only part of the Durable Streams cases that knows about a live peer (stream setup, probe,
and an HTTP/1.1 reader of the status each case gets).
"""

from __future__ import annotations

from typing import Any

import attrs
import h11
from hypothesis import strategies as st

from s3p_codec import durable
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
from s3p_codec.testing.strategies import Answer, Malformed, Valid
from s3p_codec.testing.target import Reader

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

    def feed(self, data: bytes) -> Answer:
        if self._answer.problem or self._answer.finished:
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
                elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    self._answer = attrs.evolve(self._answer, finished=True)
                    break
        except h11.RemoteProtocolError as exc:
            self._answer = attrs.evolve(self._answer, finished=True, problem=f"HTTP/1.1: {exc}")
        if not data and not self._answer.finished:
            self._answer = attrs.evolve(self._answer, finished=True)
        return self._answer


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
