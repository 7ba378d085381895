"""What the passive HTTP/2 reader's tests share: the frame codes and flags of RFC 9113, a frame
builder, and the opening every connection starts with (the client preface, then SETTINGS)."""

from __future__ import annotations

from s3p_codec._core import Direction
from s3p_codec._core.h2input import PREFACE

C2S, S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS_TYPE = 0x0, 0x1, 0x2, 0x3, 0x4
PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0x5, 0x6, 0x7, 0x8, 0x9
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20


def head(kind: int, flags: int, sid: int, length: int) -> bytes:
    """A frame's "9-octet header": 24-bit length, type, flags, stream id."""
    return length.to_bytes(3, "big") + bytes([kind, flags]) + sid.to_bytes(4, "big")


def frame(kind: int, flags: int, sid: int, payload: bytes) -> bytes:
    """One frame: its header, then the payload."""
    return head(kind, flags, sid, len(payload)) + payload


SETTINGS = frame(SETTINGS_TYPE, 0, 0, b"")  # an empty SETTINGS frame
START = PREFACE + SETTINGS
AT = len(START)  # where the client's first frame after its SETTINGS begins
