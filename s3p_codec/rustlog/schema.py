"""The fields of every message: JSON object -> event (checked), event -> JSON object (checked).

The rules, in the spec's words where it has them (and the decisions recorded in docs/decisions.rst):

- Integers typed "u16", "u32", "u64" or "usize" are JSON integers within that range: not floats,
  not bools, not strings. ``usize`` is read as u64 (the width of the broker's platform).
- "Topic name (1-255 characters, alphanumeric + underscore/hyphen)": ``[A-Za-z0-9_-]{1,255}``,
  ASCII only, so a topic in any other script is an invalid request. Group names are any string.
- "records: Array of Base64-encoded record payloads": standard alphabet, with padding; nothing
  else is allowed in a string (no whitespace, no line breaks). Unused trailing bits are not
  checked, as in Python's decoder: the decoded bytes are what count.
- "Records array ≤ 1000 elements per batch" (400) and "Each record ≤ 10MB after Base64 decoding"
  (413), with the bounds of ``Limits``.
- "Partition count: 1-1000 partitions".
- FetchResponse: "Records in offset order (monotonic)" (strictly increasing: offsets are unique)
  and "`next_offset` = last record offset + 1" when there are records.
- Unknown fields are ignored: "Add optional fields to existing messages" is a "Backward compatible
  change". A field typed ``T | null`` (OffsetFetchResponse.offset, Error.details) may be absent,
  and then reads as null, as serde reads an absent ``Option``.

Schemas the spec leaves out, decided here (and in the package docstring):

- ``{"type":"DescribePartition","topic":str,"partition":u32}`` answered by
  ``{"type":"DescribePartitionResponse","topic":str,"partition":u32,"high_watermark":u64,
  "log_start_offset":u64,"segment_count":usize}`` (one entry of DescribeTopicResponse, named).
- ``{"type":"MetricsFetchResponse","metrics":{...}}``: one free-form JSON object under
  ``metrics``, so the message keeps the evolution rule (extra top-level fields are ignored) and a
  metric can never collide with ``type``.

Free-form JSON (metrics, details) may hold null, bools, strings, finite floats, integers in
[-2**63, 2**64-1], arrays and objects; anything else cannot be written by every peer.
"""

from __future__ import annotations

import math
import re
from binascii import a2b_base64, b2a_base64
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from s3p_codec._core import LocalProtocolError
from s3p_codec.rustlog.events import (
    CreateTopic,
    CreateTopicResponse,
    DescribePartition,
    DescribePartitionResponse,
    DescribeTopic,
    DescribeTopicResponse,
    Error,
    ErrorCode,
    Event,
    Fetch,
    FetchResponse,
    JsonObject,
    JsonValue,
    ListTopics,
    ListTopicsResponse,
    MetricsFetch,
    MetricsFetchResponse,
    OffsetCommit,
    OffsetCommitResponse,
    OffsetFetch,
    OffsetFetchResponse,
    PartitionInfo,
    Ping,
    Pong,
    Produce,
    ProduceResponse,
    Record,
    Request,
    Response,
    TopicInfo,
    trusted,
)
from s3p_codec.rustlog.json_backend import too_deep
from s3p_codec.rustlog.limits import (
    MAX_JSON_DEPTH,
    MAX_PARTITION_COUNT,
    U16_MAX,
    U32_MAX,
    U64_MAX,
    Limits,
)

__all__ = [
    "KNOWN_FIELDS",
    "OPTIONAL_FIELDS",
    "REQUEST_DECODERS",
    "REQUEST_TABLE",
    "RESPONSE_DECODERS",
    "RESPONSE_TABLE",
    "AmbiguousNumber",
    "Context",
    "FieldError",
    "TooDeep",
    "DecoderEntry",
    "check_extras",
    "encode",
]

I64_MIN: Final = -(1 << 63)
INVALID: Final = ErrorCode.INVALID_REQUEST
TOO_LARGE: Final = ErrorCode.RECORD_TOO_LARGE


class FieldError(Exception):
    """A well-framed message with a bad field: recoverable, answered by an Error response."""

    def __init__(self, message: str, code: ErrorCode = INVALID) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class AmbiguousNumber(Exception):
    """A free-form float that may have been an integer beyond 64 bits (orjson); decode again."""


class TooDeep(Exception):
    """The payload nests deeper than ``MAX_JSON_DEPTH``: malformed, hence fatal."""


def check_extras(obj: dict[str, Any], known: frozenset[str], level: int) -> None:
    """Raise ``TooDeep`` if a field of ``obj`` (at nesting ``level``) not in ``known`` is too deep.

    Known fields are checked by their decoders, whose shapes are shallow; unknown fields are
    ignored, but must not nest beyond what both JSON backends can parse alike.
    """
    for key, value in obj.items():
        container = type(value) is dict or type(value) is list
        if container and key not in known and too_deep(value, MAX_JSON_DEPTH - level):
            raise TooDeep


