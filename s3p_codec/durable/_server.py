"""The server role of ``durable.Connection``: HTTP requests in, typed requests out; responses back.

h11 frames HTTP/1.1 (keep-alive, chunked bodies, pipelining); this class types each complete
request and validates it per the protocol. A broken rule in a well-framed request raises a
non-fatal ``RemoteProtocolError`` whose ``reply`` is the ``ErrorResponse`` to send; the
connection carries on with the next request. Broken HTTP framing is fatal: the reply is sent
once (with ``Connection: close``), then ``finished`` is True.

Bodies are bounded by ``Limits.max_body_size``: a ``Content-Length`` over it is refused with
413 as soon as the head arrives, before the body.
"""

from __future__ import annotations

from typing import NoReturn

import h11

from s3p_codec._core.errors import LocalProtocolError, RemoteProtocolError
from s3p_codec._core.h11input import H11Input
from s3p_codec._core.lifecycle import ReplyAfterError, finished
from s3p_codec._core.types import NEED_DATA, NeedData, Role
from s3p_codec.durable import sse
from s3p_codec.durable._events import (
    ConnectionErrorCode,
    ErrorCode,
    ErrorResponse,
    Request,
    Response,
    SSEControl,
    SSEData,
    SSEEnd,
    SSEStart,
)
from s3p_codec.durable._limits import Limits
from s3p_codec.durable._requests import parse_request
from s3p_codec.durable._responses import build_response
from s3p_codec.durable._state import TRANSITIONS, ConnectionState, Trigger
from s3p_codec.durable._subscription_events import SubscriptionError
from s3p_codec.durable.offsets import is_sentinel, offset_error


def _fatal(message: str, status: int) -> RemoteProtocolError:
    try:
        code = ErrorCode(status)
    except ValueError:
        code = ErrorCode.BAD_REQUEST
    return RemoteProtocolError(message, code=code, fatal=True, reply=ErrorResponse(code, message))


