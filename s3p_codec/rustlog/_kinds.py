"""What each JSON field type means: how a received value is checked, how a sent one is written.

Plan. An event field names its type in its annotation, as the spec's JSON Schema spells it
(``partition: Annotated[int, "u32"]``). Each type is one ``Kind`` below, declared in one place:
its class says, beside the rule it implements, how a field of that type is read, checked,
converted and written. ``KINDS`` maps each annotation to its kind, and ``_schema`` builds every
message's decoder and encoder from the kinds of its fields. Adding a type is one class (or one
more instance of a class that takes parameters) and one line in ``KINDS``.

A kind is read in two steps, so that a message reports its first bad field in field order,
whatever its kinds: ``read`` checks the value's type (all of it for a scalar; an array is only
seen to be an array), then ``convert`` checks what is inside (array elements, free-form values)
and makes the event's value. The generated decoders first try every field's ``fast`` test in
one expression and call ``read``, which names the culprit, only when that fails: ``read`` is
the slow path, ``fast`` and ``convert`` run for every message. Writing has the same two steps
the other way: ``shape`` sees that arrays and objects are arrays and objects before any field
is written, then ``write`` checks and writes each value.

Received values that break a rule raise ``FieldError`` (recoverable: answered by an Error
response); values a user built raise ``LocalProtocolError``. Both name the field.

Rules that hold for every kind (and the decisions recorded in docs/decisions.rst):

- A string is Unicode characters: a JSON escape can smuggle in a lone surrogate, which no UTF-8
  peer can write back, so one is refused, read or written (``_valid_text``).
- Free-form JSON ("object": metrics, details) may hold null, bools, strings, finite floats,
  integers in [-2**63, 2**64-1], arrays and objects; anything else cannot be written by every
  peer (``_freeze``, ``_thaw``).
- A field typed ``T | null`` (OffsetFetchResponse.offset, Error.details) may be absent, and then
  reads as null, as serde reads an absent ``Option`` (``Kind.optional``).
- FetchResponse's "`next_offset` = last record offset + 1" spans two fields: it is a rule of the
  message, in ``_schema``.
"""

from __future__ import annotations

import math
import re
from binascii import a2b_base64, b2a_base64
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, get_type_hints

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
    "FAST_NAMES",
    "KINDS",
    "AmbiguousNumber",
    "Context",
    "FieldError",
    "Kind",
    "TooDeep",
    "check_extras",
    "check_sizes",
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
"""An absent field, told apart from a present null (``obj.get(key, _MISSING)``)."""

TOPICS_SEEN_MAX: Final = 1024
"""At most this many topic names in one connection's memo (``Context.topics``)."""


# --- what several kinds share ----------------------------------------------------------------


def _missing(key: str) -> FieldError:
    return FieldError(f"missing field {key!r}")


def _refused(key: str, value: object, message: str) -> FieldError:
    """Why a field checker refused ``value``: absent (``missing field``), or ``message``."""
    return _missing(key) if value is _MISSING else FieldError(message)


def _local(message: str, code: ErrorCode = INVALID) -> LocalProtocolError:
    return LocalProtocolError(message, code=code)


def _uint(obj: dict[str, Any], key: str, maximum: int, kind: str) -> int:
    """Read an unsigned integer field (a JSON integer: not a float, a bool or a string)."""
    value = obj.get(key, _MISSING)
    if type(value) is int and 0 <= value <= maximum:  # ``type() is``: a bool is not an integer
        return value
    raise _refused(key, value, f"field {key!r} must be a {kind}: an integer from 0 to {maximum}")


def _check_uint(value: object, maximum: int, name: str, kind: str) -> int:
    """Check an unsigned integer a user built (``type() is int``: a bool is refused too)."""
    if type(value) is int and 0 <= value <= maximum:
        return value
    raise _local(f"{name} must be a {kind}: an int from 0 to {maximum}, got {value!r}")


def _uint_fast(low: int, high: int) -> str:
    return f"({{v}}.__class__ is int and {low} <= {{v}} <= {high})"