@attrs.frozen(slots=True)
class Context:
    """What field decoding needs to know besides the object."""

    limits: Limits
    exact_integers: bool = True
    check_record_size: bool = attrs.field(init=False)
    max_records: int = attrs.field(init=False)

    @max_records.default
    def _max_records(self) -> int:
        return self.limits.max_records_per_produce

    @check_record_size.default
    def _check_record_size(self) -> bool:
        # A record decoded from a frame is smaller than the frame: skip a check that cannot fail.
        return self.limits.max_record_size < self.limits.max_frame_size


_MISSING: Final[Any] = object()
_topic_match = re.compile(r"[A-Za-z0-9_-]{1,255}").fullmatch

_TOPICS_SEEN: Final[set[str]] = set()
"""Topic names that have already passed ``_topic_match``: a set lookup costs a fifth of the
regular expression, and a connection sees the same few names over and over. Only names that
passed are kept, so the rule is unchanged; the set is emptied when it reaches
``_TOPICS_SEEN_MAX`` names, so memory stays bounded whatever the peers send."""
_TOPICS_SEEN_MAX: Final = 1024


def _new_topic(value: str) -> bool:
    """``_topic_match`` for a name not seen yet (a str), remembering it if it passes."""
    if _topic_match(value) is None:
        return False
    if len(_TOPICS_SEEN) >= _TOPICS_SEEN_MAX:
        _TOPICS_SEEN.clear()
    _TOPICS_SEEN.add(value)
    return True


def _strict_b64(text: str) -> bytes:
    return a2b_base64(text, strict_mode=True)


# --- field checkers -------------------------------------------------------------------------


def _missing(key: str) -> FieldError:
    return FieldError(f"missing field {key!r}")


def _uint(obj: dict[str, Any], key: str, maximum: int, kind: str) -> int:
    value = obj.get(key, _MISSING)
    if type(value) is int and 0 <= value <= maximum:
        return value
    if value is _MISSING:
        raise _missing(key)
    raise FieldError(f"field {key!r} must be a {kind}: an integer from 0 to {maximum}")


def _u32(obj: dict[str, Any], key: str) -> int:
    return _uint(obj, key, U32_MAX, "u32")


def _u64(obj: dict[str, Any], key: str) -> int:
    return _uint(obj, key, U64_MAX, "u64")


def _bool(obj: dict[str, Any], key: str) -> bool:
    value = obj.get(key, _MISSING)
    if type(value) is bool:
        return value
    if value is _MISSING:
        raise _missing(key)
    raise FieldError(f"field {key!r} must be a JSON boolean")


def _valid_text(value: str) -> bool:
    # A JSON escape can smuggle in a lone surrogate, which no UTF-8 peer can write back.
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _string(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key, _MISSING)
    if type(value) is str and _valid_text(value):
        return value
    if value is _MISSING:
        raise _missing(key)
    raise FieldError(f"field {key!r} must be a string of Unicode characters")


def _topic_value(value: object, key: str) -> str:
    if type(value) is str and (value in _TOPICS_SEEN or _new_topic(value)):
        return value
    if value is _MISSING:
        raise _missing(key)
    raise FieldError(
        f"field {key!r} must be a topic name: 1-255 characters, alphanumeric + underscore/hyphen"
    )


def _topic(obj: dict[str, Any], key: str = "topic") -> str:
    return _topic_value(obj.get(key, _MISSING), key)


def _array(obj: dict[str, Any], key: str) -> list[Any]:
    value = obj.get(key, _MISSING)
    if type(value) is list:
        return value
    if value is _MISSING:
        raise _missing(key)
    raise FieldError(f"field {key!r} must be an array")


def _element(value: object, key: str, index: int) -> dict[str, Any]:
    if type(value) is not dict:
        raise FieldError(f"{key}[{index}] must be an object")
    return value


def _freeze(value: object, ctx: Context, where: str, depth: int) -> JsonValue:
    """Check and freeze a free-form JSON value received from the peer."""
    kind = type(value)
    if value is None or kind is bool or (kind is str and _valid_text(value)):  # type: ignore[arg-type]
        return value  # type: ignore[return-value]
    if kind is int:
        if I64_MIN <= value <= U64_MAX:  # type: ignore[operator]
            return value  # type: ignore[return-value]
        raise FieldError(f"{where}: integers must fit in 64 bits")
    if kind is float:
        if not math.isfinite(value):  # type: ignore[arg-type]
            raise FieldError(f"{where}: numbers must be finite")
        if not ctx.exact_integers and abs(value) >= 2.0**63:  # type: ignore[arg-type]
            raise AmbiguousNumber
        return value  # type: ignore[return-value]
    if depth > MAX_JSON_DEPTH:
        raise TooDeep
    if kind is list:
        return tuple([_freeze(item, ctx, where, depth + 1) for item in value])  # type: ignore[attr-defined]
    if kind is dict:
        items: dict[str, JsonValue] = {}
        for key, item in value.items():  # type: ignore[attr-defined]
            if not _valid_text(key):
                raise FieldError(f"{where}: keys must be strings of Unicode characters")
            items[key] = _freeze(item, ctx, where, depth + 1)
        return JsonObject._trusted(items)
    raise FieldError(f"{where}: strings must be Unicode characters")


