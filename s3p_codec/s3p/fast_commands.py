"""The fast path of the server's command parser: whole, well-formed commands already buffered.

``CommandParser`` reads a command element by element, so that every bad length or count is
refused from its header line with the code the spec assigns to that position. That care costs
a dozen Python calls per element; most commands a server receives are complete in the buffer
and ordinary. ``scan_command`` reads such a command in one go, at a command start: one regex
for the array header, the command name and the stream name's header (the command is told by
which group matched), then index arithmetic and small anchored regexes for the options and
records arrays. Payloads are sliced by their declared lengths; records that all have the same
length are taken by one ``findall`` of a pattern for that length (compiled the second time the
length is seen, and for a bounded number of lengths), as the client does for READ replies.

It accepts a subset of what the careful path accepts and builds the same event: it returns
None at the first thing it does not expect (a length with a leading zero, a 2-element DELETE,
an option key outside ``[A-Za-z_]``, a length over a limit, a missing CRLF, a command not yet
complete, an option value ``build_request`` refuses, ...). It never raises and consumes nothing
then; the caller runs the careful parser from the same byte, which either reads the command or
raises the precise error, at the same point it always did. Tests feed the same streams, in any
chunking, to both paths and compare events, errors and positions.

Cost: the scan is tried only at a command start (so at most a few times per command, while
its first line is incomplete) and looks only at bytes of that command; when it fails, the
careful path reads those bytes again (each byte at most twice in all: still linear).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from s3p_codec.s3p.events import Append, Request
from s3p_codec.s3p.limits import MAX_HEADER_LINE, MAX_OPTION_ELEMENTS, MAX_OPTION_SIZE, Limits
from s3p_codec.s3p.schema import build_request
from s3p_codec.s3p.version import RULES, Rules, Version
from s3p_codec.s3p.wire import Malformed

__all__ = ["scan_command"]

_NUMBER = rb"([1-9][0-9]{0,%d})" % (MAX_HEADER_LINE - 2)
"""A length or count: no leading zero, and no more digits than a header line may hold."""
_LENGTH = rb"\$" + _NUMBER + rb"\r\n"

_HEAD = re.compile(
    rb"\*(?:4\r\n\$6\r\n(?i:APPEND)\r\n" + _LENGTH
    + rb"|3\r\n\$(?:4\r\n(?:(?i:READ)\r\n" + _LENGTH + rb"|(?i:TRIM)\r\n" + _LENGTH + rb")"
    + rb"|6\r\n(?:(?i:CREATE)\r\n" + _LENGTH + rb"|(?i:DELETE)\r\n" + _LENGTH + rb")))"
).match  # fmt: skip
"""Array header, command name ("Servers MUST match command names ... case-insensitively") and
the stream name's length; the number of the group that matched names the command."""
_NAMES = (b"", b"APPEND", b"READ", b"TRIM", b"CREATE", b"DELETE")
_APPEND = 1

_EMPTY_OPTIONS = b"*0\r\n"
_FIRST_RECORD = re.compile(rb"\*" + _NUMBER + rb"\r\n" + _LENGTH).match
"""The records array header and its first element's header."""
_NO_OPTIONS_FIRST_RECORD = re.compile(rb"\*0\r\n\*" + _NUMBER + rb"\r\n" + _LENGTH).match
_RECORD = re.compile(_LENGTH).match
_OPTIONS = re.compile(rb"\*([1-9][0-9]?)\r\n").match
_OPTION = re.compile(
    rb"\$([1-9][0-9]?)\r\n([A-Za-z_]{1,%d})\r\n\$([1-9][0-9]?)\r\n([0-9A-Za-z-]{1,%d})\r\n"
    % (MAX_OPTION_SIZE, MAX_OPTION_SIZE)
).match
"""An option: a key (every known key is letters and ``_``) and a value made of the characters
every valid value is made of (numbers, ``<ms>-<seq>``, ``server``/``client``); the lengths
declared must be those matched, which also keeps both within ``MAX_OPTION_SIZE``."""
_CRLF = b"\r\n"
_V010 = RULES[Version.V0_1_0]
_MAX_PATTERNS = 64
_findall_cache: dict[int, Callable[..., list[bytes]]] = {}
_sizes_seen: set[int] = set()
_new_object = object.__new__
_set_stream = Append.__dict__["stream"].__set__
_set_records = Append.__dict__["records"].__set__
_set_timestamp = Append.__dict__["timestamp"].__set__
_set_id = Append.__dict__["id"].__set__


def _append(stream: bytes, records: tuple[bytes, ...]) -> Append:
    """A parser-built Append without options: already valid, so it skips ``__init__``."""
    event = _new_object(Append)
    _set_stream(event, stream)
    _set_records(event, records)
    _set_timestamp(event, None)
    _set_id(event, None)
    return event


