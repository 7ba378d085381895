"""The sans-IO state machine of one end of a Pravega segment-store connection.

A client sends requests and receives replies; a server the other way round. ``Hello`` and
``KeepAlive`` travel both ways. Every frame header is checked as soon as its 8 bytes are here:
an undefined type code, a negative length, a length over ``Limits.max_frame`` or a command this
end never receives is refused before its payload arrives.

Client side, appends go through the block writer (``appends.BlockWriter``): send ``Append``
events, and ``FlushAppends`` when nothing more is coming for a while; any other command first
closes the open block, as the real client's encoder does. Server side, ``AppendBlock`` +
``AppendBlockEnd`` come out as one ``Append``; stand-alone ``PADDING`` is swallowed, as the real
``AppendDecoder`` does.

Hello negotiation (the real ``AppendProcessor.hello``): a server answers every Hello with its own
``Hello(17, 5)`` and closes when "lowVersion > 17 or highVersion < 5". A server-role connection
raises ``INCOMPATIBLE_VERSION`` carrying that ``Hello`` as ``reply``; a client-role connection
raises it when the server's range does not overlap ours. Otherwise ``negotiated_version`` becomes
``min(17, peer high)``. Other broken input closes a real server's connection without a reply, so
those errors carry ``reply=None``.

Client side, acknowledgements are checked against what this connection sent (writer ids are per
connection, and a segment store acknowledges cumulatively): an ``AppendSetup`` or
``DataAppended`` for a writer never set up here, a ``DataAppended`` for an event number never
sent, or one lower than an earlier acknowledgement of the same writer is ``INVALID_APPEND``.

Every legal state change is in one table, ``pravega._state.TRANSITIONS``.

Plan. Received bytes go into one ``ReceiveBuffer``; ``next_event`` calls ``_next_frame`` until a
frame yields an event or more bytes are needed (an ``AppendBlock`` or a ``PADDING`` yields none).
``_next_frame`` reads the 8-byte header where it lies and checks it (``_check_header``) before
its payload is waited for. A frame lying whole in an adopted ``bytes`` chunk is decoded in place;
any other is taken by ``ReceiveBuffer.take_frame`` (a large payload collected aside), and
``_kind`` keeps its checked type meanwhile, so a header is checked once however the bytes come.
``_frame`` decodes the payload (``_wire.decode_payload``), except a server's ``AppendBlock``,
whose content goes to the ``BlockReader`` uncopied; then a server's events pass through
``_server_event`` (blocks assembled into ``Append``), a client's through the Hello and
acknowledgement checks. Sending: ``Append`` and ``FlushAppends`` go to the ``BlockWriter``, every
other command is written after the open block is closed. A broken rule raises
``RemoteProtocolError``; the state becomes ERROR and a server owes the error's ``reply``
(``ReplyAfterError``), the one thing ``send`` accepts from then on.
"""

from __future__ import annotations

import uuid
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
from s3p_codec.pravega._appends import DEFAULT_BLOCK_SIZE, BlockReader, BlockWriter
from s3p_codec.pravega._events import (
    OLDEST_COMPATIBLE_VERSION,
    REPLIES,
    REQUESTS,
    WIRE_VERSION,
    Append,
    AppendBlock,
    AppendBlockEnd,
    AppendSetup,
    CommandType,
    ConditionalAppend,
    ConditionalBlockEnd,
    DataAppended,
    ErrorCode,
    Event,
    EventCommand,
    FlushAppends,
    Hello,
    Opaque,
    Padding,
    PartialEvent,
    SetupAppend,
    _Command,
)
from s3p_codec.pravega._limits import Limits
from s3p_codec.pravega._state import TRANSITIONS, ConnectionState, Trigger
from s3p_codec.pravega._wire import HEADER, HEADER_SIZE, decode_payload, encode

__all__ = ["Connection"]

_BLOCK_FRAMES = (AppendBlock, AppendBlockEnd, PartialEvent, Padding, EventCommand)
# A dict lookup, not ``CommandType(code)``: an unknown code gives None instead of raising.
_CODES = {int(member): member for member in CommandType}
# AppendBlockEnd without its data: writer id, sizeOfWholeEvents, the data's length, numEvents,
# lastEventNumber, requestId.
_BLOCK_END_FIELDS = 16 + 4 + 4 + 4 + 8 + 8


def compatible(hello: Hello) -> bool:
    """Whether a peer's version range overlaps ours (17 down to 5)."""
    return not (hello.low_version > WIRE_VERSION or hello.high_version < OLDEST_COMPATIBLE_VERSION)


