"""``Observer``: decode both directions of a recorded Durable Streams conversation.

Requests are parsed by a server-role connection and responses by a client-role connection that
is told which request each response answers (HTTP/1.1 answers requests in order), so each
response, and each SSE event of a streaming response, carries its request's ``pair_id``.

HTTP/1.1 has no frame markers to resynchronise on: after broken framing (or a gap) a direction
is abandoned (``resynchronized=False``). A request that frames correctly but breaks a protocol
rule yields an ``ObservedError`` and decoding continues.

Offsets are exact positions in the direction's byte stream, the same whatever the chunking of
the ``observe`` calls. h11 reports no positions, so they are measured: the first byte h11 has
not consumed sits at ``bytes fed - len(trailing_data[0])``, read once per h11 event. A request
spans its whole message, head to end of body (a server connection's ``message_start``); a
response's events are measured by the client connection (made with ``spans=EventSpans()``, the
rules in ``durable.EventSpans``). An ``ObservedError`` starts at the message (for a streaming
response, the SSE event) it breaks.

Requests awaiting a response are kept without their body or path (what reading the response
needs: the method, the request's type and options, whether it had a body), at most
``max_pending`` of them (``_core.pending``). HTTP/1.1 pairs by order alone, so forgetting one
would pair every later response with the wrong request: past the bound the responses are no
longer decoded (one ``ObservedError``, ``TOO_MANY_REQUESTS``), the requests still are.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs

from s3p_codec._core.checkpoint import Checkpointable
from s3p_codec._core.errors import ProtocolError, RemoteProtocolError
from s3p_codec._core.observe import Observed, ObservedError, ObservedGap, ObserverOutput
from s3p_codec._core.pending import MAX_PENDING, PendingBound
from s3p_codec._core.types import NEED_DATA, Direction
from s3p_codec.durable._client import ClientEvent, _ClientConnection
from s3p_codec.durable._events import (
    Append,
    Create,
    Delete,
    ErrorCode,
    ErrorResponse,
    Head,
    Options,
    Read,
    Request,
)
from s3p_codec.durable._limits import Limits
from s3p_codec.durable._server import _ServerConnection
from s3p_codec.durable._spans import EventSpans
from s3p_codec.durable._state import ConnectionState

__all__ = ["Observer"]

ObservedEvent = Request | ClientEvent

_METHOD: dict[type, bytes] = {
    Create: b"PUT",
    Append: b"POST",
    Read: b"GET",
    Head: b"HEAD",
    Delete: b"DELETE",
    Options: b"OPTIONS",
}


def _slim(request: Request) -> Request:
    """What reading the response to ``request`` needs of it: not its body (only whether it had
    one) nor its path, so a request awaiting its response costs the same however large."""
    changes: dict[str, Any] = {}
    if isinstance(request, Create | Append) and len(request.body) > 1:
        changes["body"] = b"."
    if len(getattr(request, "path", "")) > 1:
        changes["path"] = "/"
    return attrs.evolve(request, **changes) if changes else request


class Observer(Checkpointable):
    """Passive decoder of one HTTP connection carrying Durable Streams; ``max_pending``: requests
    kept awaiting a response (see the module docstring)."""

    #: HTTP has no frame marker to hunt for: after a gap a direction is abandoned.
    resynchronizes: ClassVar[bool] = False

    def __init__(self, limits: Limits | None = None, *, max_pending: int = MAX_PENDING) -> None:
        self.limits = limits or Limits()
        self._requests = _ServerConnection(self.limits)
        self._spans = EventSpans()
        self._responses = _ClientConnection(self.limits, spans=self._spans)
        self._fed = {Direction.CLIENT_TO_SERVER: 0, Direction.SERVER_TO_CLIENT: 0}
        self._dead = {Direction.CLIENT_TO_SERVER: False, Direction.SERVER_TO_CLIENT: False}
        self._pending: deque[tuple[Request | None, bytes, int]] = deque()  # request, method, pair
        self._bound = PendingBound(max_pending, ErrorCode.TOO_MANY_REQUESTS)
        self._held = bytearray()  # response bytes seen before their request
        self._held_eof = False
        self._pair: int | None = None
        self._next_pair = 0

    def observe(self, direction: Direction, data: bytes) -> Sequence[ObserverOutput[ObservedEvent]]:
        """Feed bytes seen travelling ``direction``; return the events (paired with their requests)
        and errors they complete.
        """
        if self._dead[direction] or not data:
            return []
        self._fed[direction] += len(data)
        if direction is Direction.CLIENT_TO_SERVER:
            return self._observe_requests(data)
        self._held += data
        return self._observe_responses()

    def gap(self, direction: Direction, size: int) -> Sequence[ObserverOutput[ObservedEvent]]:
        """``size`` bytes were lost in ``direction``: HTTP cannot resynchronise, so the direction is
        abandoned.
        """
        if self._dead[direction]:
            return []
        self._dead[direction] = True
        return [ObservedGap(direction, self._fed[direction], size, resynchronized=False)]

    def close(self, direction: Direction) -> Sequence[ObserverOutput[ObservedEvent]]:
        """No more bytes come in ``direction``: report a request or response the stream cut short.
        """
        if self._dead[direction]:
            return []
        if direction is Direction.CLIENT_TO_SERVER:
            return self._observe_requests(b"")
        self._held_eof = True
        return self._observe_responses()

    # -- requests -------------------------------------------------------------------------

    def _observe_requests(self, data: bytes) -> list[ObserverOutput[ObservedEvent]]:
        direction = Direction.CLIENT_TO_SERVER
        out: list[ObserverOutput[ObservedEvent]] = []
        conn = self._requests
        try:
            conn.receive_data(data)
        except ProtocolError:
            return out
        while True:
            # Where this request's head begins: the end of the previous request, measured by
            # the connection (bytes it was fed minus what h11 still holds).
            start = conn.message_start
            head_method = b""
            try:
                event = conn.next_event()
            except RemoteProtocolError as exc:
                out.append(ObservedError(direction, exc, start, resynchronized=not exc.fatal))
                if exc.fatal:
                    self._dead[direction] = True
                    return out
                line = conn.request_line
                if line is not None:
                    head_method, _ = line
                self._queue_request(None, head_method or b"GET", start, out)
                conn.send(ErrorResponse(ErrorCode.INTERNAL_SERVER_ERROR))
                out.extend(self._observe_responses())
                continue
            if event is NEED_DATA:
                return out
            pair = self._queue_request(event, _METHOD[type(event)], start, out)
            # ``message_start`` now sits just after this request's end of message.
            out.append(Observed(direction, event, start, conn.message_start, pair))
            # Reset the request parser's cycle (it expects an answer before the next request).
            conn.send(ErrorResponse(ErrorCode.INTERNAL_SERVER_ERROR))
            if conn.state is ConnectionState.CLOSED:
                self._dead[direction] = True
            out.extend(self._observe_responses())

    def _queue_request(
        self,
        request: Request | None,
        method: bytes,
        start: int,
        out: list[ObserverOutput[ObservedEvent]],
    ) -> int:
        """A pair id for a request, queued (slim) for its response unless responses are no
        longer decoded; past ``max_pending`` they no longer are."""
        pair = self._next_pair
        self._next_pair += 1
        if self._dead[Direction.SERVER_TO_CLIENT]:
            return pair  # nothing will read its response: keep nothing
        full, said = self._bound.admit(len(self._pending), start)
        if full:
            assert said is not None
            self._dead[Direction.SERVER_TO_CLIENT] = True
            self._pending.clear()
            self._held.clear()
            error = RemoteProtocolError(
                f"more than {self._bound.limit} requests await a response (max_pending):"
                " responses are no longer decoded (HTTP/1.1 pairs them by order alone)",
                code=ErrorCode.TOO_MANY_REQUESTS,
                fatal=False,
            )
            out.append(attrs.evolve(said, error=error))
            return pair
        self._pending.append((None if request is None else _slim(request), method, pair))
        return pair

    # -- responses ------------------------------------------------------------------------

    def _observe_responses(self) -> list[ObserverOutput[ObservedEvent]]:
        direction = Direction.SERVER_TO_CLIENT
        out: list[ObserverOutput[ObservedEvent]] = []
        conn = self._responses
        while not self._dead[direction]:
            if conn.state is ConnectionState.IDLE:
                if not self._pending:
                    return out
                request, method, pair = self._pending.popleft()
                conn.expect_response(request, method, b"/")
                self._pair = pair
            if self._held or (self._held_eof and conn.state is not ConnectionState.CLOSED):
                data = bytes(self._held)
                self._held.clear()
                try:
                    conn.receive_data(data)
                    if self._held_eof:
                        conn.receive_data(b"")
                except ProtocolError:
                    self._dead[direction] = True
                    return out
            progressed = False
            while conn.queued or conn.state is not ConnectionState.IDLE:
                try:
                    event = conn.next_event()
                except RemoteProtocolError as exc:
                    start = self._spans.error_start(exc)
                    out.append(ObservedError(direction, exc, start, resynchronized=not exc.fatal))
                    if exc.fatal:
                        self._dead[direction] = True
                        return out
                    progressed = True
                    continue
                if event is NEED_DATA:
                    break
                progressed = True
                start, end = self._spans.pop()
                out.append(Observed(direction, event, start, end, self._pair))
            if conn.state is ConnectionState.CLOSED:
                self._dead[direction] = True
            if not progressed or conn.state is not ConnectionState.IDLE:
                return out
        return out
