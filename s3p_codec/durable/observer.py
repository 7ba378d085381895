"""``Observer``: decode both directions of a recorded Durable Streams conversation.

Requests are parsed by a server-role connection and responses by a client-role connection that
is told which request each response answers (HTTP/1.1 answers requests in order), so each
response, and each SSE event of a streaming response, carries its request's ``pair_id``.

HTTP/1.1 has no frame markers to resynchronise on: after broken framing (or a gap) a direction
is abandoned (``resynchronized=False``). A request that frames correctly but breaks a protocol
rule yields an ``ObservedError`` and decoding continues. Byte offsets are approximate at the
granularity of what h11 consumes: ``start`` is where the previous event ended, ``end`` how many
bytes of the direction had been fed when the event completed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from s3p_codec._core.errors import ProtocolError, RemoteProtocolError
from s3p_codec._core.observe import Observed, ObservedError, ObservedGap, ObserverOutput
from s3p_codec._core.types import NEED_DATA, Direction
from s3p_codec.durable.client import ClientConnection, ClientEvent
from s3p_codec.durable.events import (
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
from s3p_codec.durable.limits import Limits
from s3p_codec.durable.server import ServerConnection
from s3p_codec.durable.state import ConnectionState

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


class Observer:
    """Passive decoder of one HTTP connection carrying Durable Streams."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._requests = ServerConnection(self.limits)
        self._responses = ClientConnection(self.limits)
        self._fed = {Direction.CLIENT_TO_SERVER: 0, Direction.SERVER_TO_CLIENT: 0}
        self._mark = {Direction.CLIENT_TO_SERVER: 0, Direction.SERVER_TO_CLIENT: 0}
        self._dead = {Direction.CLIENT_TO_SERVER: False, Direction.SERVER_TO_CLIENT: False}
        self._pending: deque[tuple[Request | None, bytes, bytes, int]] = deque()
        self._held = bytearray()  # response bytes seen before their request
        self._held_eof = False
        self._pair: int | None = None
        self._next_pair = 0

    def observe(self, direction: Direction, data: bytes) -> Sequence[ObserverOutput[ObservedEvent]]:
        if self._dead[direction] or not data:
            return []
        self._fed[direction] += len(data)
        if direction is Direction.CLIENT_TO_SERVER:
            return self._observe_requests(data)
        self._held += data
        return self._observe_responses()

    def gap(self, direction: Direction, size: int) -> Sequence[ObserverOutput[ObservedEvent]]:
        if self._dead[direction]:
            return []
        self._dead[direction] = True
        return [ObservedGap(direction, self._fed[direction], size, resynchronized=False)]

    def close(self, direction: Direction) -> Sequence[ObserverOutput[ObservedEvent]]:
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
            start = self._mark[direction]
            head_method = target = b""
            try:
                event = conn.next_event()
            except RemoteProtocolError as exc:
                out.append(ObservedError(direction, exc, start, resynchronized=not exc.fatal))
                self._mark[direction] = self._fed[direction]
                if exc.fatal:
                    self._dead[direction] = True
                    return out
                head = conn._head
                if head is not None:
                    head_method, target = head.method, head.target
                self._queue_request(None, head_method or b"GET", target or b"/")
                conn.send(ErrorResponse(ErrorCode.INTERNAL_SERVER_ERROR))
                out.extend(self._observe_responses())
                continue
            if event is NEED_DATA:
                return out
            pair = self._queue_request(event, _METHOD[type(event)], b"/")
            self._mark[direction] = self._fed[direction]
            out.append(Observed(direction, event, start, self._fed[direction], pair))
            # Reset the request parser's cycle (it expects an answer before the next request).
            conn.send(ErrorResponse(ErrorCode.INTERNAL_SERVER_ERROR))
            if conn.state is ConnectionState.CLOSED:
                self._dead[direction] = True
            out.extend(self._observe_responses())

    def _queue_request(self, request: Request | None, method: bytes, target: bytes) -> int:
        pair = self._next_pair
        self._next_pair += 1
        if request is not None:
            target = request.path.encode("ascii")
        self._pending.append((request, method, target, pair))
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
                request, method, target, pair = self._pending.popleft()
                conn._expect(request, method, target)
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
            while conn._queue or conn.state is not ConnectionState.IDLE:
                start = self._mark[direction]
                try:
                    event = conn.next_event()
                except RemoteProtocolError as exc:
                    out.append(ObservedError(direction, exc, start, resynchronized=not exc.fatal))
                    self._mark[direction] = self._fed[direction]
                    if exc.fatal:
                        self._dead[direction] = True
                        return out
                    progressed = True
                    continue
                if event is NEED_DATA:
                    break
                progressed = True
                self._mark[direction] = self._fed[direction]
                out.append(Observed(direction, event, start, self._fed[direction], self._pair))
            if conn.state is ConnectionState.CLOSED:
                self._dead[direction] = True
            if not progressed or conn.state is not ConnectionState.IDLE:
                return out
        return out
