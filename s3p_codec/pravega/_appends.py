"""Append blocks: the client's block writer and the server's block reader.

The draft's idea ("BeginAppendBlock ... as many messages as can fit in the block ... a partial
message followed by the EndAppendBlock message, followed by the remaining partial message"), as
the real protocol does it today:

- A writer "opens a block with AppendBlock sized for `blockSize + 8` bytes of content, writes
  framed Events raw; when the next event does not fit, its first bytes go into a PARTIAL_EVENT
  frame filling the block, and the rest into AppendBlockEnd's data. The split is a byte split
  and may fall inside the event's own 8-byte header." An event at least as large as the block
  gets a block of exactly its own size. "A block broken off early is filled with a PADDING frame
  and ended with AppendBlockEnd(sizeOfWholeEvents = bytes written, empty data)". Only one block
  is open per connection; appends of other writers wait and go out as their own blocks when the
  open one ends (or when they pass 1 MiB / 500 events, which breaks the open block), exactly like
  the real ``CommandEncoder``. One more bound the real encoder never meets (its frames may be
  8 MiB): a writer's waiting events go out before an event that would make their block larger
  than a frame may be (``max_block``), so every frame fits the connection's ``max_frame``.
- The reader enforces every append-block rule: "AppendBlock is followed directly by
  AppendBlockEnd of the same writer; the writer did SetupAppend first; numEvents > 0;
  lastEventNumber never goes back; 0 <= sizeOfWholeEvents <= block content; the rest of the
  block is exactly one PARTIAL_EVENT or PADDING frame (PADDING requires empty end data);
  reassembled data = whole events + partial + end data, and must be whole Event frames".

Decisions where the real decoder is looser (documented, tested): numEvents must also equal the
number of Event frames reassembled (the real writer always makes it so); an AppendBlockEnd with
no AppendBlock before it is accepted, as the real decoder does: its data holds all the events
and its sizeOfWholeEvents is ignored (the Rust client sets it to the data's length); a writer's
event numbers start above 0 - 1, as the Java reader's fresh state starts at 0 ("never goes back").
"""

from __future__ import annotations

import uuid

from s3p_codec._core import LocalProtocolError, RemoteProtocolError
from s3p_codec.pravega._events import (
    Append,
    AppendBlock,
    AppendBlockEnd,
    CommandType,
    ConditionalAppend,
    ConditionalBlockEnd,
    ErrorCode,
    SetupAppend,
)
from s3p_codec.pravega._wire import HEADER, HEADER_SIZE, MAX_FRAME, encode, parse_events

__all__ = ["DEFAULT_BLOCK_SIZE", "BlockReader", "BlockWriter"]

DEFAULT_BLOCK_SIZE = 523_264
"""The real client's largest append block size (``32 * 1024 * 16 - 1024``)."""

_MAX_PENDING_BYTES = 1024 * 1024
_MAX_PENDING_EVENTS = 500
_LONG_MIN = -(1 << 63)
_LONG_MAX = (1 << 63) - 1
_PADDING = int(CommandType.PADDING)
_PARTIAL = int(CommandType.PARTIAL_EVENT)
_APPEND_BLOCK = int(CommandType.APPEND_BLOCK)


