"""Reading replies (spec section 8): the client's reader, each reply typed by its request.
Writing replies (and checking the ones a server builds) is ``_writers``.

A reply carries no tag saying what it answers: ``+OK`` answers CREATE, TRIM and DELETE, a Bulk
String timestamp answers APPEND, an Array of ``[ts1, rec1, ts2, rec2, ...]`` answers READ, and an
Error may answer anything. So the parser is told which request the next reply answers (the
client's pending queue) and checks the reply against it.

READ replies are checked as they arrive: an even number of elements, no more pairs than the
COUNT asked for, Bulk Strings only, well-formed timestamps, "Returned records MUST be in strictly
increasing timestamp order" and "only return records with timestamp strictly greater than"
MIN_TIMESTAMP (``0-0`` by default; v0.2.0's MIN_ID is inclusive, see ``floor_of``).

Plan. There are two ways through a READ reply, and the state they share is the
careful path's own (``_count``, ``_records``, ``_prev``, ``_stamp``, ``_bulk``):

- The careful path (``read_header`` then ``_slow_element``) reads one element at a time through
  ``WireBuffer`` and raises the precise error. It is the reference: it alone handles an element
  split across reads, and every fault.
- The fast path (``_pairs``), tried at a reply's start (after ``_READ_HEAD``) and at every
  pair boundary, takes the run of *whole* pairs already buffered, of any sizes: per pair one
  anchored regex matches the timestamp header, the timestamp and the record header (and, for
  every pair after the first, the CRLF ending the previous record), the record is sliced by its
  length, and the checks the careful path makes are made on the values at hand: the declared
  timestamp length, the record length against the limit, strictly increasing order from the
  floor. It raises nothing and consumes only the pairs that passed: the pair it stopped at
  (incomplete, unusual or wrong) is left to the careful path, which takes it or says what is
  wrong with it, then the fast path goes on after it. (Checking a run afterwards with
  ``map``/``zip`` was measured slower than checking each pair as it is read.) The reply's own
  header is read by ``_READ_HEAD`` where the careful path would read it, and its count gets
  the same checks (``_begin_read``).

A pair whose record is not all here yet, its headers checked, is handed to the careful path
waiting for that record (``_hand_over``: the state it would be in after reading those headers
itself); once it completes, the next pairs are taken in runs again, so chunked arrival costs the
careful path one record per chunk. Each byte is looked
at by the fast path at most once plus the bounded header of the pair it stops at: linear in any
chunking. Nothing is cached between replies: no pattern depends on the data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from s3p_codec.s3p._events import (
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
from s3p_codec.s3p._limits import MAX_OPTION_SIZE, Limits
from s3p_codec.s3p._schema import default_floor, floor_of
from s3p_codec.s3p._version import RULES, Rules, Version
from s3p_codec.s3p._wire import (
    ARRAY,
    BULK,
    ERROR,
    SIMPLE,
    WireBuffer,
    bad_format,
    check_bulk_length,
)

__all__ = ["ReplyParser", "parse_error_line"]

_ZERO = Timestamp(0, 0)
_V010 = RULES[Version.V0_1_0]
_new_object = object.__new__
_set = object.__setattr__


def _read_reply(records: tuple[tuple[Timestamp, bytes], ...]) -> ReadReply:
    """A parser-built ReadReply: already valid, so it skips ``__init__`` (a third the cost)."""
    reply = _new_object(ReadReply)
    _set(reply, "records", records)
    return reply


_OK = b"OK"
_CRLF = b"\r\n"
_new_timestamp = tuple.__new__
_PAIR_HEADERS = rb"\$([1-9]\d?+)\r\n(\d{1,19}+)-(\d{1,19}+)\r\n\$([1-9]\d{0,9}+)\r\n"
"""A pair up to its record: lengths without leading zeros, at most 19 digits in ``<ms>`` and
``<seq>`` (so neither can exceed 64 bits); anything else is the careful path's. (``\\d`` is
ASCII digits only in a bytes pattern; the possessive bounded repeats match twice as fast as
``[0-9]{1,19}``.)"""
_FIRST_PAIR = re.compile(_PAIR_HEADERS).match
_NEXT_PAIR = re.compile(_CRLF + _PAIR_HEADERS).match
"""Matched where the previous record ends: its CRLF is checked by the same call."""
_READ_HEAD = re.compile(rb"\*([1-9]\d{0,8}+)\r\n").match
_SMALL_INTS = {b"%d" % number: number for number in range(1000)}
"""Sequence numbers and lengths are often small: a dict lookup is cheaper than ``int()``."""
_STAMP_SIZES = [[b"%d" % (ms + seq + 1) for seq in range(20)] for ms in range(20)]
"""The length a timestamp's header declares, by the digits in its ``<ms>`` and ``<seq>``."""
_CODES = {code.value.encode(): code for code in ErrorCode}


