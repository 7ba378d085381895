"""Which protocol a TCP conversation speaks: a port map ("Decode As") and content sniffing.

The port map works like Wireshark's "Decode As": ``7500=s3p`` says that a conversation with port
7500 on either side speaks S3P, and that the side owning port 7500 is the server. S3P has two
versions and no handshake: ``7500=s3p@0.2.0`` (or ``@0.1.0``) fixes the version; plain ``s3p``
lets the S3P Observer detect it from the traffic (``ID``/``MIN_ID`` options, traffic after a
recoverable error), falling back to 0.1.0. Where no map
entry applies, the first bytes each side sent are sniffed:

- S3P: the client opens with a command array, ``*<n>\\r\\n$<len>\\r\\n<COMMAND>\\r\\n``.
- RustLog: a u32 big-endian length of at most 10 MiB, then a JSON object with a ``"type"``.
- Pravega: an i32 command type the client sends (Hello, SetupAppend, ReadSegment, ...), then an
  i32 payload length of at most 0xFFFFFF (Hello's length is exactly 8).
- HTTP/1.1: a request line. It carries S2S when the request or the response names the
  ``s2s/proto`` content type (``Content-Type``/``Accept``), sends an ``s2-basin`` header, or the
  target is S2's ``/v1/streams/<name>/records``; it carries Durable Streams when a request sends
  ``Stream-*`` or ``Producer-*`` headers or an ``offset=``/``live=`` query, or the response
  carries ``Stream-Next-Offset``-style headers.
- HTTP/2 with prior knowledge (the official S2 SDKs): the client preface
  ``PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n``, then frames; it carries S2S when a request's
  header block (HPACK-decoded, in order, with the ``hpack`` package) names ``s2s/proto``, sends
  ``s2-basin`` or has an S2 records ``:path``.

Sniffing runs on both orientations of a conversation whose handshake was not captured, so it
also tells which side is the client. The default port map (used only after sniffing gave up)
holds the example servers' well-known ports.
"""

from __future__ import annotations

import enum
import re
import struct
from collections.abc import Iterable, Iterator, Mapping

import attrs

from s3p_codec import PROTOCOLS

__all__ = [
    "DEFAULT_PORTS",
    "PROTOCOLS",
    "SNIFF_LIMIT",
    "Sniff",
    "Verdict",
    "parse_decode_as",
    "sniff",
    "sniff_client",
]

VERSIONED = {"s3p": ("0.1.0", "0.2.0")}
"""Protocols whose decode-as spelling may name a version, ``PROTO@VERSION``."""
DEFAULT_PORTS: Mapping[int, str] = {7500: "s3p", 9092: "rustlog", 12345: "pravega", 4437: "durable"}
"""Fallback ports (the example servers' defaults): S3P 7500, RustLog 9092, Pravega's segment
store 12345, Durable Streams 4437. S2S has none: it shares HTTP ports, and sniffing finds it."""

SNIFF_LIMIT = 64 * 1024
"""Bytes per direction held back while sniffing; past this the guess is final."""


class Sniff(enum.Enum):
    """What one sniffer makes of a prefix: yes, no, or not enough bytes yet."""

    MATCH = "match"
    NO = "no"
    MORE = "more"


@attrs.frozen(slots=True)
class Verdict:
    """A decided conversation: its ``protocol`` (None: not one we decode) and whether the first
    side handed to ``sniff`` is the client."""

    protocol: str | None
    first_is_client: bool


def parse_decode_as(specs: Iterable[str]) -> dict[int, str]:
    """Parse ``PORT=PROTO`` entries (``7500=s3p``, ``7500=s3p@0.2.0``) into a port map; raise
    ValueError if bad."""
    ports: dict[int, str] = {}
    for spec in specs:
        port_text, sep, proto = spec.partition("=")
        proto = proto.strip().lower()
        if not sep or not port_text.strip().isdigit():
            raise ValueError(f"--decode-as expects PORT=PROTO, got {spec!r}")
        port = int(port_text)
        if not 0 < port < 65536:
            raise ValueError(f"port out of range in {spec!r}")
        name, at, version = proto.partition("@")
        if name not in PROTOCOLS:
            raise ValueError(f"unknown protocol {proto!r} in {spec!r}; use one of {PROTOCOLS}")
        if at and version not in VERSIONED.get(name, ()):
            known = VERSIONED.get(name, ())
            raise ValueError(f"unknown version {version!r} in {spec!r}; {name} has {known}")
        ports[port] = proto
    return ports


