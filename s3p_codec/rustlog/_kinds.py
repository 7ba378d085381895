"""What each JSON field type means: how a received value is checked, how a sent one is written.

An event field names its type in its annotation, as the spec's JSON Schema spells it
(``partition: Annotated[int, "u32"]``); ``KINDS`` maps that name to a ``Kind``, and ``schema``
builds every message's decoder and encoder from the kinds of its fields. The rules, in the
spec's words where it has them (and the decisions recorded in docs/decisions.rst):

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
  and "`next_offset` = last record offset + 1" when there are records (a rule of the message,
  in ``schema``).
- A field typed ``T | null`` (OffsetFetchResponse.offset, Error.details) may be absent, and then
  reads as null, as serde reads an absent ``Option``.

Free-form JSON ("object": metrics, details) may hold null, bools, strings, finite floats,
integers in [-2**63, 2**64-1], arrays and objects; anything else cannot be written by every peer.

A kind is read in two steps, so that a message reports its first bad field in field order,
whatever its kinds: ``read`` checks the value's type (all of it for a scalar; an array is only
seen to be an array), then ``convert`` checks what is inside (array elements, free-form values)
and makes the event's value. Writing has the same two steps the other way (``shape``, then
``write``).
"""

from __future__ import annotations

import math
import re
from binascii import a2b_base64, b2a_base64
from collections.abc import Callable, Mapping
from typing import Any, Final, get_type_hints

import attrs

from s3p_codec._core import LocalProtocolError
from s3p_codec.rustlog._events import (
    ErrorCode,
    JsonObject,
    JsonValue,
    PartitionInfo,
    Record,
    TopicInfo,
)
from s3p_codec.rustlog._json_backend import too_deep
from s3p_codec.rustlog._limits import (
    MAX_JSON_DEPTH,
    MAX_PARTITION_COUNT,
    U16_MAX,
    U32_MAX,
    U64_MAX,
    Limits,
)