def _object(obj: dict[str, Any], key: str, ctx: Context, *, optional: bool) -> JsonObject | None:
    value = obj.get(key, _MISSING)
    if value is _MISSING or (value is None and optional):
        if optional:
            return None
        raise _missing(key)
    if type(value) is not dict:
        raise FieldError(f"field {key!r} must be a JSON object" + (" or null" if optional else ""))
    frozen = _freeze(value, ctx, f"field {key!r}", 2)
    assert isinstance(frozen, JsonObject)
    return frozen


# --- the fields each message knows (the others are ignored) --------------------------------

_RECORD_FIELDS: Final = frozenset({"offset", "timestamp", "payload"})
_TOPIC_FIELDS: Final = frozenset({"name", "partition_count"})
_PARTITION_FIELDS: Final = frozenset(
    {"partition", "high_watermark", "log_start_offset", "segment_count"}
)
KNOWN_FIELDS: Final[dict[str, frozenset[str]]] = {
    name: frozenset({"type", *fields})
    for name, fields in {
        "Produce": ("topic", "partition", "records"),
        "Fetch": ("group_id", "topic", "partition", "offset", "max_bytes"),
        "OffsetCommit": ("group", "topic", "partition", "offset"),
        "OffsetFetch": ("group", "topic", "partition"),
        "CreateTopic": ("topic", "partition_count"),
        "ListTopics": (),
        "DescribeTopic": ("topic",),
        "DescribePartition": ("topic", "partition"),
        "MetricsFetch": (),
        "Ping": (),
        "ProduceResponse": ("base_offset", "record_count"),
        "FetchResponse": ("records", "next_offset"),
        "OffsetCommitResponse": ("success",),
        "OffsetFetchResponse": ("offset",),
        "CreateTopicResponse": ("success", "partitions_created"),
        "ListTopicsResponse": ("topics",),
        "DescribeTopicResponse": ("topic", "partitions"),
        "DescribePartitionResponse": ("topic", *_PARTITION_FIELDS),
        "MetricsFetchResponse": ("metrics",),
        "Pong": (),
        "Error": ("code", "message", "details"),
    }.items()
}
"""Every field a message type defines, ``type`` included."""
OPTIONAL_FIELDS: Final = frozenset({"Error", "OffsetFetchResponse"})
"""Types with a field that may be absent: their field count says nothing about extras."""


# --- requests -------------------------------------------------------------------------------


# Parser-built events skip attrs' __init__: their values are checked and exact already.
_new_produce = trusted(Produce)
_new_fetch = trusted(Fetch)
_new_offset_commit = trusted(OffsetCommit)
_new_offset_fetch = trusted(OffsetFetch)
_new_create_topic = trusted(CreateTopic)
_new_describe_topic = trusted(DescribeTopic)
_new_describe_partition = trusted(DescribePartition)
_new_produce_response = trusted(ProduceResponse)
_new_fetch_response = trusted(FetchResponse)
_new_offset_commit_response = trusted(OffsetCommitResponse)
_new_offset_fetch_response = trusted(OffsetFetchResponse)
_new_create_topic_response = trusted(CreateTopicResponse)
_new_list_topics_response = trusted(ListTopicsResponse)
_new_describe_topic_response = trusted(DescribeTopicResponse)
_new_describe_partition_response = trusted(DescribePartitionResponse)
_new_metrics_fetch_response = trusted(MetricsFetchResponse)
_new_error = trusted(Error)


def _produce(obj: dict[str, Any], ctx: Context) -> Produce:
    topic = obj.get("topic")
    partition = obj.get("partition")
    records = obj.get("records")
    if not (
        topic.__class__ is str
        and (topic in _TOPICS_SEEN or _new_topic(topic))
        and partition.__class__ is int
        and 0 <= partition <= U32_MAX
        and records.__class__ is list
    ):  # the field checkers name the culprit
        topic = _topic(obj)
        partition = _u32(obj, "partition")
        records = _array(obj, "records")
    if len(records) > ctx.max_records:
        raise FieldError(
            f"Records array ≤ {ctx.max_records} elements per batch: got {len(records)}"
        )
    try:
        decoded = tuple([a2b_base64(record, strict_mode=True) for record in records])
    except (TypeError, ValueError):  # binascii.Error is a ValueError
        raise _explain_base64(records, "records") from None
    if ctx.check_record_size:
        _check_sizes(decoded, ctx.limits.max_record_size, "records")
    return _new_produce(topic, partition, decoded)