def _valid_text(value: str) -> bool:
    # Almost every string is ASCII, which needs no encoding to be known valid.
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


def _array(obj: dict[str, Any], key: str, _ctx: object = None) -> list[Any]:
    value = obj.get(key, _MISSING)
    if type(value) is list:
        return value
    raise _refused(key, value, f"field {key!r} must be an array")


_IS_LIST = "{v}.__class__ is list"


def _element(value: object, key: str, index: int) -> dict[str, Any]:
    if type(value) is not dict:
        raise FieldError(f"{key}[{index}] must be an object")
    return value


def _check_tuple(value: object, name: str) -> tuple[Any, ...]:
    if type(value) is tuple:
        return value
    raise _local(f"{name} must be a sequence, got {type(value).__name__}")


def _check_row(value: object, size: int, name: str) -> tuple[Any, ...]:
    if isinstance(value, tuple) and len(value) == size:
        return value
    raise _local(f"{name} must be a {size}-tuple")


def _tuple_shape(value: object, name: str, owner: str, _limits: Limits) -> None:
    _check_tuple(value, f"{owner}.{name}")


def _strict_b64(text: str) -> bytes:
    return a2b_base64(text, strict_mode=True)


def _explain_base64(values: list[Any], key: str) -> FieldError:
    """The error for the first value of ``values`` that is not standard padded base64."""
    for index, value in enumerate(values):
        if type(value) is not str:
            return FieldError(f"{key}[{index}] must be a base64 string")
        try:
            _strict_b64(value)
        except (TypeError, ValueError) as exc:
            return FieldError(f"{key}[{index}] is not standard padded base64: {exc}")
    return FieldError(f"{key} must hold base64 strings")  # pragma: no cover - defensive


def check_sizes(payloads: tuple[bytes, ...], limit: int, key: str) -> None:
    """ "Each record ≤ 10MB after Base64 decoding": 413 for the first record over ``limit``."""
    for index, payload in enumerate(payloads):
        if len(payload) > limit:
            raise FieldError(
                f"{key}[{index}]: each record ≤ {limit} bytes after Base64 decoding, "
                f"got {len(payload)}",
                TOO_LARGE,
            )


def _write_base64(payload: object, name: str, limits: Limits) -> str:
    """One record payload we send: bytes within ``max_record_size``, as padded base64."""
    if type(payload) is not bytes:
        raise _local(f"{name} must be bytes, got {type(payload).__name__}")
    if len(payload) > limits.max_record_size:
        raise _local(
            f"{name}: each record ≤ {limits.max_record_size} bytes after Base64 decoding, "
            f"got {len(payload)}",
            TOO_LARGE,
        )
    return b2a_base64(payload, newline=False).decode("ascii")


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
        # orjson reads an integer beyond 64 bits as a float: with it, a large float may have
        # been such an integer, which the stdlib backend (exact integers) would refuse.
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
        return JsonObject._trusted(items)  # every value frozen just above: not walked again
    # Only a str with a lone surrogate is left: JSON parsers build no other type.
    raise FieldError(f"{where}: strings must be Unicode characters")


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
    # A field's value is depth 1 here and 2 in ``_freeze`` (which counts the message itself):
    # ``>=`` here and ``>`` there bound the same nesting, so what we send we would also read.
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


# --- the kinds: one class per JSON field type ------------------------------------------------

Converter = Callable[[Any, str, Context], Any]
Shape = Callable[[Any, str, str, Limits], None]