class _ServerConnection(H11Input):
    """One server-side HTTP/1.1 connection speaking Durable Streams: what
    ``durable.Connection(Role.SERVER, ...)`` runs (the package's Observer uses it directly).
    """

    _eof_code = ConnectionErrorCode.EOF

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._h11 = h11.Connection(
            h11.SERVER, max_incomplete_event_size=self.limits.max_header_size
        )
        self._state = TRANSITIONS.initial
        self._head: h11.Request | None = None
        self._body = bytearray()
        self._request: Request | None = None  # answered by the next send
        self._reply_gate = ReplyAfterError()  # a remote error's reply may still be sent
        self._sse_base64 = False
        self._start_input(self.limits.max_header_size)

    @property
    def role(self) -> Role:
        """Always ``Role.SERVER``."""
        return Role.SERVER

    @property
    def state(self) -> ConnectionState:
        """Where the connection is: IDLE, reading a request, answering, streaming SSE, CLOSED or
        ERROR.
        """
        return self._state

    @property
    def finished(self) -> bool:
        """True once no more traffic can flow: close the transport."""
        return finished(
            self._reply_gate,
            ended=self._state is ConnectionState.CLOSED or self._state is ConnectionState.ERROR,
        )

    @property
    def request(self) -> Request | None:
        """The request the next response answers (None when none is owed)."""
        return self._request

    @property
    def message_start(self) -> int:
        """Stream offset where the request being read begins: once a request is complete, the
        end of its message (where the next one begins)."""
        return self._head_start

    @property
    def request_line(self) -> tuple[bytes, bytes] | None:
        """Method and target of the request head read last, until its answer is sent (also
        when the request was refused: they say what the refusal answers)."""
        head = self._head
        return None if head is None else (head.method, head.target)

    # -- receiving ------------------------------------------------------------------------

    def next_event(self) -> Request | NeedData:
        """The next complete request, or ``NEED_DATA``.

        Raises ``RemoteProtocolError`` (with the ``ErrorResponse`` to send as ``reply``) when the
        client's bytes break HTTP or the protocol, and ``LocalProtocolError`` when called again
        after a fatal error whose reply was already sent.
        """
        if self._state is ConnectionState.ERROR:
            if self._reply_gate.owed:
                return NEED_DATA
            raise LocalProtocolError("connection is in ERROR", code=ConnectionErrorCode.ERROR)
        if self._state is ConnectionState.CLOSED or self._request is not None:
            return NEED_DATA  # one request at a time: answer it first
        while True:
            try:
                event = self._next_h11_event()
            except h11.RemoteProtocolError as exc:
                self._state = TRANSITIONS.next(self._state, Trigger.FATAL_ERROR)
                error = _fatal(str(exc) or "malformed HTTP request", exc.error_status_hint)
                # A reply is owed unless a response is already under way.
                answerable = self._h11.our_state in (h11.IDLE, h11.SEND_RESPONSE)
                self._reply_gate.owe(error.reply if answerable else None)
                raise error from None
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return NEED_DATA
            if isinstance(event, h11.Request):
                self._begin(event)
            elif isinstance(event, h11.Data):
                self._body += event.data
                if len(self._body) > self.limits.max_body_size:
                    self._fail_too_large()
            elif isinstance(event, h11.EndOfMessage):
                return self._complete()
            elif isinstance(event, h11.ConnectionClosed):
                self._state = TRANSITIONS.next(self._state, Trigger.PEER_CLOSED)
                return NEED_DATA

    def _begin(self, head: h11.Request) -> None:
        self._head = head  # before any refusal: its reply answers this head (a HEAD's has no body)
        head_size = self._head_size()  # see ``H11Input``: measured however the bytes arrived
        if head_size > self.limits.max_header_size:
            self._fail(
                f"request head of {head_size} bytes is over the limit of "
                f"{self.limits.max_header_size}",
                ErrorCode.REQUEST_HEADER_FIELDS_TOO_LARGE,
            )
        names = {name for name, _ in head.headers}
        if b"content-length" in names and b"transfer-encoding" in names:
            # RFC 9112 6.3: both framings in one request "might indicate an attempt to perform
            # request smuggling"; a server "MAY reject" it and "MUST close the connection after
            # responding". Rejected with 400, and the connection closes: a second request
            # hidden in the body is never read.
            self._fail(
                "a request with both Content-Length and Transfer-Encoding", ErrorCode.BAD_REQUEST
            )
        self._body = bytearray()
        self._state = TRANSITIONS.next(self._state, Trigger.REQUEST_RECEIVED)
        for name, value in head.headers:
            if name == b"content-length" and int(value) > self.limits.max_body_size:
                self._fail_too_large()

    def _fail_too_large(self) -> None:
        # "413 Payload Too Large: Request body exceeds server limits" - refused from the
        # Content-Length alone, before the body arrives; the unread body forces a close.
        self._fail(
            f"request body larger than {self.limits.max_body_size} bytes",
            ErrorCode.PAYLOAD_TOO_LARGE,
        )

    def _fail(self, message: str, status: int) -> NoReturn:
        """A fatal error whose reply is still to be sent (then the connection closes)."""
        self._state = TRANSITIONS.next(self._state, Trigger.FATAL_ERROR)
        error = _fatal(message, status)
        self._reply_gate.owe(error.reply)
        raise error

    def _complete(self) -> Request:
        head = self._head
        assert head is not None
        self._head_start = self._consumed()
        body = bytes(self._body)
        self._body = bytearray()
        try:
            request = parse_request(head.method, head.target, list(head.headers), body, self.limits)
        except RemoteProtocolError as exc:
            self._request = None
            self._reply_gate.owe(exc.reply)  # the refusal answers this request
            raise
        self._request = request
        return request

    # -- sending --------------------------------------------------------------------------

    def send(self, event: Response | SSEData | SSEControl | SSEEnd) -> bytes:
        """The bytes of a response (or of one SSE event of a streaming response).

        Raises ``LocalProtocolError`` when no request is waiting for an answer, when an SSE response
        is open and ``event`` is not an SSE event, or when the response breaks a protocol rule.
        """
        if isinstance(event, (SSEData, SSEControl, SSEEnd)):
            return self._send_sse(event)
        if self._state is ConnectionState.STREAMING:
            raise LocalProtocolError(
                "an SSE response is open: send SSE events", code=ConnectionErrorCode.STATE
            )
        answering = self._request
        if answering is None and not self._reply_gate.owed:
            raise LocalProtocolError(
                "no request is waiting for a response", code=ConnectionErrorCode.STATE
            )
        if answering is None and not isinstance(event, (ErrorResponse, SubscriptionError)):
            raise LocalProtocolError(
                "only an ErrorResponse (or a SubscriptionError) answers a rejected request",
                code=ConnectionErrorCode.STATE,
            )
        fatal = self._state is ConnectionState.ERROR
        is_head = self._head is not None and self._head.method.upper() == b"HEAD"
        head, body = build_response(answering, event, close=fatal, head=is_head)
        try:
            out = self._h11.send(head) or b""
            if isinstance(event, SSEStart):
                self._sse_base64 = event.base64
                self._state = TRANSITIONS.next(self._state, Trigger.SSE_STARTED)
                return out
            if body:
                out += self._h11.send(h11.Data(data=body)) or b""
            out += self._h11.send(h11.EndOfMessage()) or b""
        except h11.LocalProtocolError as exc:
            self._state = TRANSITIONS.next(self._state, Trigger.SEND_FAILED)
            self._reply_gate.forgive()
            raise LocalProtocolError(str(exc), code=ConnectionErrorCode.HTTP) from None
        if answering is None:
            # This answers the refusal, in either error form (a SubscriptionError for the
            # ErrorResponse owed, or the reverse): the reply owed is settled.
            self._reply_gate.forgive()
        self._finish_cycle(paid=answering is None)
        return out

    def _send_sse(self, event: SSEData | SSEControl | SSEEnd) -> bytes:
        if self._state is not ConnectionState.STREAMING:
            raise LocalProtocolError("no SSE response is open", code=ConnectionErrorCode.STATE)
        if isinstance(event, SSEData):
            payload = sse.encode_data(event.data, base64_encoded=self._sse_base64)
        elif isinstance(event, SSEControl):
            self._check_control(event)
            payload = sse.encode_control(event)
        else:
            out = self._h11.send(h11.EndOfMessage()) or b""
            self._finish_cycle()
            return out
        return self._h11.send(h11.Data(data=payload)) or b""

    @staticmethod
    def _check_control(event: SSEControl) -> None:
        why = offset_error(event.next_offset)
        if why is not None or is_sentinel(event.next_offset):
            raise LocalProtocolError(
                f"invalid streamNextOffset: {why or 'sentinel'}",
                code=ConnectionErrorCode.STATE,
                fatal=False,
            )
        if event.cursor is None and not event.closed:
            # "MUST include streamCursor when the stream is open"
            raise LocalProtocolError(
                "an open stream's control event MUST carry a cursor",
                code=ConnectionErrorCode.STATE,
                fatal=False,
            )

    def _finish_cycle(self, *, paid: bool = False) -> None:
        """A response is complete: the next request may come, unless it answered a fatal error
        (``paid``: it was the reply owed), after which the connection stays in ERROR."""
        self._request = None
        self._head = None
        if paid and self._state is ConnectionState.ERROR:
            return
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
            self._state = TRANSITIONS.next(self._state, Trigger.EXCHANGE_DONE)
        else:
            self._state = TRANSITIONS.next(self._state, Trigger.LAST_EXCHANGE_DONE)