def _explain_base64(values: list[Any], key: str) -> FieldError:
    for index, value in enumerate(values):
        if type(value) is not str:
            return FieldError(f"{key}[{index}] must be a base64 string")
        try:
            _strict_b64(value)
        except (TypeError, ValueError) as exc:
            return FieldError(f"{key}[{index}] is not standard padded base64: {exc}")
    return FieldError(f"{key} must hold base64 strings")  # pragma: no cover - defensive


def _check_sizes(payloads: tuple[bytes, ...], limit: int, key: str) -> None:
    for index, payload in enumerate(payloads):
        if len(payload) > limit:
            raise FieldError(
                f"{key}[{index}]: each record ≤ {limit} bytes after Base64 decoding, "
                f"got {len(payload)}",
                TOO_LARGE,
            )


def _fetch(obj: dict[str, Any], _ctx: Context) -> Fetch:
    group = obj.get("group_id")
    topic = obj.get("topic")
    partition = obj.get("partition")
    offset = obj.get("offset")
    max_bytes = obj.get("max_bytes")
    if (
        group.__class__ is str
        and group.isascii()
        and topic.__class__ is str
        and (topic in _TOPICS_SEEN or _new_topic(topic))
        and partition.__class__ is int
        and 0 <= partition <= U32_MAX
        and offset.__class__ is int
        and 0 <= offset <= U64_MAX
        and max_bytes.__class__ is int
        and 0 <= max_bytes <= U64_MAX
    ):
        return _new_fetch(group, topic, partition, offset, max_bytes)
    # Anything unusual (non-ASCII group, a bad field): the field checkers name the culprit.
    return _new_fetch(
        _string(obj, "group_id"),
        _topic(obj),
        _u32(obj, "partition"),
        _u64(obj, "offset"),
        _uint(obj, "max_bytes", U64_MAX, "usize"),
    )


def _offset_commit(obj: dict[str, Any], _ctx: Context) -> OffsetCommit:
    return _new_offset_commit(
        _string(obj, "group"), _topic(obj), _u32(obj, "partition"), _u64(obj, "offset")
    )


def _offset_fetch(obj: dict[str, Any], _ctx: Context) -> OffsetFetch:
    return _new_offset_fetch(_string(obj, "group"), _topic(obj), _u32(obj, "partition"))


def _create_topic(obj: dict[str, Any], _ctx: Context) -> CreateTopic:
    topic = _topic(obj)
    count = obj.get("partition_count", _MISSING)
    if type(count) is int and 1 <= count <= MAX_PARTITION_COUNT:
        return _new_create_topic(topic, count)
    if count is _MISSING:
        raise _missing("partition_count")
    raise FieldError(f"Partition count: 1-{MAX_PARTITION_COUNT} partitions")


def _describe_topic(obj: dict[str, Any], _ctx: Context) -> DescribeTopic:
    return _new_describe_topic(_topic(obj))


def _describe_partition(obj: dict[str, Any], _ctx: Context) -> DescribePartition:
    return _new_describe_partition(_topic(obj), _u32(obj, "partition"))


_LIST_TOPICS = ListTopics()
_METRICS_FETCH = MetricsFetch()
_PING = Ping()
_PONG = Pong()

#: The decoder of each request ``type``: checks the fields and builds the event.
REQUEST_DECODERS: Final[dict[str, Callable[[dict[str, Any], Context], Request]]] = {
    "Produce": _produce,
    "Fetch": _fetch,
    "OffsetCommit": _offset_commit,
    "OffsetFetch": _offset_fetch,
    "CreateTopic": _create_topic,
    "ListTopics": lambda _obj, _ctx: _LIST_TOPICS,
    "DescribeTopic": _describe_topic,
    "DescribePartition": _describe_partition,
    "MetricsFetch": lambda _obj, _ctx: _METRICS_FETCH,
    "Ping": lambda _obj, _ctx: _PING,
}


# --- responses ------------------------------------------------------------------------------


def _produce_response(obj: dict[str, Any], _ctx: Context) -> ProduceResponse:
    return _new_produce_response(
        _u64(obj, "base_offset"), _uint(obj, "record_count", U64_MAX, "usize")
    )


