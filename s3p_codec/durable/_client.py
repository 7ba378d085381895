"""The client role of ``durable.Connection``: typed requests out, typed responses and SSE in.

HTTP/1.1 allows one exchange at a time per connection here (no pipelining): ``send`` refuses a
request while the previous response is still arriving. Each response is typed by the request it
answers. An SSE response yields ``SSEStart``, then ``SSEData``/``SSEControl`` as events
complete, then ``SSEEnd`` when the server ends the body. Other response bodies are buffered up
to ``Limits.max_body_size`` (refused from ``Content-Length`` before the body arrives) and come
out as one event.

A response that frames correctly but breaks the protocol (a success without
``Stream-Next-Offset``, say) raises a non-fatal ``RemoteProtocolError`` (code
``"invalid_response"``) once it is complete; the connection stays usable.
"""

from __future__ import annotations

from collections import deque

import h11

from s3p_codec._core.errors import LocalProtocolError, RemoteProtocolError
from s3p_codec._core.h11input import H11Input
from s3p_codec._core.lifecycle import ReplyAfterError, finished
from s3p_codec._core.types import NEED_DATA, NeedData, Role
from s3p_codec.durable import _headers as H
from s3p_codec.durable import sse
from s3p_codec.durable._events import (
    ConnectionErrorCode,
    LiveMode,
    Read,
    Request,
    Response,
    SSEControl,
    SSEData,
    SSEEnd,
    SSEStart,
)
from s3p_codec.durable._limits import Limits
from s3p_codec.durable._requests import build_request
from s3p_codec.durable._responses import parse_error, parse_response
from s3p_codec.durable._spans import EventSpans
from s3p_codec.durable._state import TRANSITIONS, ConnectionState, Trigger

__all__ = ["ClientEvent"]

#: What a client-role connection yields: a typed response, or an SSE event of a live read.
ClientEvent = Response | SSEData | SSEControl | SSEEnd