class Kind:
    """One JSON field type: how a field of it is read (checked) and written.

    - ``name``: the type as annotations spell it (the key in ``KINDS``);
    - ``fast``: a Python expression over ``{v}`` (the raw value, ``None`` when absent), true when
      the value passes ``read`` unchanged; ``fast_names``: the module names it uses;
    - ``read(obj, key, ctx)``: the field's value, its type checked, or ``FieldError``;
    - ``convert(value, key, ctx)``: what is inside checked, the event's value made (None: the
      value read is the event's value);
    - ``shape(value, name, owner, limits)``: checked before any field is written (None: nothing);
    - ``write(value, name, limits)``: the JSON value of a user-built field, or
      ``LocalProtocolError``;
    - ``optional``: the field may be absent (it then reads as null).
    """

    name: str
    fast: str
    fast_names: ClassVar[Mapping[str, object]] = {}
    optional: bool = False
    convert: Converter | None = None
    shape: Shape | None = None

    def read(self, obj: dict[str, Any], key: str, ctx: Context | None = None) -> Any:
        raise NotImplementedError

    def write(self, value: Any, name: str, limits: Limits) -> object:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<Kind {self.name}>"


class _UInt(Kind):
    """Integers typed "u32", "u64" or "usize" are JSON integers within that range: not floats,
    not bools, not strings. ``usize`` is read as u64 (the width of the broker's platform)."""

    def __init__(self, name: str, maximum: int) -> None:
        self.name = name
        self.maximum = maximum
        self.fast = _uint_fast(0, maximum)

    def read(self, obj: dict[str, Any], key: str, ctx: Context | None = None) -> int:
        return _uint(obj, key, self.maximum, self.name)

    def write(self, value: object, name: str, limits: Limits) -> int:
        return _check_uint(value, self.maximum, name, self.name)


_ERROR_CODES: Final[dict[int, ErrorCode]] = {int(code): code for code in ErrorCode}


class _ErrorCodeKind(Kind):
    """ "u16", the one field of that type being Error's ``code``: a known code reads as its
    ``ErrorCode``, any other u16 as the int (a newer broker's code stays readable)."""

    name = "u16"
    fast = _uint_fast(0, U16_MAX)

    def read(self, obj: dict[str, Any], key: str, ctx: Context | None = None) -> int:
        return _uint(obj, key, U16_MAX, "u16")

    @staticmethod
    def convert(value: int, _key: str, _ctx: Context) -> ErrorCode | int:
        return _ERROR_CODES.get(value, value)

    def write(self, code: object, name: str, limits: Limits) -> int:
        # ``int(code)`` below: the JSON written is a plain number whatever the backend.
        if not (type(code) is int or type(code) is ErrorCode) or not 0 <= code <= U16_MAX:
            raise _local(f"{name} must be an ErrorCode or an int from 0 to {U16_MAX}, got {code!r}")
        return int(code)


class _OptionalU64(Kind):
    """ "u64 | null" (OffsetFetchResponse.offset): null, or absent, when nothing was committed."""

    name = "u64 | null"
    fast = f"({{v}} is None or {_uint_fast(0, U64_MAX)})"
    optional = True

    def read(self, obj: dict[str, Any], key: str, ctx: Context | None = None) -> int | None:
        if obj.get(key) is None:  # absent or null alike
            return None
        return _uint(obj, key, U64_MAX, "u64 or null")

    def write(self, value: object, name: str, limits: Limits) -> int | None:
        if value is None:
            return None
        return _check_uint(value, U64_MAX, name, "u64 or None")


class _PartitionCount(Kind):
    """ "Partition count: 1-1000 partitions"."""

    name = "partition count"
    fast = _uint_fast(1, MAX_PARTITION_COUNT)

    def read(self, obj: dict[str, Any], key: str, ctx: Context | None = None) -> int:
        count = obj.get(key, _MISSING)
        if type(count) is int and 1 <= count <= MAX_PARTITION_COUNT:
            return count
        raise _refused(key, count, f"Partition count: 1-{MAX_PARTITION_COUNT} partitions")

    def write(self, count: object, name: str, limits: Limits) -> int:
        if type(count) is not int or not 1 <= count <= MAX_PARTITION_COUNT:
            raise _local(f"Partition count: 1-{MAX_PARTITION_COUNT} partitions, got {count!r}")
        return count


