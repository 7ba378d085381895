"""The request schema (spec section 8) shared by both command parsers: names, arity, options.

``commands.CommandParser`` reads a command element by element; ``fast_commands`` reads whole
buffered commands in one go. Both end in ``build_request``, so option values are checked by one
piece of code ("invalid option value (e.g., bad timestamp format, non-numeric COUNT or BLOCK)",
COUNT and BLOCK against the configured limits) whichever parser read the command.
"""

from __future__ import annotations

from s3p_codec.s3p.events import (
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
from s3p_codec.s3p.limits import Limits
from s3p_codec.s3p.wire import Malformed, bad_format

__all__ = ["ARITY", "COMMAND_NAMES", "KNOWN_OPTIONS", "build_request", "quote"]

#: The five command names, as they appear on the wire.
COMMAND_NAMES = (b"CREATE", b"APPEND", b"READ", b"TRIM", b"DELETE")
ARITY = {b"CREATE": 3, b"APPEND": 4, b"READ": 3, b"TRIM": 3, b"DELETE": 3}
"""Elements of each command's top-level array (a 2-element DELETE is also accepted)."""
KNOWN_OPTIONS: dict[bytes, tuple[bytes, ...]] = {
    b"CREATE": (b"TIMESTAMP_STRATEGY",),
    b"APPEND": (b"TIMESTAMP",),
    b"READ": (b"COUNT", b"BLOCK", b"MIN_TIMESTAMP"),
    b"TRIM": (b"UNTIL",),
    b"DELETE": (),
}
"""Option keys, upper case ("Unknown option keys MUST be rejected")."""


def quote(raw: bytes) -> str:
    """Peer bytes quoted in an Error message, which holds printable ASCII only."""
    return "".join(chr(byte) if 0x20 <= byte <= 0x7E else f"\\x{byte:02x}" for byte in raw)


def build_request(
    name: bytes,
    stream: bytes,
    options: dict[bytes, bytes],
    records: tuple[bytes, ...],
    limits: Limits,
) -> Request:
    """The typed request, once its elements are read; raises Malformed for a bad option value.

    ``options`` holds the value that won for each key ("the last occurrence's value MUST be
    used"); ``records`` is empty except for APPEND.
    """
    if name == b"APPEND":
        raw = options.get(b"TIMESTAMP")
        stamp = None if raw is None else _timestamp_option(b"TIMESTAMP", raw)
        return Append(stream, records, stamp)
    if name == b"READ":
        count = block = None
        if b"COUNT" in options:
            count = _number_option(b"COUNT", options[b"COUNT"])
            if count == 0:
                raise bad_format("COUNT must be in [1, max]; got 0")
            if count > limits.max_count:
                raise Malformed(
                    ErrorCode.LIMITS,
                    f"COUNT greater than server configured limit ({limits.max_count})",
                )
        if b"BLOCK" in options:
            block = _number_option(b"BLOCK", options[b"BLOCK"])
            if block > limits.max_block_ms:
                raise Malformed(
                    ErrorCode.LIMITS,
                    f"BLOCK greater than server configured limit ({limits.max_block_ms})",
                )
        raw = options.get(b"MIN_TIMESTAMP")
        after = None if raw is None else _timestamp_option(b"MIN_TIMESTAMP", raw)
        return Read(stream, count, block, after)
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
        if raw is None:
            raise bad_format("TRIM requires the UNTIL option")
        return Trim(stream, _timestamp_option(b"UNTIL", raw))
    return Delete(stream)


def _timestamp_option(key: bytes, raw: bytes) -> Timestamp:
    stamp = parse_timestamp(raw)
    if stamp is None:
        raise bad_format(f"invalid {key.decode()} value {quote(raw)}: bad timestamp format")
    return stamp


def _number_option(key: bytes, raw: bytes) -> int:
    if not raw.isdigit():
        raise bad_format(f"invalid {key.decode()} value {quote(raw)}: not a decimal number")
    return int(raw)
