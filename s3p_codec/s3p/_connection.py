"""The S3P state machine for one end of one connection (client or server role), v0.1.0 or
v0.2.0 (``version=``; S3P has no handshake, so both ends must be configured alike).

Server role: bytes in are commands, events out are ``Create``/``Append``/``Read``/``Trim``/
``Delete`` in the order received; ``send`` takes the replies, which must answer the requests in
order ("Servers MUST reply in order"). A malformed request raises ``RemoteProtocolError`` whose
``code`` is the S3P error code and whose ``reply`` is the ``ErrorReply`` to send; the connection
is then in ERROR and accepts exactly that one send. Sending any ``ErrorReply`` closes the
connection ("After sending any Error reply, servers MUST close the connection immediately"):
the state becomes CLOSED, ``finished`` True, and pipelined requests still buffered are dropped.

Client role: ``send`` takes requests and remembers them; bytes in are replies, each typed by the
request it answers (pipelined, in order). An ``ErrorReply`` ends the connection (the server
closes after it): the state becomes CLOSED.

v0.2.0 makes some errors recoverable (``ERR_STREAM_EXISTS``, ``ERR_UNKNOWN_STREAM``,
``ERR_NON_MONOTONIC_ID``): sending one (server) or receiving one (client) answers its request
and leaves the connection OPEN; pipelined requests behind it are still read and answered in
order. ``keeps_open(code)`` says which codes do that for the configured version. Errors the
codec raises for malformed bytes (``ERR_BAD_FORMAT``, ``ERR_LIMITS``) stay fatal in both.

End of stream (``receive_data(b"")``): complete events still come out; a partial frame left then
raises ``RemoteProtocolError``; otherwise the state is CLOSED and ``next_event`` returns
``NEED_DATA`` for ever. A server may still send the replies it owes for requests already read
(the client may half-close after pipelining). Every legal state change is in one table,
``s3p._state.TRANSITIONS``.

Plan. Received bytes go into one ``WireBuffer``, read by the one parser the role needs: a
server's ``CommandParser`` (``_readers``) or a client's ``ReplyParser`` (``_replies``), which is
told the request each reply answers. ``_pending`` is the queue both roles pair by: a client
appends what it sends and pops what is answered; a server appends what it reads and pops what
it answers. Sending checks, then encodes (``_writers``), then changes state, so a refused send
changes nothing. ``next_event`` is the hot path: when the last read came up short, the buffer
noted how much it needs (``ReceiveBuffer.want``), and one comparison returns ``NEED_DATA``
before any parser runs (one-byte feeds cost O(1) each). Parsers raise the internal
``Malformed``, turned into the public ``RemoteProtocolError`` once, here (``remote_error``). An
error the peer caused is kept and raised again on every later call; a server then owes one
``ErrorReply`` (``ReplyAfterError`` counts it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

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
from s3p_codec.s3p._events import (
    Append,
    Create,
    Delete,
    ErrorCode,
    ErrorReply,
    Event,
    Read,
    Request,
    Trim,
)
from s3p_codec.s3p._limits import Limits
from s3p_codec.s3p._readers import CommandParser
from s3p_codec.s3p._replies import ReplyParser
from s3p_codec.s3p._state import TRANSITIONS, ConnectionState, Trigger
from s3p_codec.s3p._version import Version, rules_for
from s3p_codec.s3p._wire import Malformed, WireBuffer, is_text
from s3p_codec.s3p._writers import encode_reply, encode_request, validate_error, validate_reply

__all__ = ["Connection"]

_REQUEST_TYPES = (Create, Append, Read, Trim, Delete)


def remote_error(error: Malformed, role: Role) -> RemoteProtocolError:
    """The public error for a spec violation; servers get the ``ErrorReply`` to send."""
    # The reply carries the message on the wire, where an Error line is printable ASCII only.
    message = error.message if is_text(error.message.encode("utf-8")) else "malformed request"
    reply = ErrorReply(error.code, message) if role is Role.SERVER else None
    return RemoteProtocolError(message, code=error.code, fatal=True, reply=reply)


_OPEN = ConnectionState.OPEN
# The state moves by one ``Step`` per trigger (a dict looked up by the current state, raising
# ``IllegalTransition`` for a move the table lacks): the one way this module steps it.
_ON_CLOSING_ERROR_SENT = TRANSITIONS.on(Trigger.CLOSING_ERROR_SENT)
_ON_CLOSING_ERROR_RECEIVED = TRANSITIONS.on(Trigger.CLOSING_ERROR_RECEIVED)
_ON_PEER_CLOSED = TRANSITIONS.on(Trigger.PEER_CLOSED)
_ON_FATAL_ERROR = TRANSITIONS.on(Trigger.FATAL_ERROR)


class Connection:
    """One end of an S3P connection; see the module docstring for the rules it keeps."""

    def __init__(
        self, role: Role, limits: Limits | None = None, *, version: str | Version = "0.1.0"
    ) -> None:
        """``version`` is ``"0.1.0"`` (default) or ``"0.2.0"``; ValueError for anything else."""
        if not isinstance(role, Role):
            raise TypeError(f"role must be a Role, got {role!r}")
        self._role = role
        self.rules = rules_for(version)
        self.version = Version(version)
        self.limits = Limits() if limits is None else limits
        self._state = TRANSITIONS.initial
        self._buffer = WireBuffer()
        self._eof = False
        self._error: RemoteProtocolError | None = None
        # A server may send one ErrorReply after the peer broke the protocol (the error's reply).
        self._reply_gate = ReplyAfterError()
        # An Error reply that closes the connection was sent (server) or received (client).
        self._ended = False
        # Client: requests sent and not answered. Server: requests read and not answered.
        self._pending: deque[Request] = deque()
        server = role is Role.SERVER
        self._commands = CommandParser(self._buffer, self.limits, self.rules) if server else None
        self._replies = ReplyParser(self._buffer, self.limits, self.rules) if not server else None

    def __repr__(self) -> str:
        return (
            f"<s3p.Connection {self._role.value} {self._state.name}"
            f" pending={len(self._pending)} buffered={len(self._buffer)}>"
        )

    @property
    def role(self) -> Role:
        """The role this connection speaks for."""
        return self._role

    @property
    def state(self) -> ConnectionState:
        """Where the connection is (``ConnectionState``); CLOSED and ERROR are final."""
        return self._state

    @property
    def pending(self) -> int:
        """Requests awaiting a reply (client: sent; server: received and not yet answered)."""
        return len(self._pending)

    def keeps_open(self, code: ErrorCode) -> bool:
        """True if an Error reply with ``code`` leaves the connection open in this version
        (v0.2.0's recoverable errors); False if the server closes after it."""
        return self.rules.keeps_open(code)

    @property
    def finished(self) -> bool:
        """True once no more traffic can flow: close the transport.

        A client is done once it is not OPEN; a server once the Error reply it owes is sent,
        and, after the peer closed cleanly, once every request read is answered.
        """
        state = self._state
        return finished(
            self._reply_gate,
            ended=state is ConnectionState.ERROR
            or self._ended
            or (state is ConnectionState.CLOSED and self._role is Role.CLIENT),
            closed=state is ConnectionState.CLOSED,
            outstanding=bool(self._pending),
        )

    # -- sending ----------------------------------------------------------------------------

    def send(self, event: Event) -> bytes:
        """The bytes for ``event``; ``LocalProtocolError`` (nothing emitted) if forbidden."""
        if self._role is Role.CLIENT:
            return self._send_request(event)
        return self._send_reply(event)

    def _send_request(self, event: Event) -> bytes:
        if not isinstance(event, _REQUEST_TYPES):
            raise LocalProtocolError(
                f"a client sends requests, not {type(event).__name__}", code=ErrorCode.BAD_FORMAT
            )
        if self._state is not ConnectionState.OPEN:
            raise LocalProtocolError(
                f"cannot send on a {self._state.name} connection", code=ErrorCode.BAD_FORMAT
            )
        data = encode_request(event, self.limits, rules=self.rules)
        self._pending.append(event)  # only once encoded: a refused request is not awaited
        return data

    def _send_reply(self, event: Event) -> bytes:
        if isinstance(event, _REQUEST_TYPES):
            raise LocalProtocolError(
                f"a server sends replies, not {type(event).__name__}", code=ErrorCode.BAD_FORMAT
            )
        state = self._state
        if state is ConnectionState.ERROR:
            gate = self._reply_gate
            if not gate.owed or not isinstance(event, ErrorReply):
                raise LocalProtocolError(
                    "after a protocol error only one ErrorReply may be sent",
                    code=ErrorCode.BAD_FORMAT,
                )
            validate_error(event, self.rules)
            # "After sending any Error reply, servers MUST close the connection immediately."
            gate.pay(event)
            self._ended = True
            self._state = _ON_CLOSING_ERROR_SENT[state]
            return encode_reply(event)
        if self._ended or not self._pending:
            raise LocalProtocolError(
                "no request is waiting for a reply"
                if not self._ended
                else "the connection is closed: an Error reply was sent",
                code=ErrorCode.BAD_FORMAT,
            )
        # Checked against the request it answers before anything moves: a refused reply leaves
        # that request waiting for a valid one.
        validate_reply(event, self._pending[0], self.limits, self.rules)
        self._pending.popleft()
        if isinstance(event, ErrorReply) and not self.rules.keeps_open(event.code):
            # "After sending any Error reply, servers MUST close the connection immediately."
            self._ended = True
            self._pending.clear()
            self._state = _ON_CLOSING_ERROR_SENT[state]
        return encode_reply(event)

    # -- receiving --------------------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes from the peer; ``b""`` means the peer closed its side.

        Raises ``LocalProtocolError`` for bytes fed after the end of the stream.
        """
        if data and self._state is _OPEN and not self._eof:
            self._buffer.feed(data)  # the common case first: one test, one call
            return
        if self._eof:
            if data:
                raise LocalProtocolError(
                    "data received after end of stream", code=ErrorCode.BAD_FORMAT
                )
            return
        if not data:
            self._eof = True
        # Else CLOSED/ERROR (an OPEN connection's bytes were taken above): bytes after an Error
        # reply are discarded with the connection.

    def next_event(self) -> Event | NeedData:
        """The next complete event, or ``NEED_DATA``.

        Raises ``RemoteProtocolError`` (with the S3P code, and on a server the ``ErrorReply`` to
        send) when the peer's bytes break the protocol, again on every later call, and when the peer
        closed mid-frame.
        """
        buffer = self._buffer
        if len(buffer.data) < buffer.want and self._state is _OPEN and not self._eof:
            return NEED_DATA  # still short of what the frame being read needs
        if self._state is not _OPEN:
            if self._state is ConnectionState.ERROR and self._error is not None:
                raise RemoteProtocolError(
                    f"connection already failed: {self._error.message}",
                    code=self._error.code,
                    fatal=True,
                )
            return NEED_DATA
        try:
            if self._replies is not None:
                pending = self._pending
                if pending:
                    # A reply is typed by the request it answers: the oldest one waiting.
                    reply = self._replies.next_reply(pending[0], pending)
                    if reply is not None:
                        pending.popleft()
                        # ``type() is``: one pointer test per reply; no class derives from it.
                        if type(reply) is ErrorReply and not self.rules.keeps_open(reply.code):
                            # The server closes after any Error; pipelined replies are lost.
                            pending.clear()
                            self._ended = True
                            self._state = _ON_CLOSING_ERROR_RECEIVED[self._state]
                        return reply
                elif len(buffer):
                    # Nothing says what these bytes answer, so they cannot even be framed.
                    raise Malformed(ErrorCode.BAD_FORMAT, "a reply arrived with no pending request")
            else:
                assert self._commands is not None
                request = self._commands.next_command()
                if request is not None:
                    self._pending.append(request)
                    return request
        except Malformed as error:
            self._state = _ON_FATAL_ERROR[self._state]
            self._error = remote_error(error, self._role)  # raised again by every later call
            self._reply_gate.owe(self._error.reply)
            raise self._error from None  # the parser's internal error is no part of the API
        return self._need_data()

    def _need_data(self) -> NeedData:
        """Nothing complete is buffered: at the end of the stream, the end of the connection (or
        an error, if a frame was cut short)."""
        if self._eof:
            busy = self._commands.in_command if self._commands else self._replies.in_reply  # type: ignore[union-attr]
            if busy:
                self._state = _ON_FATAL_ERROR[self._state]
                error = Malformed(ErrorCode.BAD_FORMAT, "the peer closed the connection mid-frame")
                self._error = remote_error(error, self._role)
                self._reply_gate.owe(self._error.reply)
                raise self._error
            self._state = _ON_PEER_CLOSED[self._state]
        return NEED_DATA

    def events(self) -> Iterator[Event]:
        """Every event the buffered bytes complete, until ``NEED_DATA``."""
        return drain(self.next_event)

    __iter__ = events