def parse_error_line(text: bytes | bytearray, rules: Rules = _V010) -> ErrorReply:
    """``<ERROR_CODE> <message>``: the code must be one of the version's canonical codes."""
    raw_code, _, message = bytes(text).partition(b" ")
    code = _CODES.get(raw_code)
    if code is None or code not in rules.codes:
        raise bad_format(f"Error reply with an unknown error code: {bytes(text)[:64]!r}")
    return ErrorReply(code, message.decode("ascii"))


class ReplyParser:
    """Turns the server-to-client byte stream into typed replies, given what each answers."""

    fast = True
    """Take whole buffered pairs in runs (``_pairs``); tests turn it off to compare the paths."""

    def __init__(self, buffer: WireBuffer, limits: Limits, rules: Rules = _V010) -> None:
        self.buffer = buffer
        self.limits = limits
        self.rules = rules
        self.zero = default_floor(rules)
        self.start = 0
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
        return self._count >= 0 or self._bulk >= 0 or len(self.buffer) > 0

    def next_reply(self, request: Request, upcoming: Iterable[Request] = ()) -> Reply | None:
        """The reply to ``request`` if complete, else None; raises Malformed.

        ``upcoming`` (every request awaiting a reply, ``request`` first) is accepted for
        callers that pass it; replies are decoded one at a time.
        """
        # Paths, most common first: a READ reply whose head ``_READ_HEAD`` matches goes to the
        # fast path; any other reply start is read by its header line; a reply begun earlier
        # (``_count`` for READ, ``_bulk`` for APPEND) is carried on below.
        buf = self.buffer
        if self._count < 0 and self._bulk < 0:
            pos = buf.pos
            self.start = buf.base + pos
            if type(request) is Read and self.fast:
                head = _READ_HEAD(buf.data, pos)
                if head is not None:
                    # The header line the careful path would read, consumed the same way.
                    buf.pos = head.end()
                    count = int(head[1])
                    limit = request.count
                    if (
                        count % 2
                        or count // 2 > (self.limits.max_count if limit is None else limit)
                        or request.min_id is not None
                    ):
                        self._begin_read(request, count)  # the error, or v0.2.0's MIN_ID
                    else:  # what _begin_read does in the common case, inline
                        self._prev = request.min_timestamp or self.zero
                        self._count = count
                    if self._pairs(count // 2):
                        return self._read_body()  # not all here, or not all plain
                    # The whole reply in one run: what _read_body does at the end, inline.
                    whole = _new_object(ReadReply)
                    _set(whole, "records", tuple(self._records))
                    self._records = []
                    self._count = -1
                    # ``compact`` leaves a partly read ``bytes`` storage as it is (an adopted
                    # chunk is never copied): the call is skipped then.
                    if buf.pos >= len(buf.data) or type(buf.data) is not bytes:
                        buf.compact()
                    return whole
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
        if request.min_id is None:
            self._prev = request.min_timestamp or self.zero
        else:
            self._prev = floor_of(request, self.zero)
        self._count = count

    def _read_body(self) -> ReadReply | None:
        """The rest of a READ reply: runs of whole pairs by the fast path, one element at a time
        by the careful path where it stops; None until the last pair is here."""
        records = self._records
        pairs_left = self._count // 2 - len(records)
        fast = self.fast
        while pairs_left:
            if fast and self._stamp is None and self._bulk < 0:
                pairs_left = self._pairs(pairs_left)
                if not pairs_left:
                    break
            # The careful path: one element, with the precise error.
            if not self._slow_element():
                return None
            # Back at a pair boundary (no timestamp waiting, no record half-read): count again.
            if self._stamp is None and self._bulk < 0:
                pairs_left = self._count // 2 - len(records)
        reply = _read_reply(tuple(records))
        self._reset()
        self.buffer.compact()
        return reply

    def _pairs(self, pairs_left: int) -> int:
        """Take the run of whole, unremarkable pairs buffered at a pair boundary (see the
        module docstring); returns the pairs still to read."""
        buf = self.buffer
        data = buf.data
        found = _FIRST_PAIR(data, buf.pos)
        if found is None:
            return pairs_left
        # A slice of ``bytes`` is the record itself, one copy; a slice of a ``bytearray`` is a
        # bytearray, to be copied again into bytes (below).
        whole = data if type(data) is bytes else None
        # Everything the loop touches per pair is a local: a local load is the cheapest lookup.
        max_record = self.limits.max_record_size
        append = self._records.append
        match = _NEXT_PAIR
        small = _SMALL_INTS.get
        stamp_sizes = _STAMP_SIZES
        prev = first = self._prev
        end = 0
        while True:
            stamp_size, ms, seq, size_text = found.groups()
            start = found.end()
            size = small(size_text) or int(size_text)  # never 0 (no leading zero): ``or`` is safe
            seq_value = small(seq)  # may be 0, so tested against None
            if seq_value is None:
                seq_value = int(seq)
            # Built without ``Timestamp.__new__``'s argument handling: both parts are checked
            # digits of at most 19, within 64 bits.
            stamp = _new_timestamp(Timestamp, (int(ms), seq_value))
            # One tuple comparison is both rules: strictly increasing, and above the floor
            # (``prev`` starts there). The declared timestamp length must be its digits plus
            # the ``-``, read from a table rather than computed.
            if stamp <= prev or size > max_record or stamp_sizes[len(ms)][len(seq)] != stamp_size:
                break  # the careful path says which rule broke, or takes an unusual pair
            stop = start + size
            # The next pair's match checks this record's CRLF; the last one is checked here.
            if pairs_left > 1:
                found = match(data, stop)
                if found is None and data[stop : stop + 2] != _CRLF:
                    if stop + 2 > len(data):
                        return self._hand_over(prev, stamp, size, start, pairs_left)
                    break
            elif data[stop : stop + 2] != _CRLF:
                if stop + 2 > len(data):
                    return self._hand_over(prev, stamp, size, start, pairs_left)
                break
            else:
                found = None
            if whole is not None:
                append((stamp, whole[start:stop]))
            elif size > 4096:
                # Through a view a big record is copied once; for a small one the view costs
                # more than the second copy (the buffer's ``_ONE_COPY_MIN``).
                with memoryview(data) as view:
                    append((stamp, bytes(view[start:stop])))
            else:
                append((stamp, bytes(data[start:stop])))
            end = stop
            prev = stamp
            pairs_left -= 1
            if found is None:
                break
        # ``prev`` moves with each pair taken: if it did not, nothing was consumed.
        if prev is not first:
            self._prev = prev
            buf.pos = end + 2  # after the last record's CRLF
        return pairs_left

    def _hand_over(
        self, prev: Timestamp, stamp: Timestamp, size: int, start: int, pairs_left: int
    ) -> int:
        """The record at ``start`` is not all here yet, its headers are checked: leave the
        careful path exactly where it would be after reading them (waiting for the record's
        ``size`` bytes, big ones collected aside), instead of making it read them again."""
        self._prev = prev
        self._stamp = stamp
        self._bulk = size
        buf = self.buffer
        buf.pos = start
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
