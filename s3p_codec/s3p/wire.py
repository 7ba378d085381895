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

``WireBuffer`` plays the part of ``_core.ReceiveBuffer`` with an interface the hot loops can
index directly: the READ-reply fast path matches pair after pair with anchored regexes on the
buffer's storage (``data``) from its read index (``pos``). It keeps
``ReceiveBuffer``'s guarantees: consumption is O(1) amortised, a line search never re-reads
bytes already searched, bounded lines, and ``offset`` is the absolute stream position (for
Observers). Two things it does differently, measured: a chunk continuing a frame whose start
is no larger than the chunk is joined with it into ``bytes``, where ``ReceiveBuffer`` grows a
``bytearray`` (with that growth, varied READ replies in 64 KiB chunks decode 10-15% slower:
records are copied out of a ``bytearray`` twice); and a large Bulk String payload is collected
aside from its text header (``$<length>``), where ``ReceiveBuffer.take_frame`` needs a binary
``struct`` header.

``WireReader`` is the generic reader of wire values (any nesting, bounded by an explicit stack,
never by recursion); the typed parsers in ``commands`` and ``replies`` use the same primitives
but follow each command's schema, so that every limit is checked with the code the spec assigns.
"""

from __future__ import annotations

from typing import TypeAlias

from s3p_codec.s3p.events import ErrorCode
from s3p_codec.s3p.limits import MAX_HEADER_LINE, MAX_TEXT_LINE

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
BIG_BULK = 1 << 16
"""Payloads this large that arrive in pieces are collected aside and joined once."""
_BIG_PIECE = 1 << 14


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


def parse_number(digits: bytes | bytearray, what: str) -> int:
    """ "non-decimal values where numbers are expected" are rejected: digits only, no sign."""
    if digits.isdigit():
        return int(digits)
    if digits in (b"-1", b"-"):
        raise bad_format(f"RESP nulls are not part of S3P ({what} {bytes(digits)!r})")
    raise bad_format(f"{what} must be ASCII decimal digits, got {bytes(digits)!r}")


class WireBuffer:
    """Received bytes, a read index and the absolute offset of the index.

    ``data`` is either the last chunk received, adopted as is (``bytes``, no copy) when
    everything before it was consumed, the unconsumed start of a frame joined with the chunk
    that continues it (``bytes``, when that start is no larger than the chunk: at most twice
    the chunk copied), or a ``bytearray`` accumulating chunks while a longer frame spans them
    (one-byte feeds: amortised O(1) each). A large Bulk String payload spanning chunks is
    collected aside as views of the chunks and joined once, so its bytes are copied once in all.
    """

    __slots__ = ("base", "big", "big_left", "data", "pos", "scan", "want")

    def __init__(self) -> None:
        self.data: bytes | bytearray = b""
        self.pos = 0  # index in data of the first unconsumed byte
        self.base = 0  # absolute stream offset of data[0]
        self.scan = 0  # index in data before which no CRLF can start a line end
        # Parsing cannot progress until len(data) >= want: one-byte feeds cost O(1) each.
        self.want = 0
        # The pieces of a large payload (views of immutable chunks, or coalesced small ones).
        self.big: list[bytes | bytearray | memoryview] | None = None
        self.big_left = 0  # payload bytes still to come into ``big``

    def __len__(self) -> int:
        return len(self.data) - self.pos

    @property
    def offset(self) -> int:
        """Absolute offset in the stream of the first unconsumed byte."""
        return self.base + self.pos

    def feed(self, chunk: bytes | bytearray | memoryview) -> None:
        """Add a received chunk (kept by reference; a ``bytearray`` or ``memoryview`` is copied
        first).
        """
        if type(chunk) is not bytes:
            chunk = bytes(chunk)  # we keep chunks (and views of them): they must not change
        left = self.big_left
        if not left:
            data = self.data
            if type(data) is bytearray and len(data) - self.pos > len(chunk):
                data += chunk  # a frame spanning chunks grows (the bytearray, in place)
            else:
                self._append(chunk)
            return
        # Diverting into a large payload: big pieces are kept as views of the chunk, small ones
        # are coalesced, so the final join is the only full copy.
        size = len(chunk)
        big = self.big
        assert big is not None
        if size < left and size < _BIG_PIECE:
            # A small piece inside the payload (a peer trickling bytes): the cheapest case.
            self.big_left = left - size
            self.base += size
            tail = big[-1]
            if type(tail) is bytearray:
                tail += chunk
            else:
                big.append(bytearray(chunk))
            return
        taken = min(size, left)
        if taken >= _BIG_PIECE:
            big.append(memoryview(chunk)[:taken] if taken < size else chunk)
        elif big and type(big[-1]) is bytearray:
            big[-1] += chunk[:taken]
        else:
            big.append(bytearray(chunk[:taken]))
        self.big_left = left - taken
        if size > taken:
            # The payload is complete; ``data`` is empty (it was consumed when the payload went
            # aside), so the chunk becomes ``data``, its first ``taken`` bytes already consumed.
            self.data = chunk
            self.pos = self.scan = taken
            self.want = 0
        else:
            self.base += taken  # those bytes never enter ``data``

    def _append(self, chunk: bytes) -> None:
        data = self.data
        pos = self.pos
        tail = len(data) - pos
        if tail <= 0:
            # Everything consumed: adopt the chunk itself.
            self._shift(len(data))
            self.data = chunk
        elif tail <= len(chunk):
            # A frame spans chunks and its start is no larger than the new chunk: join the two
            # into one ``bytes`` (copying at most twice the chunk), so that records are sliced
            # out of immutable bytes, once, instead of out of a bytearray, twice.
            with memoryview(data) as view:
                joined = b"".join((view[pos:], chunk))
            self._shift(pos)
            self.data = joined
        elif type(data) is bytes:
            # A long frame: from now on accumulate (the unconsumed tail only), in place.
            grown = bytearray(memoryview(data)[pos:])
            grown += chunk
            self._shift(pos)
            self.data = grown
        else:
            data += chunk

    def _shift(self, size: int) -> None:
        """``size`` bytes leave the front of ``data``: keep indices pointing at the same bytes."""
        self.base += size
        self.pos -= size
        self.scan = max(0, self.scan - size)
        self.want = max(0, self.want - size)

    def compact(self) -> None:
        """Drop consumed bytes when that is cheap (all of them) or amortised (half or more)."""
        pos = self.pos
        data = self.data
        self.want = 0
        if pos >= len(data):
            self._shift(pos)
            self.data = b""
        elif pos >= 65536 and pos * 2 >= len(data) and type(data) is bytearray:
            self._shift(pos)
            del data[:pos]

    def discard(self, size: int) -> None:
        """Consume ``size`` bytes without looking at them (Observers skipping garbage)."""
        self.pos = min(len(self.data), self.pos + size)
        self.compact()

    def read_line(self, bound: int) -> bytes | bytearray | None:
        """One CRLF-terminated line without its CRLF, or None; Malformed past ``bound`` bytes."""
        data = self.data
        start = self.pos
        begin = max(start, self.scan)
        end = data.find(CRLF, begin)
        if end < 0:
            size = len(data)
            # Eager: an LF here has no CR before it, and a CR before the last byte is followed
            # by something else; neither line can become valid ("MUST NOT accept LF-only or
            # CR-only separators"), so say so now instead of waiting for the line bound.
            if data.find(b"\n", begin, size) >= 0:
                raise bad_format("LF without CR: CRLF is the only line separator")
            if data.find(b"\r", begin, size - 1) >= 0:
                raise bad_format("CR without LF: CRLF is the only line separator")
            # A trailing CR may begin the terminator; never search those bytes again.
            self.scan = size - 1 if size > start else start
            self.want = size + 1
            if size - start > bound + 1 or (size - start == bound + 1 and data[size - 1] != _CR):
                raise bad_format(f"line longer than {bound} bytes without CRLF")
            return None
        if end - start > bound:
            raise bad_format(f"line longer than {bound} bytes")
        self.pos = end + 2
        self.scan = end + 2
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
        """The payload of a Bulk String whose header was read, and its CRLF; None if short."""
        data = self.data
        start = self.pos
        if self.big is not None:
            return self._take_big()
        end = start + length
        if len(data) < end + 2:
            have = len(data) - start
            if length >= BIG_BULK and have < length:
                # Collect the rest of this payload aside (see ``feed``).
                if type(data) is bytes:
                    self.big = [memoryview(data)[start:]]
                else:
                    with memoryview(data) as view:
                        self.big = [bytes(view[start:])]
                self.big_left = length - have
                self.pos = len(data)
                self.compact()
                self.want = 2
                return None
            self.want = end + 2
            return None
        if data[end] != 0x0D or data[end + 1] != 0x0A:
            raise bad_format("Bulk String payload not followed by CRLF")
        if length > 4096:
            with memoryview(data) as view:
                value = bytes(view[start:end])
        else:
            value = bytes(data[start:end])
        self.pos = self.scan = end + 2
        return value

    def _take_big(self) -> bytes | None:
        data = self.data
        pos = self.pos
        if self.big_left or len(data) < pos + 2:
            self.want = pos + 2
            return None
        if data[pos] != 0x0D or data[pos + 1] != 0x0A:
            raise bad_format("Bulk String payload not followed by CRLF")
        assert self.big is not None
        value = b"".join(self.big)
        self.big = None
        self.pos = self.scan = pos + 2
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
