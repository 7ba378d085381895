"""libFuzzer dictionaries, built from the codecs' own tables so they never fall out of step.

A mutation that inserts ``MIN_TIMESTAMP`` or ``"partition_count"`` whole reaches the code behind
a keyword in one step instead of one byte at a time. ``fuzz/run.py`` writes
``fuzz/work/<name>.dict`` from here before each campaign and passes it with ``-dict=``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable


def _s3p() -> Iterable[bytes]:
    from s3p_codec import s3p
    from s3p_codec.s3p._schema import KNOWN_OPTIONS

    yield from (b"\r\n", b"*", b"$", b"+OK\r\n", b"-", b"*0\r\n", b"$0\r\n\r\n", b"0-0", b"-1")
    for name, options in KNOWN_OPTIONS.items():
        yield name
        yield from options
    yield from (b"server", b"client", b"1700000000000-0", b"18446744073709551615-0")
    yield from (code.value.encode() for code in s3p.ErrorCode)


def _rustlog() -> Iterable[bytes]:
    from s3p_codec.rustlog import ErrorCode, MessageType
    from s3p_codec.rustlog._schema import KNOWN_FIELDS

    for name, fields in KNOWN_FIELDS.items():
        yield b'"' + name.encode() + b'"'
        yield from (b'"' + field.encode() + b'":' for field in fields)
    yield from (b'{"type":', b"null", b"true", b"false", b"[]", b"{}", b"-0", b"1e999")
    yield from (b"18446744073709551615", b"4294967296", b"\\u0000", b"\\ud800", b"=")
    yield from (struct.pack(">I", n) for n in (0, 1, 10 << 20, (10 << 20) + 1))
    yield from (bytes([int(kind)]) for kind in MessageType)
    yield from (str(int(code)).encode() for code in ErrorCode)


def _pravega() -> Iterable[bytes]:
    from s3p_codec import pravega

    for kind in pravega.CommandType:
        yield struct.pack(">i", int(kind))
    yield from (struct.pack(">i", n) for n in (0, -1, 1 << 20, 0x7FFFFFFF, -(1 << 31)))
    yield from (struct.pack(">q", n) for n in (-(1 << 63), 0, 1, (1 << 63) - 1))
    yield from (b"\xc0\x80", b"\xed\xa0\x80", b"\xed\xb0\x80", b"\xf0\x9f\x98\x80", b"\x00")


def _s2s() -> Iterable[bytes]:
    yield from (b"POST /v1/streams/s/records HTTP/1.1\r\n", b"GET /v1/streams/s/records?seq_num=0")
    yield from (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
    yield from (b"HTTP/1.1 200 OK\r\n", b"content-type: s2s/proto\r\n", b"accept: s2s/proto\r\n")
    yield from (b"transfer-encoding: chunked\r\n", b"s2-format: raw\r\n", b"\r\n\r\n", b"0\r\n\r\n")
    for param in ("seq_num", "timestamp", "tail_offset", "count", "bytes", "wait", "until"):
        yield f"&{param}=".encode()
    yield from (b"?clamp=true", b"s2-basin: b\r\n", b"authorization: Bearer t\r\n")
    # zstd frame, zstd skippable frame, gzip member
    yield from (b"\x28\xb5\x2f\xfd", b"\x50\x2a\x4d\x18", b"\x1f\x8b\x08\x00")
    yield from (bytes([0, 0, n]) for n in (1, 2, 0x10, 0x11, 0x20, 0x30, 0x40, 0x80))
    yield from (b"\x08\x01", b"\x10\x01", b"\x0a\x00", b"\x12\x00", b"\x1a\x00", b"\x22\x00")
    yield from (b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", b"\x80\x80\x80\x80\x10")


def _durable() -> Iterable[bytes]:
    from s3p_codec.durable import _headers as headers

    for name in dir(headers):
        value = getattr(headers, name)
        if name.isupper() and isinstance(value, bytes) and len(value) < 40:
            yield value + b": "
    yield from (b"GET ", b"PUT ", b"POST ", b"HEAD ", b"DELETE ", b" HTTP/1.1\r\n", b"\r\n")
    yield from (b"?offset=", b"&live=long-poll", b"&live=sse", b"&cursor=", b"-1", b"now")
    yield from (b"content-length: ", b"transfer-encoding: chunked\r\n", b"content-type: ")
    yield from (b"application/json", b"text/plain", b"application/octet-stream")
    yield from (b"producer-id: ", b"producer-epoch: ", b"producer-seq: ", b"if-match: ")
    yield from (b"event: data\n", b"event: control\n", b"data: ", b"id: ", b"retry: ", b":\n")
    yield from (b'{"streamNextOffset":"', b'"streamCursor":"', b'"upToDate":true', b"\r\n\r\n")
    # The reserved control API: routes, the bearer token, JSON keys and values, a signature.
    yield from (b"/__ds/", b"subscriptions/", b"/streams", b"/claim", b"/ack", b"/callback")
    yield from (b"/release", b"jwks.json", b"authorization: Bearer ", b"webhook-signature: ")
    yield from (b"t=", b",kid=", b",ed25519=", b'"error":{"code":"', b'"ok":true', b"true")
    for key in _CONTROL_KEYS:
        yield b'"' + key + b'":'
    yield from (b'"webhook"', b'"pull-wake"', b'"glob"', b'"explicit"', b'"wake"', b"0_0")
    yield from (b'"https://', b'"http://localhost', b"127.0.0.1", b"[::1]", b"@", b":443")


_CONTROL_KEYS = (
    b"type", b"pattern", b"streams", b"webhook", b"url", b"wake_stream", b"lease_ttl_ms",
    b"description", b"id", b"path", b"link_type", b"acked_offset", b"tail_offset",
    b"has_pending", b"signing", b"kid", b"jwks_url", b"alg", b"created_at", b"status",
    b"worker", b"wake_id", b"generation", b"token", b"acks", b"stream", b"offset", b"done",
    b"next_wake", b"keys", b"kty", b"crv", b"x", b"use", b"subscription_id", b"callback_url",
    b"callback_token", b"ts", b"message", b"current_holder",
)  # fmt: skip


BUILDERS: dict[str, Callable[[], Iterable[bytes]]] = {
    "s3p": _s3p,
    "rustlog": _rustlog,
    "pravega": _pravega,
    "s2s": _s2s,
    "durable": _durable,
}


_PLAIN = {byte: chr(byte) for byte in range(0x20, 0x7F) if byte not in b'"\\'}


def render(name: str) -> str:
    """The dictionary of harness ``name`` in libFuzzer's format (one quoted token per line)."""
    lines = []
    for token in dict.fromkeys(BUILDERS[name]()):  # unique, in order
        quoted = "".join(_PLAIN.get(byte) or f"\\x{byte:02x}" for byte in token)
        lines.append(f'"{quoted}"')
    return "\n".join(lines) + "\n"
