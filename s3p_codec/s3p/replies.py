"""The reply schema (spec section 8): parse replies typed by their request, validate, encode.

A reply carries no tag saying what it answers: ``+OK`` answers CREATE, TRIM and DELETE, a Bulk
String timestamp answers APPEND, an Array of ``[ts1, rec1, ts2, rec2, ...]`` answers READ, and an
Error may answer anything. So the parser is told which request the next reply answers (the
client's pending queue) and checks the reply against it.

READ replies are checked as they arrive: an even number of elements, no more pairs than the
COUNT asked for, Bulk Strings only, well-formed timestamps, "Returned records MUST be in strictly
increasing timestamp order" and "only return records with timestamp strictly greater than"
MIN_TIMESTAMP (``0-0`` by default).

Theory of operation: a READ reply is decoded by one of three layers, fastest first, each
accepting only what the next one down would accept (tests feed the same streams to all):

1. Whole replies of one shape (``_uniform_batch``): when the first pair's header lengths,
   record size (at most ``_UNIFORM_MAX_RECORD``) and timestamp widths repeat across every pair
   of the reply, and pipelined READ replies have the same element count, one ``findall`` over
   a pattern of fixed match length takes them all (a few dozen replies at most), C-level loops
   build and order the timestamps, and the extra replies wait in ``_ready`` for the next calls.
   The patterns live on the parser (``_Shapes``), compiled the second time a shape is seen,
   in bounded tables. After a miss the parser does not look again for a number of replies
   that doubles with each miss in a row (up to 15), so varied streams pay almost nothing.
2. Pairs of any shape (``_pairs``): one regex matches a pair's two headers, the record is
   sliced; it stops at anything incomplete or unusual.
3. The careful path (``_slow_element``): one element at a time through ``WireBuffer``,
   raising the precise error. It alone handles records split across reads and any fault.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable
from itertools import islice, repeat
from operator import lt
from typing import cast

from s3p_codec._core import LocalProtocolError
from s3p_codec.s3p.events import (
    MAX_U64,
    Append,
    AppendReply,
    ErrorCode,
    ErrorReply,
    Ok,
    Read,
    ReadReply,
    Reply,
    Request,
    Timestamp,
    parse_timestamp,
)
from s3p_codec.s3p.limits import MAX_OPTION_SIZE, Limits
from s3p_codec.s3p.version import RULES, Rules, Version
from s3p_codec.s3p.wire import (
    ARRAY,
    BULK,
    ERROR,
    SIMPLE,
    WireBuffer,
    bad_format,
    check_bulk_length,
    encode_bulk,
    is_text,
)

__all__ = ["ReplyParser", "encode_reply", "parse_error_line", "validate_error", "validate_reply"]

_ZERO = Timestamp(0, 0)
_BELOW_ZERO = tuple.__new__(Timestamp, (-1, 0))
"""Below every ID: the exclusive bound that makes v0.2.0's inclusive ``0-0`` default work."""
_V010 = RULES[Version.V0_1_0]
_new_object = object.__new__
_set = object.__setattr__


def _read_reply(records: tuple[tuple[Timestamp, bytes], ...]) -> ReadReply:
    """A parser-built ReadReply: already valid, so it skips ``__init__`` (a third the cost)."""
    reply = _new_object(ReadReply)
    _set(reply, "records", records)
    return reply


_OK = b"OK"
_new_timestamp = tuple.__new__
_PAIR_PATTERN = rb"\$([1-9][0-9]?)\r\n([0-9]{1,20})-([0-9]{1,20})\r\n\$([1-9][0-9]{0,9})\r\n"
_PAIR = re.compile(_PAIR_PATTERN)
_READ_FIRST = re.compile(rb"\*([1-9][0-9]{0,8})\r\n" + _PAIR_PATTERN).match
_SMALL_INTS = {b"%d" % number: number for number in range(1000)}
"""Sequence numbers are usually small: a dict lookup is cheaper than ``int()``."""
_UNIFORM_MAX_RECORD = 512  # above this, slicing beats matching the payload with the regex
_BATCH = 64  # pipelined READ replies decoded in one pass at most
_BATCH_PAIRS = 320
"""...and records: a larger batch keeps more fresh objects alive at once, and the garbage
collector's passes over them cost more than the batch saves."""
_CODES = {code.value.encode(): code for code in ErrorCode}