def _fetch_response(obj: dict[str, Any], ctx: Context) -> FetchResponse:
    records = _array(obj, "records")
    next_offset = _u64(obj, "next_offset")
    # The hot path: one pass, no per-field function calls; any surprise goes to the slow path,
    # which finds and names the culprit.
    out: list[Record] = []
    append = out.append
    new = tuple.__new__
    row = Record
    decode = a2b_base64
    integer = int
    u64 = U64_MAX
    previous = -1
    odd: list[dict[str, Any]] = []  # records with fields beyond the three known ones
    try:
        for entry in records:
            if len(entry) != 3:
                odd.append(entry)
            offset = entry["offset"]
            timestamp = entry["timestamp"]
            if (
                offset.__class__ is not integer
                or timestamp.__class__ is not integer
                or not previous < offset <= u64
                or not 0 <= timestamp <= u64
            ):
                raise LookupError
            previous = offset
            append(new(row, (offset, timestamp, decode(entry["payload"], strict_mode=True))))
    except (LookupError, TypeError, ValueError):
        raise _explain_records(records) from None
    for entry in odd:
        check_extras(entry, _RECORD_FIELDS, 3)
    if out and next_offset != previous + 1:
        raise FieldError(
            f"`next_offset` = last record offset + 1: expected {previous + 1}, got {next_offset}"
        )
    if ctx.check_record_size:
        _check_sizes(tuple(record.payload for record in out), ctx.limits.max_record_size, "records")
    return _new_fetch_response(tuple(out), next_offset)


def _explain_records(records: list[Any]) -> FieldError:
    previous = -1
    for index, entry in enumerate(records):
        record = _element(entry, "records", index)
        where = f"records[{index}]"
        try:
            offset = _u64(record, "offset")
            _u64(record, "timestamp")
        except FieldError as exc:
            return FieldError(f"{where}: {exc.message}")
        if offset <= previous:
            return FieldError(
                f"{where}: Records in offset order (monotonic): {offset} after {previous}"
            )
        previous = offset
        payload = record.get("payload", _MISSING)
        if payload is _MISSING:
            return FieldError(f"{where}: missing field 'payload'")
        error = _explain_base64([payload], f"{where}.payload")
        if type(payload) is not str:
            return error
        try:
            _strict_b64(payload)
        except (TypeError, ValueError):
            return error
    return FieldError("records must hold record objects")  # pragma: no cover - defensive


def _offset_commit_response(obj: dict[str, Any], _ctx: Context) -> OffsetCommitResponse:
    return _new_offset_commit_response(_bool(obj, "success"))


def _offset_fetch_response(obj: dict[str, Any], _ctx: Context) -> OffsetFetchResponse:
    if obj.get("offset") is None:
        return _new_offset_fetch_response(None)
    return _new_offset_fetch_response(_uint(obj, "offset", U64_MAX, "u64 or null"))


def _create_topic_response(obj: dict[str, Any], _ctx: Context) -> CreateTopicResponse:
    return _new_create_topic_response(_bool(obj, "success"), _u32(obj, "partitions_created"))


def _list_topics_response(obj: dict[str, Any], _ctx: Context) -> ListTopicsResponse:
    topics = []
    for index, entry in enumerate(_array(obj, "topics")):
        topic = _element(entry, "topics", index)
        if len(topic) != 2:
            check_extras(topic, _TOPIC_FIELDS, 3)
        try:
            info = TopicInfo(_topic(topic, "name"), _u32(topic, "partition_count"))
        except FieldError as exc:
            raise FieldError(f"topics[{index}]: {exc.message}") from None
        topics.append(info)
    return _new_list_topics_response(tuple(topics))


def _partition_fields(obj: dict[str, Any]) -> tuple[int, int, int, int]:
    return (
        _u32(obj, "partition"),
        _u64(obj, "high_watermark"),
        _u64(obj, "log_start_offset"),
        _uint(obj, "segment_count", U64_MAX, "usize"),
    )


def _describe_topic_response(obj: dict[str, Any], _ctx: Context) -> DescribeTopicResponse:
    topic = _topic(obj)
    partitions = []
    for index, entry in enumerate(_array(obj, "partitions")):
        element = _element(entry, "partitions", index)
        if len(element) != 4:
            check_extras(element, _PARTITION_FIELDS, 3)
        try:
            partitions.append(PartitionInfo(*_partition_fields(element)))
        except FieldError as exc:
            raise FieldError(f"partitions[{index}]: {exc.message}") from None
    return _new_describe_topic_response(topic, tuple(partitions))


def _describe_partition_response(obj: dict[str, Any], _ctx: Context) -> DescribePartitionResponse:
    topic = _topic(obj)
    return _new_describe_partition_response(topic, *_partition_fields(obj))


def _metrics_fetch_response(obj: dict[str, Any], ctx: Context) -> MetricsFetchResponse:
    metrics = _object(obj, "metrics", ctx, optional=False)
    assert metrics is not None
    return _new_metrics_fetch_response(metrics)


_ERROR_CODES: Final[dict[int, ErrorCode]] = {int(code): code for code in ErrorCode}


