"""Reading requests (spec sections 4, 7 and 8): the server's two ways from the client's bytes to
typed requests. Writing them (and checking the ones a user builds) is ``_writers``; reading
replies is ``_replies``.

Plan. Both ways end in ``_schema.build_request``, which turns the elements into a typed request
and checks option values, so each rule on a received value is written once:

- The careful path (``CommandParser``, element by element) follows the schema while the bytes
  arrive, so each bad length or count is refused from its header line with the code the spec
  assigns to that position (a 2 MiB record is ``ERR_LIMITS``, a 2 MiB stream name
  ``ERR_BAD_FORMAT``) before any payload is waited for. Its state is a few fields (command,
  element index, sub-array remaining): commands nest two deep and no deeper, so there is no
  recursion and no stack to overflow. It is the reference, and it alone raises.
- The fast path (``scan_command``), tried at each command start, reads a whole, ordinary
  command already buffered in one go (a few times faster): one regex for the array header, the
  command name and the stream name's header (the command is told by which group matched), then
  index arithmetic and small anchored regexes for the options and records arrays. Payloads are
  sliced by their declared lengths; records that all have the first one's length are cut by
  one split (``_uniform_records``). It accepts a subset of what the careful
  path accepts and builds the same event: it returns None at the first thing it does not expect
  (a length with a leading zero, a 2-element DELETE, an option key outside ``[A-Za-z_]``, a
  length over a limit, a missing CRLF, a command not yet complete, an option value
  ``build_request`` refuses, ...), never raises and consumes nothing then; the careful path
  runs from the same byte and either reads the command or raises the precise error, at the
  same point it always did. Tests feed the same streams, in any chunking, to both paths and
  compare events, errors and positions.

Cost: the scan is tried only at a command start (so at most a few times per command, while
its first line is incomplete) and looks only at bytes of that command; when it fails, the
careful path reads those bytes again (each byte at most twice in all: still linear). Nothing
is cached between commands.

Decisions (recorded in docs/decisions.rst):

- A 2-element ``DELETE`` (``*2 DELETE name``, the appendix ABNF's ``array-of-2``) is accepted and
  means the same as ``DELETE name *0``: section 8.5 is normative and what we send, but accepting
  the appendix's form costs nothing and hides no ambiguity.
- Option values are checked once the options array is complete, on the value that wins ("the
  last occurrence's value MUST be used"); unknown keys are refused as soon as they are read.
- Whether ``TIMESTAMP`` must be present depends on the stream's strategy, which only the
  server's store knows: the codec accepts both and leaves that check to the application.
"""

from __future__ import annotations

import re

from s3p_codec.s3p._events import Append, ErrorCode, Request
from s3p_codec.s3p._limits import MAX_HEADER_LINE, MAX_OPTION_ELEMENTS, MAX_OPTION_SIZE, Limits
from s3p_codec.s3p._schema import ARITY, build_request, quote
from s3p_codec.s3p._version import RULES, Rules, Version
from s3p_codec.s3p._wire import (
    ARRAY,
    BULK,
    Malformed,
    WireBuffer,
    bad_format,
    check_bulk_length,
)

__all__ = ["CommandParser", "scan_command"]

_NAME, _STREAM, _OPTIONS, _RECORDS = range(4)
_V010 = RULES[Version.V0_1_0]
_CRLF = b"\r\n"