_S3P = re.compile(rb"\*[0-9]{1,9}\r\n\$[0-9]{1,9}\r\n(create|append|read|trim|delete)\r\n", re.I)
_S3P_PREFIX = re.compile(rb"\*[0-9]{0,9}(\r(\n(\$[0-9]{0,9}(\r(\n[a-z]{0,6}\r?)?)?)?)?)?", re.I)
_RUSTLOG_MAX = 10 * 1024 * 1024
_RUSTLOG_TYPE = re.compile(rb'"type"\s*:\s*"([A-Za-z]*)"')
_PRAVEGA_CLIENT_TYPES = frozenset({-127, 1, 3, 5, 9, 11, 20, 28, 30, 38, 100})
_HTTP_REQUEST = re.compile(rb"(GET|HEAD|POST|PUT|DELETE|PATCH|OPTIONS) \S+ HTTP/1\.[01]\r\n")
_HTTP_METHODS = (b"GET", b"HEAD", b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS")
_S2S_TARGET = re.compile(rb"^\S+ (https?://[^/]*)?/v1/streams/[^/ ?]+/records[ ?]")
_DURABLE_QUERY = re.compile(rb"[?&](offset|live|cursor)=")
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_S2S_PATH = re.compile(rb"/v1/(streams/[^/?]+/records|basins/[^/?]+/streams/[^/?]+/(read|append))")


def _sniff_s3p(data: bytes, done: bool) -> Sniff:
    if _S3P.match(data):
        return Sniff.MATCH
    prefix = _S3P_PREFIX.match(data)
    if prefix and prefix.end() == len(data) and not done:
        return Sniff.MORE
    return Sniff.NO


def _sniff_rustlog(data: bytes, done: bool) -> Sniff:
    if len(data) < 5:
        return Sniff.MORE if not done and (not data or data[0] == 0) else Sniff.NO
    (length,) = struct.unpack_from(">I", data)
    if not 0 < length <= _RUSTLOG_MAX or data[4:5] != b"{":
        return Sniff.NO
    body = data[4 : 4 + length]
    found = _RUSTLOG_TYPE.search(body)
    if found:
        # Both sides frame alike; only requests name a type without the "Response" suffix.
        response = found.group(1).endswith(b"Response") or found.group(1) in (b"Error", b"Pong")
        return Sniff.NO if response else Sniff.MATCH
    return Sniff.MORE if len(body) < length and not done else Sniff.NO


def _sniff_pravega(data: bytes, done: bool) -> Sniff:
    if len(data) < 8:
        return Sniff.MORE if not done and (not data or data[0] in (0x00, 0xFF)) else Sniff.NO
    kind, length = struct.unpack_from(">ii", data)
    if kind not in _PRAVEGA_CLIENT_TYPES or not 0 <= length <= 0xFFFFFF:
        return Sniff.NO
    if kind == -127:
        return Sniff.MATCH if length == 8 else Sniff.NO
    # Other first commands are weaker evidence: ask for the whole first frame to be plausible.
    return Sniff.MATCH if length >= 8 else Sniff.NO


def _head(data: bytes) -> bytes | None:
    end = data.find(b"\r\n\r\n")
    return None if end < 0 else data[: end + 2]


def _headers(head: bytes) -> dict[bytes, bytes]:
    found: dict[bytes, bytes] = {}
    for line in head.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep:
            found[name.strip().lower()] = value.strip().lower()
    return found


def _http_kind(request_head: bytes, response_head: bytes | None) -> Sniff | str:
    req = _headers(request_head)
    if (
        b"s2s/proto" in req.get(b"content-type", b"")
        or b"s2s/proto" in req.get(b"accept", b"")
        or b"s2-basin" in req
        or _S2S_TARGET.match(request_head)
    ):
        return "s2s"
    request_line = request_head.split(b"\r\n", 1)[0]
    if any(n.startswith((b"stream-", b"producer-")) for n in req) or _DURABLE_QUERY.search(
        request_line
    ):
        return "durable"
    if response_head is None:
        return Sniff.MORE
    resp = _headers(response_head)
    if b"s2s/proto" in resp.get(b"content-type", b""):
        return "s2s"
    if any(n.startswith(b"stream-") for n in resp):
        return "durable"
    return Sniff.NO


def sniff_client(client: bytes, client_done: bool = False) -> str | Sniff:
    """The binary protocol whose client would open with ``client``; or ``Sniff.MORE``/``NO``.

    HTTP-borne protocols need the response too; see ``sniff``.
    """
    results = {
        "s3p": _sniff_s3p(client, client_done),
        "rustlog": _sniff_rustlog(client, client_done),
        "pravega": _sniff_pravega(client, client_done),
    }
    for name, result in results.items():
        if result is Sniff.MATCH:
            return name
    if any(r is Sniff.MORE for r in results.values()):
        return Sniff.MORE
    return Sniff.NO


def _sniff_http(client: bytes, server: bytes, client_done: bool, server_done: bool) -> Sniff | str:
    if not _HTTP_REQUEST.match(client):
        if (
            not client_done
            and len(client) < 16
            and any(m.startswith(client[:7]) or client.startswith(m) for m in _HTTP_METHODS)
        ):
            return Sniff.MORE
        return Sniff.NO
    head = _head(client)
    if head is None:
        return Sniff.NO if client_done or len(client) >= SNIFF_LIMIT else Sniff.MORE
    response = _head(server) if server.startswith(b"HTTP/1.") else None
    kind = _http_kind(head, response)
    if kind is Sniff.MORE and (server_done or len(server) >= SNIFF_LIMIT):
        return Sniff.NO
    return kind


def _h2_requests(data: bytes) -> Iterator[dict[bytes, bytes]]:
    """The header blocks a client sent on HTTP/2, decoded in order; stops where data ends."""
    import hpack  # noqa: PLC0415 - in the capture extra; only HTTP/2 needs it

    decoder = hpack.Decoder()
    at, block = len(_H2_PREFACE), bytearray()
    while at + 9 <= len(data):
        length, kind, flags = int.from_bytes(data[at : at + 3], "big"), data[at + 3], data[at + 4]
        payload = data[at + 9 : at + 9 + length]
        if len(payload) < length:
            return
        at += 9 + length
        if kind == 0x1:  # HEADERS: strip the pad length, padding and priority fields
            pad = payload[0] if flags & 0x8 and payload else 0
            payload = payload[(1 if flags & 0x8 else 0) + (5 if flags & 0x20 else 0) :]
            block = bytearray(payload[: len(payload) - pad])
        elif kind == 0x9:  # CONTINUATION
            block += payload
        if kind in (0x1, 0x9) and flags & 0x4:  # END_HEADERS
            try:
                yield {bytes(k): bytes(v) for k, v in decoder.decode(bytes(block), raw=True)}
            except hpack.HPACKError:
                return


def _sniff_h2(client: bytes, client_done: bool) -> Sniff | str:
    if not client.startswith(_H2_PREFACE):
        more = _H2_PREFACE.startswith(client) and not client_done
        return Sniff.MORE if more else Sniff.NO
    try:
        for headers in _h2_requests(client):
            if (
                b"s2s/proto" in headers.get(b"content-type", b"")
                or b"s2s/proto" in headers.get(b"accept", b"")
                or b"s2-basin" in headers
                or _S2S_PATH.match(headers.get(b":path", b""))
            ):
                return "s2s"
    except ImportError:
        return Sniff.NO
    return Sniff.NO if client_done or len(client) >= SNIFF_LIMIT else Sniff.MORE


def sniff(
    first: bytes,
    second: bytes,
    *,
    first_done: bool = False,
    second_done: bool = False,
    first_is_client: bool | None = None,
) -> Verdict | None:
    """Decide from the opening bytes of both sides, or return None to wait for more bytes.

    ``first_is_client`` is the handshake's word when there was one; otherwise both orientations
    are tried, the first side as client first. A Verdict with ``protocol`` None means that
    nothing matched (the caller may fall back to a port map).
    """
    orientations = [True, False] if first_is_client is None else [first_is_client]
    waiting = False
    for first_client in orientations:
        client, server = (first, second) if first_client else (second, first)
        c_done, s_done = (first_done, second_done) if first_client else (second_done, first_done)
        binary = sniff_client(client, c_done)
        if isinstance(binary, str):
            return Verdict(binary, first_client)
        http = _sniff_http(client, server, c_done, s_done)
        if isinstance(http, str):
            return Verdict(http, first_client)
        http2 = _sniff_h2(client, c_done)
        if isinstance(http2, str):
            return Verdict(http2, first_client)
        if Sniff.MORE in (binary, http, http2):
            waiting = True
    if waiting and len(first) < SNIFF_LIMIT and len(second) < SNIFF_LIMIT:
        return None
    return Verdict(None, first_is_client if first_is_client is not None else True)
