"""Frames and field layouts: typed commands to bytes and back, with no connection state.

"Frame: i32 type, i32 payload length (excludes the 8-byte header), payload. Big-endian. Max
payload 0xFFFFFF (16 MiB - 1)." Payloads are laid out as each event class's ``FIELDS`` say.

Forward compatibility, as real readers do it: "a reader treats a missing trailing field as absent
(-1 / "" defaults) and skips unread trailing bytes inside a frame". A field is optional exactly
where the real reader checks ``available()`` before reading it; a required field that is missing
is a ``MALFORMED`` frame.

``encode`` validates what the user built (ranges of every integer, writable strings);
``decode_payload`` builds events without re-validating them.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any, cast

from s3p_codec._core import LocalProtocolError, RemoteProtocolError
from s3p_codec.pravega import _mutf8
from s3p_codec.pravega._events import (
    TYPED,
    Command,
    CommandType,
    ErrorCode,
    Opaque,
    Padding,
    _Command,
)

__all__ = [
    "HEADER",
    "HEADER_SIZE",
    "MAX_FRAME",
    "decode_payload",
    "encode",
    "encode_frame",
    "known_type",
    "parse_events",
]

#: The frame header: i32 type code, i32 payload length, big-endian.
HEADER = struct.Struct(">ii")
HEADER_SIZE = 8
"""``TYPE_PLUS_LENGTH_SIZE``: i32 type code, i32 payload length."""
MAX_FRAME = 0x00FFFFFF
"""``MAX_WIRECOMMAND_SIZE``: the largest payload a frame may declare."""

_LONG = struct.Struct(">q")
_INT = struct.Struct(">i")
_USHORT = struct.Struct(">H")
_BYTE = struct.Struct(">b")
_UUID = struct.Struct(">16s")
_WORD = struct.Struct(">Q")  # a frame header read as one unsigned number (``parse_events``)
_EVENT_CODE = int(CommandType.EVENT)
_CODES = {int(member): member for member in CommandType}

_INT_RANGES = {"long": 64, "int": 32, "byte": 8}


def known_type(code: int) -> CommandType | None:
    """The ``CommandType`` of a wire code, or None if Pravega does not define it."""
    return _CODES.get(code)


# --- encoding ------------------------------------------------------------------------------


def encode_frame(code: int, payload: bytes) -> bytes:
    """One frame: header and payload."""
    return HEADER.pack(code, len(payload)) + payload


def _bad(message: str) -> LocalProtocolError:
    return LocalProtocolError(message, code=ErrorCode.INVALID_FIELD)


def _put(kind: str, name: str, value: Any, out: list[bytes], strict: bool) -> None:
    if kind in _INT_RANGES:
        bits = _INT_RANGES[kind]
        if type(value) is not int or not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            raise _bad(f"{name}={value!r} is not a signed {bits}-bit integer")
        out.append((_LONG if kind == "long" else _INT if kind == "int" else _BYTE).pack(value))
    elif kind == "bool":
        if type(value) is not bool:
            raise _bad(f"{name}={value!r} is not a bool")
        out.append(b"\x01" if value else b"\x00")
    elif kind == "uuid":
        if not isinstance(value, uuid.UUID):
            raise _bad(f"{name}={value!r} is not a uuid.UUID")
        out.append(value.bytes)
    elif kind == "str":
        if type(value) is not str:
            raise _bad(f"{name}={value!r} is not a str")
        try:
            data = _mutf8.encode(value, strict=strict)
        except _mutf8.MUTF8Error as exc:
            raise LocalProtocolError(f"{name}: {exc}", code=ErrorCode.BAD_STRING) from None
        out.append(_USHORT.pack(len(data)))
        out.append(data)
    else:  # "data", "event", "rest": bytes
        if type(value) is not bytes:
            raise _bad(f"{name} must be bytes, not {type(value).__name__}")
        if kind == "data":
            out.append(_INT.pack(len(value)))
        elif kind == "event":
            out.append(HEADER.pack(_EVENT_CODE, len(value)))
        out.append(value)


def encode_payload(event: Command, *, strict: bool = True) -> bytes:
    """The payload of a typed command, validated."""
    if type(event) is Padding:
        if type(event.length) is not int or not 0 <= event.length <= MAX_FRAME:
            raise _bad(f"Padding length {event.length!r} out of range")
        return bytes(event.length)
    out: list[bytes] = []
    for field in event.FIELDS:
        _put(field[1], field[0], getattr(event, field[0]), out, strict)
    return b"".join(out)


def encode(event: Command | Opaque, *, strict: bool = True) -> bytes:
    """One typed command (or an ``Opaque`` one) as a frame, validated; no connection rules.

    Useful on its own to craft traffic (tests, fuzzers); connections add the protocol's rules.
    Raises ``LocalProtocolError`` for an invalid field, something that is not one wire command, or a
    payload over ``MAX_FRAME``.
    """
    if type(event) is Opaque:
        if type(event.payload) is not bytes or not isinstance(event.type, CommandType):
            raise _bad("Opaque needs a CommandType and bytes")
        payload = event.payload
        code = int(event.type)
    elif isinstance(event, _Command):
        payload = encode_payload(event, strict=strict)
        code = int(event.TYPE)
    else:
        raise _bad(f"{type(event).__name__} is not a single wire command")
    if len(payload) > MAX_FRAME:
        raise LocalProtocolError(
            f"payload of {len(payload)} bytes exceeds the frame limit {MAX_FRAME}",
            code=ErrorCode.INVALID_FIELD,
        )
    return HEADER.pack(code, len(payload)) + payload


# --- decoding ------------------------------------------------------------------------------


class _Short(Exception):
    """A required field runs past the end of the payload."""


def _malformed(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(message, code=ErrorCode.MALFORMED)


def _read_str(payload: bytes, pos: int, strict: bool) -> tuple[str, int]:
    if pos + 2 > len(payload):
        raise _Short
    (size,) = _USHORT.unpack_from(payload, pos)
    end = pos + 2 + size
    if end > len(payload):
        raise _Short
    raw = payload[pos + 2 : end]
    try:
        return _mutf8.decode(raw, strict=strict), end
    except _mutf8.MUTF8Error as exc:
        raise RemoteProtocolError(f"string at {pos}: {exc}", code=ErrorCode.BAD_STRING) from None


def _read(kind: str, payload: bytes, pos: int, strict: bool) -> tuple[object, int]:
    size = len(payload)
    if kind == "long":
        if pos + 8 > size:
            raise _Short
        return _LONG.unpack_from(payload, pos)[0], pos + 8
    if kind == "int":
        if pos + 4 > size:
            raise _Short
        return _INT.unpack_from(payload, pos)[0], pos + 4
    if kind == "uuid":
        if pos + 16 > size:
            raise _Short
        return uuid.UUID(bytes=payload[pos : pos + 16]), pos + 16
    if kind == "str":
        return _read_str(payload, pos, strict)
    if kind == "bool":
        if pos + 1 > size:
            raise _Short
        return payload[pos] != 0, pos + 1
    if kind == "byte":
        if pos + 1 > size:
            raise _Short
        return _BYTE.unpack_from(payload, pos)[0], pos + 1
    if kind == "rest":
        return payload[pos:], size
    if kind == "data":
        if pos + 4 > size:
            raise _Short
        (count,) = _INT.unpack_from(payload, pos)
        if count < 0 or pos + 4 + count > size:
            raise _malformed(f"data length {count} at {pos} does not fit the frame")
        return payload[pos + 4 : pos + 4 + count], pos + 4 + count
    # "event": a nested EVENT frame.
    if pos + 8 > size:
        raise _Short
    code, count = HEADER.unpack_from(payload, pos)
    if code != _EVENT_CODE:
        raise _malformed(f"was expecting EVENT but found type {code}")
    if count < 0 or pos + 8 + count > size:
        raise _malformed(f"nested event length {count} does not fit the frame")
    return payload[pos + 8 : pos + 8 + count], pos + 8 + count


def _optional_present(kind: str, remaining: int) -> bool:
    # Real readers: strings when ``available() > 0``, numbers when ``available() >= size``.
    if kind == "str":
        return remaining > 0
    return remaining >= {"long": 8, "int": 4}.get(kind, 1)


def decode_payload(code: CommandType, payload: bytes, *, strict: bool = True) -> Command | Opaque:
    """The event of one frame (header already checked); trailing bytes are skipped."""
    cls = TYPED.get(code)
    if cls is None:
        return Opaque(code, payload)
    if cls is Padding:
        return Padding(len(payload))
    values: list[object] = []
    pos = 0
    for field in cls.FIELDS:
        name, kind = field[0], field[1]
        if len(field) == 3 and not _optional_present(kind, len(payload) - pos):
            values.append(field[2])
            continue
        try:
            value, pos = _read(kind, payload, pos, strict)
        except _Short:
            raise _malformed(
                f"{code.name} payload of {len(payload)} bytes ends inside field {name!r}"
            ) from None
        values.append(value)
    return cast("Command", cls(*values))


def parse_events(data: bytes, start: int, end: int, out: list[bytes]) -> int:
    """Append the data of each whole ``EVENT`` frame in ``data[start:end]`` to ``out``.

    Returns where parsing stopped: ``end``, or the start of a frame that is not complete before
    ``end``. Raises ``ValueError`` when a frame is not an EVENT or has a negative length.
    ``data[start:end]`` is at most a few frames long (far below 2**31 bytes).

    This is the hot loop of append reassembly, so each event costs as little Python as walking
    the frames can: a run of equal-sized events at the start is checked and sliced by C-level
    operations (``_uniform_run``); the rest is walked by one ``unpack_from`` and one addition per
    event, and the walked events are sliced out together by one ``struct`` unpack per batch
    (``_cut``).
    """
    pos = _uniform_run(data, start, end, out)
    first = pos
    unpack = _WORD.unpack_from
    sizes: list[int] = []
    mark = sizes.append
    last = end - HEADER_SIZE
    while pos <= last:
        # Both i32 fields read as one unsigned i64: an EVENT header (type 0, length >= 0)
        # reads as its length, any other header as 2**31 or more, which ends the walk.
        (count,) = unpack(data, pos)
        pos += count + 8  # HEADER_SIZE, as a constant: this loop runs once per event
        mark(count)
    if pos > end:
        # The last header read opens a frame that does not fit: incomplete, or not an Event.
        pos -= HEADER_SIZE + sizes.pop()
        code, count = HEADER.unpack_from(data, pos)
        if code:
            raise ValueError(f"type {code} at {pos} where an EVENT frame was expected")
        if count < 0:
            raise ValueError(f"negative Event length {count} at {pos}")
    if sizes:
        _cut(data, first, sizes, out)
    return pos


_BATCH = 4096


class _Pieces(dict[int, str]):
    """``struct`` format pieces ("8x<size>s": skip a header, take the data) by event size."""

    def __missing__(self, size: int) -> str:
        piece = f"{HEADER_SIZE}x{size}s"
        if size < 4096:  # keep the common sizes; a bounded cache
            self[size] = piece
        return piece


_PIECES = _Pieces()


def _cut(data: bytes, at: int, sizes: list[int], out: list[bytes]) -> None:
    """Slice out the Event frames of ``sizes`` that follow each other from ``at``.

    One ``struct.Struct("8x12s8x40s...").unpack_from`` per batch makes every ``bytes`` object in
    C, cheaper than one Python slice per event; batches bound the compiled format's memory.
    """
    if len(sizes) < 4:
        for size in sizes:
            begin = at + HEADER_SIZE
            at = begin + size
            out.append(data[begin:at])
        return
    piece = _PIECES.__getitem__
    for low in range(0, len(sizes), _BATCH):
        batch = sizes[low : low + _BATCH] if len(sizes) > _BATCH else sizes
        layout = struct.Struct("".join(map(piece, batch)))
        out.extend(layout.unpack_from(data, at))
        at += layout.size


_RUN_MIN = 8


def _uniform_run(data: bytes, start: int, end: int, out: list[bytes]) -> int:
    """Slice out the longest run of same-sized Event frames at ``start``; return its end.

    The run's headers are all the same 8 bytes, so comparing the strided byte columns
    ``data[first + j : stop : stride]`` (j = 0..7) with that header's bytes proves a stretch of
    frames at C speed. The run's length is found by galloping then bisecting, each step
    checking only frames not yet proven: linear in the run's length.
    """
    if end - start < HEADER_SIZE:
        return start
    count: int = _LONG.unpack_from(data, start)[0]
    if count >> 31:
        return start  # not an Event header: the general loop reports it
    stride = HEADER_SIZE + count
    frames = (end - start) // stride
    if frames < _RUN_MIN:
        return start
    header = _LONG.pack(count)

    def uniform(low: int, high: int) -> bool:
        """Frames ``low`` to ``high - 1`` of the run all carry the header."""
        first = start + low * stride
        stop = start + high * stride
        size = high - low
        return all(data[first + j : stop : stride] == header[j : j + 1] * size for j in range(8))

    good, probe = 1, _RUN_MIN  # frame 0 is known good
    while uniform(good, probe):
        good = probe
        if good == frames:
            break
        probe = min(2 * probe, frames)
    else:
        while probe - good > 1:  # good frames: [0, good); frame ``probe - 1`` or before is bad
            middle = (good + probe) // 2
            if uniform(good, middle):
                good = middle
            else:
                probe = middle
    if good < _RUN_MIN:
        return start
    stop = start + good * stride
    first = start + HEADER_SIZE
    out.extend([data[at : at + count] for at in range(first, stop - count + 1, stride)])
    return stop


def event_frame(data: bytes) -> bytes:
    """``data`` framed as a nested EVENT: "i32 0, i32 len, data"."""
    return HEADER.pack(_EVENT_CODE, len(data)) + data