# --- The fast path: a whole, ordinary command already buffered --------------------------------

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
_OPTIONS_ARRAY = re.compile(rb"\*([1-9][0-9]?)\r\n").match
_OPTION = re.compile(
    rb"\$([1-9][0-9]?)\r\n([A-Za-z_]{1,%d})\r\n\$([1-9][0-9]?)\r\n([0-9A-Za-z-]{1,%d})\r\n"
    % (MAX_OPTION_SIZE, MAX_OPTION_SIZE)
).match
"""An option: a key (every known key is letters and ``_``) and a value made of the characters
every valid value is made of (numbers, ``<ms>-<seq>``, ``server``/``client``); the lengths
declared must be those matched, which also keeps both within ``MAX_OPTION_SIZE``."""
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
    header = _OPTIONS_ARRAY(data, at)
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

    Records of one size (the first's, already checked against the record limit) sit at a fixed
    stride, so the bytes from the first payload to the last are the payloads joined by CRLF and
    the same header: splitting them there gives ``count`` pieces of ``size`` bytes exactly when
    the records are uniform (a payload holding that separator gives more pieces, a length that
    differs gives a piece of another size). One split, no pattern per size, nothing cached.
    Returns the records and the index of the last one's CRLF, like ``_scan_records``.
    """
    header = b"$%d\r\n" % size
    first = start + len(header)  # the caller matched the first header
    end = start + (len(header) + size + 2) * count
    if size * count > limits.max_append_size or data[end - 2 : end] != _CRLF:
        return None
    if type(data) is bytes:
        body = data[first : end - 2]
    else:
        with memoryview(data) as view:
            body = bytes(view[first : end - 2])
    payloads = body.split(_CRLF + header)
    if len(payloads) != count or list(map(len, payloads)).count(size) != count:
        return None
    return tuple(payloads), end - 2


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


# --- The careful path: element by element ----------------------------------------------------


class CommandParser:
    """Turns the client-to-server byte stream into typed requests, one at a time."""

    fast = True
    """Try ``scan_command`` at each command start (tests compare both paths)."""

    def __init__(self, buffer: WireBuffer, limits: Limits, rules: Rules = _V010) -> None:
        self.buffer = buffer
        self.limits = limits
        self.rules = rules
        self.start = 0  # absolute offset where the command being read began
        self._reset()

    def _reset(self) -> None:
        self._arity = -1  # -1: top-level header not read yet
        self._index = 0  # top-level elements complete
        self._name = b""
        self._stream = b""
        self._sub = -1  # elements left in the options/records array being read; -1: none
        self._bulk = -1  # payload length of a bulk whose header was read; -1: none
        self._key: bytes | None = None  # option key waiting for its value
        self._options: dict[bytes, bytes] = {}
        self._records: list[bytes] = []
        self._aggregate = 0

    @property
    def in_command(self) -> bool:
        """True while a command is partly read."""
        return self._arity >= 0 or len(self.buffer) > 0

    def next_command(self) -> Request | None:
        """The next complete request, or None if more bytes are needed; raises Malformed."""
        buf = self.buffer
        if self._arity < 0 and self.fast:
            data = buf.data
            pos = buf.pos
            rules = self.rules
            if rules is _V010:
                found = scan_command(data, pos, self.limits)
            else:
                found = scan_command(data, pos, self.limits, rules)
            if found is not None:
                request, end = found
                self.start = buf.base + pos
                buf.pos = end
                if end >= len(data):
                    buf.compact()
                return request
        while True:
            if self._bulk >= 0:
                value = buf.take_bulk(self._bulk)
                if value is None:
                    return None
                self._bulk = -1
                done = self._element(value)
                if done is not None:
                    self._reset()
                    buf.compact()
                    return done
                continue
            if self._arity < 0:
                self.start = buf.offset
            header = buf.read_header()
            if header is None:
                return None
            kind, arg = header
            if self._arity < 0:
                if kind != ARRAY:
                    raise bad_format("commands MUST be sent as a top-level Array")
                assert isinstance(arg, int)
                if not 2 <= arg <= 4:
                    raise bad_format(f"a command array has 3 or 4 elements, not {arg}")
                self._arity = arg
                continue
            if self._sub >= 0:
                self._sub_header(kind, arg)
            else:
                done = self._top_header(kind, arg)
                if done is not None:
                    self._reset()
                    buf.compact()
                    return done

    # -- top-level elements -----------------------------------------------------------------

    def _top_header(self, kind: int, arg: int | bytes | bytearray) -> Request | None:
        index = self._index
        if index == _NAME:
            if kind != BULK:
                raise bad_format("the first element MUST be the command name as a Bulk String")
            assert isinstance(arg, int)
            check_bulk_length(arg, 6, "command name", ErrorCode.BAD_FORMAT)
            self._bulk = arg
        elif index == _STREAM:
            if kind != BULK:
                raise bad_format("the stream name MUST be a Bulk String")
            assert isinstance(arg, int)
            if not 1 <= arg <= self.limits.max_stream_name:
                # v0.1.0: "Servers MUST return ERR_BAD_FORMAT for stream name length
                # violations"; v0.2.0 makes them ERR_LIMITS.
                raise Malformed(
                    self.rules.name_length_code,
                    f"name length {arg} not in range [1, {self.limits.max_stream_name}]",
                )
            self._bulk = arg
        elif index == _OPTIONS:
            if kind != ARRAY:
                raise bad_format("the options MUST be an Array of Bulk Strings")
            assert isinstance(arg, int)
            if arg % 2:
                raise bad_format(f"options array with an odd number of elements ({arg})")
            if arg > MAX_OPTION_ELEMENTS:
                raise bad_format(f"options array of {arg} elements (at most {MAX_OPTION_ELEMENTS})")
            if arg:
                self._sub = arg
                return None
            return self._next_top()
        else:  # _RECORDS
            if kind != ARRAY:
                raise bad_format("the records MUST be an Array of Bulk Strings")
            assert isinstance(arg, int)
            if arg == 0:
                raise bad_format("zero-length records array: records MUST have length >= 1")
            if arg > self.limits.max_records_per_append:
                raise Malformed(
                    ErrorCode.LIMITS,
                    f"too many records in APPEND request: {arg} "
                    f"(limit {self.limits.max_records_per_append})",
                )
            self._sub = arg
        return None

    def _next_top(self) -> Request | None:
        """Count one top-level element done; build the command once all are done."""
        self._index += 1
        if self._index == self._arity:
            return self._build()
        return None

    def _element(self, value: bytes) -> Request | None:
        """A Bulk String completed, at the top level or in the options/records array."""
        if self._sub < 0:
            if self._index == _NAME:
                name = value.upper()  # "Servers MUST match command names ... case-insensitively"
                arity = ARITY.get(name)
                if arity is None:
                    raise bad_format(f"unknown command {quote(value)}")
                if self._arity != arity and not (
                    name == b"DELETE" and self._arity in self.rules.delete_arities
                ):
                    raise bad_format(f"{name.decode()} takes {arity} elements, got {self._arity}")
                self._name = name
            else:
                self._stream = value
            return self._next_top()
        self._sub -= 1
        if self._index == _OPTIONS:
            if self._key is None:
                key = value.upper()  # "Servers MUST match ... option keys case-insensitively"
                if key not in self.rules.options[self._name]:
                    raise bad_format(f"unknown option {quote(value)}")
                self._key = key
            else:
                self._options[self._key] = value  # "last-value-wins semantics"
                self._key = None
        else:
            self._records.append(value)
        if self._sub == 0:
            self._sub = -1
            return self._next_top()
        return None

    def _sub_header(self, kind: int, arg: int | bytes | bytearray) -> None:
        if kind != BULK:
            what = "options" if self._index == _OPTIONS else "records"
            raise bad_format(f"the {what} array MUST hold Bulk Strings only")
        assert isinstance(arg, int)
        if self._index == _OPTIONS:
            what = "option key" if self._key is None else "option value"
            check_bulk_length(arg, MAX_OPTION_SIZE, what, ErrorCode.BAD_FORMAT)
        else:
            limits = self.limits
            if arg == 0:
                raise bad_format("invalid record bulk string: $<length> MUST be >= 1")
            if arg > limits.max_record_size:
                raise Malformed(
                    ErrorCode.LIMITS,
                    f"individual record too large: {arg} bytes (limit {limits.max_record_size})",
                )
            self._aggregate += arg
            if self._aggregate > limits.max_append_size:
                raise Malformed(
                    ErrorCode.LIMITS,
                    f"aggregate of records in APPEND too large (limit {limits.max_append_size})",
                )
        self._bulk = arg

    # -- building typed commands ------------------------------------------------------------

    def _build(self) -> Request:
        return build_request(
            self._name, self._stream, self._options, tuple(self._records), self.limits, self.rules
        )