__all__ = [
    "KINDS",
    "AmbiguousNumber",
    "Context",
    "FieldError",
    "Kind",
    "TooDeep",
    "check_extras",
    "field_kinds",
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


@attrs.frozen(slots=True, getstate_setstate=False)
class Context:
    """What field decoding needs to know besides the object: one per connection (or Observer)."""

    limits: Limits
    exact_integers: bool = True
    check_record_size: bool = attrs.field(init=False)
    max_records: int = attrs.field(init=False)
    topics: set[str] = attrs.field(init=False, factory=set, eq=False, repr=False)
    """Topic names this connection has seen pass ``_topic_match``: a set lookup costs a fifth of
    the regular expression, and a connection sees the same few names over and over. Only names
    that passed are kept, so the rule is unchanged; the set is emptied when it reaches
    ``TOPICS_SEEN_MAX`` names, so memory stays bounded whatever the peer sends. Per connection,
    not per process: nothing one connection reads changes what another keeps."""

    @max_records.default
    def _max_records(self) -> int:
        return self.limits.max_records_per_produce

    @check_record_size.default
    def _check_record_size(self) -> bool:
        # A record decoded from a frame is smaller than the frame: skip a check that cannot fail.
        return self.limits.max_record_size < self.limits.max_frame_size

    def __getstate__(self) -> dict[str, object]:
        # The topic memo is a cache: a snapshot leaves it out (it stays compact and reads the
        # same as one taken before the memo existed); a restored context starts it empty.
        return {field.name: getattr(self, field.name) for field in _CONTEXT_STATE}

    def __setstate__(self, state: dict[str, object]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "topics", set())


_CONTEXT_STATE: Final = tuple(f for f in attrs.fields(Context) if f.name != "topics")

_MISSING: Final[Any] = object()
_topic_match = re.compile(r"[A-Za-z0-9_-]{1,255}").fullmatch

TOPICS_SEEN_MAX: Final = 1024
"""At most this many topic names in one connection's memo (``Context.topics``)."""


def _new_topic(value: str, seen: set[str]) -> bool:
    """``_topic_match`` for a name not in ``seen`` yet (a str), remembering it if it passes."""
    if _topic_match(value) is None:
        return False
    if len(seen) >= TOPICS_SEEN_MAX:
        seen.clear()
    seen.add(value)
    return True


def _strict_b64(text: str) -> bytes:
    return a2b_base64(text, strict_mode=True)


# --- reading: field checkers (FieldError names the field) -----------------------------------


def _missing(key: str) -> FieldError:
    return FieldError(f"missing field {key!r}")


def _refused(key: str, value: object, message: str) -> FieldError:
    """Why a field checker refused ``value``: absent (``missing field``), or ``message``."""
    return _missing(key) if value is _MISSING else FieldError(message)


def _uint(obj: dict[str, Any], key: str, maximum: int, kind: str) -> int:
    value = obj.get(key, _MISSING)
    if type(value) is int and 0 <= value <= maximum:
        return value
    raise _refused(key, value, f"field {key!r} must be a {kind}: an integer from 0 to {maximum}")


def _u32(obj: dict[str, Any], key: str, _ctx: object = None) -> int:
    return _uint(obj, key, U32_MAX, "u32")


def _u64(obj: dict[str, Any], key: str, _ctx: object = None) -> int:
    return _uint(obj, key, U64_MAX, "u64")


def _usize(obj: dict[str, Any], key: str, _ctx: object = None) -> int:
    return _uint(obj, key, U64_MAX, "usize")


def _u16(obj: dict[str, Any], key: str, _ctx: object = None) -> int:
    return _uint(obj, key, U16_MAX, "u16")


def _optional_u64(obj: dict[str, Any], key: str, _ctx: object = None) -> int | None:
    if obj.get(key) is None:
        return None
    return _uint(obj, key, U64_MAX, "u64 or null")


def _partition_count(obj: dict[str, Any], key: str, _ctx: object = None) -> int:
    count = obj.get(key, _MISSING)
    if type(count) is int and 1 <= count <= MAX_PARTITION_COUNT:
        return count
    raise _refused(key, count, f"Partition count: 1-{MAX_PARTITION_COUNT} partitions")


def _bool(obj: dict[str, Any], key: str, _ctx: object = None) -> bool:
    value = obj.get(key, _MISSING)
    if type(value) is bool:
        return value
    raise _refused(key, value, f"field {key!r} must be a JSON boolean")


def _valid_text(value: str) -> bool:
    # A JSON escape can smuggle in a lone surrogate, which no UTF-8 peer can write back.
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _string(obj: dict[str, Any], key: str, _ctx: object = None) -> str:
    value = obj.get(key, _MISSING)
    if type(value) is str and _valid_text(value):
        return value
    raise _refused(key, value, f"field {key!r} must be a string of Unicode characters")


def _topic(obj: dict[str, Any], key: str, ctx: Context) -> str:
    value = obj.get(key, _MISSING)
    if type(value) is str and (value in ctx.topics or _new_topic(value, ctx.topics)):
        return value
    raise _refused(
        key,
        value,
        f"field {key!r} must be a topic name: 1-255 characters, alphanumeric + underscore/hyphen",
    )


def _array(obj: dict[str, Any], key: str, _ctx: object = None) -> list[Any]:
    value = obj.get(key, _MISSING)
    if type(value) is list:
        return value
    raise _refused(key, value, f"field {key!r} must be an array")


def _element(value: object, key: str, index: int) -> dict[str, Any]:
    if type(value) is not dict:
        raise FieldError(f"{key}[{index}] must be an object")
    return value


def _object_of(optional: bool) -> Callable[[dict[str, Any], str, object], dict[str, Any] | None]:
    def read(obj: dict[str, Any], key: str, _ctx: object = None) -> dict[str, Any] | None:
        value = obj.get(key, _MISSING)
        if value is _MISSING or (value is None and optional):
            if optional:
                return None
            raise _missing(key)
        if type(value) is not dict:
            raise FieldError(
                f"field {key!r} must be a JSON object" + (" or null" if optional else "")
            )
        return value

    return read


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


def _freeze_object(value: dict[str, Any] | None, key: str, ctx: Context) -> JsonObject | None:
    if value is None:
        return None
    frozen = _freeze(value, ctx, f"field {key!r}", 2)
    assert isinstance(frozen, JsonObject)
    return frozen


def _base64_string(value: str, key: str, _ctx: Context) -> bytes:
    try:
        return a2b_base64(value, strict_mode=True)
    except ValueError as exc:
        raise FieldError(f"field {key!r} is not standard padded base64: {exc}") from None


_ERROR_CODES: Final[dict[int, ErrorCode]] = {int(code): code for code in ErrorCode}


def _error_code(value: int, _key: str, _ctx: Context) -> ErrorCode | int:
    return _ERROR_CODES.get(value, value)


def _explain_base64(values: list[Any], key: str) -> FieldError:
    for index, value in enumerate(values):
        if type(value) is not str:
            return FieldError(f"{key}[{index}] must be a base64 string")
        try:
            _strict_b64(value)
        except (TypeError, ValueError) as exc:
            return FieldError(f"{key}[{index}] is not standard padded base64: {exc}")
    return FieldError(f"{key} must hold base64 strings")  # pragma: no cover - defensive


def check_sizes(payloads: tuple[bytes, ...], limit: int, key: str) -> None:
    """"Each record ≤ 10MB after Base64 decoding": 413 for the first record over ``limit``."""
    for index, payload in enumerate(payloads):
        if len(payload) > limit:
            raise FieldError(
                f"{key}[{index}]: each record ≤ {limit} bytes after Base64 decoding, "
                f"got {len(payload)}",
                TOO_LARGE,
            )


def _base64_array(records: list[Any], key: str, ctx: Context) -> tuple[bytes, ...]:
    """Produce's ``records``: at most ``max_records`` standard padded base64 strings."""
    if len(records) > ctx.max_records:
        raise FieldError(
            f"Records array ≤ {ctx.max_records} elements per batch: got {len(records)}"
        )
    try:
        decoded = tuple([a2b_base64(record, strict_mode=True) for record in records])
    except (TypeError, ValueError):  # binascii.Error is a ValueError
        raise _explain_base64(records, key) from None
    if ctx.check_record_size:
        check_sizes(decoded, ctx.limits.max_record_size, key)
    return decoded


_RECORD_FIELDS: Final = frozenset(Record._fields)


def _records(records: list[Any], _key: str, _ctx: Context) -> tuple[Record, ...]:
    """FetchResponse's ``records``: record objects in offset order, payloads in base64.

    The hot path: one pass, no per-field function calls; any surprise goes to the slow path,
    which finds and names the culprit.
    """
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
    return tuple(out)


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


# --- writing: checks of events built by users (LocalProtocolError names the field) ----------


def _local(message: str, code: ErrorCode = INVALID) -> LocalProtocolError:
    return LocalProtocolError(message, code=code)


def _check_uint(value: object, maximum: int, name: str, kind: str) -> int:
    if type(value) is int and 0 <= value <= maximum:
        return value
    raise _local(f"{name} must be a {kind}: an int from 0 to {maximum}, got {value!r}")


def _uint_writer(maximum: int, kind: str) -> Callable[[object, str, Limits], object]:
    def write(value: object, name: str, _limits: Limits) -> object:
        return _check_uint(value, maximum, name, kind)

    return write


def _write_optional_u64(value: object, name: str, _limits: Limits) -> object:
    if value is None:
        return None
    return _check_uint(value, U64_MAX, name, "u64 or None")


def _write_partition_count(count: object, _name: str, _limits: Limits) -> object:
    if type(count) is not int or not 1 <= count <= MAX_PARTITION_COUNT:
        raise _local(f"Partition count: 1-{MAX_PARTITION_COUNT} partitions, got {count!r}")
    return count


def _write_topic(value: object, name: str, _limits: Limits) -> str:
    if type(value) is str and _topic_match(value):
        return value
    raise _local(
        f"{name} must be 1-255 characters, alphanumeric + underscore/hyphen, got {value!r}"
    )


def _write_string(value: object, name: str, _limits: Limits) -> str:
    if type(value) is str and _valid_text(value):
        return value
    raise _local(f"{name} must be a str of Unicode characters (no lone surrogates)")


def _write_bool(value: object, name: str, _limits: Limits) -> bool:
    if type(value) is bool:
        return value
    raise _local(f"{name} must be a bool, got {value!r}")


def _write_error_code(code: object, name: str, _limits: Limits) -> int:
    if not (type(code) is int or type(code) is ErrorCode) or not 0 <= code <= U16_MAX:
        raise _local(f"{name} must be an ErrorCode or an int from 0 to {U16_MAX}, got {code!r}")
    return int(code)


def _check_tuple(value: object, name: str) -> tuple[Any, ...]:
    if type(value) is tuple:
        return value
    raise _local(f"{name} must be a sequence, got {type(value).__name__}")


def _check_row(value: object, size: int, name: str) -> tuple[Any, ...]:
    if isinstance(value, tuple) and len(value) == size:
        return value
    raise _local(f"{name} must be a {size}-tuple")


def _write_base64(payload: object, name: str, limits: Limits) -> str:
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


def _object_shape(optional: bool) -> Callable[[object, str, str, Limits], None]:
    def shape(value: object, name: str, _owner: str, _limits: Limits) -> None:
        if optional and value is None:
            return
        if not isinstance(value, Mapping):
            raise _local(f"{name} must be a JSON object" + (" or None" if optional else ""))

    return shape


def _write_object(value: object, name: str, _limits: Limits) -> object:
    return None if value is None else _thaw(value, name, 1)


def _tuple_shape(value: object, name: str, owner: str, _limits: Limits) -> None:
    _check_tuple(value, f"{owner}.{name}")


def _base64_array_shape(value: object, name: str, owner: str, limits: Limits) -> None:
    records = _check_tuple(value, f"{owner}.{name}")
    if len(records) > limits.max_records_per_produce:
        raise _local(
            f"Records array ≤ {limits.max_records_per_produce} elements per batch: "
            f"got {len(records)}"
        )


def _write_base64_array(records: Any, name: str, limits: Limits) -> list[str]:
    return [_write_base64(record, f"{name}[{i}]", limits) for i, record in enumerate(records)]


def _write_records(rows: Any, name: str, limits: Limits) -> list[dict[str, object]]:
    """FetchResponse's ``records``, "Records in offset order (monotonic)"."""
    records = []
    previous = -1
    for index, row in enumerate(rows):
        where = f"{name}[{index}]"
        offset, timestamp, payload = _check_row(row, 3, where)
        _check_uint(offset, U64_MAX, f"{where}.offset", "u64")
        if offset <= previous:
            raise _local(f"Records in offset order (monotonic): {offset} after {previous}")
        previous = offset
        records.append(
            {
                "offset": offset,
                "timestamp": _check_uint(timestamp, U64_MAX, f"{where}.timestamp", "u64"),
                "payload": _write_base64(payload, f"{where}.payload", limits),
            }
        )
    return records


# --- the kinds ----------------------------------------------------------------------------

Reader = Callable[[dict[str, Any], str, Any], Any]
Converter = Callable[[Any, str, Context], Any]
Writer = Callable[[Any, str, Limits], object]
Shape = Callable[[Any, str, str, Limits], None]


@attrs.frozen(slots=True)
class Kind:
    """How one JSON field type is read (checked) and written.

    ``fast`` is a Python expression over ``{v}`` (the raw value, ``None`` when absent), true when
    the value passes ``read`` unchanged; the generated decoders test every field of a message
    with it in one expression and call ``read`` (which names the culprit) only when it fails.
    """

    name: str
    fast: str
    read: Reader
    write: Writer
    convert: Converter | None = None
    shape: Shape | None = None
    optional: bool = False
    """The field may be absent (it then reads as null)."""


def _uint_fast(low: int, high: int) -> str:
    return f"({{v}}.__class__ is int and {low} <= {{v}} <= {high})"


_IS_LIST = "{v}.__class__ is list"


def _rows_kind(row: type[tuple[Any, ...]]) -> Kind:
    """An array of objects, one ``row`` (a NamedTuple whose fields name their kinds) each."""
    fields = field_kinds(row)
    known = frozenset(name for name, _ in fields)
    size = len(fields)

    def convert(values: list[Any], key: str, ctx: Context) -> tuple[Any, ...]:
        out = []
        for index, entry in enumerate(values):
            element = _element(entry, key, index)
            if len(element) != size:
                check_extras(element, known, 3)
            try:
                out.append(row(*[kind.read(element, name, ctx) for name, kind in fields]))
            except FieldError as exc:
                raise FieldError(f"{key}[{index}]: {exc.message}") from None
        return tuple(out)

    def write(rows: Any, name: str, limits: Limits) -> list[dict[str, object]]:
        out = []
        for index, value in enumerate(rows):
            where = f"{name}[{index}]"
            _check_row(value, size, where)
            out.append(
                {
                    field: kind.write(item, f"{where}.{field}", limits)
                    for (field, kind), item in zip(fields, value, strict=True)
                }
            )
        return out

    return Kind(f"[{row.__name__}]", _IS_LIST, _array, write, convert, _tuple_shape)


def field_kinds(cls: type) -> tuple[tuple[str, Kind], ...]:
    """(name, kind) of each field of ``cls``, in order, from its ``Annotated[T, "kind"]`` hints."""
    hints = get_type_hints(cls, include_extras=True)
    names = [field.name for field in attrs.fields(cls)] if attrs.has(cls) else cls._fields  # type: ignore[attr-defined]
    return tuple((name, KINDS[hints[name].__metadata__[0]]) for name in names)


KINDS: Final[dict[str, Kind]] = {}
"""Every field type an event may name, by the name its annotation gives."""

KINDS.update(
    {
        "string": Kind(
            "string", "({v}.__class__ is str and {v}.isascii())", _string, _write_string
        ),
        "topic": Kind(
            "topic",
            "({v}.__class__ is str and ({v} in ctx.topics or _new_topic({v}, ctx.topics)))",
            _topic,
            _write_topic,
        ),
        "bool": Kind("bool", "{v}.__class__ is bool", _bool, _write_bool),
        "u16": Kind(
            "u16", _uint_fast(0, U16_MAX), _u16, _write_error_code, convert=_error_code
        ),
        "u32": Kind("u32", _uint_fast(0, U32_MAX), _u32, _uint_writer(U32_MAX, "u32")),
        "u64": Kind("u64", _uint_fast(0, U64_MAX), _u64, _uint_writer(U64_MAX, "u64")),
        "usize": Kind("usize", _uint_fast(0, U64_MAX), _usize, _uint_writer(U64_MAX, "usize")),
        "u64 | null": Kind(
            "u64 | null",
            f"({{v}} is None or {_uint_fast(0, U64_MAX)})",
            _optional_u64,
            _write_optional_u64,
            optional=True,
        ),
        "partition count": Kind(
            "partition count",
            _uint_fast(1, MAX_PARTITION_COUNT),
            _partition_count,
            _write_partition_count,
        ),
        "base64_string": Kind(
            "base64_string",
            "{v}.__class__ is str",
            _string,
            _write_base64,
            convert=_base64_string,
        ),
        "object": Kind(
            "object",
            "{v}.__class__ is dict",
            _object_of(optional=False),
            _write_object,
            convert=_freeze_object,
            shape=_object_shape(optional=False),
        ),
        "object | null": Kind(
            "object | null",
            "({v} is None or {v}.__class__ is dict)",
            _object_of(optional=True),
            _write_object,
            convert=_freeze_object,
            shape=_object_shape(optional=True),
            optional=True,
        ),
        "[base64_string]": Kind(
            "[base64_string]",
            _IS_LIST,
            _array,
            _write_base64_array,
            convert=_base64_array,
            shape=_base64_array_shape,
        ),
        "[Record]": Kind(
            "[Record]", _IS_LIST, _array, _write_records, convert=_records, shape=_tuple_shape
        ),
    }
)
KINDS["[TopicInfo]"] = _rows_kind(TopicInfo)
KINDS["[PartitionInfo]"] = _rows_kind(PartitionInfo)

FAST_NAMES: Final[dict[str, object]] = {"_new_topic": _new_topic}
"""The names the ``fast`` expressions use."""