def _error(obj: dict[str, Any], ctx: Context) -> Error:
    code = _uint(obj, "code", U16_MAX, "u16")
    message = _string(obj, "message")
    details = _object(obj, "details", ctx, optional=True)
    return _new_error(_ERROR_CODES.get(code, code), message, details)


#: The decoder of each response ``type``: checks the fields and builds the event.
RESPONSE_DECODERS: Final[dict[str, Callable[[dict[str, Any], Context], Response]]] = {
    "ProduceResponse": _produce_response,
    "FetchResponse": _fetch_response,
    "OffsetCommitResponse": _offset_commit_response,
    "OffsetFetchResponse": _offset_fetch_response,
    "CreateTopicResponse": _create_topic_response,
    "ListTopicsResponse": _list_topics_response,
    "DescribeTopicResponse": _describe_topic_response,
    "DescribePartitionResponse": _describe_partition_response,
    "MetricsFetchResponse": _metrics_fetch_response,
    "Pong": lambda _obj, _ctx: _PONG,
    "Error": _error,
}


# --- one table per direction, for the frame loop of ``wire`` ---------------------------------

DecoderEntry = tuple[Callable[[dict[str, Any], Context], Any], int, frozenset[str]]
"""(decoder, the field count of a message without extras or -1, the fields it knows)."""


def _table(decoders: Mapping[str, Callable[[dict[str, Any], Context], Any]]) -> dict[str, Any]:
    return {
        name: (
            decoder,
            -1 if name in OPTIONAL_FIELDS else len(KNOWN_FIELDS[name]),
            KNOWN_FIELDS[name],
        )
        for name, decoder in decoders.items()
    }


REQUEST_TABLE: Final[dict[str, DecoderEntry]] = _table(REQUEST_DECODERS)
"""``REQUEST_DECODERS`` with what ``check_extras`` needs, looked up once per frame."""
RESPONSE_TABLE: Final[dict[str, DecoderEntry]] = _table(RESPONSE_DECODERS)
"""``RESPONSE_DECODERS`` with what ``check_extras`` needs, looked up once per frame."""


# --- encoding (events built by users are checked here) --------------------------------------


def _local(message: str, code: ErrorCode = INVALID) -> LocalProtocolError:
    return LocalProtocolError(message, code=code)


def _check_uint(value: object, maximum: int, name: str, kind: str) -> int:
    if type(value) is int and 0 <= value <= maximum:
        return value
    raise _local(f"{name} must be a {kind}: an int from 0 to {maximum}, got {value!r}")


def _check_topic(value: object, name: str = "topic") -> str:
    if type(value) is str and _topic_match(value):
        return value
    raise _local(
        f"{name} must be 1-255 characters, alphanumeric + underscore/hyphen, got {value!r}"
    )


def _check_str(value: object, name: str) -> str:
    if type(value) is str and _valid_text(value):
        return value
    raise _local(f"{name} must be a str of Unicode characters (no lone surrogates)")


def _check_bool(value: object, name: str) -> bool:
    if type(value) is bool:
        return value
    raise _local(f"{name} must be a bool, got {value!r}")


def _check_tuple(value: object, name: str) -> tuple[Any, ...]:
    if type(value) is tuple:
        return value
    raise _local(f"{name} must be a tuple")


def _check_row(value: object, size: int, name: str) -> tuple[Any, ...]:
    if isinstance(value, tuple) and len(value) == size:
        return value
    raise _local(f"{name} must be a {size}-tuple")


def _b64(payload: object, name: str, limits: Limits) -> str:
    if type(payload) is not bytes:
        raise _local(f"{name} must be bytes, got {type(payload).__name__}")
    if len(payload) > limits.max_record_size:
        raise _local(
            f"{name}: each record ≤ {limits.max_record_size} bytes after Base64 decoding, "
            f"got {len(payload)}",
            TOO_LARGE,
        )
    return b2a_base64(payload, newline=False).decode("ascii")


