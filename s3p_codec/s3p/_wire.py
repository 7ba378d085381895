"""S3P framing: the four RESP types S3P keeps, read and written with CRLF only.

- Simple String ``+<ascii-text>\\r\\n``, Error ``-<ascii-text>\\r\\n``,
  Bulk String ``$<length>\\r\\n<bytes>\\r\\n`` ("``$<length>`` MUST be >= 1"),
  Array ``*<num-elements>\\r\\n<elements>`` ("Arrays MAY be empty").
- "Servers and clients MUST use CRLF as the only line separator. Implementations MUST NOT accept
  or emit LF-only or CR-only separators."
- Numbers are ASCII decimal digits only: no sign, no space, not empty; ``$-1``/``*-1`` (RESP
  nulls) are ``ERR_BAD_FORMAT``.
- Errors are eager: a line that can no longer become valid (an LF without CR before it, a CR
  followed by another byte, a non-digit after ``$``/``*``) is refused as soon as it is seen,
  not when the line bound is reached, so a peer typing LF-only lines gets an error, not a hang.
  This is the same verdict as when the line completes (section 3 forbids LF-only and CR-only
  separators in both versions, section 15 non-decimal lengths), only sooner.
- A header line is at most 21 bytes, so ``$99999999999`` is read whole and rejected against
  the limit before a byte of payload is waited for.

``WireBuffer`` is ``_core.ReceiveBuffer`` (storage, adopted chunks, compaction, large payloads
collected aside, absolute offsets for Observers) plus S3P's readers: CRLF lines with the eager
errors above (a line search never re-reads bytes already searched), value headers, and Bulk
String payloads by their declared length. The hot loops read the storage in place: the
READ-reply fast path matches pair after pair with anchored regexes on ``data`` from ``pos``.

``WireReader`` is the generic reader of wire values (any nesting, bounded by an explicit stack,
never by recursion); the typed parsers in ``commands`` and ``replies`` use the same primitives
but follow each command's schema, so that every limit is checked with the code the spec assigns.
"""

from __future__ import annotations

import re
from typing import TypeAlias

from s3p_codec._core.buffer import ASIDE_MIN, ReceiveBuffer
from s3p_codec.s3p._events import ErrorCode
from s3p_codec.s3p._limits import MAX_HEADER_LINE, MAX_TEXT_LINE

__all__ = [
    "CRLF",
    "ErrorString",
    "Malformed",
    "SimpleString",
    "WireBuffer",
    "WireReader",
    "WireValue",
    "encode_value",
]

#: The line terminator.
CRLF = b"\r\n"
ARRAY = 0x2A  # "*"
BULK = 0x24  # "$"
SIMPLE = 0x2B  # "+"
ERROR = 0x2D  # "-"
_CR = 0x0D
BIG_BULK = ASIDE_MIN
"""Payloads this large that arrive in pieces are collected aside and joined once."""