def floor_of(request: Read, zero: Timestamp) -> Timestamp:
    """The bound every record of the reply to ``request`` must be strictly greater than.

    v0.1.0's MIN_TIMESTAMP is that bound ("strictly greater than this value"); v0.2.0's MIN_ID
    is inclusive ("greater than or equal"), so its bound is the ID just before it. ``zero`` is
    the version's bound when neither option was sent (``0-0``, or below it in v0.2.0).
    """
    if request.min_id is not None:
        ms, seq = request.min_id
        if seq:
            return tuple.__new__(Timestamp, (ms, seq - 1))
        return tuple.__new__(Timestamp, (ms - 1, MAX_U64)) if ms else _BELOW_ZERO
    return request.min_timestamp or zero


def default_floor(rules: Rules) -> Timestamp:
    """READ's bound without MIN_TIMESTAMP/MIN_ID: after ``0-0`` (v0.1.0), from it (v0.2.0)."""
    return _BELOW_ZERO if rules.min_inclusive else _ZERO


_Findall = Callable[..., list[tuple[bytes, ...]]]


class _Shapes:
    """One parser's compiled patterns for the reply shapes it has met.

    A shape's pattern is compiled the second time the shape is seen, so a peer varying shapes
    cannot make us compile a pattern per reply; each table is bounded and held by its parser,
    so one connection's shapes neither leak into nor evict another's.
    """

    __slots__ = ("batch", "seen", "uniform")

    def __init__(self) -> None:
        self.uniform: dict[tuple[int, int, int], _Findall] = {}
        self.batch: dict[tuple[int, int, int, int], _Findall] = {}
        self.seen: set[tuple[int, ...]] = set()

    def _first_sighting(self, key: tuple[int, ...]) -> bool:
        """True the first time ``key`` is seen (recently): compile only when it recurs."""
        seen = self.seen
        if key in seen:
            return False
        if len(seen) > 1024:
            seen.clear()
        seen.add(key)
        return True

    def uniform_findall(self, ms_digits: int, seq_digits: int, rec_len: int) -> _Findall | None:
        """``findall`` of ``(ms, seq, record)`` for pairs with exactly these lengths, or None
        the first time these lengths are seen."""
        key = (ms_digits, seq_digits, rec_len)
        found = self.uniform.get(key)
        if found is None:
            if self._first_sighting(key):
                return None
            if len(self.uniform) > 256:
                self.uniform.clear()
            pattern = rb"\$%d\r\n([0-9]{%d})-([0-9]{%d})\r\n\$%d\r\n(.{%d})\r\n" % (
                ms_digits + seq_digits + 1,
                ms_digits,
                seq_digits,
                rec_len,
                rec_len,
            )
            found = re.compile(pattern, re.DOTALL).findall
            self.uniform[key] = found
        return found

    def batch_findall(
        self, count: int, ms_digits: int, seq_digits: int, rec_len: int
    ) -> _Findall | None:
        """``findall`` of ``(ms, seq, record, next header)`` over pipelined replies of one
        shape, or None the first time the shape is seen."""
        key = (count, ms_digits, seq_digits, rec_len)
        found = self.batch.get(key)
        if found is None:
            if self._first_sighting(key):
                return None
            if len(self.batch) > 256:
                self.batch.clear()
            # The next reply's header is an optional suffix: the pattern starts with a literal
            # "$", which lets the regex engine skip ahead quickly where nothing matches.
            pattern = rb"\$%d\r\n([0-9]{%d})-([0-9]{%d})\r\n\$%d\r\n(.{%d})\r\n(\*%d\r\n)?" % (
                ms_digits + seq_digits + 1,
                ms_digits,
                seq_digits,
                rec_len,
                rec_len,
                count,
            )
            found = re.compile(pattern, re.DOTALL).findall
            self.batch[key] = found
        return found


