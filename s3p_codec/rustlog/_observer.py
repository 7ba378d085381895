"""Passive decoding of both directions of a recorded RustLog conversation (captures).

Client-to-server frames are decoded as requests, server-to-client frames as responses. With no
request ids in the protocol, a response is paired with the oldest unanswered request whose
response type it is (type + 0x80), or with the oldest unanswered request at all if it is an
``Error``; requests passed over that way lost their response in the capture.

Recovery, where the protocol allows it:

- A recoverable error (unknown type, bad fields) leaves the framing intact: the frame is reported
  as an ``ObservedError`` (``skipped`` = its size, ``resynchronized=True``) and decoding goes on.
- A gap inside a frame whose header was read leaves the next frame boundary known: the rest of
  that frame is skipped and the gap is reported with ``resynchronized=True``. A lost request is
  remembered as an unknown request, so that its response still pairs.
- Anything else (a fatal error: bad length, bad UTF-8, bad JSON; a gap whose end cannot be
  placed) loses the frame boundary. The Observer then scans for a plausible header: four bytes
  giving a length in 2..MAX_FRAME_SIZE, followed by ``{``, whose whole frame decodes to a JSON
  object with a string ``type``. When found, an ``ObservedError`` says how many bytes were
  skipped (``resynchronized=True``); at the end of the stream without one, it says the rest was
  abandoned (``resynchronized=False``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar

from s3p_codec._core import (
    Direction,
    FrameSync,
    Observed,
    ObservedError,
    ObservedGap,
    ObserverOutput,
    ReceiveBuffer,
    RemoteProtocolError,
)
from s3p_codec._core.checkpoint import Checkpointable
from s3p_codec._core.pending import MAX_PENDING, PendingBound
from s3p_codec.rustlog import _schema
from s3p_codec.rustlog._events import RESPONSE_TO, Error, ErrorCode, Event, Response
from s3p_codec.rustlog._json_backend import JsonBackend, backend
from s3p_codec.rustlog._limits import LENGTH_FIELD_SIZE, Limits
from s3p_codec.rustlog._wire import HEADER, check_length, decode_payload

__all__ = ["Observer"]

Output = ObserverOutput[Event]
_OPENERS = frozenset(b'"} \t\r\n')  # what may follow the "{" of a real payload
_CLOSERS = frozenset(b"} \t\r\n")  # what may end one


class _Stream:
    """Decoding state of one direction."""

    __slots__ = ("buffer", "closed", "frame_length", "lost", "sync")

    def __init__(self) -> None:
        self.buffer = ReceiveBuffer()
        self.lost = 0  # bytes missing in gaps before the buffer's start
        self.frame_length: int | None = None  # of the frame whose header was read
        self.sync = FrameSync()  # dropping the rest of a frame cut by a gap, or scanning
        self.closed = False

    @property
    def position(self) -> int:
        return self.lost + self.buffer.position

    @property
    def end(self) -> int:
        return self.position + len(self.buffer)


class Observer(Checkpointable):
    """Feed it both directions of one conversation; get typed, paired events back.

    ``Observer(limits, json=...)`` takes the same options as ``Connection``; ``max_pending``:
    requests kept awaiting a response (``_core.pending``), the oldest forgotten beyond.
    """

    #: A gap or garbage is passed over by hunting for a plausible frame header.
    resynchronizes: ClassVar[bool] = True

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        json: str | JsonBackend | None = None,
        max_pending: int = MAX_PENDING,
    ) -> None:
        self._limits = limits if limits is not None else Limits()
        self._json = backend(json)
        self._context = _schema.Context(self._limits, self._json.exact_integers)
        self._streams = {direction: _Stream() for direction in Direction}
        # Unanswered requests: (pair id or None, the response type that answers it, or None
        # for a request lost in a gap, which any response may answer).
        self._pending: deque[tuple[int | None, type[Response] | None]] = deque()
        self._next_pair = 0
        # The Observer has no room for more: INSUFFICIENT_SPACE is the spec's nearest code.
        self._bound = PendingBound(max_pending, ErrorCode.INSUFFICIENT_SPACE)

    # --- the Observer protocol --------------------------------------------------------------

    def observe(self, direction: Direction, data: bytes) -> list[Output]:
        """Feed bytes seen travelling ``direction``; return the events (responses paired by order),
        errors and resynchronisations they complete.
        """
        stream = self._streams[direction]
        if stream.closed or not data:
            return []
        stream.buffer.feed(data)
        return self._drain(direction, stream)

    def gap(self, direction: Direction, size: int) -> list[Output]:
        """``size`` bytes were lost in ``direction``: skip the rest of the frame if they fit inside
        it, else scan for the next plausible frame.
        """
        stream = self._streams[direction]
        if stream.closed or size <= 0:
            return []
        start = stream.end
        have = len(stream.buffer)
        length = stream.frame_length
        missing = None if length is None else LENGTH_FIELD_SIZE + length - have
        exact = stream.sync.gap(size, missing)
        stream.buffer.skip(have)  # a frame cut in two: what precedes the gap is of no use
        stream.frame_length = None
        stream.lost += size
        if exact:
            out: list[Output] = [ObservedGap(direction, start, size, resynchronized=True)]
            if missing is not None:
                self._frame_lost(direction, start, out)
            return [*out, *self._drain(direction, stream)]
        # The boundary is lost: scan (a loss while already scanning keeps the first cause).
        error = RemoteProtocolError(
            f"frame boundary lost after a gap of {size} bytes", code=ErrorCode.INVALID_REQUEST
        )
        stream.sync.lose(error, start + size)
        return [ObservedGap(direction, start, size, resynchronized=False)]

    def close(self, direction: Direction) -> list[Output]:
        """No more bytes come in ``direction``: report a frame the stream cut short."""
        stream = self._streams[direction]
        if stream.closed:
            return []
        out = self._drain(direction, stream)
        stream.closed = True
        left = len(stream.buffer)
        abandoned = stream.sync.abandoned(direction, stream.end)
        if abandoned is not None:
            out.append(abandoned)
        elif left or stream.sync.skip:
            error = RemoteProtocolError(
                "the stream ended mid-frame", code=ErrorCode.INVALID_REQUEST
            )
            out.append(ObservedError(direction, error, stream.position, skipped=left))
        stream.buffer.skip(left)
        return out

    # --- decoding ---------------------------------------------------------------------------

    def _drain(self, direction: Direction, stream: _Stream) -> list[Output]:
        out: list[Output] = []
        buffer = stream.buffer
        sync = stream.sync
        while True:
            if not sync.drop(buffer):
                return out
            if sync.scanning:
                if not sync.scan(
                    buffer, HEADER, self._plausible_length, self._checker(direction), anchor=b"{"
                ):
                    return out
                resynchronized = sync.resynchronized(direction, stream.position)
                if resynchronized is not None:
                    out.append(resynchronized)
            start = stream.position
            length = stream.frame_length
            if length is None:
                header = buffer.peek(LENGTH_FIELD_SIZE)
                if header is None:
                    return out
                (length,) = HEADER.unpack(header)
                try:
                    check_length(length, self._limits)
                except RemoteProtocolError as exc:
                    self._lose_sync(stream, exc, start)
                    continue
                stream.frame_length = length
            if len(buffer) < LENGTH_FIELD_SIZE + length:
                return out
            # Peek, not take: if the frame is garbage, the next header may hide inside it.
            frame = buffer.peek(LENGTH_FIELD_SIZE + length)
            assert frame is not None
            stream.frame_length = None
            end = start + LENGTH_FIELD_SIZE + length
            try:
                event = self._decode(direction, frame[LENGTH_FIELD_SIZE:])
            except RemoteProtocolError as exc:
                if exc.fatal:
                    self._lose_sync(stream, exc, start)
                    continue
                buffer.skip(LENGTH_FIELD_SIZE + length)
                self._frame_failed(direction, start, out)
                out.append(
                    ObservedError(direction, exc, start, skipped=end - start, resynchronized=True)
                )
                continue
            buffer.skip(LENGTH_FIELD_SIZE + length)
            pair_id = self._pair(direction, event, start, out)
            out.append(Observed(direction, event, start, end, pair_id))

    def _decoders(self, direction: Direction) -> dict[str, Callable[[dict[str, Any], Any], Any]]:
        if direction is Direction.CLIENT_TO_SERVER:
            return _schema.REQUEST_DECODERS
        return _schema.RESPONSE_DECODERS

    def _decode(self, direction: Direction, payload: bytes) -> Event:
        kind = "request" if direction is Direction.CLIENT_TO_SERVER else "response"
        event: Event = decode_payload(
            payload, self._decoders(direction), self._context, self._json, kind
        )
        return event

    def _lose_sync(self, stream: _Stream, error: RemoteProtocolError, start: int) -> None:
        """Start scanning one byte after ``start`` (still buffered) for a plausible header."""
        stream.sync.lose(error, start)
        stream.frame_length = None
        stream.buffer.skip(1)

    def _plausible_length(self, fields: tuple[Any, ...]) -> int | None:
        """The payload length of a header that could start a frame (a payload is at least
        ``{}``), or None."""
        (length,) = fields
        return length if 2 <= length <= self._limits.max_frame_size else None

    def _checker(self, direction: Direction) -> Callable[[bytes | bytearray, int, int], bool]:
        """Whether ``data[start:end]`` is a whole plausible frame: its payload opens like an
        object, ends like one, and decodes without a fatal error."""

        def check(data: bytes | bytearray, start: int, end: int) -> bool:
            payload = start + LENGTH_FIELD_SIZE
            if data[payload + 1] not in _OPENERS or data[end - 1] not in _CLOSERS:
                return False
            try:
                self._decode(direction, bytes(data[payload:end]))
            except RemoteProtocolError as exc:
                return not exc.fatal
            return True

        return check

    # --- pairing ----------------------------------------------------------------------------

    def _remember(
        self, entry: tuple[int | None, type[Response] | None], start: int, out: list[Output]
    ) -> None:
        """Queue a request for its response, forgetting the oldest beyond ``max_pending``."""
        full, said = self._bound.admit(len(self._pending), start)
        if full:
            self._pending.popleft()
        if said is not None:
            out.append(said)
        self._pending.append(entry)

    def _pair(
        self, direction: Direction, event: Event, start: int, out: list[Output]
    ) -> int | None:
        if direction is Direction.CLIENT_TO_SERVER:
            pair_id = self._next_pair
            self._next_pair += 1
            self._remember((pair_id, RESPONSE_TO[type(event)]), start, out)  # type: ignore[index]
            return pair_id
        pending = self._pending
        for index, (answered, expected) in enumerate(pending):
            if expected is None or expected is type(event) or type(event) is Error:
                for _ in range(index + 1):
                    pending.popleft()
                return answered
        return None

    def _frame_failed(self, direction: Direction, start: int, out: list[Output]) -> None:
        """A well-framed message that broke the rules: keep pairing in step."""
        if direction is Direction.CLIENT_TO_SERVER:
            self._remember((None, Error), start, out)  # answered by an Error, nothing to pair
        elif self._pending:
            self._pending.popleft()

    def _frame_lost(self, direction: Direction, start: int, out: list[Output]) -> None:
        """A whole frame fell into a gap."""
        if direction is Direction.CLIENT_TO_SERVER:
            self._remember((None, None), start, out)
        elif self._pending:
            self._pending.popleft()