def _invalid(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(message, code=ErrorCode.INVALID_APPEND)


# --- client side ---------------------------------------------------------------------------


class _Session:
    """One writer set up on this connection (``CommandEncoder.Session``)."""

    __slots__ = ("event_count", "last_event_number", "pending", "pending_bytes", "request_id",
                 "writer_id")  # fmt: skip

    def __init__(self, writer_id: uuid.UUID, request_id: int) -> None:
        self.writer_id = writer_id
        self.request_id = request_id
        self.last_event_number = -1
        self.event_count = 0
        self.pending: list[bytes] = []
        self.pending_bytes = 0

    def end(self, size_of_whole_events: int, data: bytes) -> bytes:
        frame = encode(
            AppendBlockEnd(
                self.writer_id,
                size_of_whole_events,
                data,
                self.event_count,
                self.last_event_number,
                self.request_id,
            )
        )
        self.event_count = 0
        return frame

    def flush(self, out: list[bytes]) -> None:
        """Its queued events as one block of exactly their size."""
        if self.event_count == 0:
            return
        size = self.pending_bytes
        out.append(HEADER.pack(_APPEND_BLOCK, 16 + size) + self.writer_id.bytes)
        out.extend(self.pending)
        self.pending = []
        self.pending_bytes = 0
        out.append(self.end(size, b""))


class BlockWriter:
    """Frames the ``Append`` events of a client connection into append blocks.

    ``block_size`` 0 sends every event in a block of its own size (no PARTIAL_EVENT ever).
    ``max_block`` is the most content (Event frames) a block of queued events may carry: the
    largest frame payload less the 16-byte writer id.
    """

    def __init__(
        self,
        block_size: int = DEFAULT_BLOCK_SIZE,
        max_event_size: int = 8 << 20,
        max_block: int = MAX_FRAME - 16,
    ):
        self.block_size = block_size
        self.max_event_size = max_event_size
        self.max_block = max_block
        self._sessions: dict[uuid.UUID, _Session] = {}
        self._queued: dict[uuid.UUID, _Session] = {}  # sessions with pending events, in order
        self._owner: _Session | None = None
        self._block = 0  # declared size of the open block, without the final frame's header
        self._left = 0  # bytes of it still free

    @property
    def block_open(self) -> bool:
        """True while a block is open (its AppendBlockEnd not written yet)."""
        return self._owner is not None

    def is_set_up(self, writer_id: uuid.UUID) -> bool:
        """True once a ``SetupAppend`` for ``writer_id`` was sent."""
        return writer_id in self._sessions

    def last_sent(self, writer_id: uuid.UUID) -> int | None:
        """The highest event number given to ``append`` for a set-up writer, else None."""
        session = self._sessions.get(writer_id)
        return None if session is None else session.last_event_number

    def setup(self, setup: SetupAppend) -> None:
        """Register a writer; call after writing its SetupAppend (and ``flush`` before that)."""
        self._sessions[setup.writer_id] = _Session(setup.writer_id, setup.request_id)

    def check(self, append: Append) -> list[bytes]:
        """Validate ``append`` without changing anything; return its Event frames.

        Raises ``LocalProtocolError`` for a writer never set up, an empty or non-tuple event list,
        an event number that is not a signed 64-bit integer or is not above the last one sent.
        """
        if not isinstance(append.writer_id, uuid.UUID):
            raise LocalProtocolError("writer_id must be a uuid.UUID", code=ErrorCode.INVALID_FIELD)
        session = self._sessions.get(append.writer_id)
        if session is None:
            raise LocalProtocolError(
                f"Sending appends without setting up the append for writer {append.writer_id}",
                code=ErrorCode.INVALID_APPEND,
            )
        events = append.events
        if type(events) is not tuple or not events:
            raise LocalProtocolError(
                "an Append needs a non-empty sequence of bytes events, such as (b'e1',), "
                f"got {events!r:.40}",
                code=ErrorCode.INVALID_FIELD,
            )
        number = append.event_number
        if type(number) is not int or not _LONG_MIN <= number <= _LONG_MAX:
            raise LocalProtocolError(
                f"event_number {number!r} is not a signed 64-bit integer",
                code=ErrorCode.INVALID_FIELD,
            )
        first = number - len(events) + 1
        if first <= session.last_event_number:
            raise LocalProtocolError(
                f"Events written out of order: event {first} follows "
                f"{session.last_event_number} for writer {append.writer_id}",
                code=ErrorCode.INVALID_APPEND,
            )
        frames = []
        for data in events:
            if type(data) is not bytes:
                raise LocalProtocolError("events must be bytes", code=ErrorCode.INVALID_FIELD)
            if len(data) > self.max_event_size:
                raise LocalProtocolError(
                    f"event of {len(data)} bytes exceeds max_event_size {self.max_event_size}",
                    code=ErrorCode.INVALID_FIELD,
                )
            frames.append(HEADER.pack(0, len(data)) + data)
        return frames

    def append(self, append: Append) -> bytes:
        """Bytes that carry ``append``'s events (possibly none yet: the block stays open)."""
        frames = self.check(append)
        session = self._sessions[append.writer_id]
        number = append.event_number - len(frames) + 1
        out: list[bytes] = []
        for frame in frames:
            self._one(session, number, frame, out)
            number += 1
        return b"".join(out)

    def flush(self) -> bytes:
        """Break the open block with PADDING and send every queued event."""
        out: list[bytes] = []
        self._break(out)
        self._flush_all(out)
        return b"".join(out)

    # -- internals, after ``CommandEncoder.encode`` ------------------------------------------

    def _one(self, session: _Session, number: int, frame: bytes, out: list[bytes]) -> None:
        if (
            session.pending
            and self._owner is not session
            and session.pending_bytes + len(frame) > self.max_block
        ):
            # Its waiting events and this one would not fit one frame: those go out first (the
            # open block broken off, as at the 1 MiB bound), and this one starts a block.
            self._break(out)
            self._queued.pop(session.writer_id, None)
            session.flush(out)
        was_free = session.event_count == 0
        session.last_event_number = number
        session.event_count += 1
        owner = self._owner
        if owner is None:
            if was_free:
                self._start(session, frame, out)
            else:
                self._queue(session, frame, out)
                self._queued.pop(session.writer_id, None)
                session.flush(out)
        elif owner is session:
            left = self._left
            if left > len(frame):
                out.append(frame)
                self._left = left - len(frame)
            else:
                # "its first bytes go into a PARTIAL_EVENT frame filling the block"
                out.append(HEADER.pack(_PARTIAL, left))
                out.append(frame[:left])
                self._complete(frame[left:], out)
                self._flush_all(out)
        else:
            self._queue(session, frame, out)

    def _start(self, session: _Session, frame: bytes, out: list[bytes]) -> None:
        size = len(frame)
        if self.block_size > size:
            # Room for the final PARTIAL_EVENT or PADDING header: "sized for blockSize + 8".
            self._block = self.block_size
            declared = self.block_size + HEADER_SIZE
        else:
            self._block = declared = size
        out.append(HEADER.pack(_APPEND_BLOCK, 16 + declared) + session.writer_id.bytes)
        out.append(frame)
        self._owner = session
        self._left = self._block - size
        if self._left == 0:
            self._complete(b"", out)

    def _complete(self, data: bytes, out: list[bytes]) -> None:
        owner = self._owner
        assert owner is not None
        out.append(owner.end(self._block - self._left, data))
        self._owner = None
        self._block = self._left = 0

    def _break(self, out: list[bytes]) -> None:
        if self._owner is None:
            return
        left = self._left
        out.append(HEADER.pack(_PADDING, left))
        out.append(bytes(left))
        self._complete(b"", out)

    def _queue(self, session: _Session, frame: bytes, out: list[bytes]) -> None:
        self._queued[session.writer_id] = session
        session.pending.append(frame)
        session.pending_bytes += len(frame)
        if session.pending_bytes > _MAX_PENDING_BYTES or session.event_count > _MAX_PENDING_EVENTS:
            self._break(out)
            self._queued.pop(session.writer_id, None)
            session.flush(out)

    def _flush_all(self, out: list[bytes]) -> None:
        queued = list(self._queued.values())
        self._queued.clear()
        for session in queued:
            session.flush(out)


# --- server side ---------------------------------------------------------------------------


class _Writer:
    __slots__ = ("last_event_number", "segment")

    def __init__(self, segment: str) -> None:
        self.segment = segment
        self.last_event_number = 0


class BlockReader:
    """Reassembles append blocks into ``Append`` events and checks every append rule."""

    def __init__(self, max_writers: int = 10_000) -> None:
        self.max_writers = max_writers
        self._writers: dict[uuid.UUID, _Writer] = {}
        # The open block: its writer, and its content as ``_content[_base:]`` (kept inside the
        # received frame payload, so a large block is never copied again).
        self._block_writer: uuid.UUID | None = None
        self._content = b""
        self._base = self._end = 0

    @property
    def block_open(self) -> bool:
        """True between an AppendBlock and its AppendBlockEnd."""
        return self._block_writer is not None

    def segment_of(self, writer_id: uuid.UUID) -> str | None:
        """The segment a writer was set up for."""
        writer = self._writers.get(writer_id)
        return None if writer is None else writer.segment

    def reset(self) -> None:
        """Forget an open block (an Observer does this after a gap)."""
        self._block_writer = None
        self._content = b""

    def _writer(self, writer_id: uuid.UUID) -> _Writer:
        writer = self._writers.get(writer_id)
        if writer is None:
            raise _invalid(f"writer {writer_id} referenced before SetupAppend")
        return writer

    def setup(self, setup: SetupAppend) -> None:
        """Register a writer from its ``SetupAppend``; raises ``RemoteProtocolError`` beyond
        ``max_writers`` writers.
        """
        if setup.writer_id not in self._writers and len(self._writers) >= self.max_writers:
            raise RemoteProtocolError(
                f"more than {self.max_writers} writers on one connection",
                code=ErrorCode.INVALID_APPEND,
            )
        self._writers[setup.writer_id] = _Writer(setup.segment)

    def block(self, block: AppendBlock) -> None:
        """Open an append block (its content is kept, not copied, until the ``AppendBlockEnd``)."""
        self.block_in(block.writer_id, block.data, 0, len(block.data))

    def block_in(self, writer_id: uuid.UUID, data: bytes, base: int, end: int) -> None:
        """Open a block whose content is ``data[base:end]`` (left where it is)."""
        self._writer(writer_id)
        self._block_writer = writer_id
        self._content = data
        self._base = base
        self._end = end

    def conditional(self, command: ConditionalAppend | ConditionalBlockEnd) -> None:
        """Check a conditional append's event number against its writer; raises
        ``RemoteProtocolError`` if it went backwards or the writer was never set up.
        """
        writer = self._writer(command.writer_id)
        if command.event_number < writer.last_event_number:
            raise _invalid(
                f"Last event number went backwards: {command.event_number} after "
                f"{writer.last_event_number} for writer {command.writer_id}"
            )
        writer.last_event_number = command.event_number

    def block_end(self, end: AppendBlockEnd) -> Append:
        """The whole events of the block ``end`` closes.

        Raises ``RemoteProtocolError`` (``INVALID_APPEND``) on any broken rule: a writer never set
        up, a mismatched writer, a bad ``sizeOfWholeEvents`` or ``numEvents``, an event number going
        backwards, data that is not whole Event frames.
        """
        block_writer, content = self._block_writer, self._content
        base, stop_at = self._base, self._end
        self.reset()
        writer = self._writer(end.writer_id)
        if end.num_events <= 0:
            raise _invalid(f"Invalid number of events in block: numEvents {end.num_events}")
        if end.last_event_number < writer.last_event_number:
            raise _invalid(
                f"Last event number went backwards: {end.last_event_number} after "
                f"{writer.last_event_number} for writer {end.writer_id}"
            )
        if block_writer is None:
            # No AppendBlock before it: like the real decoder, the appended data is all of the
            # end's data and sizeOfWholeEvents is not looked at (the Rust client sends the
            # data's length there, the Java one 0).
            content, base, stop_at, whole = b"", 0, 0, 0
        elif block_writer != end.writer_id:
            raise _invalid(
                f"Writer ID mismatch between AppendBlock ({block_writer}) and "
                f"AppendBlockEnd ({end.writer_id})"
            )
        else:
            whole = end.size_of_whole_events
        size = stop_at - base
        if not 0 <= whole <= size:
            raise _invalid(f"Invalid sizeOfWholeEvents {whole}: the block holds {size} bytes")
        events: list[bytes] = []
        split = base + whole
        try:
            stop = parse_events(content, base, split, events)
            tail = content[stop:split]
            if split < stop_at:
                tail += self._final_frame(content, split, stop_at, end)
            elif end.data:
                tail += end.data
            if tail and parse_events(tail, 0, len(tail), events) != len(tail):
                raise ValueError("the appended data ends inside an Event frame")
        except ValueError as exc:
            raise _invalid(f"reassembled data is not whole Event frames: {exc}") from None
        if len(events) != end.num_events:
            raise _invalid(f"numEvents {end.num_events} but the block carries {len(events)} events")
        writer.last_event_number = end.last_event_number
        return Append(end.writer_id, end.last_event_number, tuple(events), end.request_id)

    @staticmethod
    def _final_frame(content: bytes, split: int, stop_at: int, end: AppendBlockEnd) -> bytes:
        """The partial event bytes after the whole events ("exactly one" frame), or b""."""
        rest = stop_at - split
        if rest < HEADER_SIZE:
            raise _invalid(f"{rest} bytes after the whole events are not a frame")
        code, size = HEADER.unpack_from(content, split)
        if code not in (_PARTIAL, _PADDING):
            raise _invalid(
                f"Found type {code} at end of append block but was expecting a "
                "PARTIAL_EVENT or PADDING"
            )
        if size != rest - HEADER_SIZE:
            raise _invalid(
                f"the frame closing the block declares {size} bytes but {rest - HEADER_SIZE} "
                "remain: the rest of the block must be exactly one frame"
            )
        if code == _PADDING:
            if end.data:
                raise _invalid("Unexpected data in AppendBlockEnd after a PADDING frame")
            return b""
        return content[split + HEADER_SIZE : stop_at] + end.data