def _uniform_batch(  # noqa: PLR0917 - a hot path: no keyword-argument overhead
    data: bytes | bytearray,
    pos: int,
    head: re.Match[bytes],
    request: Read,
    upcoming: Iterable[Request],
    max_count: int,
    max_record: int,
    zero: Timestamp,
    shapes: _Shapes,
) -> tuple[list[ReadReply], int] | None:
    """Whole READ replies at ``pos``, one per READ request in a row, if they are uniform.

    ``head`` is ``_READ_FIRST`` matched at ``pos``; ``upcoming`` every request awaiting a reply,
    ``request`` first. Pipelined replies of the same shape (same element count, same header
    lengths, records of at most ``_UNIFORM_MAX_RECORD`` bytes, at most 19 digits in ``<ms>``
    and ``<seq>`` so no part can exceed 64 bits) are matched by one ``findall`` whose pattern
    has the next reply's header as an optional group; ``n`` complete replies give exactly
    ``n - 1`` headers, one every ``pairs`` matches, and tile the region exactly. Each reply is
    then checked against its own request (COUNT, MIN_TIMESTAMP) and for strictly increasing
    order; the first that fails ends the batch (the careful path reports it). None: not this
    way.
    """
    count_text, ts_len, ms_first, seq_first, rec_text = head.groups()
    count = int(count_text)
    pairs = count // 2
    ms_digits = len(ms_first)
    seq_digits = len(seq_first)
    rec_len = int(rec_text)
    if (
        pairs * 2 != count
        or int(ts_len) != ms_digits + seq_digits + 1
        or ms_digits > 19
        or seq_digits > 19
        or rec_len > _UNIFORM_MAX_RECORD
        or rec_len > max_record
    ):
        return None
    pair_start = head.end(1) + 2
    reply_size = pair_start - pos + (head.end() - pair_start + rec_len + 2) * pairs
    n = min((len(data) - pos) // reply_size, _BATCH, max(1, _BATCH_PAIRS // pairs))
    if n < 1:
        return None
    requests = _consecutive_reads(request, upcoming, n)
    n = len(requests)
    # Cheap look before the regex: every reply of the batch must start where a uniform reply
    # would; the batch ends at the first that does not (non-uniform replies rarely line up).
    header = data[pos:pair_start]
    size = len(header)
    at = pos + reply_size
    for index in range(1, n):
        if data[at : at + size] != header:
            n = index
            break
        at += reply_size
    end = pos + n * reply_size
    if data[end - 2 : end] != b"\r\n":
        return None
    total = n * pairs
    if n == 1:
        findall = shapes.uniform_findall(ms_digits, seq_digits, rec_len)
        if findall is None:
            return None
        matches = findall(data, pair_start, end)
        if len(matches) != total:
            return None
        ms_texts, seq_texts, payloads = zip(*matches, strict=False)
    else:
        findall = shapes.batch_findall(count, ms_digits, seq_digits, rec_len)
        if findall is None:
            return None
        found = findall(data, pair_start, end)
        if len(found) != total:
            return None
        ms_texts, seq_texts, payloads, tails = zip(*found, strict=False)
        # Exactly one header after the last pair of every reply but the last.
        if tails.count(b"") != total - n + 1 or b"" in tails[pairs - 1 : total - 1 : pairs]:
            return None
    small = list(map(_SMALL_INTS.get, seq_texts))
    seqs = list(map(int, seq_texts)) if None in small else cast("list[int]", small)
    if ms_texts.count(ms_first) == total:
        ms = int(ms_first)
        keys: list[int] | list[Timestamp] = seqs  # one millisecond: order by seq alone
        stamps = list(map(_new_timestamp, repeat(Timestamp), zip(repeat(ms), seqs, strict=False)))
    else:
        stamps = list(
            map(_new_timestamp, repeat(Timestamp), zip(map(int, ms_texts), seqs, strict=False))
        )
        keys = stamps
    records = tuple(zip(stamps, payloads, strict=False))
    replies: list[ReadReply] = []
    for index in range(n):
        request = requests[index]
        low = index * pairs
        high = low + pairs
        if pairs > (request.count or max_count):
            break
        part = keys[low:high]
        after = request.min_timestamp or zero if request.min_id is None else floor_of(request, zero)
        if not (stamps[low] > after and all(map(lt, part, part[1:]))):
            break
        reply = _new_object(ReadReply)
        _set(reply, "records", records if n == 1 else records[low:high])
        replies.append(reply)
    if not replies:
        return None
    return replies, pos + len(replies) * reply_size


def _consecutive_reads(request: Read, upcoming: Iterable[Request], most: int) -> list[Read]:
    """``request`` and the READs right after it in ``upcoming`` (which starts with it)."""
    reads = [request]
    for later in islice(upcoming, 1, most):
        if type(later) is not Read:
            break
        reads.append(later)
    return reads


def parse_error_line(text: bytes | bytearray, rules: Rules = _V010) -> ErrorReply:
    """``<ERROR_CODE> <message>``: the code must be one of the version's canonical codes."""
    raw_code, _, message = bytes(text).partition(b" ")
    code = _CODES.get(raw_code)
    if code is None or code not in rules.codes:
        raise bad_format(f"Error reply with an unknown error code: {bytes(text)[:64]!r}")
    return ErrorReply(code, message.decode("ascii"))


class ReplyParser:
    """Turns the server-to-client byte stream into typed replies, given what each answers."""

    def __init__(self, buffer: WireBuffer, limits: Limits, rules: Rules = _V010) -> None:
        self.buffer = buffer
        self.limits = limits
        self.rules = rules
        self.zero = default_floor(rules)
        self.start = 0
        self._ready: deque[ReadReply] = deque()  # decoded ahead, for the next requests
        self._shapes = _Shapes()
        # Replies that are not of one shape make the fast paths fail: after a miss, skip them
        # for a number of replies that doubles with each miss in a row (up to 15).
        self._misses = 0
        self._skip = 0
        self._reset()

    def _reset(self) -> None:
        self._count = -1  # READ: elements declared; -1: no reply begun
        self._bulk = -1
        self._records: list[tuple[Timestamp, bytes]] = []
        self._stamp: Timestamp | None = None  # READ: timestamp waiting for its record
        self._prev = _ZERO

    @property
    def in_reply(self) -> bool:
        """True while a reply is partly read or buffered bytes wait to be parsed (EOF now is mid-
        frame).
        """
        return self._count >= 0 or self._bulk >= 0 or len(self.buffer) > 0 or bool(self._ready)

    def next_reply(self, request: Request, upcoming: Iterable[Request] = ()) -> Reply | None:
        """The reply to ``request`` if complete, else None; raises Malformed.

        ``upcoming`` is every request awaiting a reply, ``request`` first: consecutive READs in
        it let pipelined READ replies be decoded together (handed out by later calls).
        """
        if self._ready:
            return self._ready.popleft()
        buf = self.buffer
        if self._count < 0 and self._bulk < 0:
            data = buf.data
            pos = buf.pos
            self.start = buf.base + pos
            if self._skip:
                self._skip -= 1  # recent replies were not uniform: do not look for a while
            elif type(request) is Read:
                # Fast path: whole READ replies of same-sized pairs, already buffered.
                head = _READ_FIRST(data, pos)
                if head is not None:
                    batch = _uniform_batch(
                        data,
                        pos,
                        head,
                        request,
                        upcoming,
                        self.limits.max_count,
                        self.limits.max_record_size,
                        self.zero,
                        self._shapes,
                    )
                    if batch is not None:
                        self._misses = 0
                        replies, end = batch
                        buf.pos = buf.scan = end
                        if end >= len(data):
                            buf.compact()
                        if len(replies) > 1:
                            self._ready.extend(replies[1:])
                        return replies[0]
                    if head.end() < len(data):  # complete enough to judge: not uniform
                        self._misses = min(2 * self._misses + 1, 15)
                        self._skip = self._misses
            header = buf.read_header()
            if header is None:
                return None
            kind, arg = header
            if kind == ERROR:
                assert not isinstance(arg, int)
                reply: Reply = parse_error_line(arg, self.rules)
                buf.compact()
                return reply
            if isinstance(request, Read):
                if kind != ARRAY:
                    raise bad_format("a READ reply MUST be an Array of Bulk Strings")
                assert isinstance(arg, int)
                self._begin_read(request, arg)
            elif isinstance(request, Append):
                if kind != BULK:
                    raise bad_format("an APPEND reply MUST be a Bulk String timestamp")
                assert isinstance(arg, int)
                check_bulk_length(arg, MAX_OPTION_SIZE, "timestamp", ErrorCode.BAD_FORMAT)
                self._bulk = arg
            else:
                if kind != SIMPLE or arg != _OK:
                    raise bad_format(f"a {type(request).__name__.upper()} reply MUST be +OK")
                buf.compact()
                return Ok()
        if self._count >= 0:
            return self._read_body()
        value = buf.take_bulk(self._bulk)
        if value is None:
            return None
        self._bulk = -1
        stamp = parse_timestamp(value)
        if stamp is None:
            raise bad_format(f"APPEND reply is not a <ms>-<seq> timestamp: {value[:64]!r}")
        buf.compact()
        return AppendReply(stamp)

    def _begin_read(self, request: Read, count: int) -> None:
        if count % 2:
            raise bad_format(f"a READ reply holds timestamp/record pairs; got {count} elements")
        limit = request.count if request.count is not None else self.limits.max_count
        if count // 2 > limit:
            raise bad_format(f"a READ reply of {count // 2} records; at most {limit} asked for")
        self._prev = floor_of(request, self.zero)
        self._count = count

    def _read_body(self) -> ReadReply | None:
        buf = self.buffer
        records = self._records
        pairs_left = self._count // 2 - len(records)
        while pairs_left:
            if self._stamp is None and self._bulk < 0:
                pairs_left = self._pairs(pairs_left)
                if not pairs_left:
                    break
            # Slow path: element by element, with the precise error.
            if not self._slow_element():
                return None
            if self._stamp is None and self._bulk < 0:
                pairs_left = self._count // 2 - len(records)
        reply = _read_reply(tuple(records))
        self._reset()
        buf.compact()
        return reply

    def _pairs(self, pairs_left: int) -> int:
        """Take whole pairs while they are buffered and unremarkable: one regex for the two
        headers, then slice the record. Returns the pairs still to read; anything unusual
        stops the loop and is left to the element-by-element path."""
        buf = self.buffer
        data = buf.data
        size_of_data = len(data)
        copy_slice = type(data) is not bytes
        max_record = self.limits.max_record_size
        append = self._records.append
        match = _PAIR.match
        small = _SMALL_INTS.get
        prev = self._prev
        pos = buf.pos
        while pairs_left:
            found = match(data, pos)
            if found is None:
                break
            ts_len, ms, seq, rec_len = found.groups()
            start = found.end()
            size = small(rec_len)
            if size is None:
                size = int(rec_len)
            end = start + size
            if (
                end + 2 > size_of_data
                or size > max_record
                or small(ts_len) != len(ms) + len(seq) + 1
                or data[end] != 0x0D
                or data[end + 1] != 0x0A
            ):
                break
            ms_value = int(ms)
            seq_value = small(seq)
            if seq_value is None:
                seq_value = int(seq)
            stamp = _new_timestamp(Timestamp, (ms_value, seq_value))
            if not stamp > prev or ms_value > MAX_U64 or seq_value > MAX_U64:
                break
            if not copy_slice:
                record = cast("bytes", data[start:end])
            elif size > 4096:
                with memoryview(data) as view:
                    record = bytes(view[start:end])
            else:
                record = bytes(data[start:end])
            append((stamp, record))
            prev = stamp
            pos = end + 2
            pairs_left -= 1
        self._prev = prev
        buf.pos = buf.scan = pos
        return pairs_left

    def _slow_element(self) -> bool:
        """Read one element of a READ reply; False if more bytes are needed."""
        buf = self.buffer
        if self._bulk < 0:
            header = buf.read_header()
            if header is None:
                return False
            kind, arg = header
            if kind != BULK:
                raise bad_format("a READ reply MUST hold Bulk Strings only")
            assert isinstance(arg, int)
            if self._stamp is None:
                check_bulk_length(arg, MAX_OPTION_SIZE, "timestamp", ErrorCode.BAD_FORMAT)
            else:
                check_bulk_length(arg, self.limits.max_record_size, "record", ErrorCode.LIMITS)
            self._bulk = arg
        value = buf.take_bulk(self._bulk)
        if value is None:
            return False
        self._bulk = -1
        if self._stamp is None:
            stamp = parse_timestamp(value)
            if stamp is None:
                raise bad_format(f"READ reply timestamp is not <ms>-<seq>: {value[:64]!r}")
            if stamp <= self._prev:
                raise bad_format(
                    f"READ reply timestamps MUST be strictly increasing and after MIN_TIMESTAMP:"
                    f" {stamp} after {self._prev}"
                )
            self._stamp = stamp
        else:
            self._records.append((self._stamp, value))
            self._prev = self._stamp
            self._stamp = None
        return True


# --- Sending ---------------------------------------------------------------------------------


def _fail(message: str, code: ErrorCode = ErrorCode.BAD_FORMAT) -> LocalProtocolError:
    return LocalProtocolError(message, code=code)


def _check_read_reply(reply: ReadReply, request: Read, limits: Limits, rules: Rules) -> None:
    records = reply.records
    if not isinstance(records, tuple):
        raise _fail("ReadReply.records must be a tuple of (Timestamp, bytes) pairs")
    limit = request.count if request.count is not None else limits.default_count
    if len(records) > limit:
        raise _fail(f"READ returns up to COUNT records: {len(records)} > {limit}")
    prev = floor_of(request, default_floor(rules))
    for pair in records:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise _fail(f"each READ record is a (Timestamp, bytes) pair, got {pair!r}")
        stamp, record = pair
        if not isinstance(stamp, Timestamp) or not stamp.is_valid:
            raise _fail(f"not a valid Timestamp: {stamp!r}")
        if stamp <= prev:
            raise _fail(
                "Returned records MUST be in strictly increasing timestamp order "
                f"(after MIN_TIMESTAMP): {stamp} after {prev}"
            )
        if not isinstance(record, bytes) or not record:
            raise _fail("each record MUST be non-empty bytes ($0 is not allowed)")
        if len(record) > limits.max_record_size:
            raise _fail(f"record of {len(record)} bytes exceeds the limit", ErrorCode.LIMITS)
        prev = stamp


def validate_error(reply: ErrorReply, rules: Rules = _V010) -> None:
    """An Error line is "-<ERROR_CODE> <message>": a canonical code, printable ASCII text."""
    if not isinstance(reply.code, ErrorCode):
        raise _fail(f"ErrorReply.code must be an ErrorCode, got {reply.code!r}")
    if reply.code not in rules.codes:
        raise _fail(f"{reply.code.value} is not an error code of S3P v{rules.version}")
    message = reply.message
    if not isinstance(message, str) or not is_text(message.encode("utf-8")):
        raise _fail("an Error message is printable ASCII without CR or LF")


def validate_reply(reply: Reply, request: Request, limits: Limits, rules: Rules = _V010) -> None:
    """Raise ``LocalProtocolError`` unless ``reply`` is a valid answer to ``request``."""
    if isinstance(reply, ErrorReply):
        validate_error(reply, rules)
        return
    expected: type = Ok
    if isinstance(request, Read):
        expected = ReadReply
    elif isinstance(request, Append):
        expected = AppendReply
    if type(reply) is not expected:
        raise _fail(
            f"{type(request).__name__} is answered by {expected.__name__} or ErrorReply,"
            f" not {type(reply).__name__}"
        )
    if isinstance(reply, ReadReply):
        assert isinstance(request, Read)
        _check_read_reply(reply, request, limits, rules)
    elif isinstance(reply, AppendReply):
        stamp = reply.timestamp
        if not isinstance(stamp, Timestamp) or not stamp.is_valid:
            raise _fail(f"not a valid Timestamp: {stamp!r}")


def encode_reply(reply: Reply) -> bytes:
    """The wire bytes of a (validated) reply."""
    if isinstance(reply, Ok):
        return b"+OK\r\n"
    if isinstance(reply, AppendReply):
        return encode_bulk(bytes(reply.timestamp))
    if isinstance(reply, ReadReply):
        out = [b"*%d\r\n" % (2 * len(reply.records))]
        for stamp, record in reply.records:
            text = bytes(stamp)
            out.append(b"$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(text), text, len(record), record))
        return b"".join(out)
    if isinstance(reply, ErrorReply):
        if reply.message:
            return b"-%s %s\r\n" % (reply.code.value.encode(), reply.message.encode("ascii"))
        return b"-%s\r\n" % reply.code.value.encode()
    raise _fail(f"not an S3P reply: {reply!r}")
