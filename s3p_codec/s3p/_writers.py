"""Writing (spec sections 4, 7 and 8): what a Connection sends, requests for a client and
replies for a server, each checked against the spec, the limits and the version first.

Plan. ``validate_request`` / ``validate_reply`` (and ``validate_error``) check values a user
built, raising ``LocalProtocolError`` before a byte is written; ``encode_request`` /
``encode_reply`` then write them. Values received from a peer are checked by the readers
(``_readers``, ``_replies``, ``_schema.build_request``) and refused with ``Malformed``: the two
directions check the same rules on different inputs (typed fields here, wire bytes there) and
word their errors for whoever is at fault. READ's lower bound (``_schema.floor_of``) is the one
rule both sides need in the same form, and it lives in the schema.

Requests are written in one fixed form (command names upper-case, options in a fixed order,
options left out when None); a field of the other S3P version must be left None
(``_check_version``), so what is sent is always a command of the configured version.
"""

from __future__ import annotations

from collections.abc import Callable

from s3p_codec._core import LocalProtocolError
from s3p_codec.s3p._events import (
    MAX_U64,
    Append,
    AppendReply,
    Create,
    Delete,
    ErrorCode,
    ErrorReply,
    Ok,
    Read,
    ReadReply,
    Reply,
    Request,
    Timestamp,
    TimestampStrategy,
    Trim,
)
from s3p_codec.s3p._limits import Limits
from s3p_codec.s3p._schema import default_floor, floor_of
from s3p_codec.s3p._version import RULES, Rules, Version
from s3p_codec.s3p._wire import encode_bulk, is_text

__all__ = ["encode_reply", "encode_request", "validate_error", "validate_reply", "validate_request"]

_V010 = RULES[Version.V0_1_0]


def _fail(message: str, code: ErrorCode = ErrorCode.BAD_FORMAT) -> LocalProtocolError:
    return LocalProtocolError(message, code=code)


# --- Requests ---------------------------------------------------------------------------------


def _check_stream(stream: object, limits: Limits) -> None:
    if not isinstance(stream, bytes):
        raise _fail(f"stream names are bytes, got {type(stream).__name__}")
    if not 1 <= len(stream) <= limits.max_stream_name:
        raise _fail(f"stream name length {len(stream)} not in range [1, {limits.max_stream_name}]")


def _check_timestamp(stamp: object, what: str) -> Timestamp:
    if not isinstance(stamp, Timestamp) or not stamp.is_valid:
        raise _fail(f"{what} must be a Timestamp of two unsigned 64-bit ints, got {stamp!r}")
    return stamp


def _check_append(event: Append, limits: Limits, rules: Rules) -> None:
    records = event.records
    if not isinstance(records, tuple) or not records:
        raise _fail(
            "records MUST contain at least 1 element: a non-empty sequence of bytes values, "
            f"such as (b'hello',), got {records!r:.40}"
        )
    if len(records) > limits.max_records_per_append:
        raise _fail(
            f"too many records: {len(records)} (limit {limits.max_records_per_append})",
            ErrorCode.LIMITS,
        )
    total = 0
    for record in records:
        if not isinstance(record, bytes) or not record:
            raise _fail("each record MUST be a non-empty bytes value ($0 is not allowed)")
        if len(record) > limits.max_record_size:
            raise _fail(
                f"record of {len(record)} bytes exceeds {limits.max_record_size}",
                ErrorCode.LIMITS,
            )
        total += len(record)
    if total > limits.max_append_size:
        raise _fail(f"APPEND of {total} bytes exceeds {limits.max_append_size}", ErrorCode.LIMITS)
    if event.timestamp is not None:
        _check_timestamp(event.timestamp, "timestamp")
    if event.id is not None:
        ms = event.id
        if type(ms) is not int or not 0 <= ms <= MAX_U64:
            raise _fail(f"id must be an unsigned 64-bit int (the <ms> of the ID), got {ms!r}")


