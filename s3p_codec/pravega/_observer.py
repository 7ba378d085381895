"""Passive decoding of both directions of a recorded Pravega conversation (captures).

Each direction is decoded like the receiving end would: client-to-server bytes as a server does
(append blocks reassembled into ``Append`` events), server-to-client bytes as a client does.
Replies are paired with requests by ``request_id`` (the same number travels in both); Hello,
KeepAlive and commands without a request id are unpaired. The table from request id to pair id
holds the last ``max_pending`` request ids (``_core.pending``): a client sending ever new ids
that are never answered cannot grow it; the oldest is forgotten (its replies come unpaired),
and one ``ObservedError`` (code ``state``) says so when the bound is first reached.

Broken streams do not stop a capture:

- a frame whose header is plausible but whose payload breaks a rule gives an ``ObservedError``
  and decoding goes on at the next frame (its boundary is known: ``resynchronized=True``);
- a header that cannot be right (undefined type code, a code this direction never carries,
  a length over the limit or below the command's fixed fields) starts a scan for "a plausible
  header" further on: a defined code of this direction with a length within bounds. The
  ``ObservedError`` is reported once the scan succeeds (``skipped`` bytes later), or at
  ``close`` if it never does;
- a ``gap`` inside a frame whose length is known skips to that frame's end (``resynchronized``);
  any other gap scans for a plausible header like above.

The boundary-keeping state (dropping the rest of a damaged frame, scanning) is the shared
``FrameSync``; this module says which headers are plausible and how a candidate frame is checked.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from s3p_codec.pravega._appends import BlockReader
from s3p_codec.pravega._events import (
    REPLIES,
    REQUESTS,
    TYPED,
    Append,
    AppendBlock,
    AppendBlockEnd,
    CommandType,
    ConditionalAppend,
    ConditionalBlockEnd,
    ErrorCode,
    Event,
    Padding,
    PartialEvent,
    SetupAppend,
)
from s3p_codec.pravega._limits import Limits
from s3p_codec.pravega._wire import HEADER, HEADER_SIZE, decode_payload

__all__ = ["Observer"]

_SIZES = {"long": 8, "int": 4, "uuid": 16, "str": 2, "bool": 1, "byte": 1, "data": 4, "event": 8}
_MIN_PAYLOAD = {
    code: sum(_SIZES.get(field[1], 0) for field in cls.FIELDS if len(field) == 2)
    for code, cls in TYPED.items()
}
_CODES = {int(member): member for member in CommandType}


class _Side:
    __slots__ = ("block_start", "buffer", "direction", "reader", "receives", "sync")

    def __init__(self, direction: Direction, limits: Limits) -> None:
        self.direction = direction
        self.buffer = ReceiveBuffer()
        client_to_server = direction is Direction.CLIENT_TO_SERVER
        self.receives = REQUESTS if client_to_server else REPLIES
        self.reader = BlockReader(limits.max_writers) if client_to_server else None
        self.block_start = 0
        self.sync = FrameSync()


class Observer(Checkpointable):
    """Decodes a recorded conversation; satisfies ``s3p_codec._core.Observer``. ``max_pending``:
    request ids kept for pairing (see the module docstring)."""

    #: A gap or garbage is passed over by hunting for a plausible frame header.
    resynchronizes: ClassVar[bool] = True

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        strict_strings: bool = True,
        max_pending: int = MAX_PENDING,
    ) -> None:
        self.limits = Limits() if limits is None else limits
        self.strict_strings = strict_strings
        self._sides = {d: _Side(d, self.limits) for d in Direction}
        self._pairs: dict[int, int] = {}  # request id -> pair id, oldest first
        # No code names "the Observer cannot pair this any more"; STATE is the nearest.
        self._bound = PendingBound(max_pending, ErrorCode.STATE)
        self._next_pair = 0

    def observe(self, direction: Direction, data: bytes) -> Sequence[ObserverOutput[Event]]:
        """Feed bytes seen travelling ``direction``; return the events, errors and
        resynchronisations they complete.
        """
        side = self._sides[direction]
        side.buffer.feed(data)
        return self._drain(side)

    def gap(self, direction: Direction, size: int) -> Sequence[ObserverOutput[Event]]:
        """``size`` bytes were lost in ``direction``: skip the rest of the frame if the lost bytes
        fit inside it, else scan for the next plausible frame header.
        """
        side = self._sides[direction]
        buffer = side.buffer
        sync = side.sync
        start = buffer.position + len(buffer)
        if side.reader is not None:
            side.reader.reset()
        missing = None
        header = buffer.peek(HEADER_SIZE) if not sync.scanning and not sync.skip else None
        if header is not None:
            code, length = HEADER.unpack(header)
            if self._plausible(side, code, length):
                missing = HEADER_SIZE + length - len(buffer)
        if sync.gap(size, missing):
            buffer.skip(len(buffer))
            return [ObservedGap(direction, start, size, resynchronized=True)]
        buffer.skip(len(buffer))
        sync.lose(None, buffer.position)
        return [ObservedGap(direction, start, size, resynchronized=False)]

    def close(self, direction: Direction) -> Sequence[ObserverOutput[Event]]:
        """No more bytes come in ``direction``: report a frame or append block the stream cut short.
        """
        side = self._sides[direction]
        buffer = side.buffer
        # A scan may still succeed with a candidate that ends the stream (no header after it).
        out = self._drain(side, final=True) if side.sync.scanning else []
        if side.sync.scanning:
            lost = side.sync.abandoned(direction, buffer.position + len(buffer))
            if lost is not None:
                out.append(lost)
        elif buffer:
            error = RemoteProtocolError(
                f"the stream ended inside a frame ({len(buffer)} bytes left)",
                code=ErrorCode.BAD_FRAME,
            )
            out.append(ObservedError(direction, error, buffer.position))
        elif side.reader is not None and side.reader.block_open:
            error = RemoteProtocolError(
                "the stream ended inside an append block", code=ErrorCode.BAD_FRAME
            )
            out.append(ObservedError(direction, error, side.block_start))
        buffer.skip(len(buffer))
        return out

    # -- internals ----------------------------------------------------------------------------

    def _plausible(self, side: _Side, code: int, length: int) -> bool:
        kind = _CODES.get(code)
        return (
            kind is not None
            and kind in side.receives
            and kind is not CommandType.PARTIAL_EVENT
            and _MIN_PAYLOAD.get(kind, 0) <= length <= self.limits.max_frame
        )

    def _scan(self, side: _Side, *, final: bool = False) -> bool:
        """Drop bytes until a plausible header starts the buffer; False if more data needed.

        A candidate header must be followed by a payload that decodes, and by another plausible
        header (unless the stream ended right after it: ``final``). A candidate whose frame and
        following header are not all here yet is waited for: a resynchronisation never rescans
        the same bytes for every new chunk, and finds the same frame however the bytes come.
        """

        def payload_length(fields: tuple[Any, ...]) -> int | None:
            code, length = fields
            return length if self._plausible(side, code, length) else None

        def check(data: bytes | bytearray, start: int, stop: int) -> bool:
            code = HEADER.unpack_from(data, start)[0]
            try:
                decode_payload(_CODES[code], bytes(data[start + HEADER_SIZE : stop]))
            except RemoteProtocolError:
                return False
            if stop + HEADER_SIZE <= len(data):
                following, size = HEADER.unpack_from(data, stop)
                return self._plausible(side, following, size)
            return True

        return side.sync.scan(
            side.buffer, HEADER, payload_length, check, lookahead=HEADER_SIZE, final=final
        )

    def _drain(self, side: _Side, *, final: bool = False) -> list[ObserverOutput[Event]]:
        out: list[ObserverOutput[Event]] = []
        buffer = side.buffer
        direction = side.direction
        sync = side.sync
        while True:
            if not sync.drop(buffer):
                return out
            if sync.scanning:
                if not self._scan(side, final=final):
                    return out
                found = sync.resynchronized(direction, buffer.position)
                if found is not None:
                    out.append(found)
            start = buffer.position
            header = buffer.peek(HEADER_SIZE)
            if header is None:
                return out
            code, length = HEADER.unpack(header)
            if not self._plausible(side, code, length):
                sync.lose(self._header_error(side, code, length), start)
                buffer.skip(1)
                continue
            if len(buffer) < HEADER_SIZE + length:
                return out
            buffer.skip(HEADER_SIZE)
            payload = buffer.take(length) or b""
            try:
                event = self._process(side, _CODES[code], payload, start)
            except RemoteProtocolError as exc:
                if side.reader is not None:
                    side.reader.reset()
                out.append(ObservedError(direction, exc, start, resynchronized=True))
                continue
            if event is None:
                continue
            began = side.block_start if isinstance(event, Append) else start
            pair_id = self._pair(side, event, began, out)
            out.append(Observed(direction, event, began, buffer.position, pair_id))

    def _header_error(self, side: _Side, code: int, length: int) -> RemoteProtocolError:
        kind = _CODES.get(code)
        if kind is None:
            return RemoteProtocolError(
                f"Unknown wire command: {code}", code=ErrorCode.UNKNOWN_COMMAND
            )
        if kind not in side.receives or kind is CommandType.PARTIAL_EVENT:
            return RemoteProtocolError(
                f"{kind.name} does not travel {side.direction.value}",
                code=ErrorCode.UNEXPECTED_COMMAND,
            )
        return RemoteProtocolError(
            f"{kind.name} declares an impossible length {length}", code=ErrorCode.BAD_FRAME
        )

    def _process(
        self, side: _Side, kind: CommandType, payload: bytes, start: int
    ) -> Event | None:
        event = decode_payload(kind, payload, strict=self.strict_strings)
        reader = side.reader
        if reader is None:
            return event
        if reader.block_open and not isinstance(event, AppendBlockEnd):
            reader.reset()
            raise RemoteProtocolError(
                f"Unexpected {type(event).__name__} following an AppendBlock",
                code=ErrorCode.INVALID_APPEND,
            )
        if isinstance(event, AppendBlock):
            reader.block(event)
            side.block_start = start
            return None
        if isinstance(event, AppendBlockEnd):
            if not reader.block_open:
                side.block_start = start
            return reader.block_end(event)
        if isinstance(event, Padding):
            return None
        if isinstance(event, PartialEvent):
            raise RemoteProtocolError(
                "PARTIAL_EVENT outside an append block", code=ErrorCode.UNEXPECTED_COMMAND
            )
        if isinstance(event, SetupAppend):
            reader.setup(event)
        elif isinstance(event, ConditionalAppend | ConditionalBlockEnd):
            reader.conditional(event)
        return event

    def _pair(
        self, side: _Side, event: Event, start: int, out: list[ObserverOutput[Event]]
    ) -> int | None:
        request_id = getattr(event, "request_id", None)
        if type(request_id) is not int or request_id == -1:
            return None
        if side.direction is Direction.CLIENT_TO_SERVER:
            self._next_pair += 1
            pairs = self._pairs
            pairs.pop(request_id, None)  # a reused id moves to the newest end
            full, said = self._bound.admit(len(pairs), start)
            if full:
                del pairs[next(iter(pairs))]
            if said is not None:
                out.append(said)
            pairs[request_id] = self._next_pair
            return self._next_pair
        return self._pairs.get(request_id)
