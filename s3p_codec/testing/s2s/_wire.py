"""What both directions of the S2S cases share: the session head, frame and payload builders.

A server-direction case is an append session (``HEAD`` and chunks of frames), and a
client-direction case answers that same head; both build frames, bombs and padded,
compressed payloads the same way, and records of both directions carry the same headers, so
these live here, below ``for_servers`` and ``for_clients``.
"""

from __future__ import annotations

import gzip

import zstandard
from hypothesis import strategies as st

from s3p_codec import Role, s2s

E = s2s.ErrorCode
#: Largest u64.
U64 = (1 << 64) - 1
STREAM = "fuzz"
TOKEN = "fuzz"


def _client() -> s2s.Http1Connection:
    return s2s.Http1Connection(Role.CLIENT, host="127.0.0.1")


def session_head(stream: str = STREAM) -> bytes:
    """The HTTP/1.1 head that opens an append session on ``stream`` (chunked body)."""
    return _client().send(s2s.SessionRequest(s2s.Session.APPEND, stream, token=TOKEN))


HEAD = session_head()


def headers() -> st.SearchStrategy[s2s.Header]:
    """Record headers (``message Header {bytes name = 1; bytes value = 2;}``): name and value
    any bytes of up to 40, the empty name included."""
    return st.builds(s2s.Header, st.binary(max_size=40), st.binary(max_size=40))


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data) if data else b""


def _frame(flags: int, payload: bytes) -> bytes:
    return (len(payload) + 1).to_bytes(3, "big") + bytes([flags]) + payload


def _bomb(compression: str) -> bytes:
    zeros = b"\0" * (3 << 20)
    if compression == "zstd":
        return zstandard.ZstdCompressor(level=3).compress(zeros)
    return gzip.compress(zeros, compresslevel=9)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _pad(message: bytes, total: int) -> bytes:
    """``message`` plus one unknown length-delimited field (number 15), ``total`` bytes in all
    ("Unknown fields are skipped"): a message exactly at a size limit that is otherwise small."""
    room = total - len(message) - 1  # the tag byte 0x7a
    for size in range(1, 5):
        if len(_varint(room - size)) == size:
            return message + b"\x7a" + _varint(room - size) + bytes(room - size)
    raise ValueError(f"cannot pad {len(message)} bytes to {total}")


def _zstd(data: bytes, *, declare: bool = True) -> bytes:
    return bytes(zstandard.ZstdCompressor(write_content_size=declare).compress(data))


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


def _encode(event: s2s.AppendInput) -> bytes:
    return s2s.Connection(Role.CLIENT, s2s.Session.APPEND).send(event)