def _check_read(event: Read, limits: Limits, rules: Rules) -> None:
    count, block = event.count, event.block_ms
    if count is not None:
        if type(count) is not int:
            raise _fail(f"COUNT must be an int in [1, {limits.max_count}], got {count!r}")
        if count < 1:  # v0.2.0: "COUNT < 1 is ERR_LIMITS"
            code = rules.count_zero_code
            raise _fail(f"COUNT must be in [1, {limits.max_count}], got {count}", code)
        if count > limits.max_count:
            raise _fail(f"COUNT {count} exceeds {limits.max_count}", ErrorCode.LIMITS)
    if block is not None:
        if type(block) is not int:
            raise _fail(f"BLOCK must be a non-negative int, got {block!r}")
        if block < 0:  # v0.2.0: "BLOCK < 0 is ERR_LIMITS"
            raise _fail(f"BLOCK must be non-negative, got {block}", rules.count_zero_code)
        if block > limits.max_block_ms:
            raise _fail(f"BLOCK {block} exceeds {limits.max_block_ms}", ErrorCode.LIMITS)
    if event.min_timestamp is not None:
        _check_timestamp(event.min_timestamp, "min_timestamp")
    if event.min_id is not None:
        _check_timestamp(event.min_id, "min_id")


_FIELD_OPTIONS = {
    (Create, "timestamp_strategy"): b"TIMESTAMP_STRATEGY",
    (Append, "timestamp"): b"TIMESTAMP",
    (Append, "id"): b"ID",
    (Read, "min_timestamp"): b"MIN_TIMESTAMP",
    (Read, "min_id"): b"MIN_ID",
    (Trim, "until"): b"UNTIL",
    (Trim, "min_id"): b"MIN_ID",
}
"""The fields that only one version has, and the option each one becomes."""


_foreign: dict[tuple[Version | None, type], tuple[tuple[str, bytes], ...]] = {}
"""Per (version, request type), the fields to check: derived once from the version's options,
so a send looks at only the few fields the other version has."""


def _check_version(event: Request, rules: Rules) -> None:
    """A field whose option the configured version does not define must be None."""
    kind = type(event)
    key = (rules.version, kind)
    foreign = _foreign.get(key)
    if foreign is None:
        known = rules.options[kind.__name__.upper().encode()]
        foreign = tuple(
            (field, option)
            for (owner, field), option in _FIELD_OPTIONS.items()
            if owner is kind and option not in known
        )
        _foreign[key] = foreign
    for field, option in foreign:
        if getattr(event, field) is not None:
            raise _fail(
                f"{kind.__name__}.{field} is not part of S3P v{rules.version}"
                f" (it has no {option.decode()} option)"
            )


def validate_request(event: Request, limits: Limits, rules: Rules = _V010) -> None:
    """Raise ``LocalProtocolError`` if a user-built request breaks the spec or the limits.

    ``rules`` is the version's: a field of the other version must be left None.
    """
    _check_stream(event.stream, limits)
    if type(event) is not Delete:  # DELETE has no options in either version
        _check_version(event, rules)
    if isinstance(event, Append):
        _check_append(event, limits, rules)
    elif isinstance(event, Read):
        _check_read(event, limits, rules)
    elif isinstance(event, Trim):
        # TRIM needs its one bound, which each version names differently.
        bound = event.until if rules.version is Version.V0_1_0 else event.min_id
        _check_timestamp(bound, "until" if rules.version is Version.V0_1_0 else "min_id")
    elif isinstance(event, Create):
        strategy = event.timestamp_strategy
        if strategy is not None and not isinstance(strategy, TimestampStrategy):
            raise _fail(f"timestamp_strategy must be a TimestampStrategy, got {strategy!r}")


