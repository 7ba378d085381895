"""S2S framing: ``LENGTH (3 bytes, big-endian) | FLAGS (1 byte) | PAYLOAD``.

- "Specifies size of FLAGS + PAYLOAD"; "Maximum: 2 MiB (enforced limit)". A length of 0 (no
  flag byte) is an error, and an oversized length is an error as soon as the 3 bytes are read,
  before any payload arrives.
- Flags: bit 7 terminal, bits 6-5 compression (0 none, 1 zstd, 2 gzip, 3 reserved = error),
  bit 4 "reconnect advised" (regular frames), bits 3-0 reserved and ignored on decode.
- Terminal payload: "Status code is HTTP status (2 bytes, big-endian)" then the JSON body.
  Terminal frames are never compressed: they are written with flag byte 0x80 exactly.
"""

from __future__ import annotations

import json

import attrs

from s3p_codec._core import LocalProtocolError, ReceiveBuffer, RemoteProtocolError
from s3p_codec.s2s._compression import Compression
from s3p_codec.s2s._events import ErrorCode, StreamPosition, Terminal

__all__ = [
    "FLAG_RECONNECT_ADVISED",
    "FLAG_TERMINAL",
    "RawFrame",
    "decode_terminal",
    "encode_frame",
    "encode_terminal",
    "read_frame",
]

#: Flag bit of a terminal frame (the session ends after it).
FLAG_TERMINAL = 0x80
COMPRESSION_MASK = 0x60
COMPRESSION_SHIFT = 5
#: Flag bit of a reconnect-advised frame.
FLAG_RECONNECT_ADVISED = 0x10


@attrs.frozen(slots=True)
class RawFrame:
    """One frame as read off the wire, payload still compressed."""

    terminal: bool
    compression: Compression
    reconnect_advised: bool
    payload: bytes


def _bad_frame(what: str) -> RemoteProtocolError:
    return RemoteProtocolError(what, code=ErrorCode.BAD_FRAME)


def read_frame(buffer: ReceiveBuffer, max_length: int) -> RawFrame | None:
    """Take one whole frame from ``buffer``, or return None (consuming nothing) if incomplete.

    The length is checked against ``max_length`` from the 3-byte header alone.
    """
    header = buffer.peek(3)
    if header is None:
        return None
    length = int.from_bytes(header, "big")
    if length == 0:
        raise _bad_frame("frame length 0: a frame has at least its flag byte")
    if length > max_length:
        raise _bad_frame(f"frame length {length} exceeds the {max_length}-byte limit")
    if len(buffer) < 3 + length:
        return None
    flags = buffer.peek_byte(3)
    buffer.skip(4)
    payload = buffer.take(length - 1)
    assert payload is not None
    code = (flags & COMPRESSION_MASK) >> COMPRESSION_SHIFT
    if code == 3:
        raise _bad_frame("compression value 3 is reserved")
    terminal = bool(flags & FLAG_TERMINAL)
    return RawFrame(
        terminal=terminal,
        compression=Compression(code),
        reconnect_advised=not terminal and bool(flags & FLAG_RECONNECT_ADVISED),
        payload=payload,
    )


def encode_frame(
    payload: bytes,
    compression: Compression = Compression.NONE,
    *,
    reconnect_advised: bool = False,
    max_length: int = 2 * 1024 * 1024,
) -> bytes:
    """Frame a regular (non-terminal) payload.

    Raises ``LocalProtocolError`` (not fatal) when the frame would exceed ``max_length``.
    """
    length = 1 + len(payload)
    if length > max_length:
        raise LocalProtocolError(
            f"frame of {length} bytes exceeds the {max_length}-byte limit",
            code=ErrorCode.BAD_FRAME,
            fatal=False,
        )
    flags = (compression.value << COMPRESSION_SHIFT) | (
        FLAG_RECONNECT_ADVISED if reconnect_advised else 0
    )
    return length.to_bytes(3, "big") + bytes((flags,)) + payload


def terminal_body(terminal: Terminal) -> bytes:
    """The JSON body of a terminal frame, with only the keys that are set."""
    body: dict[str, object] = {}
    if terminal.code:
        body["code"] = terminal.code
    if terminal.message:
        body["message"] = terminal.message
    if terminal.seq_num_mismatch is not None:
        body["seq_num_mismatch"] = terminal.seq_num_mismatch
    if terminal.fencing_token_mismatch is not None:
        body["fencing_token_mismatch"] = terminal.fencing_token_mismatch
    if terminal.tail is not None:
        body["tail"] = {"seq_num": terminal.tail.seq_num, "timestamp": terminal.tail.timestamp}
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def encode_terminal(terminal: Terminal, *, max_length: int = 2 * 1024 * 1024) -> bytes:
    """A terminal frame: flag byte 0x80, u16 status, JSON body.

    Raises ``LocalProtocolError`` (not fatal) for a status outside [0, 65535], a body that is not
    JSON-encodable, or a frame over ``max_length``.
    """
    if type(terminal.status) is not int or not 0 <= terminal.status <= 0xFFFF:
        raise LocalProtocolError(
            "Terminal.status must be an int in [0, 65535]", code=ErrorCode.INVALID, fatal=False
        )
    try:
        body = terminal_body(terminal)
    except (TypeError, ValueError) as exc:
        raise LocalProtocolError(
            f"Terminal body is not JSON-encodable: {exc}", code=ErrorCode.INVALID, fatal=False
        ) from exc
    payload = terminal.status.to_bytes(2, "big") + body
    length = 1 + len(payload)
    if length > max_length:
        raise LocalProtocolError("terminal frame too long", code=ErrorCode.BAD_FRAME, fatal=False)
    return length.to_bytes(3, "big") + bytes((FLAG_TERMINAL,)) + payload


def _u64(value: object) -> int | None:
    return value if type(value) is int and 0 <= value < 1 << 64 else None


def decode_terminal(payload: bytes) -> Terminal:
    """Decode a terminal payload. Shorter than 2 bytes is an error (``bad_frame``).

    The body is read leniently, like the official clients: a body that is not a JSON object
    keeps its text as the message, so the status always reaches the caller.
    """
    if len(payload) < 2:
        raise _bad_frame("terminal frame shorter than its 2-byte status")
    status = int.from_bytes(payload[:2], "big")
    text = payload[2:].decode("utf-8", errors="replace")
    try:
        body = json.loads(text) if text else {}
    except (ValueError, RecursionError):
        body = None
    if not isinstance(body, dict):
        return Terminal(status=status, message=text)
    code = body.get("code")
    message = body.get("message")
    seq = body.get("seq_num_mismatch")
    if isinstance(seq, dict):  # some versions nest it: {"expected_seq_num": N}
        seq = seq.get("expected_seq_num")
    token = body.get("fencing_token_mismatch")
    if isinstance(token, dict):
        token = token.get("expected_fencing_token")
    tail_raw = body.get("tail")
    tail = None
    if isinstance(tail_raw, dict):
        seq_num = _u64(tail_raw.get("seq_num", 0))
        timestamp = _u64(tail_raw.get("timestamp", 0))
        if seq_num is not None and timestamp is not None:
            tail = StreamPosition(seq_num, timestamp)
    return Terminal(
        status=status,
        code=code if isinstance(code, str) else "",
        message=message if isinstance(message, str) else "",
        seq_num_mismatch=_u64(seq),
        fencing_token_mismatch=token if isinstance(token, str) else None,
        tail=tail,
    )