class _Bool(Kind):
    """A JSON boolean (not 0 or 1)."""

    name = "bool"
    fast = "{v}.__class__ is bool"

    def read(self, obj: dict[str, Any], key: str, ctx: Context | None = None) -> bool:
        value = obj.get(key, _MISSING)
        if type(value) is bool:
            return value
        raise _refused(key, value, f"field {key!r} must be a JSON boolean")

    def write(self, value: object, name: str, limits: Limits) -> bool:
        if type(value) is bool:
            return value
        raise _local(f"{name} must be a bool, got {value!r}")


class _String(Kind):
    """A string of Unicode characters (group names, consumer ids: any such string)."""

    name = "string"
    fast = "({v}.__class__ is str and {v}.isascii())"  # non-ASCII goes to ``read`` to be checked

    def read(self, obj: dict[str, Any], key: str, ctx: Context | None = None) -> str:
        return _string(obj, key)

    def write(self, value: object, name: str, limits: Limits) -> str:
        if type(value) is str and _valid_text(value):
            return value
        raise _local(f"{name} must be a str of Unicode characters (no lone surrogates)")


_topic_match = re.compile(r"[A-Za-z0-9_-]{1,255}").fullmatch


def _new_topic(value: str, seen: set[str]) -> bool:
    """``_topic_match`` for a name not in ``seen`` yet (a str), remembering it if it passes."""
    if _topic_match(value) is None:
        return False
    if len(seen) >= TOPICS_SEEN_MAX:
        seen.clear()  # bounded whatever the peer sends; names seen again are matched again
    seen.add(value)
    return True


class _Topic(Kind):
    """ "Topic name (1-255 characters, alphanumeric + underscore/hyphen)":
    ``[A-Za-z0-9_-]{1,255}``, ASCII only, so a topic in any other script is an invalid request.
    Names that passed are remembered per connection (``Context.topics``)."""

    name = "topic"
    fast = "({v}.__class__ is str and ({v} in ctx.topics or _new_topic({v}, ctx.topics)))"
    fast_names: ClassVar[Mapping[str, object]] = {"_new_topic": _new_topic}

    def read(self, obj: dict[str, Any], key: str, ctx: Context | None = None) -> str:
        assert ctx is not None  # a topic is always read with its connection's context
        value = obj.get(key, _MISSING)
        if type(value) is str and (value in ctx.topics or _new_topic(value, ctx.topics)):
            return value
        raise _refused(
            key,
            value,
            f"field {key!r} must be a topic name: 1-255 characters, alphanumeric + "
            "underscore/hyphen",
        )

    def write(self, value: object, name: str, limits: Limits) -> str:
        if type(value) is str and _topic_match(value):
            return value
        raise _local(
            f"{name} must be 1-255 characters, alphanumeric + underscore/hyphen, got {value!r}"
        )


class _Base64String(Kind):
    """A record payload in base64 (``Record.payload``; ``[Record]`` reads the payloads of a
    Fetch answer in its own loop, by the same rule): standard alphabet, with padding; nothing
    else is allowed in the string (no whitespace, no line breaks). Unused trailing bits are not
    checked, as in Python's decoder: the decoded bytes are what count."""

    name = "base64_string"
    fast = "{v}.__class__ is str"

    def read(self, obj: dict[str, Any], key: str, ctx: Context | None = None) -> str:
        return _string(obj, key)

    @staticmethod
    def convert(value: str, key: str, _ctx: Context) -> bytes:
        try:
            return a2b_base64(value, strict_mode=True)
        except ValueError as exc:
            raise FieldError(f"field {key!r} is not standard padded base64: {exc}") from None

    def write(self, payload: object, name: str, limits: Limits) -> str:
        return _write_base64(payload, name, limits)


