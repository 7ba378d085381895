"""The RustLog state machine for one end of one TCP connection.

States, as the spec draws them ("Connection Lifecycle")::

    CONNECTED → REQUEST_ACTIVE → CONNECTED → CLOSED
         ↑            ↓
         └── ERROR ←──┘

``TCP_CONNECTING`` belongs to the transport: a codec is made once the socket is up, so it
starts in ``CONNECTED``. The diagram's arrow from ERROR back to CONNECTED contradicts the
state's own definition ("connection terminated"); ERROR is final here, and recoverable errors
never enter it. ``REQUEST_ACTIVE`` means "Processing request, response pending": at
least one request has been sent (client) or received (server) and not yet answered. ``ERROR``
("Protocol violation, connection terminated") and ``CLOSED`` are final. Every legal move is in
one table, ``rustlog._state.TRANSITIONS``.

The protocol has no request ids: a response answers the oldest unanswered request, and its
type must be that request's type + 0x80, or ``Error`` (0xFF), which answers anything.

- Client role: one request in flight at a time by default ("Synchronous request processing (one
  at a time)"); sending a second before the first is answered raises ``LocalProtocolError``.
  ``pipelining=True`` lifts that: requests queue and responses are paired in order. A response
  of the wrong type, or any frame while nothing is in flight, is fatal: pairing is lost. A
  well-framed response the client cannot accept (unknown type, bad fields) raises a recoverable
  ``RemoteProtocolError`` and counts as the answer to its request.
- Server role: requests are answered in the order received (pipelined requests are simply
  queued). A recoverable error ("Unknown request type", "Invalid request fields") raises
  ``RemoteProtocolError(fatal=False)`` whose ``reply`` is the ``Error`` response to send; the
  connection stays open and the bad request counts as answered once that reply is sent. A fatal
  error moves to ``ERROR``; its ``reply`` (an ``Error``) may still be sent once, then
  ``finished`` is True and the transport should be closed.

Receiving decodes ahead: ``next_event`` turns every complete frame buffered (up to 16 KB at a
time) into events in one pass, then hands them out one per call, and only then applies each to
the state (pairing, in-flight count, errors), so what a caller sees is what decoding one frame
per call would give. Per frame this saves most of the fixed cost of the Python calls.

End of stream (``receive_data(b"")``): complete frames still come out; a partial frame left
over is a fatal error (the peer closed mid-frame); otherwise the state becomes ``CLOSED``. A
server may still answer requests it received before the end (the peer may have half-closed).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Final, NoReturn

from s3p_codec._core import (
    NEED_DATA,
    FrameTooLong,
    LocalProtocolError,
    NeedData,
    ReceiveBuffer,
    RemoteProtocolError,
    ReplyAfterError,
    Role,
    drain,
    finished,
)
from s3p_codec.rustlog import _schema
from s3p_codec.rustlog._events import (
    RESPONSE_TO,
    RESPONSE_TYPES,
    Error,
    ErrorCode,
    Event,
    Response,
)
from s3p_codec.rustlog._json_backend import JsonBackend, backend
from s3p_codec.rustlog._limits import LENGTH_FIELD_SIZE, Limits
from s3p_codec.rustlog._state import TRANSITIONS, ConnectionState, Trigger
from s3p_codec.rustlog._wire import HEADER, FrameDecoder, encode_frame, length_error

__all__ = ["Connection"]

_RESPONSES = frozenset(RESPONSE_TYPES)
# Looked up by the class of anything decoded (an error's class is simply not found).
_RESPONSE_TO: dict[object, type[Response]] = dict(RESPONSE_TO.items())


# Module constants: reading an Enum member through its class costs about 0.1 µs in CPython 3.11,
# as much as the rest of the bookkeeping of a frame.
_ERROR: Final = ConnectionState.ERROR
_CLOSED: Final = ConnectionState.CLOSED
# Each trigger's moves (``_state.TRANSITIONS``), looked up once per message.
_ON_REQUEST_SENT: Final = TRANSITIONS.on(Trigger.REQUEST_SENT)
_ON_REQUEST_RECEIVED: Final = TRANSITIONS.on(Trigger.REQUEST_RECEIVED)
_ON_ALL_ANSWERED: Final = TRANSITIONS.on(Trigger.ALL_ANSWERED)
_ON_PEER_CLOSED: Final = TRANSITIONS.on(Trigger.PEER_CLOSED)
_ON_FATAL_ERROR: Final = TRANSITIONS.on(Trigger.FATAL_ERROR)
_SERVER: Final = Role.SERVER
_CLIENT: Final = Role.CLIENT


class Connection:
    """A sans-IO RustLog connection: ``send`` events to bytes, ``receive_data`` bytes to events.

    ``json`` picks the JSON backend: ``"json"`` (standard library), ``"orjson"``, or None for
    orjson when installed. Both give the same events and errors.
    """

    def __init__(
        self,
        role: Role,
        limits: Limits | None = None,
        *,
        pipelining: bool = False,
        json: str | JsonBackend | None = None,
    ) -> None:
        self._role = role
        self._limits = limits if limits is not None else Limits()
        self._pipelining = pipelining
        self._json = backend(json)
        self._context = _schema.Context(self._limits, self._json.exact_integers)
        self._buffer = ReceiveBuffer()
        self._state = TRANSITIONS.initial
        # What may answer each unanswered request, oldest first (Error answers anything).
        self._awaiting: deque[type[Response]] = deque()
        # Frames decoded ahead (events, or the errors to raise), handed out one per call.
        self._ready: deque[Event | RemoteProtocolError] = deque()
        self._frames = FrameDecoder(self._context, self._json, requests=role is _SERVER)
        self._eof = False
        # The buffer starts with a frame a chunk boundary cut: ``take_frame`` takes it.
        self._cut = False
        self._error: RemoteProtocolError | None = None
        self._reply_gate = ReplyAfterError()  # the Error a server may send after a fatal error

    def __repr__(self) -> str:
        return f"<rustlog.Connection {self._role.value} {self._state.name}>"

    # --- introspection ----------------------------------------------------------------------

    @property
    def role(self) -> Role:
        """The role this connection speaks for."""
        return self._role

    @property
    def state(self) -> ConnectionState:
        """Where the connection is (``ConnectionState``); CLOSED and ERROR are final."""
        return self._state

    @property
    def limits(self) -> Limits:
        """The bounds this connection enforces."""
        return self._limits

    @property
    def json(self) -> JsonBackend:
        """The JSON backend in use."""
        return self._json

    @property
    def pipelining(self) -> bool:
        """True when a client may have several requests in flight (responses pair by order)."""
        return self._pipelining

    @property
    def in_flight(self) -> int:
        """Requests sent (client) or received (server) and not answered yet."""
        return len(self._awaiting)

    @property
    def finished(self) -> bool:
        """True once the connection can carry no more traffic: close the transport.

        After the peer's end, a server still owes the answers to the requests it received.
        """
        return finished(
            self._reply_gate,
            ended=self._state is _ERROR,
            closed=self._state is _CLOSED,
            outstanding=self._role is _SERVER and bool(self._awaiting),
        )

    # --- sending ----------------------------------------------------------------------------

    def send(self, event: Event) -> bytes:
        """The frame for ``event``; ``LocalProtocolError`` (and nothing sent) if not allowed."""
        if self._state is _ERROR:
            gate = self._reply_gate
            reply = gate.reply
            if gate.pay(event):
                try:
                    return encode_frame(event, self._json, self._limits)
                except LocalProtocolError:
                    gate.owe(reply)  # an invalid Error is not sent: the reply is still owed
                    raise
            raise LocalProtocolError(
                "the connection is in its ERROR state", code=ErrorCode.INVALID_REQUEST
            )
        if self._role is _CLIENT:
            return self._send_request(event)
        return self._send_response(event)

    def _send_request(self, event: Event) -> bytes:
        expected = RESPONSE_TO.get(type(event))  # type: ignore[arg-type]
        if expected is None:
            raise LocalProtocolError(
                f"a client sends requests, not {type(event).__name__}",
                code=ErrorCode.INVALID_REQUEST,
            )
        if self._state is _CLOSED:
            raise LocalProtocolError("the connection is closed", code=ErrorCode.INVALID_REQUEST)
        if self._awaiting and not self._pipelining:
            raise LocalProtocolError(
                "one request in flight at a time: the protocol has no request ids, so wait for "
                "the response (or create the connection with pipelining=True)",
                code=ErrorCode.INVALID_REQUEST,
            )
        data = encode_frame(event, self._json, self._limits)
        self._awaiting.append(expected)
        self._state = _ON_REQUEST_SENT[self._state]
        return data

    def _send_response(self, event: Event) -> bytes:
        if type(event) not in _RESPONSES:
            raise LocalProtocolError(
                f"a server sends responses, not {type(event).__name__}",
                code=ErrorCode.INVALID_REQUEST,
            )
        if not self._awaiting:
            raise LocalProtocolError("no request awaits a response", code=ErrorCode.INVALID_REQUEST)
        expected = self._awaiting[0]
        if type(event) is not expected and type(event) is not Error:
            raise LocalProtocolError(
                f"the oldest unanswered request expects {expected.TYPE} or Error, "
                f"not {type(event).__name__}",
                code=ErrorCode.INVALID_REQUEST,
            )
        data = encode_frame(event, self._json, self._limits)
        self._answered()
        return data

    def _answered(self) -> None:
        self._awaiting.popleft()
        if not self._awaiting:
            self._state = _ON_ALL_ANSWERED[self._state]

    # --- receiving --------------------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes from the peer; ``b""`` means the peer closed its side.

        Raises ``LocalProtocolError`` for bytes fed after the end of the stream.
        """
        if self._eof:
            if data:
                raise LocalProtocolError(
                    "data received after the end of the stream", code=ErrorCode.INVALID_REQUEST
                )
            return
        if not data:
            self._eof = True
        elif self._state is not _ERROR:
            self._buffer.feed(data)

    def next_event(self) -> Event | NeedData:
        """The next event, or ``NEED_DATA``; ``RemoteProtocolError`` if the peer broke the rules.

        All complete frames buffered are decoded in one pass (``FrameDecoder``) into a queue of
        events and errors; each call hands out the next one and only then applies it to the
        state, so states, pairing and errors come one frame at a time, as if decoded one by one.
        """
        ready = self._ready
        if not ready:
            if self._state is _ERROR:
                assert self._error is not None
                raise RemoteProtocolError(
                    f"the connection is in its ERROR state: {self._error.message}",
                    code=self._error.code,
                )
            if self._cut:
                # The frame a chunk boundary cut (its payload collected aside if big).
                payload = self._take_frame()
                if payload is None:
                    return self._need_data()
                self._cut = False
                self._frames.decode_one(payload, ready)
            else:
                buffer = self._buffer
                data, start, end = buffer.window()
                if end - start > LENGTH_FIELD_SIZE:
                    used = self._frames.decode(data, start, end, ready)
                    if used != start:
                        buffer.skip(used - start)
                if not ready:
                    return self._no_frame()
        item = ready.popleft()
        if self._role is _SERVER:
            expected = _RESPONSE_TO.get(item.__class__)
            if expected is None:
                return self._request_failed(item)  # type: ignore[arg-type]
            self._awaiting.append(expected)
            self._state = _ON_REQUEST_RECEIVED[self._state]
            return item  # type: ignore[return-value]
        awaiting = self._awaiting
        if awaiting:
            cls = item.__class__
            if cls is awaiting[0] or cls is Error:
                awaiting.popleft()  # inlined _answered
                if not awaiting:
                    self._state = _ON_ALL_ANSWERED[self._state]
                return item  # type: ignore[return-value]
        return self._response_failed(item)

    def _no_frame(self) -> Event | NeedData:
        """No whole frame starts the buffer: a header the limits refuse is fatal now, else
        wait, and take the frame with ``take_frame`` once the chunks complete it."""
        payload = self._take_frame()
        if payload is not None:  # pragma: no cover - the frame loop takes every whole frame
            self._frames.decode_one(payload, self._ready)
            return self.next_event()
        self._cut = bool(self._buffer)
        return self._need_data()

    def _take_frame(self) -> bytes | None:
        """The payload of the frame starting the buffer, or None until all of it is here.

        ``ReceiveBuffer.take_frame`` collects a big payload aside meanwhile, so its chunks are
        copied once. A length the limits refuse is fatal as soon as the header is here.
        """
        try:
            frame = self._buffer.take_frame(HEADER, self._limits.max_frame_size)
        except FrameTooLong as exc:
            length = exc.length
        else:
            if frame is None:
                return None
            (length,), payload = frame
            if length:
                return payload
        error = length_error(length, self._limits)  # judged on the header alone
        assert error is not None  # over the limit, or 0
        self._fail(error, reply=True)
        raise error

    def _request_failed(self, exc: RemoteProtocolError) -> NoReturn:
        """A server's bad request: answer it with an Error and go on, unless it is fatal."""
        if exc.fatal:
            if self._error is None:
                self._fail(exc, reply=True)
        else:
            # "Unknown request type (return Error response)", "Invalid request fields (return
            # Error response)": the reply answers the bad request.
            exc.reply = _error_reply(exc)
            self._request_received(Error)
        raise exc

    def _response_failed(self, item: Event | RemoteProtocolError) -> NoReturn:
        """A client's frame that is not the answer awaited (or not a valid one)."""
        if not self._awaiting:
            error = RemoteProtocolError(
                "the server sent a frame while no request awaits a response",
                code=ErrorCode.INVALID_REQUEST,
            )
        elif isinstance(item, RemoteProtocolError):
            if not item.fatal:
                self._answered()  # a well-framed answer, however bad: pairing holds
                raise item
            error = item
        else:
            error = RemoteProtocolError(
                f"expected {self._awaiting[0].TYPE} or Error in answer to the oldest request, "
                f"got {item.TYPE}",
                code=ErrorCode.INVALID_REQUEST,
            )
        self._fail(error, reply=True)
        raise error

    def _need_data(self) -> NeedData:
        if self._eof and self._state is not _CLOSED:
            if self._buffer:
                error = RemoteProtocolError(
                    f"the peer closed the connection mid-frame "
                    f"({len(self._buffer)} bytes of a frame left)",
                    code=ErrorCode.INVALID_REQUEST,
                )
                self._fail(error, reply=False)  # nobody is left to read a reply
                raise error
            self._state = _ON_PEER_CLOSED[self._state]
        return NEED_DATA

    def events(self) -> Iterator[Event]:
        """Every event that the buffered bytes complete, until ``NEED_DATA``."""
        return drain(self.next_event)

    def _request_received(self, expected: type[Response]) -> None:
        self._awaiting.append(expected)
        self._state = _ON_REQUEST_RECEIVED[self._state]

    def _fail(self, exc: RemoteProtocolError, *, reply: bool) -> None:
        self._state = _ON_FATAL_ERROR[self._state]
        self._error = exc
        self._awaiting.clear()
        self._ready.clear()
        self._buffer = ReceiveBuffer()
        self._cut = False
        if self._role is _SERVER and reply:
            exc.reply = _error_reply(exc)
            self._reply_gate.owe(exc.reply)


def _error_reply(exc: RemoteProtocolError) -> Error:
    """The Error response that answers the request ``exc`` was raised for."""
    code = exc.code if isinstance(exc.code, int) else ErrorCode.INVALID_REQUEST
    return Error(code, exc.message)