class Malformed(Exception):
    """The bytes broke the spec; ``code`` is the S3P error code the spec assigns."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def bad_format(message: str) -> Malformed:
    return Malformed(ErrorCode.BAD_FORMAT, message)


class SimpleString(bytes):
    """A Simple String value (``+text``), told apart from a Bulk String by its type."""

    __slots__ = ()


class ErrorString(bytes):
    """An Error value (``-text``)."""

    __slots__ = ()


WireValue: TypeAlias = "bytes | tuple[WireValue, ...]"
"""A Bulk String is ``bytes``, Simple String and Error are the two ``bytes`` subclasses above,
an Array is a ``tuple`` of values."""


_PRINTABLE = bytes(range(0x20, 0x7F))


def is_text(line: bytes | bytearray) -> bool:
    """Simple Strings and Errors hold ``*(%x20-7E)``: printable ASCII, no CR or LF.

    Deleting every printable byte leaves nothing exactly when the line is text (one C loop).
    """
    return not line.translate(None, _PRINTABLE)


_DIGITS = re.compile(rb"[0-9]*")


def parse_number(digits: bytes | bytearray, what: str) -> int:
    """ "non-decimal values where numbers are expected" are rejected: digits only, no sign.

    The message shows the digits up to the first byte that is not one, and no further: a
    header line may be refused before it is complete, and the error must read the same
    however the bytes were chunked.
    """
    if digits.isdigit():
        return int(digits)
    if digits[:1] == b"-":
        raise bad_format(f"RESP nulls and signs are not part of S3P ({what} starts with '-')")
    run = _DIGITS.match(digits)  # always matches (maybe nothing)
    shown = bytes(digits[: (run.end() if run else 0) + 1])
    raise bad_format(f"{what} must be ASCII decimal digits, got {shown!r}")


def _refuse_bare_separators(data: bytes | bytearray, begin: int, end: int) -> None:
    """Malformed at the first LF in ``data[begin:end]``, or CR before ``end - 1`` (a CR that
    is the last byte may still begin a CRLF). The first one in the stream is named, whatever
    the chunking showed first."""
    lf = data.find(b"\n", begin, end)
    cr = data.find(b"\r", begin, end - 1)
    if lf >= 0 and (cr < 0 or lf < cr):
        raise bad_format("LF without CR: CRLF is the only line separator")
    if cr >= 0:
        raise bad_format("CR without LF: CRLF is the only line separator")


class WireBuffer(ReceiveBuffer):
    """``_core.ReceiveBuffer`` with S3P's readers: CRLF lines, value headers, Bulk payloads.

    The storage, adopting chunks, joining or growing when a frame spans them, compaction and
    collecting a large payload aside are the core buffer's (``_core/buffer.py``); this layer
    adds only what S3P's text framing needs. The hot loops of ``commands`` and ``replies`` read
    ``data`` from ``pos`` and move ``pos`` themselves, then ``compact``.
    """

    __slots__ = ()

    join_spans = True  # records are sliced out of ``bytes``, once (see ``_core/buffer.py``)

    offset = ReceiveBuffer.position
    """Absolute offset in the stream of the first unconsumed byte (the name S3P uses)."""

    @property
    def scan(self) -> int:
        """Index in ``data`` before which no CRLF can start (searched already)."""
        return max(self.pos, self.line_scan - self.base - 1)

    @scan.setter
    def scan(self, index: int) -> None:
        self.line_scan = self.base + index + 1

    def discard(self, size: int) -> None:
        """Consume ``size`` bytes without looking at them (Observers skipping garbage)."""
        self.skip(size)

    def read_line(  # type: ignore[override]  # S3P's rules: CRLF only, refused eagerly
        self, bound: int
    ) -> bytes | bytearray | None:
        """One CRLF-terminated line without its CRLF, or None; Malformed past ``bound`` bytes."""
        data = self.data
        start = self.pos
        base = self.base
        # Resume just before the end of the last search: a CR there may begin the CRLF.
        begin = max(start, self.line_scan - base - 1)
        end = data.find(CRLF, begin)
        if end < 0:
            size = len(data)
            # Eager: an LF here has no CR before it, and a CR before the last byte is followed
            # by something else; neither line can become valid ("MUST NOT accept LF-only or
            # CR-only separators"), so say so now instead of waiting for the line bound.
            _refuse_bare_separators(data, begin, size)
            self.line_scan = base + size  # never search these bytes again
            self.want = size + 1
            if size - start > bound + 1 or (size - start == bound + 1 and data[size - 1] != _CR):
                raise bad_format(f"line longer than {bound} bytes without CRLF")
            return None
        if end - start > bound:
            raise bad_format(f"line longer than {bound} bytes")
        # The same bare separator, had it arrived before this CRLF, was refused eagerly, with
        # the line unread: refuse it here the same way, so that what is consumed (and where an
        # Observer hunts from) does not depend on how the bytes were chunked.
        if data.find(b"\n", begin, end) >= 0 or data.find(b"\r", begin, end) >= 0:
            _refuse_bare_separators(data, begin, end + 1)
        self.pos = end + 2
        return data[start:end]

    def read_header(self) -> tuple[int, int | bytes | bytearray] | None:
        """The next value's header: ``(type, number)`` for ``$``/``*``, ``(type, text)`` for
        ``+``/``-``; None if the line is incomplete."""
        data = self.data
        pos = self.pos
        if pos >= len(data):
            self.want = pos + 1
            return None
        kind = data[pos]
        if kind in (BULK, ARRAY):
            line = self.read_line(MAX_HEADER_LINE)
            what = "bulk string length" if kind == BULK else "array length"
            if line is None:
                # Eager: a non-digit after "$"/"*" can never become a length (read_line keeps
                # an incomplete header line within 22 bytes, so this looks at few bytes).
                digits = data[pos + 1 :]
                if digits[-1:] == b"\r":
                    digits = digits[:-1]
                if digits and not digits.isdigit():
                    parse_number(digits, what)
                return None
            return kind, parse_number(line[1:], what)
        if kind in (SIMPLE, ERROR):
            line = self.read_line(MAX_TEXT_LINE)
            if line is None:
                return None
            text = line[1:]
            if not is_text(text):
                raise bad_format("Simple Strings and Errors hold printable ASCII only")
            return kind, text
        raise bad_format(f"unsupported type byte {bytes([kind])!r} (S3P has + - $ * only)")

    def take_bulk(self, length: int) -> bytes | None:
        """The payload of a Bulk String whose header was read, and its CRLF; None if short.

        A payload of ``BIG_BULK`` bytes or more that is not all here is collected aside by the
        core buffer (its header was consumed already, so nothing is put back).
        """
        if self._aside is not None:
            return self._take_aside()
        data = self.data
        start = self.pos
        end = start + length
        if len(data) < end + 2:
            if length >= BIG_BULK and len(data) < end:
                self.put_aside(start, end)
                self.want = 2  # the payload, then its CRLF, must arrive first
            else:
                self.want = end + 2
            return None
        if data[end] != 0x0D or data[end + 1] != 0x0A:
            raise bad_format("Bulk String payload not followed by CRLF")
        if length > 4096:
            with memoryview(data) as view:
                value = bytes(view[start:end])
        else:
            value = bytes(data[start:end])
        self.pos = end + 2
        return value

    def _take_aside(self) -> bytes | None:
        data = self.data
        pos = self.pos
        if self._aside_left or len(data) < pos + 2:
            self.want = pos + 2
            return None
        if data[pos] != 0x0D or data[pos + 1] != 0x0A:
            # Refused where a payload that came whole is refused: at its start, unread (an
            # Observer hunts from there, whatever the chunking).
            self._restore()
            raise bad_format("Bulk String payload not followed by CRLF")
        _, value = self.take_aside()
        self.pos = pos + 2
        return value


def check_bulk_length(length: int, bound: int, what: str, code: ErrorCode) -> None:
    """Zero-length bulk strings are not allowed anywhere; over-``bound`` ones get ``code``."""
    if length == 0:
        raise bad_format(f"zero-length {what}: $<length> MUST be >= 1")
    if length > bound:
        raise Malformed(code, f"{what} of {length} bytes exceeds the limit of {bound}")


# --- Encoding ------------------------------------------------------------------------------


def encode_bulk(value: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(value), value)


def encode_value(value: WireValue) -> bytes:
    """Serialise a wire value (no validation: callers validate typed events first)."""
    out: list[bytes] = []
    stack: list[WireValue] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            out.append(b"*%d\r\n" % len(item))
            stack.extend(reversed(item))
        elif isinstance(item, SimpleString):
            out.append(b"+%s\r\n" % item)
        elif isinstance(item, ErrorString):
            out.append(b"-%s\r\n" % item)
        else:
            out.append(encode_bulk(item))
    return b"".join(out)


# --- Generic reader ------------------------------------------------------------------------


class WireReader:
    """Reads wire values of any shape, nesting bounded by ``max_depth`` with an explicit stack.

    Arrays nested inside another array must not mix element types ("Within a single array, all
    elements MUST be of the same type"); the top-level array is exempt because commands have a
    fixed per-position schema (docs/decisions.rst). Use ``feed`` and ``next_value`` (None: need
    data).
    """

    def __init__(
        self, *, max_depth: int = 32, max_bulk: int = 8 << 20, max_elements: int = 1 << 20
    ) -> None:
        self.buffer = WireBuffer()
        self.max_depth = max_depth
        self.max_bulk = max_bulk
        self.max_elements = max_elements
        # Each frame: [remaining, items, element type byte or -1]
        self._stack: list[tuple[list[int], list[WireValue]]] = []
        self._bulk = -1  # pending bulk payload length

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Add received bytes."""
        self.buffer.feed(data)

    def next_value(self) -> WireValue | None:
        """The next complete wire value, or None when more bytes are needed.

        Raises ``Malformed`` (with the S3P error code) when the bytes break the framing or a bound.
        """
        buf = self.buffer
        stack = self._stack
        while True:
            value: WireValue
            if self._bulk >= 0:
                got = buf.take_bulk(self._bulk)
                if got is None:
                    return None
                self._bulk = -1
                value = got
                kind = BULK
            else:
                header = buf.read_header()
                if header is None:
                    return None
                kind, arg = header
                if stack:
                    state = stack[-1][0]
                    # The top-level array is exempt: commands have a per-position schema.
                    if len(stack) > 1 and 0 <= state[1] != kind:
                        raise bad_format("arrays MUST NOT contain mixed types")
                    state[1] = kind
                if kind == BULK:
                    assert isinstance(arg, int)
                    check_bulk_length(arg, self.max_bulk, "bulk string", ErrorCode.LIMITS)
                    self._bulk = arg
                    continue
                if kind == ARRAY:
                    assert isinstance(arg, int)
                    if arg > self.max_elements:
                        raise Malformed(ErrorCode.LIMITS, f"array of {arg} elements is too long")
                    if arg > 0:
                        if len(stack) >= self.max_depth:
                            raise bad_format(f"arrays nested deeper than {self.max_depth}")
                        stack.append(([arg, -1], []))
                        continue
                    value = ()
                else:
                    assert not isinstance(arg, int)
                    value = SimpleString(arg) if kind == SIMPLE else ErrorString(arg)
            # A complete value: attach it to its parent, closing every array it completes.
            while stack:
                state, items = stack[-1]
                items.append(value)
                state[0] -= 1
                if state[0]:
                    break
                stack.pop()
                value = tuple(items)
            else:
                buf.compact()
                return value

    @property
    def in_value(self) -> bool:
        """True while a value is partly read (bytes of it consumed or buffered)."""
        return bool(self._stack) or self._bulk >= 0 or len(self.buffer) > 0