def _thaw(value: object, where: str, depth: int) -> object:
    """Check a free-form value we are about to send, and turn it into plain JSON types."""
    kind = type(value)
    if value is None or kind is bool:
        return value
    if kind is str:
        if _valid_text(value):  # type: ignore[arg-type]
            return value
        raise _local(f"{where}: strings must be Unicode characters (no lone surrogates)")
    if kind is int:
        if I64_MIN <= value <= U64_MAX:  # type: ignore[operator]
            return value
        raise _local(f"{where}: integers must fit in 64 bits, got {value!r}")
    if kind is float:
        if math.isfinite(value):  # type: ignore[arg-type]
            return value
        raise _local(f"{where}: numbers must be finite, got {value!r}")
    if depth >= MAX_JSON_DEPTH:
        raise _local(f"{where}: nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, tuple | list):
        return [_thaw(item, where, depth + 1) for item in value]
    if isinstance(value, Mapping):
        out: dict[str, object] = {}
        for key, item in value.items():
            if type(key) is not str or not _valid_text(key):
                raise _local(f"{where}: keys must be str of Unicode characters, got {key!r}")
            out[key] = _thaw(item, where, depth + 1)
        return out
    raise _local(f"{where}: {type(value).__name__} is not a JSON value")


def _encode_produce(event: Produce, limits: Limits) -> dict[str, object]:
    records = _check_tuple(event.records, "Produce.records")
    if len(records) > limits.max_records_per_produce:
        raise _local(
            f"Records array ≤ {limits.max_records_per_produce} elements per batch: "
            f"got {len(records)}"
        )
    return {
        "type": "Produce",
        "topic": _check_topic(event.topic),
        "partition": _check_uint(event.partition, U32_MAX, "partition", "u32"),
        "records": [_b64(record, f"records[{i}]", limits) for i, record in enumerate(records)],
    }


def _encode_fetch(event: Fetch, _limits: Limits) -> dict[str, object]:
    return {
        "type": "Fetch",
        "group_id": _check_str(event.group_id, "group_id"),
        "topic": _check_topic(event.topic),
        "partition": _check_uint(event.partition, U32_MAX, "partition", "u32"),
        "offset": _check_uint(event.offset, U64_MAX, "offset", "u64"),
        "max_bytes": _check_uint(event.max_bytes, U64_MAX, "max_bytes", "usize"),
    }


def _encode_offset_commit(event: OffsetCommit, _limits: Limits) -> dict[str, object]:
    return {
        "type": "OffsetCommit",
        "group": _check_str(event.group, "group"),
        "topic": _check_topic(event.topic),
        "partition": _check_uint(event.partition, U32_MAX, "partition", "u32"),
        "offset": _check_uint(event.offset, U64_MAX, "offset", "u64"),
    }


def _encode_offset_fetch(event: OffsetFetch, _limits: Limits) -> dict[str, object]:
    return {
        "type": "OffsetFetch",
        "group": _check_str(event.group, "group"),
        "topic": _check_topic(event.topic),
        "partition": _check_uint(event.partition, U32_MAX, "partition", "u32"),
    }


def _encode_create_topic(event: CreateTopic, _limits: Limits) -> dict[str, object]:
    count = event.partition_count
    if type(count) is not int or not 1 <= count <= MAX_PARTITION_COUNT:
        raise _local(f"Partition count: 1-{MAX_PARTITION_COUNT} partitions, got {count!r}")
    return {"type": "CreateTopic", "topic": _check_topic(event.topic), "partition_count": count}


def _encode_describe_topic(event: DescribeTopic, _limits: Limits) -> dict[str, object]:
    return {"type": "DescribeTopic", "topic": _check_topic(event.topic)}


def _encode_describe_partition(event: DescribePartition, _limits: Limits) -> dict[str, object]:
    return {
        "type": "DescribePartition",
        "topic": _check_topic(event.topic),
        "partition": _check_uint(event.partition, U32_MAX, "partition", "u32"),
    }


def _encode_produce_response(event: ProduceResponse, _limits: Limits) -> dict[str, object]:
    return {
        "type": "ProduceResponse",
        "base_offset": _check_uint(event.base_offset, U64_MAX, "base_offset", "u64"),
        "record_count": _check_uint(event.record_count, U64_MAX, "record_count", "usize"),
    }


def _encode_fetch_response(event: FetchResponse, limits: Limits) -> dict[str, object]:
    records = []
    previous = -1
    for index, row in enumerate(_check_tuple(event.records, "FetchResponse.records")):
        offset, timestamp, payload = _check_row(row, 3, f"records[{index}]")
        _check_uint(offset, U64_MAX, f"records[{index}].offset", "u64")
        if offset <= previous:
            raise _local(f"Records in offset order (monotonic): {offset} after {previous}")
        previous = offset
        records.append(
            {
                "offset": offset,
                "timestamp": _check_uint(timestamp, U64_MAX, f"records[{index}].timestamp", "u64"),
                "payload": _b64(payload, f"records[{index}].payload", limits),
            }
        )
    next_offset = _check_uint(event.next_offset, U64_MAX, "next_offset", "u64")
    if records and next_offset != previous + 1:
        raise _local(
            f"`next_offset` = last record offset + 1: expected {previous + 1}, got {next_offset}"
        )
    return {"type": "FetchResponse", "records": records, "next_offset": next_offset}


def _encode_offset_commit_response(
    event: OffsetCommitResponse, _limits: Limits
) -> dict[str, object]:
    return {"type": "OffsetCommitResponse", "success": _check_bool(event.success, "success")}


def _encode_offset_fetch_response(event: OffsetFetchResponse, _limits: Limits) -> dict[str, object]:
    offset = event.offset
    if offset is not None:
        _check_uint(offset, U64_MAX, "offset", "u64 or None")
    return {"type": "OffsetFetchResponse", "offset": offset}


def _encode_create_topic_response(event: CreateTopicResponse, _limits: Limits) -> dict[str, object]:
    return {
        "type": "CreateTopicResponse",
        "success": _check_bool(event.success, "success"),
        "partitions_created": _check_uint(
            event.partitions_created, U32_MAX, "partitions_created", "u32"
        ),
    }


def _encode_list_topics_response(event: ListTopicsResponse, _limits: Limits) -> dict[str, object]:
    topics = []
    for index, row in enumerate(_check_tuple(event.topics, "ListTopicsResponse.topics")):
        name, count = _check_row(row, 2, f"topics[{index}]")
        topics.append(
            {
                "name": _check_topic(name, f"topics[{index}].name"),
                "partition_count": _check_uint(
                    count, U32_MAX, f"topics[{index}].partition_count", "u32"
                ),
            }
        )
    return {"type": "ListTopicsResponse", "topics": topics}


def _partition_dict(row: object, name: str) -> dict[str, object]:
    partition, high, start, segments = _check_row(row, 4, name)
    return {
        "partition": _check_uint(partition, U32_MAX, f"{name}partition", "u32"),
        "high_watermark": _check_uint(high, U64_MAX, f"{name}high_watermark", "u64"),
        "log_start_offset": _check_uint(start, U64_MAX, f"{name}log_start_offset", "u64"),
        "segment_count": _check_uint(segments, U64_MAX, f"{name}segment_count", "usize"),
    }


def _encode_describe_topic_response(
    event: DescribeTopicResponse, _limits: Limits
) -> dict[str, object]:
    rows = _check_tuple(event.partitions, "DescribeTopicResponse.partitions")
    return {
        "type": "DescribeTopicResponse",
        "topic": _check_topic(event.topic),
        "partitions": [_partition_dict(row, f"partitions[{i}].") for i, row in enumerate(rows)],
    }


def _encode_describe_partition_response(
    event: DescribePartitionResponse, _limits: Limits
) -> dict[str, object]:
    fields = _partition_dict(
        (event.partition, event.high_watermark, event.log_start_offset, event.segment_count), ""
    )
    return {"type": "DescribePartitionResponse", "topic": _check_topic(event.topic), **fields}


def _encode_metrics_fetch_response(
    event: MetricsFetchResponse, _limits: Limits
) -> dict[str, object]:
    if not isinstance(event.metrics, Mapping):
        raise _local("metrics must be a JSON object")
    return {"type": "MetricsFetchResponse", "metrics": _thaw(event.metrics, "metrics", 1)}


def _encode_error(event: Error, _limits: Limits) -> dict[str, object]:
    details = event.details
    if details is not None and not isinstance(details, Mapping):
        raise _local("details must be a JSON object or None")
    code = event.code
    if not (type(code) is int or type(code) is ErrorCode) or not 0 <= code <= U16_MAX:
        raise _local(f"code must be an ErrorCode or an int from 0 to {U16_MAX}, got {code!r}")
    return {
        "type": "Error",
        "code": int(code),
        "message": _check_str(event.message, "message"),
        "details": None if details is None else _thaw(details, "details", 1),
    }


def _encode_bare(event: Event, _limits: Limits) -> dict[str, object]:
    return {"type": event.TYPE}


_ENCODERS: Final[dict[type[Any], Callable[[Any, Limits], dict[str, object]]]] = {
    Produce: _encode_produce,
    Fetch: _encode_fetch,
    OffsetCommit: _encode_offset_commit,
    OffsetFetch: _encode_offset_fetch,
    CreateTopic: _encode_create_topic,
    ListTopics: _encode_bare,
    DescribeTopic: _encode_describe_topic,
    DescribePartition: _encode_describe_partition,
    MetricsFetch: _encode_bare,
    Ping: _encode_bare,
    ProduceResponse: _encode_produce_response,
    FetchResponse: _encode_fetch_response,
    OffsetCommitResponse: _encode_offset_commit_response,
    OffsetFetchResponse: _encode_offset_fetch_response,
    CreateTopicResponse: _encode_create_topic_response,
    ListTopicsResponse: _encode_list_topics_response,
    DescribeTopicResponse: _encode_describe_topic_response,
    DescribePartitionResponse: _encode_describe_partition_response,
    MetricsFetchResponse: _encode_metrics_fetch_response,
    Pong: _encode_bare,
    Error: _encode_error,
}


def encode(event: object, limits: Limits) -> dict[str, object]:
    """The JSON object for ``event``, every field checked; ``LocalProtocolError`` if invalid."""
    encoder = _ENCODERS.get(type(event))
    if encoder is None:
        raise _local(f"{type(event).__name__} is not a RustLog event")
    return encoder(event, limits)