def _fatal(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(message, code=ConnectionErrorCode.HTTP, fatal=True)


class _ClientConnection(H11Input):
    """One client-side HTTP/1.1 connection speaking Durable Streams: what
    ``durable.Connection(Role.CLIENT, ...)`` runs (the package's Observer uses it directly).

    ``host`` is the ``Host`` header value (``"127.0.0.1:4437"``; ValueError unless it is
    printable ASCII without spaces). ``spans``, for a reader that reports where each event lies
    in the server's bytes (a capture's ``Observer``), records the stream range of every event
    (see ``durable.EventSpans``); without it nothing is measured.
    """

    _eof_code = ConnectionErrorCode.EOF

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        host: str = "localhost",
        spans: EventSpans | None = None,
    ) -> None:
        # Every request carries it as its Host header (a URI authority: no spaces); anything
        # else would make each ``send`` fail in h11 or in ASCII encoding.
        if any(not "\x21" <= char <= "\x7e" for char in host):
            raise ValueError(f"host must be printable ASCII without spaces, not {host!r}")
        self.limits = limits or Limits()
        self.host = host
        self._spans = spans
        self._h11 = h11.Connection(
            h11.CLIENT, max_incomplete_event_size=self.limits.max_header_size
        )
        self._state = TRANSITIONS.initial
        self._request: Request | None = None
        self._head: h11.Response | None = None
        self._body = bytearray()
        self._sse: sse.SSEParser | None = None
        self._sse_base64 = False
        self._queue: deque[ClientEvent] = deque()
        self._reply_gate = ReplyAfterError()  # never owed: a client sends no error reply
        self._start_input(self.limits.max_header_size)

    @property
    def role(self) -> Role:
        """Always ``Role.CLIENT``."""
        return Role.CLIENT

    @property
    def state(self) -> ConnectionState:
        """Where the connection is: IDLE, waiting for a response, streaming SSE, CLOSED or ERROR."""
        return self._state

    @property
    def finished(self) -> bool:
        """True once the connection is CLOSED or in ERROR and every queued event was taken: close
        the transport.
        """
        # A client owes no reply after an error; events queued before it can still be taken,
        # so ERROR counts as a closed end with those outstanding.
        return finished(
            self._reply_gate,
            ended=False,
            closed=self._state is ConnectionState.CLOSED or self._state is ConnectionState.ERROR,
            outstanding=bool(self._queue),
        )

    @property
    def request(self) -> Request | None:
        """The request whose response is arriving (None when idle)."""
        return self._request

    @property
    def queued(self) -> int:
        """How many events the bytes already read completed, waiting for ``next_event``."""
        return len(self._queue)

    # -- sending --------------------------------------------------------------------------

    def send(self, event: Request) -> bytes:
        """The bytes of one request; raises ``LocalProtocolError`` if it is invalid or early."""
        if self._state is not ConnectionState.IDLE:
            raise LocalProtocolError(
                f"cannot send a request in state {self._state.name}",
                code=ConnectionErrorCode.STATE,
                fatal=False,
            )
        head, body = build_request(event, self.host, self.limits)
        try:
            out = self._h11.send(head) or b""
            if body:
                out += self._h11.send(h11.Data(data=body)) or b""
            out += self._h11.send(h11.EndOfMessage()) or b""
        except h11.LocalProtocolError as exc:
            self._state = TRANSITIONS.next(self._state, Trigger.SEND_FAILED)
            raise LocalProtocolError(str(exc), code=ConnectionErrorCode.HTTP) from None
        self._request = event
        self._state = TRANSITIONS.next(self._state, Trigger.REQUEST_SENT)
        self._head_start = self._consumed()
        return out

    def expect_response(self, request: Request | None, method: bytes, target: bytes) -> None:
        """For a passive reader (a capture's Observer): the response to ``method target``, a
        request seen on the wire rather than sent here, comes next. ``request`` types it (None
        for a request the server could not parse: its answer is read as an error). No bytes
        are produced; raises ``LocalProtocolError`` unless the connection is IDLE."""
        if self._state is not ConnectionState.IDLE:
            raise LocalProtocolError(
                f"cannot expect a response in state {self._state.name}",
                code=ConnectionErrorCode.STATE,
                fatal=False,
            )
        self._h11.send(h11.Request(method=method, target=target, headers=[(b"host", b"-")]))
        self._h11.send(h11.EndOfMessage())
        self._request = request
        self._state = TRANSITIONS.next(self._state, Trigger.REQUEST_SENT)
        self._head_start = self._consumed()

    # -- receiving ------------------------------------------------------------------------

    def _check_head(self) -> None:
        size = self._head_size()  # see ``H11Input``: measured however the bytes arrived
        if size > self.limits.max_header_size:
            self._state = TRANSITIONS.next(self._state, Trigger.FATAL_ERROR)
            raise _fatal(
                f"response head of {size} bytes is over the limit of {self.limits.max_header_size}"
            )
        self._head_start += size  # an informational head: the final one begins after it

    def next_event(self) -> ClientEvent | NeedData:
        """The next typed response or SSE event, or ``NEED_DATA``.

        Raises ``RemoteProtocolError`` when the server's bytes break HTTP or the protocol, and
        ``LocalProtocolError`` when called again after that (the connection is in ERROR).
        """
        if self._queue:
            return self._queue.popleft()
        if self._state is ConnectionState.ERROR:
            raise LocalProtocolError("connection is in ERROR", code=ConnectionErrorCode.ERROR)
        if self._state is ConnectionState.CLOSED:
            return NEED_DATA
        if self._state is ConnectionState.IDLE:
            return self._idle()
        while not self._queue:
            try:
                event = self._next_h11_event()
            except h11.RemoteProtocolError as exc:
                self._state = TRANSITIONS.next(self._state, Trigger.FATAL_ERROR)
                raise _fatal(str(exc) or "malformed HTTP response") from None
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return NEED_DATA
            if isinstance(event, h11.InformationalResponse):
                self._check_head()
                continue
            if isinstance(event, h11.Response):
                self._check_head()
                self._begin(event)
            elif isinstance(event, h11.Data):
                self._data(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self._end()
            elif isinstance(event, h11.ConnectionClosed):
                self._state = TRANSITIONS.next(self._state, Trigger.PEER_CLOSED)
                return NEED_DATA
        return self._queue.popleft()

    def _idle(self) -> NeedData:
        # No request is outstanding: nothing may arrive but the end of the connection.
        if self._pending_input():
            self._state = TRANSITIONS.next(self._state, Trigger.FATAL_ERROR)
            raise _fatal("the server sent bytes that answer no request")
        if self._eof:
            self._state = TRANSITIONS.next(self._state, Trigger.PEER_CLOSED)
        return NEED_DATA

    # The hooks below handle one h11 event each; with ``spans`` they run measured.

    def _begin(self, head: h11.Response) -> None:
        if self._spans is None:
            self._begin_response(head)
        else:
            self._spans.head(self._consumed(), self._queue, lambda: self._begin_response(head))

    def _data(self, data: bytes) -> None:
        if self._spans is None:
            self._body_data(data)
        else:
            self._spans.data(self._consumed(), data, self._queue, self._body_data)

    def _end(self) -> None:
        if self._spans is None:
            self._end_response()
        else:
            self._spans.end(self._consumed(), self._queue, self._end_response)

    def _begin_response(self, head: h11.Response) -> None:
        self._head = head
        self._body = bytearray()
        request = self._request
        # Raw bytes (never a decoding error half-way through a response).
        raw: dict[bytes, bytes] = dict(head.headers)
        content_type = raw.get(H.CONTENT_TYPE, b"").split(b";")[0].strip().lower()
        if (
            isinstance(request, Read)
            and request.live is LiveMode.SSE
            and head.status_code == 200
            and content_type == b"text/event-stream"
        ):
            self._sse = sse.SSEParser(
                max_line=self.limits.max_sse_line, max_event=self.limits.max_sse_event
            )
            encoding = raw.get(H.STREAM_SSE_DATA_ENCODING, b"")
            self._sse_base64 = encoding.strip().lower() == b"base64"
            self._state = TRANSITIONS.next(self._state, Trigger.SSE_STARTED)
            self._queue.append(SSEStart(base64=self._sse_base64))
            return
        for name, value in head.headers:
            if name == b"content-length" and int(value) > self.limits.max_body_size:
                self._state = TRANSITIONS.next(self._state, Trigger.FATAL_ERROR)
                raise _fatal(f"response body larger than {self.limits.max_body_size} bytes")

    def _body_data(self, data: bytes) -> None:
        if self._sse is not None:
            try:
                found = self._sse.feed(data)
                for raw in found:
                    if raw.event == "data":
                        self._queue.append(sse.decode_data(raw, base64_encoded=self._sse_base64))
                    elif raw.event == "control":
                        self._queue.append(sse.decode_control(raw))
                    # Other event types are extensions: ignored.
            except RemoteProtocolError:
                self._state = TRANSITIONS.next(self._state, Trigger.FATAL_ERROR)
                raise
            return
        self._body += data
        if len(self._body) > self.limits.max_body_size:
            self._state = TRANSITIONS.next(self._state, Trigger.FATAL_ERROR)
            raise _fatal(f"response body larger than {self.limits.max_body_size} bytes")

    def _end_response(self) -> None:
        head, request = self._head, self._request
        assert head is not None
        parser = self._sse
        streaming = parser is not None
        truncated = parser is not None and parser.pending
        self._sse = None
        self._head = None
        self._request = None
        body = bytes(self._body)
        self._body = bytearray()
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
            self._state = TRANSITIONS.next(self._state, Trigger.EXCHANGE_DONE)
        else:
            self._state = TRANSITIONS.next(self._state, Trigger.LAST_EXCHANGE_DONE)
        if streaming:
            self._queue.append(SSEEnd())
            if truncated:
                # The body ended inside an event: its data would be silently lost.
                raise RemoteProtocolError(
                    "the SSE body ended inside an event", code=ConnectionErrorCode.SSE, fatal=False
                )
        elif request is None:  # the answer to a request the server could not parse
            self._queue.append(parse_error(head.status_code, list(head.headers), body))
        else:
            self._queue.append(
                parse_response(
                    request,
                    head.status_code,
                    list(head.headers),
                    body,
                    self.limits.max_subscription_streams,
                )
            )
