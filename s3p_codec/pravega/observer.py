"""Passive decoding of both directions of a recorded Pravega conversation (captures).

Each direction is decoded like the receiving end would: client-to-server bytes as a server does
(append blocks reassembled into ``Append`` events), server-to-client bytes as a client does.
Replies are paired with requests by ``request_id`` (the same number travels in both); Hello,
KeepAlive and commands without a request id are unpaired.

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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from s3p_codec._core import (
    Direction,
    Observed,
    ObservedError,
    ObservedGap,
    ObserverOutput,
    ReceiveBuffer,
    RemoteProtocolError,
)
from s3p_codec.pravega.appends import BlockReader
from s3p_codec.pravega.connection import Limits
from s3p_codec.pravega.events import (
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
    Padding,
    PartialEvent,
    PravegaEvent,
    SetupAppend,
)
from s3p_codec.pravega.wire import HEADER, HEADER_SIZE, decode_payload

__all__ = ["Observer"]

_SIZES = {"long": 8, "int": 4, "uuid": 16, "str": 2, "bool": 1, "byte": 1, "data": 4, "event": 8}
_MIN_PAYLOAD = {
    code: sum(_SIZES.get(field[1], 0) for field in cls.FIELDS if len(field) == 2)
    for code, cls in TYPED.items()
}
_CODES = {int(member): member for member in CommandType}


class _Side:
    __slots__ = ("await_size", "block_start", "buffer", "direction", "pending_error", "reader",
                 "receives", "scan_from", "scanning", "skip")  # fmt: skip

    def __init__(self, direction: Direction, limits: Limits) -> None:
        self.direction = direction
        self.buffer = ReceiveBuffer()
        client_to_server = direction is Direction.CLIENT_TO_SERVER
        self.receives = REQUESTS if client_to_server else REPLIES
        self.reader = BlockReader(limits.max_writers) if client_to_server else None
        self.block_start = 0
        self.skip = 0  # bytes still to drop (the rest of a frame damaged by a gap)
        self.scanning = False
        self.await_size = 0  # while scanning: buffered bytes needed to check the candidate
        self.scan_from = 0  # absolute offset where the scan began
        self.pending_error: RemoteProtocolError | None = None


class Observer:
    """Decodes a recorded conversation; satisfies ``s3p_codec._core.Observer``."""

    #: A gap or garbage is passed over by hunting for a plausible frame header.
    resynchronizes: ClassVar[bool] = True

    def __init__(self, limits: Limits | None = None, *, strict_strings: bool = True) -> None:
        self.limits = Limits() if limits is None else limits
        self.strict_strings = strict_strings
        self._sides = {d: _Side(d, self.limits) for d in Direction}
        self._pairs: dict[int, int] = {}
        self._next_pair = 0

    def observe(self, direction: Direction, data: bytes) -> Sequence[ObserverOutput[PravegaEvent]]:
        """Feed bytes seen travelling ``direction``; return the events, errors and
        resynchronisations they complete.
        """
        side = self._sides[direction]
        side.buffer.feed(data)
        return self._drain(side)

    def gap(self, direction: Direction, size: int) -> Sequence[ObserverOutput[PravegaEvent]]:
        """``size`` bytes were lost in ``direction``: skip the rest of the frame if the lost bytes
        fit inside it, else scan for the next plausible frame header.
        """
        side = self._sides[direction]
        buffer = side.buffer
        start = buffer.position + len(buffer)
        if side.reader is not None:
            side.reader.reset()
        header = buffer.peek(HEADER_SIZE) if not side.scanning and not side.skip else None
        if header is not None:
            code, length = HEADER.unpack(header)
            missing = HEADER_SIZE + length - len(buffer)
            if self._plausible(side, code, length) and size <= missing:
                buffer.skip(len(buffer))
                side.skip = missing - size
                return [ObservedGap(direction, start, size, resynchronized=True)]
        if side.skip and size <= side.skip:
            side.skip -= size
            return [ObservedGap(direction, start, size, resynchronized=True)]
        buffer.skip(len(buffer))
        side.skip = 0
        if not side.scanning:
            side.scanning = True
            side.scan_from = buffer.position
        return [ObservedGap(direction, start, size, resynchronized=False)]

    def close(self, direction: Direction) -> Sequence[ObserverOutput[PravegaEvent]]:
        """No more bytes come in ``direction``: report a frame or append block the stream cut short.
        """
        side = self._sides[direction]
        out: list[ObserverOutput[PravegaEvent]] = []
        buffer = side.buffer
        if side.scanning:
            if side.pending_error is not None:
                out.append(
                    ObservedError(
                        direction,
                        side.pending_error,
                        side.scan_from,
                        skipped=buffer.position + len(buffer) - side.scan_from,
                    )
                )
                side.pending_error = None
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

    def _scan(self, side: _Side) -> bool:
        """Drop bytes until a plausible header starts the buffer; False if more data needed.

        A candidate header must be followed by a payload that decodes, and, when the bytes
        are here, by another plausible header. A candidate whose frame is not all here yet is
        waited for (``side.await_size``), so a resynchronisation never rescans the same bytes
        for every new chunk.
        """
        buffer = side.buffer
        if len(buffer) < side.await_size:
            return False
        side.await_size = 0
        data = buffer.peek(len(buffer)) or b""
        for offset in range(len(data) - HEADER_SIZE + 1):
            code, length = HEADER.unpack_from(data, offset)
            if not self._plausible(side, code, length):
                continue
            stop = offset + HEADER_SIZE + length
            if stop > len(data):
                buffer.skip(offset)
                side.await_size = stop - offset
                return False
            try:
                decode_payload(_CODES[code], data[offset + HEADER_SIZE : stop])
            except RemoteProtocolError:
                continue
            if stop + HEADER_SIZE <= len(data):
                following, size = HEADER.unpack_from(data, stop)
                if not self._plausible(side, following, size):
                    continue
            buffer.skip(offset)
            side.scanning = False
            return True
        buffer.skip(max(0, len(data) - HEADER_SIZE + 1))
        return False

    def _drain(self, side: _Side) -> list[ObserverOutput[PravegaEvent]]:
        out: list[ObserverOutput[PravegaEvent]] = []
        buffer = side.buffer
        direction = side.direction
        while True:
            if side.skip:
                side.skip -= buffer.skip(side.skip)
                if side.skip:
                    return out
            if side.scanning:
                if not self._scan(side):
                    return out
                if side.pending_error is not None:
                    out.append(
                        ObservedError(
                            direction,
                            side.pending_error,
                            side.scan_from,
                            skipped=buffer.position - side.scan_from,
                            resynchronized=True,
                        )
                    )
                    side.pending_error = None
            start = buffer.position
            header = buffer.peek(HEADER_SIZE)
            if header is None:
                return out
            code, length = HEADER.unpack(header)
            if not self._plausible(side, code, length):
                side.pending_error = self._header_error(side, code, length)
                side.scanning = True
                side.scan_from = start
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
            out.append(Observed(direction, event, began, buffer.position, self._pair(side, event)))

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
    ) -> PravegaEvent | None:
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

    def _pair(self, side: _Side, event: PravegaEvent) -> int | None:
        request_id = getattr(event, "request_id", None)
        if type(request_id) is not int or request_id == -1:
            return None
        if side.direction is Direction.CLIENT_TO_SERVER:
            self._next_pair += 1
            self._pairs[request_id] = self._next_pair
            return self._next_pair
        return self._pairs.get(request_id)