class Connection:
    """One end of a Pravega wire connection: ``send`` events, ``receive_data`` + ``next_event``.

    ``block_size`` is the client block writer's block size (0: one block per event); it is
    lowered if a block of that size would not fit ``limits.max_frame``, and so is the largest
    event it sends (``limits.max_event_size``) if the ``AppendBlockEnd`` carrying the rest of
    such an event, split at a block's end, would not fit.
    ``strict_strings`` picks strict (default) or lenient modified UTF-8: strict accepts only what
    Java's ``writeUTF`` writes, lenient what its ``readUTF`` reads.
    ``check_acks=False`` lets a client-role connection read acknowledgements of appends it did
    not send itself (a proxy, or a test tool that writes requests as raw bytes).
    """

    def __init__(
        self,
        role: Role,
        limits: Limits | None = None,
        *,
        block_size: int = DEFAULT_BLOCK_SIZE,
        strict_strings: bool = True,
        check_acks: bool = True,
    ) -> None:
        self._role = role
        self._check_acks = check_acks and role is Role.CLIENT
        self.limits = limits = Limits() if limits is None else limits
        if block_size < 0:
            raise ValueError("block_size must not be negative")
        # A block (16-byte writer id + content + the final frame's header) must fit one frame,
        # and so must an event sent in a block of its own size, and the AppendBlockEnd carrying
        # the rest of an event split at a block's end: 44 bytes of fields, and all of the event's
        # frame but at least its first byte, which went into the block.
        block_size = min(block_size, limits.max_frame - 16 - HEADER_SIZE)
        end_data = limits.max_frame - _BLOCK_END_FIELDS  # the most an AppendBlockEnd can carry
        max_event = min(limits.max_event_size, end_data + 1 - HEADER_SIZE)
        self.strict_strings = strict_strings
        self._state = TRANSITIONS.initial
        self._buffer = ReceiveBuffer()
        self._kind: CommandType | None = None  # a checked header whose payload is awaited
        self._eof = False
        self._reply_gate = ReplyAfterError()
        self._receives = REQUESTS if role is Role.SERVER else REPLIES
        self._sends = REPLIES if role is Role.SERVER else REQUESTS
        self._writer = BlockWriter(block_size, max_event, limits.max_frame - 16)
        self._reader = BlockReader(limits.max_writers)
        self._acked: dict[uuid.UUID, int] = {}  # client: the last event number acknowledged
        # Client: the highest event number a writer may be acknowledged for besides what the
        # block writer sent: its ConditionalAppends, and AppendSetup's lastEventNumber.
        self._ceiling: dict[uuid.UUID, int] = {}
        self.negotiated_version: int | None = None
        """``min(17, peer high)`` once the peer's Hello arrived and was compatible."""

    # -- the Connection protocol ------------------------------------------------------------

    @property
    def role(self) -> Role:
        """The role this connection speaks for."""
        return self._role

    @property
    def state(self) -> ConnectionState:
        """Where the connection is (``ConnectionState``); CLOSED and ERROR are final."""
        return self._state

    @property
    def finished(self) -> bool:
        """True once the connection can carry no more traffic (CLOSED, or ERROR with the error reply
        sent): close the transport.
        """
        return finished(
            self._reply_gate,
            ended=self._state is ConnectionState.ERROR,
            closed=self._state is ConnectionState.CLOSED,
        )

    def send(self, event: Event) -> bytes:
        """The bytes that carry ``event``; ``LocalProtocolError`` (nothing emitted) if refused."""
        if self._state is ConnectionState.ERROR:
            if self._reply_gate.pay(event, exact=True):  # the very reply owed, nothing else
                return encode(event)  # type: ignore[arg-type]
            raise LocalProtocolError("the connection is broken", code=ErrorCode.STATE)
        if isinstance(event, Append | FlushAppends):
            if self._role is not Role.CLIENT:
                raise LocalProtocolError(
                    f"only a client sends {type(event).__name__}", code=ErrorCode.INVALID_FIELD
                )
            if isinstance(event, FlushAppends):
                return self._writer.flush()
            return self._writer.append(event)
        if isinstance(event, _BLOCK_FRAMES):
            raise LocalProtocolError(
                f"{type(event).__name__} frames are written by the block writer: send Append",
                code=ErrorCode.INVALID_FIELD,
            )
        if isinstance(event, _Command):
            code = event.TYPE
        elif type(event) is Opaque:
            code = event.type
        else:
            raise LocalProtocolError(
                f"{type(event).__name__} is not a Pravega event", code=ErrorCode.INVALID_FIELD
            )
        if code not in self._sends:
            raise LocalProtocolError(
                f"a {self._role.value} does not send {code.name}",
                code=ErrorCode.UNEXPECTED_COMMAND,
            )
        frame = encode(event, strict=self.strict_strings)
        if self._role is Role.CLIENT:
            # "PADDING when a block is broken off by another command"
            frame = self._writer.flush() + frame
            if type(event) is SetupAppend:
                self._writer.setup(event)
            elif type(event) is ConditionalAppend:
                self._raise_ceiling(event.writer_id, event.event_number)
        return frame

    def _raise_ceiling(self, writer: uuid.UUID, number: int) -> None:
        # Only ever raised: acknowledgements are cumulative, a lower number allows nothing new.
        self._ceiling[writer] = max(number, self._ceiling.get(writer, number))

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes from the peer; ``b""`` means the peer closed.

        The buffer adopts a chunk without copying it while nothing is pending, and frames wholly
        inside it are decoded where they lie (an append block's content is not copied at all);
        a large frame spanning chunks is collected aside and joined once. Raises
        ``LocalProtocolError`` for bytes fed after the end of the stream.
        """
        if self._eof and data:
            raise LocalProtocolError("data after end of stream", code=ErrorCode.STATE)
        if not data:
            self._eof = True
        else:
            self._buffer.feed(data)

    def next_event(self) -> Event | NeedData:
        """The next event, or ``NEED_DATA``; ``RemoteProtocolError`` if the peer broke a rule."""
        if self._state is ConnectionState.ERROR:
            raise RemoteProtocolError("the connection is broken", code=ErrorCode.STATE)
        try:
            while True:
                event = self._next_frame()
                # None: a frame was consumed that reports nothing by itself (block content,
                # padding), so the next one is read.
                if event is NEED_DATA or event is not None:
                    return event
        except RemoteProtocolError as exc:
            self._state = TRANSITIONS.next(self._state, Trigger.FATAL_ERROR)
            if self._role is Role.SERVER:
                self._reply_gate.owe(exc.reply)
            raise

    def events(self) -> Iterator[Event]:
        """Every event the buffered bytes complete, until ``NEED_DATA``."""
        return drain(self.next_event)

    # -- parsing ------------------------------------------------------------------------------

    def _next_frame(self) -> Event | NeedData | None:
        """One frame: its event, None if it reports nothing by itself, or ``NEED_DATA``."""
        buffer = self._buffer
        kind = self._kind
        if kind is None:
            # Check the header before waiting for its payload.
            data, start, stop = buffer.window()
            if start + HEADER_SIZE > stop:
                return self._at_end()
            code, length = HEADER.unpack_from(data, start)
            kind = self._check_header(code, length)
            end = start + HEADER_SIZE + length
            if end <= stop and type(data) is bytes:
                # The frame lies whole in an adopted chunk (immutable): decode it in place.
                event = self._frame(kind, data, start + HEADER_SIZE, end)
                buffer.skip(HEADER_SIZE + length)
                return event
        got = buffer.take_frame(HEADER, self.limits.max_frame)
        if got is None:
            self._kind = kind  # the header is checked; the payload is awaited (maybe aside)
            return self._at_end()
        self._kind = None
        payload = got[1]
        return self._frame(kind, payload, 0, len(payload))

    def _check_header(self, code: int, length: int) -> CommandType:
        """The command type of a header, or the error it deserves before any payload."""
        kind = _CODES.get(code)
        if kind is None:
            raise RemoteProtocolError(
                f"Unknown wire command: {code}", code=ErrorCode.UNKNOWN_COMMAND
            )
        if length < 0 or length > self.limits.max_frame:
            raise RemoteProtocolError(
                f"{kind.name} declares {length} bytes; the limit is {self.limits.max_frame}",
                code=ErrorCode.BAD_FRAME,
            )
        if kind not in self._receives:
            raise RemoteProtocolError(
                f"a {self._role.value} never receives {kind.name}",
                code=ErrorCode.UNEXPECTED_COMMAND,
            )
        return kind

    def _frame(self, kind: CommandType, data: bytes, start: int, end: int) -> Event | None:
        """The event of the frame whose payload is ``data[start:end]``."""
        # A block shorter than its writer id goes the general way, whose decoder names the fault.
        if kind is CommandType.APPEND_BLOCK and self._role is Role.SERVER and end - start >= 16:
            # The hot path: the block content stays where it is, uncopied.
            if self._reader.block_open:
                raise RemoteProtocolError(
                    "Unexpected AppendBlock following an AppendBlock: "
                    "AppendBlock is followed directly by AppendBlockEnd",
                    code=ErrorCode.INVALID_APPEND,
                )
            self._reader.block_in(uuid.UUID(bytes=data[start : start + 16]), data, start + 16, end)
            return None
        payload = data if start == 0 and end == len(data) else data[start:end]  # no copy if whole
        event = decode_payload(kind, payload, strict=self.strict_strings)
        if self._role is Role.SERVER:
            return self._server_event(event)
        if type(event) is Hello:
            self._hello(event)
        elif (type(event) is DataAppended or type(event) is AppendSetup) and self._check_acks:
            self._check_ack(event)
        return event

    def _check_ack(self, event: DataAppended | AppendSetup) -> None:
        """Refuse an acknowledgement of something this connection never sent."""
        writer = event.writer_id
        sent = self._writer.last_sent(writer)
        name = type(event).__name__
        if sent is None:
            raise RemoteProtocolError(
                f"{name} for writer {writer}, which this connection never set up",
                code=ErrorCode.INVALID_APPEND,
            )
        if type(event) is AppendSetup:
            self._raise_ceiling(writer, event.last_event_number)
            return
        assert type(event) is DataAppended
        number = event.event_number
        # What the block writer sent, or more: a ConditionalAppend or AppendSetup's number.
        ceiling = max(sent, self._ceiling.get(writer, sent))
        if number > ceiling:
            raise RemoteProtocolError(
                f"DataAppended acknowledges event {number} of writer {writer}; "
                f"the last one sent is {ceiling}",
                code=ErrorCode.INVALID_APPEND,
            )
        if number < self._acked.get(writer, number):  # a writer's first acknowledgement passes
            raise RemoteProtocolError(
                f"DataAppended goes back to event {number} of writer {writer} after "
                f"{self._acked[writer]}",
                code=ErrorCode.INVALID_APPEND,
            )
        self._acked[writer] = number

    def _at_end(self) -> NeedData:
        """No whole frame is buffered: ``NEED_DATA``, or, after the peer closed, the end of the
        connection (an error if it closed inside a frame or an append block)."""
        if not self._eof:
            return NEED_DATA
        left = len(self._buffer)
        if left:
            raise RemoteProtocolError(
                f"the peer closed inside a frame ({left} bytes left)",
                code=ErrorCode.BAD_FRAME,
            )
        if self._reader.block_open:
            raise RemoteProtocolError(
                "the peer closed inside an append block", code=ErrorCode.BAD_FRAME
            )
        self._state = TRANSITIONS.next(self._state, Trigger.PEER_CLOSED)
        return NEED_DATA

    def _hello(self, hello: Hello) -> None:
        if not compatible(hello):
            raise RemoteProtocolError(
                f"Incompatible wire protocol versions: peer {hello.low_version}.."
                f"{hello.high_version}, we {OLDEST_COMPATIBLE_VERSION}..{WIRE_VERSION}",
                code=ErrorCode.INCOMPATIBLE_VERSION,
                reply=Hello() if self._role is Role.SERVER else None,
            )
        self.negotiated_version = min(WIRE_VERSION, hello.high_version)

    def _server_event(self, event: Event) -> Event | None:
        """A server's event as the real ``AppendDecoder`` passes it on: block frames assembled
        into one ``Append`` (None until the block ends), ``PADDING`` swallowed."""
        reader = self._reader
        if reader.block_open and type(event) is not AppendBlockEnd:
            raise RemoteProtocolError(
                f"Unexpected {type(event).__name__} following an AppendBlock: "
                "AppendBlock is followed directly by AppendBlockEnd",
                code=ErrorCode.INVALID_APPEND,
            )
        if isinstance(event, AppendBlock):
            reader.block(event)
            return None
        if isinstance(event, AppendBlockEnd):
            return reader.block_end(event)
        if isinstance(event, Padding):
            return None
        if isinstance(event, SetupAppend):
            reader.setup(event)
        elif isinstance(event, ConditionalAppend | ConditionalBlockEnd):
            reader.conditional(event)
        elif isinstance(event, PartialEvent):
            raise RemoteProtocolError(
                "PARTIAL_EVENT outside an append block", code=ErrorCode.UNEXPECTED_COMMAND
            )
        elif isinstance(event, Hello):
            self._hello(event)
        return event
