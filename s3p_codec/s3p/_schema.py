"""The request schema (spec section 8) shared by both ways through a command: names, arity,
options; and READ's lower bound, shared by the reader and the writer of replies.

``_readers.CommandParser`` reads a command element by element; ``_readers.scan_command`` reads
whole buffered commands in one go. Both end in ``build_request``, so option values are checked
by one piece of code ("invalid option value (e.g., bad timestamp format, non-numeric COUNT or
BLOCK)", COUNT and BLOCK against the configured limits) whichever way the command was read.
``floor_of`` is the bound READ's records must be above, which the client's reply reader
(``_replies``) and the server's reply writer (``_writers``) both enforce.
"""

from __future__ import annotations

from s3p_codec.s3p._events import (
    MAX_U64,
    Append,
    Create,
    Delete,
    ErrorCode,
    Read,
    Request,
    Timestamp,
    TimestampStrategy,
    Trim,
    parse_timestamp,
)
from s3p_codec.s3p._limits import Limits
from s3p_codec.s3p._version import RULES, Rules, Version
from s3p_codec.s3p._wire import Malformed, bad_format

__all__ = [
    "ARITY",
    "COMMAND_NAMES",
    "KNOWN_OPTIONS",
    "build_request",
    "default_floor",
    "floor_of",
    "quote",
]

#: The five command names, as they appear on the wire.
COMMAND_NAMES = (b"CREATE", b"APPEND", b"READ", b"TRIM", b"DELETE")
ARITY = {b"CREATE": 3, b"APPEND": 4, b"READ": 3, b"TRIM": 3, b"DELETE": 3}
"""Elements of each command's top-level array (v0.1.0 also accepts a 2-element DELETE)."""
KNOWN_OPTIONS: dict[bytes, tuple[bytes, ...]] = RULES[Version.V0_1_0].options
"""v0.1.0's option keys, upper case ("Unknown option keys MUST be rejected"); see ``Rules``."""
_V010 = RULES[Version.V0_1_0]
_ZERO = Timestamp(0, 0)
_BELOW_ZERO = tuple.__new__(Timestamp, (-1, 0))
"""Below every ID: the exclusive bound that makes v0.2.0's inclusive ``0-0`` default work."""


def quote(raw: bytes) -> str:
    """Peer bytes quoted in an Error message, which holds printable ASCII only."""
    return "".join(chr(byte) if 0x20 <= byte <= 0x7E else f"\\x{byte:02x}" for byte in raw)


def build_request(  # noqa: PLR0917 - a hot path: no keyword-argument overhead
    name: bytes,
    stream: bytes,
    options: dict[bytes, bytes],
    records: tuple[bytes, ...],
    limits: Limits,
    rules: Rules = _V010,
) -> Request:
    """The typed request, once its elements are read; raises Malformed for a bad option value.

    ``options`` holds the value that won for each key ("the last occurrence's value MUST be
    used") among the keys ``rules`` knows; ``records`` is empty except for APPEND.
    """
    if name == b"APPEND":
        raw = options.get(b"TIMESTAMP")
        stamp = None if raw is None else _timestamp_option(b"TIMESTAMP", raw)
        raw = options.get(b"ID")
        if raw is None:
            return Append(stream, records, stamp)
        return Append(stream, records, stamp, _u64_option(b"ID", raw))
    if name == b"READ":
        count = block = None
        if b"COUNT" in options:
            count = _number_option(b"COUNT", options[b"COUNT"], rules)
            if count == 0:
                raise Malformed(rules.count_zero_code, "COUNT must be in [1, max]; got 0")
            if count > limits.max_count:
                raise Malformed(
                    ErrorCode.LIMITS,
                    f"COUNT greater than server configured limit ({limits.max_count})",
                )
        if b"BLOCK" in options:
            block = _number_option(b"BLOCK", options[b"BLOCK"], rules)
            if block > limits.max_block_ms:
                raise Malformed(
                    ErrorCode.LIMITS,
                    f"BLOCK greater than server configured limit ({limits.max_block_ms})",
                )
        raw = options.get(b"MIN_TIMESTAMP")
        after = None if raw is None else _timestamp_option(b"MIN_TIMESTAMP", raw)
        raw = options.get(b"MIN_ID")
        if raw is None:
            return Read(stream, count, block, after)
        return Read(stream, count, block, after, _timestamp_option(b"MIN_ID", raw))
    if name == b"CREATE":
        raw = options.get(b"TIMESTAMP_STRATEGY")
        strategy = None
        if raw is not None:
            try:
                strategy = TimestampStrategy(raw.lower().decode("ascii"))
            except (UnicodeDecodeError, ValueError):
                raise bad_format(f"invalid TIMESTAMP_STRATEGY value {quote(raw)}") from None
        return Create(stream, strategy)
    if name == b"TRIM":
        raw = options.get(b"UNTIL")
        until = None if raw is None else _timestamp_option(b"UNTIL", raw)
        raw = options.get(b"MIN_ID")
        min_id = None if raw is None else _timestamp_option(b"MIN_ID", raw)
        if until is None and min_id is None:
            required = " or ".join(key.decode() for key in rules.options[b"TRIM"])
            raise bad_format(f"TRIM requires the {required} option")
        return Trim(stream, until, min_id)
    return Delete(stream)


def _timestamp_option(key: bytes, raw: bytes) -> Timestamp:
    stamp = parse_timestamp(raw)
    if stamp is None:
        raise bad_format(f"invalid {key.decode()} value {quote(raw)}: bad timestamp format")
    return stamp


def _u64_option(key: bytes, raw: bytes) -> int:
    """v0.2.0's APPEND ``ID``: the ``<ms>`` part alone, an unsigned 64-bit decimal."""
    if not raw.isdigit() or int(raw) > MAX_U64:
        raise bad_format(
            f"invalid {key.decode()} value {quote(raw)}: an unsigned 64-bit <ms> is expected"
        )
    return int(raw)


def _number_option(key: bytes, raw: bytes, rules: Rules) -> int:
    if not raw.isdigit():
        if rules.version is Version.V0_2_0 and raw[:1] == b"-" and raw[1:].isdigit():
            # v0.2.0: "COUNT < 1 and BLOCK < 0 are ERR_LIMITS"; a negative number is one.
            raise Malformed(ErrorCode.LIMITS, f"{key.decode()} {quote(raw)} is below its range")
        raise bad_format(f"invalid {key.decode()} value {quote(raw)}: not a decimal number")
    return int(raw)


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