def _options(*pairs: tuple[bytes, bytes | None]) -> bytes:
    """The options array of the pairs whose value is not None, in the order given (one fixed
    order per command, so equal requests encode to equal bytes)."""
    present = [(key, value) for key, value in pairs if value is not None]
    out = [b"*%d\r\n" % (2 * len(present))]
    for key, value in present:
        out.append(encode_bulk(key))
        out.append(encode_bulk(value))
    return b"".join(out)


def _encode_append(event: Append) -> bytes:
    stamp = None if event.timestamp is None else bytes(event.timestamp)
    head = b"*4\r\n$6\r\nAPPEND\r\n" + encode_bulk(event.stream)
    if event.id is None:
        options = _options((b"TIMESTAMP", stamp))
    else:
        options = _options((b"TIMESTAMP", stamp), (b"ID", b"%d" % event.id))
    parts = [head, options, b"*%d\r\n" % len(event.records)]
    parts.extend(b"$%d\r\n%s\r\n" % (len(record), record) for record in event.records)
    return b"".join(parts)


def _encode_read(event: Read) -> bytes:
    count = None if event.count is None else b"%d" % event.count
    block = None if event.block_ms is None else b"%d" % event.block_ms
    after = None if event.min_timestamp is None else bytes(event.min_timestamp)
    start = None if event.min_id is None else bytes(event.min_id)
    options = _options(
        (b"COUNT", count), (b"BLOCK", block), (b"MIN_TIMESTAMP", after), (b"MIN_ID", start)
    )
    return b"*3\r\n$4\r\nREAD\r\n" + encode_bulk(event.stream) + options


def _encode_create(event: Create) -> bytes:
    strategy = event.timestamp_strategy
    value = None if strategy is None else strategy.value.encode()
    options = _options((b"TIMESTAMP_STRATEGY", value))
    return b"*3\r\n$6\r\nCREATE\r\n" + encode_bulk(event.stream) + options


def _encode_trim(event: Trim) -> bytes:
    until = None if event.until is None else bytes(event.until)
    start = None if event.min_id is None else bytes(event.min_id)
    options = _options((b"UNTIL", until), (b"MIN_ID", start))
    return b"*3\r\n$4\r\nTRIM\r\n" + encode_bulk(event.stream) + options


def _encode_delete(event: Delete) -> bytes:
    return b"*3\r\n$6\r\nDELETE\r\n" + encode_bulk(event.stream) + b"*0\r\n"


_ENCODERS: dict[type, Callable[[Request], bytes]] = {
    Append: _encode_append,  # type: ignore[dict-item]
    Read: _encode_read,  # type: ignore[dict-item]
    Create: _encode_create,  # type: ignore[dict-item]
    Trim: _encode_trim,  # type: ignore[dict-item]
    Delete: _encode_delete,  # type: ignore[dict-item]
}


def encode_request(
    event: Request, limits: Limits, *, validate: bool = True, rules: Rules = _V010
) -> bytes:
    """The wire bytes of a request (command names upper-case, options in a fixed order)."""
    encoder = _ENCODERS.get(type(event))
    if encoder is None:
        raise _fail(f"not an S3P request: {event!r}")
    if validate:
        validate_request(event, limits, rules)
    return encoder(event)


# --- Replies ----------------------------------------------------------------------------------


def _check_read_reply(reply: ReadReply, request: Read, limits: Limits, rules: Rules) -> None:
    records = reply.records
    if not isinstance(records, tuple):
        raise _fail(
            "ReadReply.records must be a sequence of (Timestamp, bytes) pairs, "
            f"got {type(records).__name__}"
        )
    # A server answering a READ without COUNT returns at most its own default; a client reading
    # one (``_replies``) allows up to ``max_count``, since the server's default is not its own.
    limit = request.count if request.count is not None else limits.default_count
    if len(records) > limit:
        raise _fail(f"READ returns up to COUNT records: {len(records)} > {limit}")
    prev = floor_of(request, default_floor(rules))  # the same bound the client's reader applies
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
