"""The S2S session state machines: an append session and a read session, either end.

A ``Connection`` speaks the S2S frames carried in one HTTP body pair (the HTTP request and
response heads are ``s3p_codec.s2s.http``'s business):

- append session: the client sends ``AppendInput`` (1..1000 records, at most 1 MiB metered);
  the server answers one ``AppendAck`` per input, in order. The codec checks both ends: a
  client cannot send a bad batch, a server cannot ack what was not sent or ack the wrong count,
  and a client rejects such acks.
- read session: the server sends ``ReadBatch`` and ``Heartbeat`` (a batch with no records and a
  tail); the client gets them as events. A client that sees no frame for 20 s ("clients give
  up after 20 s without a frame") learns it from ``check_heartbeat(now)``: the clock is an
  argument, never a timer, so the codec stays sans-IO.

"After receiving or sending a terminal frame, the session must be closed. No further frames
should be sent or expected": a received terminal frame raises ``SessionTerminated`` and the
connection is final; a sent one makes later ``send`` calls fail. A draining server sets the
"reconnect advised" flag (``advise_reconnect()``); the client reports it once as
``ReconnectAdvised``. "A normal end of session has no terminal frame: the HTTP body just ends";
leftover bytes of an incomplete frame at that point are an error. Every legal state change is
in one table, ``s2s._state.TRANSITIONS``.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Iterator

from s3p_codec._core import (
    NEED_DATA,
    LocalProtocolError,
    NeedData,
    ReceiveBuffer,
    RemoteProtocolError,
    ReplyAfterError,
    Role,
    drain,
    finished,
)
from s3p_codec._core.extras import MissingExtra
from s3p_codec.s2s import _proto
from s3p_codec.s2s._compression import Codec, Compression, zstd_available
from s3p_codec.s2s._errors import (
    AppendConditionFailed,
    ReadUnwritten,
    SessionTerminated,
    status_of,
)
from s3p_codec.s2s._events import (
    AppendAck,
    AppendInput,
    ErrorCode,
    Event,
    Heartbeat,
    ReadBatch,
    ReconnectAdvised,
    Terminal,
    metered_bytes,
)
from s3p_codec.s2s._limits import Limits
from s3p_codec.s2s._state import TRANSITIONS, ConnectionState, Trigger
from s3p_codec.s2s._wire import RawFrame, decode_terminal, encode_frame, encode_terminal, read_frame

__all__ = ["Connection", "Session", "terminal_error"]


class Session(enum.Enum):
    """Which S2S session an HTTP exchange carries."""

    APPEND = "append"
    READ = "read"


def terminal_error(terminal: Terminal) -> SessionTerminated:
    """The typed error a received terminal frame raises (412 and 416 have their own)."""
    if terminal.status == 412:
        return AppendConditionFailed(terminal)
    if terminal.status == 416:
        return ReadUnwritten(terminal)
    return SessionTerminated(terminal)


class Connection:
    """One end of one S2S session (see the module docstring).

    ``compression`` is what this end applies to the frames it sends (negotiated from
    ``Accept-Encoding`` on the server, configured on the client); it is applied only to
    encoded messages of at least ``limits.compression_threshold`` bytes. Received frames may
    use any algorithm.

    ``observe_only`` is for a passive reader (a capture's Observer) of an append session's
    response body: it sees the acks without having sent the inputs (the other direction is
    decoded separately), so acks are decoded without being matched to inputs.
    """

    def __init__(
        self,
        role: Role,
        session: Session,
        *,
        compression: Compression = Compression.NONE,
        limits: Limits | None = None,
        observe_only: bool = False,
    ) -> None:
        self._role = role
        self._session = session
        self._compression = Compression(compression)
        if self._compression is Compression.ZSTD and not zstd_available():
            # Refused here, not at the first payload over 1 KiB: the same error for any size.
            raise MissingExtra("zstd", "S2S zstd compression", "zstandard")
        self._limits = limits if limits is not None else Limits()
        self._buffer = ReceiveBuffer()
        self._codec = Codec(self._limits.max_zstd_window)
        self._state = TRANSITIONS.initial
        self._eof = False
        self._our_terminal = False
        self._reply_gate = ReplyAfterError()  # the Terminal a server owes after a fatal error
        self._advising_reconnect = False
        self._reconnect_reported = False
        self._pending: list[Event] = []
        # Append session: record counts of inputs sent (client) or received (server), unacked.
        self._unacked: deque[int] = deque()
        self._last_ack_end: int | None = None
        self._last_frame_at: float | None = None
        self._passive = observe_only
        self._last_compression: Compression | None = None

    # -- the Connection protocol ---------------------------------------------------------------

    @property
    def role(self) -> Role:
        """The role this session speaks for."""
        return self._role

    @property
    def session(self) -> Session:
        """The session kind: APPEND or READ."""
        return self._session

    @property
    def state(self) -> ConnectionState:
        """Where the session is (``ConnectionState``); TERMINATED, CLOSED and ERROR are final."""
        return self._state

    @property
    def limits(self) -> Limits:
        """The bounds this session enforces."""
        return self._limits

    @property
    def finished(self) -> bool:
        """True once no more traffic can flow: terminal sent or received, error, or both bodies
        done (the peer's body ended and, on a server append session, every input acked)."""
        state = self._state
        return finished(
            self._reply_gate,
            ended=state is ConnectionState.TERMINATED or state is ConnectionState.ERROR,
            closed=state is ConnectionState.CLOSED,
            outstanding=bool(self._unacked),
        )

    @property
    def last_compression(self) -> Compression | None:
        """How the last regular frame received was compressed (None before the first)."""
        return self._last_compression

    @property
    def unacked(self) -> int:
        """Append session: how many inputs await their ack."""
        return len(self._unacked)

    @property
    def observe_only(self) -> bool:
        """Whether acks are decoded without matching them to sent inputs (a passive reader)."""
        return self._passive

    @property
    def position(self) -> int:
        """How many bytes of the peer's body were consumed as whole frames: an event's frame
        spans the bytes between the positions before and after ``next_event`` returned it."""
        return self._buffer.position

    def advise_reconnect(self) -> None:
        """Server: set the "reconnect advised" flag on every later regular frame (draining).

        Raises ``LocalProtocolError`` on a client.
        """
        if self._role is not Role.SERVER:
            raise LocalProtocolError(
                "only a server advises reconnection", code=ErrorCode.INVALID, fatal=False
            )
        self._advising_reconnect = True

    def send(self, event: Event) -> bytes:
        """Bytes of one frame carrying ``event``; ``LocalProtocolError`` (nothing sent) if the
        event is not allowed now."""
        if self._state is ConnectionState.ERROR and not self._reply_gate.owed:
            raise LocalProtocolError("connection is in state ERROR", code=ErrorCode.INVALID)
        if self._our_terminal:
            raise LocalProtocolError(
                "a terminal frame was sent: no further frames", code=ErrorCode.INVALID
            )
        if isinstance(event, Terminal):
            if self._role is Role.CLIENT and self._session is Session.READ:
                raise self._local("a read session's request carries no frames")
            return self._send_terminal(event)
        if self._state is ConnectionState.TERMINATED:
            raise LocalProtocolError(
                "a terminal frame was received: no further frames", code=ErrorCode.INVALID
            )
        if self._reply_gate.owed:
            raise LocalProtocolError(
                "after a fatal error only the error's Terminal reply may be sent",
                code=ErrorCode.INVALID,
            )
        if self._session is Session.APPEND:
            if self._role is Role.CLIENT and type(event) is AppendInput:
                return self._send_input(event)
            if self._role is Role.SERVER and type(event) is AppendAck:
                return self._send_ack(event)
        elif self._role is Role.SERVER:
            if type(event) is ReadBatch:
                _proto.validate_read_batch(event)
                if not event.records and event.tail is None:
                    raise self._local("a ReadBatch with no records must carry a tail")
                return self._frame(_proto.encode_read_batch(event))
            if type(event) is Heartbeat:
                _proto.check_position(event.tail, "Heartbeat.tail")
                return self._frame(_proto.encode_read_batch(ReadBatch((), event.tail)))
        article = "an" if self._session.value[0] in "aeiou" else "a"
        raise self._local(
            f"a {self._role.value} of {article} {self._session.value} session cannot send "
            f"{type(event).__name__}"
        )

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes of the peer's body; ``b""`` means the body ended.

        Raises ``LocalProtocolError`` for bytes fed after the end of the body.
        """
        if not data:
            self._eof = True
            return
        if self._eof:
            raise LocalProtocolError("data after the end of the body", code=ErrorCode.BAD_FRAME)
        self._buffer.feed(data)

    def next_event(self, now: float | None = None) -> Event | NeedData:
        """The next event, or ``NEED_DATA``.

        ``now`` (any monotonic clock, in seconds) stamps the frame for ``check_heartbeat``. Raises
        ``SessionTerminated`` (or a subclass) on a terminal frame, and ``RemoteProtocolError`` when
        the peer's frames break the protocol or the connection already failed.
        """
        if self._pending:
            return self._pending.pop(0)
        if self._state is ConnectionState.ERROR:
            raise RemoteProtocolError("connection is in state ERROR", code=ErrorCode.BAD_FRAME)
        if self._state is not ConnectionState.OPEN:
            return NEED_DATA
        try:
            frame = read_frame(self._buffer, self._limits.max_frame_length)
            if frame is None:
                if self._eof:
                    self._end_of_body()
                return NEED_DATA
            if now is not None:
                self._last_frame_at = now
            return self._handle(frame)
        except SessionTerminated:
            self._state = TRANSITIONS.next(self._state, Trigger.TERMINAL_RECEIVED)
            raise
        except RemoteProtocolError as exc:
            raise self._fail(exc) from None

    def events(self) -> Iterator[Event]:
        """Every event the buffered bytes complete, until ``NEED_DATA``."""
        return drain(self.next_event)

    # -- heartbeat clock -----------------------------------------------------------------------

    @property
    def deadline(self) -> float | None:
        """Read client: the time by which the next frame must arrive (None until the clock is
        started by a stamped ``next_event`` or ``check_heartbeat``)."""
        if self._last_frame_at is None:
            return None
        return self._last_frame_at + self._limits.heartbeat_timeout

    def check_heartbeat(self, now: float) -> None:
        """Read client: raise ``RemoteProtocolError(heartbeat_timeout)`` once 20 s pass
        without a frame ("clients give up after 20 s without a frame"). The first call starts
        the clock if no frame was stamped yet."""
        if (
            self._role is not Role.CLIENT
            or self._session is not Session.READ
            or self._state is not ConnectionState.OPEN
        ):
            return
        if self._last_frame_at is None:
            self._last_frame_at = now
            return
        if now - self._last_frame_at >= self._limits.heartbeat_timeout:
            self._state = TRANSITIONS.next(self._state, Trigger.HEARTBEAT_TIMEOUT)
            raise RemoteProtocolError(
                f"no frame for {now - self._last_frame_at:.1f} s "
                f"(limit {self._limits.heartbeat_timeout:g} s)",
                code=ErrorCode.HEARTBEAT_TIMEOUT,
            )

    # -- internals -----------------------------------------------------------------------------

    def _local(self, what: str) -> LocalProtocolError:
        return LocalProtocolError(what, code=ErrorCode.INVALID, fatal=False)

    def _frame(self, message: bytes) -> bytes:
        compression = Compression.NONE
        if (
            self._compression is not Compression.NONE
            and len(message) >= self._limits.compression_threshold
        ):
            message = self._codec.compress(message, self._compression)
            compression = self._compression
        return encode_frame(
            message,
            compression,
            reconnect_advised=self._advising_reconnect,
            max_length=self._limits.max_frame_length,
        )

    def _check_input_counts(self, event: AppendInput) -> str | None:
        count = len(event.records)
        if not 1 <= count <= self._limits.max_records_per_append:
            return (
                f"an AppendInput carries 1..{self._limits.max_records_per_append} records, "
                f"not {count}"
            )
        size = metered_bytes(event.records)
        if size > self._limits.max_append_bytes:
            return (
                f"an AppendInput carries at most {self._limits.max_append_bytes} metered "
                f"bytes, not {size}"
            )
        return None

    def _send_input(self, event: AppendInput) -> bytes:
        _proto.validate_append_input(event)
        problem = self._check_input_counts(event)
        if problem:
            raise self._local(problem)
        data = self._frame(_proto.encode_append_input(event))
        self._unacked.append(len(event.records))
        return data

    def _check_ack(self, ack: AppendAck) -> str | None:
        if not self._unacked:
            return "AppendAck with no AppendInput awaiting one"
        if ack.end.seq_num < ack.start.seq_num:
            return "AppendAck end < start"
        if ack.end.seq_num - ack.start.seq_num != self._unacked[0]:
            return (
                f"AppendAck covers {ack.end.seq_num - ack.start.seq_num} records, "
                f"the input had {self._unacked[0]}"
            )
        if self._last_ack_end is not None and ack.start.seq_num < self._last_ack_end:
            return "AppendAck not after the previous one"
        return None

    def _send_ack(self, event: AppendAck) -> bytes:
        _proto.validate_append_ack(event)
        problem = self._check_ack(event)
        if problem:
            raise self._local(problem)
        data = self._frame(_proto.encode_append_ack(event))
        self._unacked.popleft()
        self._last_ack_end = event.end.seq_num
        return data

    def _send_terminal(self, event: Terminal) -> bytes:
        if self._state is ConnectionState.TERMINATED:
            raise LocalProtocolError(
                "a terminal frame was received: no further frames", code=ErrorCode.INVALID
            )
        if type(event) is not Terminal:
            raise self._local("Terminal expected")
        data = encode_terminal(event, max_length=self._limits.max_frame_length)
        self._our_terminal = True
        self._reply_gate.pay(event)  # any Terminal answers the error (its wording is ours)
        self._state = TRANSITIONS.next(self._state, Trigger.TERMINAL_SENT)
        return data

    def _handle(self, frame: RawFrame) -> Event:
        if frame.terminal:
            raise terminal_error(decode_terminal(frame.payload))
        payload = self._codec.decompress(frame.payload, frame.compression, self._limits.max_payload)
        self._last_compression = frame.compression
        event: Event
        if self._session is Session.APPEND:
            if self._role is Role.SERVER:
                event = _proto.decode_append_input(payload, self._limits.max_records_per_append)
                problem = self._check_input_counts(event)
                if problem:
                    raise RemoteProtocolError(problem, code=ErrorCode.INVALID)
                self._unacked.append(len(event.records))
            else:
                event = _proto.decode_append_ack(payload)
                if not self._passive:
                    problem = self._check_ack(event)
                    if problem:
                        raise RemoteProtocolError(problem, code=ErrorCode.INVALID)
                    self._unacked.popleft()
                    self._last_ack_end = event.end.seq_num
        elif self._role is Role.CLIENT:
            batch = _proto.decode_read_batch(payload, self._limits.max_records_per_batch)
            if batch.records:
                event = batch
            elif batch.tail is not None:
                event = Heartbeat(batch.tail)
            else:
                raise RemoteProtocolError(
                    "a ReadBatch with no records and no tail", code=ErrorCode.INVALID
                )
        else:
            raise RemoteProtocolError(
                "a read session's request carries no frames", code=ErrorCode.BAD_FRAME
            )
        if frame.reconnect_advised and not self._reconnect_reported:
            self._reconnect_reported = True
            self._pending.append(ReconnectAdvised())
        return event

    def _end_of_body(self) -> None:
        if self._buffer:
            raise RemoteProtocolError(
                f"body ended inside a frame ({len(self._buffer)} bytes left over)",
                code=ErrorCode.BAD_FRAME,
            )
        if self._role is Role.CLIENT and self._session is Session.APPEND and self._unacked:
            raise RemoteProtocolError(
                f"append session ended with {len(self._unacked)} unacknowledged inputs",
                code=ErrorCode.INVALID,
            )
        self._state = TRANSITIONS.next(self._state, Trigger.PEER_CLOSED)

    def _fail(self, exc: RemoteProtocolError) -> RemoteProtocolError:
        self._state = TRANSITIONS.next(self._state, Trigger.FATAL_ERROR)
        if self._role is Role.SERVER and isinstance(exc.code, ErrorCode) and not self._our_terminal:
            exc.reply = Terminal(
                status=status_of(exc.code), code=exc.code.value, message=exc.message
            )
            self._reply_gate.owe(exc.reply)
        return exc