class _Object(Kind):
    """Free-form JSON ("object": metrics; "object | null": Error.details), checked and frozen
    into a ``JsonObject`` (see the module docstring for what it may hold)."""

    def __init__(self, optional: bool) -> None:
        self.optional = optional
        self.name = "object | null" if optional else "object"
        self.fast = (
            "({v} is None or {v}.__class__ is dict)" if optional else "{v}.__class__ is dict"
        )

    def read(
        self, obj: dict[str, Any], key: str, ctx: Context | None = None
    ) -> dict[str, Any] | None:
        value = obj.get(key, _MISSING)
        if value is _MISSING or (value is None and self.optional):
            if self.optional:
                return None
            raise _missing(key)
        if type(value) is not dict:
            raise FieldError(
                f"field {key!r} must be a JSON object" + (" or null" if self.optional else "")
            )
        return value

    @staticmethod
    def convert(value: dict[str, Any] | None, key: str, ctx: Context) -> JsonObject | None:
        if value is None:
            return None
        frozen = _freeze(value, ctx, f"field {key!r}", 2)  # the message itself is level 1
        assert isinstance(frozen, JsonObject)
        return frozen

    def shape(self, value: object, name: str, _owner: str, _limits: Limits) -> None:
        if self.optional and value is None:
            return
        if not isinstance(value, Mapping):
            raise _local(f"{name} must be a JSON object" + (" or None" if self.optional else ""))

    def write(self, value: object, name: str, limits: Limits) -> object:
        return None if value is None else _thaw(value, name, 1)


class _Base64Array(Kind):
    """Produce's ``records``: "Array of Base64-encoded record payloads" (each as
    ``base64_string``), "Records array ≤ 1000 elements per batch" (400) and "Each record ≤ 10MB
    after Base64 decoding" (413), with the bounds of ``Limits``."""

    name = "[base64_string]"
    fast = _IS_LIST

    def read(self, obj: dict[str, Any], key: str, ctx: Context | None = None) -> list[Any]:
        return _array(obj, key)

    @staticmethod
    def convert(records: list[Any], key: str, ctx: Context) -> tuple[bytes, ...]:
        if len(records) > ctx.max_records:
            raise FieldError(
                f"Records array ≤ {ctx.max_records} elements per batch: got {len(records)}"
            )
        # Decoded all at once (a list comprehension, then one tuple: faster than a generator),
        # the culprit looked for only when one fails.
        try:
            decoded = tuple([a2b_base64(record, strict_mode=True) for record in records])
        except (TypeError, ValueError):  # binascii.Error is a ValueError
            raise _explain_base64(records, key) from None
        if ctx.check_record_size:
            check_sizes(decoded, ctx.limits.max_record_size, key)
        return decoded

    @staticmethod
    def shape(value: object, name: str, owner: str, limits: Limits) -> None:
        records = _check_tuple(value, f"{owner}.{name}")
        if len(records) > limits.max_records_per_produce:
            raise _local(
                f"Records array ≤ {limits.max_records_per_produce} elements per batch: "
                f"got {len(records)}"
            )

    def write(self, records: Any, name: str, limits: Limits) -> list[str]:
        return [_write_base64(record, f"{name}[{i}]", limits) for i, record in enumerate(records)]


_RECORD_FIELDS: Final = frozenset(Record._fields)


