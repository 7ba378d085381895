"""An S2S session over HTTP/1.1 (h11): one ``Connection``-shaped object per TCP connection.

The official SDKs speak HTTP/2; S2S also rides on HTTP/1.1 (chunked bodies), which is what this
class speaks so that the generic I/O adapters, and plain sockets, can carry a session. It joins
h11 (the HTTP/1.1 framing) with ``s2s.Connection`` (the frames inside the bodies) and the
request/response rules of ``s2s.http``.

Client: ``send(SessionRequest)`` writes the request head (a read session's GET has no body); then
``AppendInput``/``Terminal`` frames and ``EndOfBody()`` on an append session. Events: first
``SessionResponse`` (the 200 that opens the session; any other status raises the typed error its
JSON body describes), then the session's events; the end of the response body ends the session.

Server: events are ``SessionRequest`` (checked by ``s2s.http.parse_request``; a bad one raises
with an ``ErrorResponse`` reply) and then the session's events. It sends ``SessionResponse`` (or
an ``ErrorResponse``), then ``AppendAck``/``ReadBatch``/``Heartbeat`` frames, and ends with
``EndOfBody()`` or a ``Terminal`` (which also ends the body). One session per connection.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import h11

from s3p_codec._core import (
    NEED_DATA,
    LocalProtocolError,
    NeedData,
    RemoteProtocolError,
    ReplyAfterError,
    Role,
    drain,
    finished,
)
from s3p_codec._core.h11input import H11Input
from s3p_codec.s2s._connection import Connection, Session
from s3p_codec.s2s._errors import SessionTerminated
from s3p_codec.s2s._events import AppendInput, ErrorCode, Event, Terminal
from s3p_codec.s2s._limits import Limits
from s3p_codec.s2s._state import ConnectionState
from s3p_codec.s2s.http import (
    ErrorResponse,
    SessionRequest,
    SessionResponse,
    build_request,
    build_response,
    check_response,
    error_response,
    parse_request,
)

__all__ = ["EndOfBody", "Http1Connection", "Http1Event", "Http1SendEvent"]

_MAX_ERROR_BODY = 64 * 1024


@attrs.frozen(slots=True)
class EndOfBody:
    """Ends the body this end writes: a normal end of session ("the HTTP body just ends")."""


#: What ``Http1Connection.next_event`` yields.
Http1Event = SessionRequest | SessionResponse | Event
#: What ``Http1Connection.send`` accepts.
Http1SendEvent = SessionRequest | SessionResponse | ErrorResponse | EndOfBody | Event


def _h11_error(exc: h11.ProtocolError) -> RemoteProtocolError:
    return RemoteProtocolError(f"HTTP/1.1: {exc}", code=ErrorCode.BAD_HEADER)


class Http1Connection(H11Input):
    """One S2S session over one HTTP/1.1 connection (see the module docstring).

    ``host`` is the ``Host`` header a client sends (``"127.0.0.1:8080"``). Received bytes reach
    h11 in bounded slices (``_core.h11input``), so a head over h11's 16 KiB bound is refused
    whether it arrives whole or in pieces.
    """

    _eof_code = ErrorCode.BAD_FRAME

    def __init__(
        self, role: Role, *, host: str = "localhost", limits: Limits | None = None
    ) -> None:
        self._role = role
        self._host = host.encode("ascii")
        self._limits = limits if limits is not None else Limits()
        self._h11 = h11.Connection(h11.CLIENT if role is Role.CLIENT else h11.SERVER)
        self._session: Connection | None = None
        self._request: SessionRequest | None = None
        self._opened = False  # client: 200 seen; server: 200 sent
        self._early: list[bytes] = []  # server: request body bytes before the 200 was sent
        self._early_eof = False
        self._error_status: int | None = None
        self._error_body = bytearray()
        self._failed = False
        self._reply_gate = ReplyAfterError()  # what a server owes after a fatal error
        self._response_done = False
        self._start_input()

    # -- Connection protocol ---------------------------------------------------------------------

    @property
    def role(self) -> Role:
        """The role this connection speaks for."""
        return self._role

    @property
    def request(self) -> SessionRequest | None:
        """The request that opened (or is opening) the session."""
        return self._request

    @property
    def session(self) -> Connection | None:
        """The S2S session inside the bodies, once it exists."""
        return self._session

    @property
    def state(self) -> ConnectionState:
        """The session's state once it is open, ERROR after a failure, CLOSED after the response."""
        if self._failed:
            return ConnectionState.ERROR
        if self._session is not None and self._session.state is not ConnectionState.OPEN:
            return self._session.state
        if self._response_done:
            return ConnectionState.CLOSED
        return ConnectionState.OPEN

    @property
    def finished(self) -> bool:
        """True once the exchange is over (response done, or failed with no reply owed): close the
        transport.
        """
        if self._role is Role.SERVER:
            done = self._h11.our_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED)
        else:
            done = self._response_done
        return finished(self._reply_gate, ended=self._failed or done)

    def send(self, event: Http1SendEvent) -> bytes:
        """The bytes of a session request, response head, error response, session event or end of
        body.

        Raises ``LocalProtocolError`` when the event is not allowed now (HTTP/1.1 or S2S rules).
        """
        try:
            if self._role is Role.CLIENT:
                return self._client_send(event)
            return self._server_send(event)
        except h11.LocalProtocolError as exc:
            raise LocalProtocolError(f"HTTP/1.1: {exc}", code=ErrorCode.INVALID) from exc

    def next_event(self) -> Http1Event | NeedData:
        """The next HTTP head or session event, or ``NEED_DATA``.

        Raises ``SessionTerminated`` on a terminal frame and ``RemoteProtocolError`` when the peer
        breaks HTTP/1.1 or S2S (on a server, with the reply to send), or when called after that.
        """
        if self._failed:
            raise RemoteProtocolError("connection is in state ERROR", code=ErrorCode.BAD_FRAME)
        try:
            if self._role is Role.CLIENT:
                return self._client_next()
            return self._server_next()
        except SessionTerminated:
            raise
        except RemoteProtocolError as exc:
            self._failed = True
            if self._role is Role.SERVER and exc.reply is not None:
                self._reply_gate.owe(exc.reply)
            raise

    def events(self) -> Iterator[Http1Event]:
        """Every event the buffered bytes complete, until ``NEED_DATA``."""
        return drain(self.next_event)

    # -- client ------------------------------------------------------------------------------------

    def _client_send(self, event: Http1SendEvent) -> bytes:
        if isinstance(event, SessionRequest):
            if self._request is not None:
                raise LocalProtocolError("one session per connection", code=ErrorCode.INVALID)
            method, target, headers = build_request(event)
            headers = [(b"host", self._host), *headers]
            if event.session is Session.APPEND:
                headers.append((b"transfer-encoding", b"chunked"))
            data = self._h11.send(h11.Request(method=method, target=target, headers=headers))
            if event.session is Session.READ:
                data = (data or b"") + (self._h11.send(h11.EndOfMessage()) or b"")
            self._request = event
            self._session = Connection(
                Role.CLIENT, event.session, compression=event.accept, limits=self._limits
            )
            return data or b""
        if self._session is None:
            raise LocalProtocolError("send the SessionRequest first", code=ErrorCode.INVALID)
        if isinstance(event, EndOfBody):
            return self._h11.send(h11.EndOfMessage()) or b""
        if not isinstance(event, AppendInput | Terminal):
            raise LocalProtocolError(
                f"a client cannot send {type(event).__name__}", code=ErrorCode.INVALID
            )
        frame = self._session.send(event)
        data = self._h11.send(h11.Data(data=frame)) or b""
        if isinstance(event, Terminal):
            data += self._h11.send(h11.EndOfMessage()) or b""
        return data

    def _client_next(self) -> Http1Event | NeedData:
        while True:
            if self._opened and self._session is not None:
                event = self._session.next_event()
                if event is not NEED_DATA:
                    return event
                if self._session.state is not ConnectionState.OPEN:
                    return NEED_DATA
            try:
                item = self._next_h11_event()
            except h11.RemoteProtocolError as exc:
                raise _h11_error(exc) from exc
            if item is h11.NEED_DATA or item is h11.PAUSED:
                return NEED_DATA
            if isinstance(item, h11.InformationalResponse):
                continue
            if isinstance(item, h11.Response):
                if item.status_code != 200:
                    self._error_status = item.status_code
                    continue
                response = check_response(item.status_code, item.headers)
                self._opened = True
                return response
            if isinstance(item, h11.Data):
                if self._error_status is not None:
                    room = _MAX_ERROR_BODY - len(self._error_body)
                    self._error_body += bytes(item.data[:room])
                elif self._session is not None:
                    self._session.receive_data(bytes(item.data))
                continue
            if isinstance(item, h11.EndOfMessage):
                self._response_done = True
                if self._error_status is not None:
                    self._failed = True
                    check_response(self._error_status, [], bytes(self._error_body))
                if self._session is not None:
                    self._session.receive_data(b"")
                continue
            if isinstance(item, h11.ConnectionClosed):
                if not self._response_done:
                    raise RemoteProtocolError(
                        "connection closed before the response ended", code=ErrorCode.BAD_FRAME
                    )
                return NEED_DATA

    # -- server ------------------------------------------------------------------------------------

    def _server_send(self, event: Http1SendEvent) -> bytes:
        if isinstance(event, ErrorResponse) or (isinstance(event, Terminal) and not self._opened):
            if self._opened:
                raise LocalProtocolError(
                    "the session is open: end it with a Terminal", code=ErrorCode.INVALID
                )
            status, headers, body = error_response(event)
            data = self._h11.send(h11.Response(status_code=status, headers=headers)) or b""
            data += self._h11.send(h11.Data(data=body)) or b""
            data += self._h11.send(h11.EndOfMessage()) or b""
            # An error response answers whatever was owed: before the session opens, an S2S
            # error can only be told as a plain HTTP error, whichever form the reply had.
            self._reply_gate.forgive()
            return data
        if self._failed and not self._reply_gate.owed:
            raise LocalProtocolError("connection is in state ERROR", code=ErrorCode.INVALID)
        if isinstance(event, SessionResponse):
            if self._request is None or self._opened:
                raise LocalProtocolError(
                    "a SessionResponse answers one SessionRequest", code=ErrorCode.INVALID
                )
            status, headers = build_response(event)
            headers.append((b"transfer-encoding", b"chunked"))
            data = self._h11.send(h11.Response(status_code=status, headers=headers)) or b""
            self._session = Connection(
                Role.SERVER, self._request.session, compression=event.compression,
                limits=self._limits,
            )  # fmt: skip
            self._opened = True
            for chunk in self._early:
                self._session.receive_data(chunk)
            if self._early_eof:
                self._session.receive_data(b"")
            self._early.clear()
            return data
        if self._session is None:
            raise LocalProtocolError("send the SessionResponse first", code=ErrorCode.INVALID)
        if isinstance(event, EndOfBody):
            return self._h11.send(h11.EndOfMessage()) or b""
        if isinstance(event, SessionRequest):
            raise LocalProtocolError("a server cannot send a request", code=ErrorCode.INVALID)
        frame = self._session.send(event)
        # A frame the session let out settles what was owed (after an S2S error the session
        # lets out only its Terminal).
        self._reply_gate.forgive()
        data = self._h11.send(h11.Data(data=frame)) or b""
        if isinstance(event, Terminal):
            data += self._h11.send(h11.EndOfMessage()) or b""
        return data

    def _server_next(self) -> Http1Event | NeedData:
        while True:
            if self._opened and self._session is not None:
                try:
                    event = self._session.next_event()
                except RemoteProtocolError as exc:
                    if exc.reply is not None:
                        self._reply_gate.owe(exc.reply)
                    raise
                if event is not NEED_DATA:
                    return event
                if self._session.state is not ConnectionState.OPEN:
                    return NEED_DATA
            try:
                item = self._next_h11_event()
            except h11.RemoteProtocolError as exc:
                error = _h11_error(exc)
                error.reply = ErrorResponse(400, ErrorCode.BAD_HEADER.value, str(exc))
                raise error from exc
            if item is h11.NEED_DATA or item is h11.PAUSED:
                return NEED_DATA
            if isinstance(item, h11.Request):
                self._request = parse_request(item.method, item.target, item.headers)
                return self._request
            if isinstance(item, h11.Data):
                if self._session is not None:
                    self._session.receive_data(bytes(item.data))
                else:
                    self._early.append(bytes(item.data))
                continue
            if isinstance(item, h11.EndOfMessage):
                if self._session is not None:
                    self._session.receive_data(b"")
                else:
                    self._early_eof = True
                continue
            if isinstance(item, h11.ConnectionClosed):
                if self._h11.their_state is not h11.DONE and self._request is not None:
                    raise RemoteProtocolError(
                        "connection closed inside the request body", code=ErrorCode.BAD_FRAME
                    )
                return NEED_DATA