def scan_command(
    data: bytes | bytearray, pos: int, limits: Limits, rules: Rules = _V010
) -> tuple[Request, int] | None:
    """The command starting at ``data[pos]`` and the index after it, or None: not this way."""
    head = _HEAD(data, pos)
    if head is None:
        return None
    which = head.lastindex
    assert which is not None
    size = int(head[which])
    at = head.end()
    end = at + size
    # "MUST reject names that exceed the configured limit" (the careful path says how).
    if size > limits.max_stream_name or data[end : end + 2] != _CRLF:
        return None
    stream = data[at:end] if type(data) is bytes else bytes(data[at:end])
    at = end + 2
    if which == _APPEND:
        records = _NO_OPTIONS_FIRST_RECORD(data, at)
        if records is not None:
            options = None
        else:
            scanned = _scan_options(data, at, rules.options[b"APPEND"])
            if scanned is None:
                return None
            options, at = scanned
            records = _FIRST_RECORD(data, at)
            if records is None:
                return None
        count = int(records[1])
        size = int(records[2])
        if count > limits.max_records_per_append or size > limits.max_record_size:
            return None
        at = records.end()
        end = at + size
        if data[end : end + 2] != _CRLF:
            return None
        if count == 1:
            if size > limits.max_append_size:
                return None
            record = data[at:end] if type(data) is bytes else bytes(data[at:end])
            payloads: tuple[bytes, ...] = (record,)
        else:
            many = _uniform_records(data, records.start(2) - 1, size, count, limits)
            if many is None:
                many = _scan_records(data, at, size, count, limits)
                if many is None:
                    return None
            payloads, end = many
        end += 2
        if options is None:
            return _append(stream, payloads), end
        try:
            return build_request(b"APPEND", stream, options, payloads, limits, rules), end
        except Malformed:
            return None
    name = _NAMES[which]
    if data.startswith(_EMPTY_OPTIONS, at):
        options = {}
        end = at + 4
    else:
        scanned = _scan_options(data, at, rules.options[name])
        if scanned is None:
            return None
        options, end = scanned
    try:
        return build_request(name, stream, options, (), limits, rules), end
    except Malformed:
        return None


def _scan_options(
    data: bytes | bytearray, at: int, known: tuple[bytes, ...]
) -> tuple[dict[bytes, bytes], int] | None:
    """A non-empty options array of known keys and short values; None: not this way."""
    header = _OPTIONS(data, at)
    if header is None:
        return None
    elements = int(header[1])
    # "Implementations MUST reject any options array with an odd number of elements."
    if elements % 2 or elements > MAX_OPTION_ELEMENTS:
        return None
    at = header.end()
    options: dict[bytes, bytes] = {}
    for _ in range(elements // 2):
        pair = _OPTION(data, at)
        if pair is None:
            return None
        key_size, key, value_size, value = pair.groups()
        if int(key_size) != len(key) or int(value_size) != len(value):
            return None
        key = key.upper()  # "Servers MUST match ... option keys case-insensitively"
        if key not in known:  # "Unknown option keys MUST be rejected."
            return None
        options[key] = value  # "last-value-wins semantics"
        at = pair.end()
    return options, at


def _uniform_records(
    data: bytes | bytearray, start: int, size: int, count: int, limits: Limits
) -> tuple[tuple[bytes, ...], int] | None:
    """``count`` records of ``size`` bytes each, the first header at ``start``, or None.

    Records of one size (the first's, already checked against the record limit) are matched by
    one ``findall`` of a pattern of fixed length: ``count`` matches inside exactly ``count``
    times that length are contiguous and cover it all. Returns the records and the index of
    the last one's CRLF, like ``_scan_records``.
    """
    unit = len(b"%d" % size) + size + 5  # "$", the digits, CRLF, the payload, CRLF
    end = start + unit * count
    if size * count > limits.max_append_size or data[end - 2 : end] != _CRLF:
        return None
    findall = _records_findall(size)
    if findall is None:
        return None
    found = findall(data, start, end)
    if len(found) != count:
        return None
    return tuple(found), end - 2


def _records_findall(size: int) -> Callable[..., list[bytes]] | None:
    """The ``findall`` of records of ``size`` bytes, or None.

    A size's pattern is compiled the second time the size is seen, and only while fewer than
    ``_MAX_PATTERNS`` are kept: a peer varying sizes cannot make us compile a pattern per
    request, nor keep more than that many.
    """
    found = _findall_cache.get(size)
    if found is None:
        if size not in _sizes_seen:
            if len(_sizes_seen) < 4 * _MAX_PATTERNS:
                _sizes_seen.add(size)
            return None
        if len(_findall_cache) >= _MAX_PATTERNS:
            return None
        pattern = rb"\$%d\r\n(.{%d})\r\n" % (size, size)
        found = re.compile(pattern, re.DOTALL).findall
        _findall_cache[size] = found
    return found


def _scan_records(
    data: bytes | bytearray, at: int, size: int, count: int, limits: Limits
) -> tuple[tuple[bytes, ...], int] | None:
    """``count`` records, the first of ``size`` bytes at ``at`` (its CRLF checked); returns
    them and the index of the last one's CRLF. None: not this way."""
    max_record = limits.max_record_size
    total = size
    end = at + size
    payloads = [data[at:end] if type(data) is bytes else bytes(data[at:end])]
    for _ in range(count - 1):
        header = _RECORD(data, end + 2)
        if header is None:
            return None
        size = int(header[1])
        total += size
        at = header.end()
        end = at + size
        if size > max_record or data[end : end + 2] != _CRLF:
            return None
        payloads.append(data[at:end] if type(data) is bytes else bytes(data[at:end]))
    if total > limits.max_append_size:
        return None
    return tuple(payloads), end