class _Records(Kind):
    """FetchResponse's ``records``: record objects (``offset`` u64, ``timestamp`` u64,
    ``payload`` base64) "in offset order (monotonic)", strictly increasing since offsets are
    unique. Record sizes are checked with the message's rule, after ``next_offset``."""

    name = "[Record]"
    fast = _IS_LIST
    shape = staticmethod(_tuple_shape)

    def read(self, obj: dict[str, Any], key: str, ctx: Context | None = None) -> list[Any]:
        return _array(obj, key)

    @staticmethod
    def convert(records: list[Any], _key: str, _ctx: Context) -> tuple[Record, ...]:
        # The hot path of a Fetch answer: one pass, no per-field function calls, the names it
        # uses bound to locals; any surprise (a missing key, a wrong type, an offset out of
        # order, bad base64) leaves for ``_explain_records``, which finds and names the culprit.
        out: list[Record] = []
        append = out.append
        new = tuple.__new__  # a NamedTuple built without its __new__'s argument handling
        row = Record
        decode = a2b_base64
        integer = int
        u64 = U64_MAX
        previous = -1
        odd: list[dict[str, Any]] = []  # records with fields beyond the three known ones
        try:
            for entry in records:
                # Fields beyond the three known ones are checked for depth after the loop;
                # an entry that is no object fails below, at its first subscript.
                if len(entry) != 3:
                    odd.append(entry)
                offset = entry["offset"]
                timestamp = entry["timestamp"]
                if (
                    offset.__class__ is not integer  # ``type() is int``: bools are refused
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

    def write(self, rows: Any, name: str, limits: Limits) -> list[dict[str, object]]:
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


def _explain_records(records: list[Any]) -> FieldError:
    """The error for the first bad record of a FetchResponse, in field order."""
    previous = -1
    for index, entry in enumerate(records):
        record = _element(entry, "records", index)
        where = f"records[{index}]"
        try:
            offset = _uint(record, "offset", U64_MAX, "u64")
            _uint(record, "timestamp", U64_MAX, "u64")
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


class _Rows(Kind):
    """An array of objects, one ``row`` each: a NamedTuple whose fields name their kinds
    (``[TopicInfo]``, ``[PartitionInfo]``), each field read and written by its own kind."""

    fast = _IS_LIST
    shape = staticmethod(_tuple_shape)

    def __init__(self, row: type[tuple[Any, ...]]) -> None:
        self.name = f"[{row.__name__}]"
        self.row = row
        self.fields = field_kinds(row)
        self.known = frozenset(name for name, _ in self.fields)

    def read(self, obj: dict[str, Any], key: str, ctx: Context | None = None) -> list[Any]:
        return _array(obj, key)

    def convert(self, values: list[Any], key: str, ctx: Context) -> tuple[Any, ...]:
        fields, size, row = self.fields, len(self.fields), self.row
        out = []
        for index, entry in enumerate(values):
            element = _element(entry, key, index)
            if len(element) != size:  # only then can it hold a field the row does not know
                check_extras(element, self.known, 3)
            try:
                out.append(row(*[kind.read(element, name, ctx) for name, kind in fields]))
            except FieldError as exc:
                raise FieldError(f"{key}[{index}]: {exc.message}") from None
        return tuple(out)

    def write(self, rows: Any, name: str, limits: Limits) -> list[dict[str, object]]:
        fields, size = self.fields, len(self.fields)
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


def field_kinds(cls: type) -> tuple[tuple[str, Kind], ...]:
    """(name, kind) of each field of ``cls``, in order, from its ``Annotated[T, "kind"]`` hints."""
    hints = get_type_hints(cls, include_extras=True)
    names = [field.name for field in attrs.fields(cls)] if attrs.has(cls) else cls._fields  # type: ignore[attr-defined]
    # ``__metadata__[0]``: the string in ``Annotated[T, "u32"]``.
    return tuple((name, KINDS[hints[name].__metadata__[0]]) for name in names)


KINDS: Final[dict[str, Kind]] = {}
"""Every field type an event may name, by the name its annotation gives."""


def _declare(*kinds: Kind) -> None:
    for kind in kinds:
        KINDS[kind.name] = kind


_declare(
    _String(),
    _Topic(),
    _Bool(),
    _ErrorCodeKind(),
    _UInt("u32", U32_MAX),
    _UInt("u64", U64_MAX),
    _UInt("usize", U64_MAX),
    _OptionalU64(),
    _PartitionCount(),
    _Base64String(),
    _Object(optional=False),
    _Object(optional=True),
    _Base64Array(),
    _Records(),
)
# Rows after the kinds of their fields: ``_Rows`` looks those up when it is made.
_declare(_Rows(TopicInfo), _Rows(PartitionInfo))

FAST_NAMES: Final[dict[str, object]] = {
    name: value for kind in KINDS.values() for name, value in kind.fast_names.items()
}
"""The names the ``fast`` expressions use."""
