"""Header names and the syntax of header values (TTL, RFC 3339, integers, flags).

HTTP/1.1 framing is h11's job; this module knows what the protocol's own headers mean.
Header names are compared case-insensitively (h11 lower-cases them).
"""

from __future__ import annotations

import datetime
import re

__all__ = [
    "ACCESS_CONTROL_HEADERS",
    "CACHE_CONTROL",
    "CONTENT_TYPE",
    "ETAG",
    "EXPOSED_HEADERS",
    "IF_NONE_MATCH",
    "LOCATION",
    "PRODUCER_EPOCH",
    "PRODUCER_EXPECTED_SEQ",
    "PRODUCER_ID",
    "PRODUCER_RECEIVED_SEQ",
    "PRODUCER_SEQ",
    "SECURITY_HEADERS",
    "STREAM_CLOSED",
    "STREAM_CURSOR",
    "STREAM_EXPIRES_AT",
    "STREAM_FORKED_FROM",
    "STREAM_FORK_OFFSET",
    "STREAM_FORK_SUB_OFFSET",
    "STREAM_NEXT_OFFSET",
    "STREAM_SEQ",
    "STREAM_SSE_DATA_ENCODING",
    "STREAM_TTL",
    "STREAM_UP_TO_DATE",
    "is_true",
    "parse_non_negative",
    "parse_rfc3339",
    "parse_ttl",
]

#: Header name (lower case, as h11 yields names).
CONTENT_TYPE = b"content-type"
#: Header name.
CACHE_CONTROL = b"cache-control"
#: Header name.
ETAG = b"etag"
#: Header name.
IF_NONE_MATCH = b"if-none-match"
#: Header name.
LOCATION = b"location"
#: Header name: a stream's time to live in seconds.
STREAM_TTL = b"stream-ttl"
#: Header name: a stream's RFC 3339 expiry time.
STREAM_EXPIRES_AT = b"stream-expires-at"
#: Header name: the writer's sequence value for an append.
STREAM_SEQ = b"stream-seq"
#: Header name: the CDN-collapsing cursor of a live read.
STREAM_CURSOR = b"stream-cursor"
#: Header name: the offset after the data returned or appended.
STREAM_NEXT_OFFSET = b"stream-next-offset"
#: Header name: the read reached the tail.
STREAM_UP_TO_DATE = b"stream-up-to-date"
#: Header name: the stream is closed to appends.
STREAM_CLOSED = b"stream-closed"
#: Header name: the stream a fork was created from.
STREAM_FORKED_FROM = b"stream-forked-from"
#: Header name: the offset a fork starts at.
STREAM_FORK_OFFSET = b"stream-fork-offset"
#: Header name: the position inside a JSON message a fork starts at.
STREAM_FORK_SUB_OFFSET = b"stream-fork-sub-offset"
#: Header name: how SSE ``data:`` lines carry binary payloads.
STREAM_SSE_DATA_ENCODING = b"stream-sse-data-encoding"
#: Header name: the idempotent producer's id.
PRODUCER_ID = b"producer-id"
#: Header name: the idempotent producer's epoch.
PRODUCER_EPOCH = b"producer-epoch"
#: Header name: the idempotent producer's sequence number.
PRODUCER_SEQ = b"producer-seq"
#: Header name: the sequence number the server expected (on a gap).
PRODUCER_EXPECTED_SEQ = b"producer-expected-seq"
#: Header name: the sequence number the server received (on a gap).
PRODUCER_RECEIVED_SEQ = b"producer-received-seq"

#: Headers a server sends on every response (``nosniff``, cross-origin resource policy).
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    # "Servers SHOULD include this header on all responses."
    (b"x-content-type-options", b"nosniff"),
    (b"cross-origin-resource-policy", b"cross-origin"),
    (b"access-control-allow-origin", b"*"),
)
#: The value of ``Access-Control-Expose-Headers``: every protocol header a browser may read.
EXPOSED_HEADERS = (
    b"Stream-Next-Offset, Stream-Cursor, Stream-Up-To-Date, Stream-Closed, Stream-TTL, "
    b"Stream-Expires-At, Stream-SSE-Data-Encoding, Producer-Epoch, Producer-Seq, "
    b"Producer-Expected-Seq, Producer-Received-Seq, ETag, Content-Type, Location"
)
#: The CORS headers a server sends (methods, request headers, exposed headers, origin).
ACCESS_CONTROL_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"access-control-allow-methods", b"GET, POST, PUT, DELETE, HEAD, OPTIONS"),
    (
        b"access-control-allow-headers",
        b"Content-Type, Authorization, If-None-Match, Stream-Seq, Stream-TTL, "
        b"Stream-Expires-At, Stream-Closed, Producer-Id, Producer-Epoch, Producer-Seq, "
        b"Stream-Forked-From, Stream-Fork-Offset, Stream-Fork-Sub-Offset",
    ),
    (b"access-control-max-age", b"86400"),
)

_TTL = re.compile(r"0|[1-9][0-9]{0,17}")
_DIGITS = re.compile(r"[0-9]{1,20}")
# RFC 3339 date-time: full-date "T" full-time; time-offset "Z" or +hh:mm / -hh:mm.
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})"
)


def is_true(value: bytes | None) -> bool:
    """``Stream-Closed``/``Stream-Up-To-Date`` flags.

    "Servers MUST treat the header as present only when its value is exactly true
    (case-insensitive comparison). Other values ... MUST be treated as if the header were
    absent."
    """
    return value is not None and value.strip().lower() == b"true"


def parse_ttl(value: str) -> int | None:
    """Seconds of a ``Stream-TTL``, or None if malformed.

    "The value MUST be a non-negative integer in decimal notation without leading zeros, plus
    signs, decimal points, or scientific notation."
    """
    return int(value) if _TTL.fullmatch(value) else None


def parse_non_negative(value: str, maximum: int) -> int | None:
    """A plain decimal integer in [0, maximum], or None (signs, floats, hex, ... are refused)."""
    if not _DIGITS.fullmatch(value):
        return None
    number = int(value)
    return number if number <= maximum else None


def parse_rfc3339(value: str) -> datetime.datetime | None:
    """The instant of an RFC 3339 timestamp (``Stream-Expires-At``), or None if malformed."""
    match = _RFC3339.fullmatch(value)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    fraction = match.group(7) or ""
    micros = int((fraction[1:] + "000000")[:6]) if fraction else 0
    zone = match.group(8)
    try:
        if zone in ("Z", "z"):
            tz = datetime.UTC
        else:
            sign = 1 if zone[0] == "+" else -1
            hours, minutes = int(zone[1:3]), int(zone[4:6])
            if hours > 23 or minutes > 59:
                return None
            tz = datetime.timezone(sign * datetime.timedelta(hours=hours, minutes=minutes))
        # RFC 3339 allows a leap second (60); Python does not: clamp it to 59.
        return datetime.datetime(year, month, day, hour, minute, min(second, 59), micros, tzinfo=tz)
    except (ValueError, OverflowError):
        return None
