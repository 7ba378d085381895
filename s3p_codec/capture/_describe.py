"""An event of any protocol to the key columns of its row: stream, offset, count, payload size,
error code, and a short readable text.

The five protocols name the same ideas differently (``stream``, ``topic``, ``segment``...), and
a capture table wants one column for each idea; the fields are found by name on the attrs
events, so a protocol's new event type gets its columns without a line here.
"""

from __future__ import annotations

import enum
from operator import attrgetter
from typing import Any, cast

import attrs

__all__ = ["describe_event", "plain", "short_repr", "shorten"]


_STREAM_FIELDS = ("stream", "topic", "segment", "stream_name", "name", "path", "target")
_OFFSET_FIELDS = (
    "offset",
    "timestamp",
    "min_timestamp",
    "id",  # S3P v0.2.0: an APPEND's explicit ID, READ's and TRIM's MIN_ID
    "min_id",
    "until",
    "seq_num",
    "start_seq_num",
    "event_number",
    "last_event_number",
    "next_offset",
    "stream_next_offset",
    "start",
    "tail",
)
_COUNT_FIELDS = ("records", "events", "messages", "batch")
_PAYLOAD_FIELDS = ("body", "data", "payload", "value", "record", "content")
_CODE_FIELDS = ("code", "error_code", "status")


def plain(value: object) -> object:
    """An enum member's value; anything else as it is."""
    return value.value if isinstance(value, enum.Enum) else value


def _text(value: object) -> str | None:
    kind = type(value)
    if kind is bytes:  # the common cases first, exactly as below would give them
        return cast(bytes, value).decode("utf-8", "backslashreplace")
    if kind is str:
        return cast(str, value)
    if kind is int:
        return str(value)
    value = plain(value)
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if isinstance(value, str | int | float):
        return str(value)
    names = _field_names(value)
    for name in ("seq_num", "offset", *_OFFSET_FIELDS):
        if name in names:  # a position object (StreamPosition): its own offset field
            return _text(getattr(value, name))
    formatter = getattr(value, "format", None)
    if callable(formatter):
        try:
            result = formatter()
        except TypeError:
            result = None
        if isinstance(result, str):
            return result
        if isinstance(result, bytes):
            return result.decode("ascii", "backslashreplace")
    return shorten(repr(value), 80)


def _payload_size(value: object, depth: int = 0) -> int:
    """Bytes of payload in ``value``: bytes, sequences of them, and the payload fields of attrs
    objects, five levels deep at most. A batch of records (all bytes, all plain tuples, or all
    of one attrs class) is summed without a call per record level."""
    kind = type(value)
    if kind is bytes:
        return len(cast(bytes, value))
    if kind in _LEAVES:
        return 0
    if isinstance(value, bytes | bytearray | memoryview):
        return len(value)
    if depth > 4:
        return 0
    if isinstance(value, tuple | list):
        kinds = {*map(type, value)}
        if kinds <= _LEAVES:
            return 0
        if len(kinds) == 1 and depth < 4:
            (kind,) = kinds
            if kind is bytes:
                return sum(map(len, value))
            if kind is tuple:
                return sum(_payload_size(item, depth + 2) for record in value for item in record)
            if not issubclass(kind, tuple | list | bytearray | memoryview):
                return sum(
                    _payload_size(field, depth + 2)
                    for name in _payload_names(kind)
                    for field in map(attrgetter(name), value)
                )
        return sum(_payload_size(v, depth + 1) for v in value)
    return sum(_payload_size(getattr(value, n), depth + 1) for n in _payload_names(kind))


_LEAVES = frozenset({int, str, float, bool, type(None)})
"""Types that hold no payload and no fields."""


_PAYLOADS: dict[type, tuple[str, ...]] = {}


def _payload_names(cls: type) -> tuple[str, ...]:
    """The payload fields of an attrs class (empty for anything else), in field order."""
    names = _PAYLOADS.get(cls)
    if names is None:
        names = ()
        if attrs.has(cls):
            names = tuple(f.name for f in attrs.fields(cls) if f.name in _PAYLOAD_FIELDS)
        if len(_PAYLOADS) < _CACHED_CLASSES:
            _PAYLOADS[cls] = names
    return names


_CACHED_CLASSES = 4096
"""Classes whose field names (and describe plan) are kept: every protocol's event classes fit
many times over; classes made on the fly beyond that are looked at afresh each time."""
_NAMES: dict[type, tuple[str, ...]] = {}
_SCALARS = (int, str, float, bool, type(None))


def _field_names(value: object) -> tuple[str, ...]:
    """Field names of an attrs instance (empty for anything else), known once per class: rows
    ask for every event."""
    cls = type(value)
    names = _NAMES.get(cls)
    if names is None:
        names = tuple(f.name for f in attrs.fields(cls)) if attrs.has(cls) else ()
        if len(_NAMES) < _CACHED_CLASSES:
            _NAMES[cls] = names
    return names


@attrs.frozen(slots=True)
class _Plan:
    """Which of a class's fields ``describe_event`` looks at, in the order it looks."""

    stream: tuple[str, ...]
    offset: tuple[str, ...]
    count: tuple[str, ...]
    payload: tuple[str, ...]
    code: tuple[str, ...]


_PLANS: dict[type, _Plan | None] = {}


def _plan(event: object) -> _Plan | None:
    """The fields of ``event``'s class for each column (None: not an attrs class)."""
    cls = type(event)
    if cls in _PLANS:
        return _PLANS[cls]
    names = set(_field_names(event))
    plan = None
    if names:
        plan = _Plan(
            *(
                tuple(n for n in candidates if n in names)
                for candidates in (
                    _STREAM_FIELDS, _OFFSET_FIELDS, _COUNT_FIELDS, _PAYLOAD_FIELDS, _CODE_FIELDS
                )
            )
        )  # fmt: skip
    if len(_PLANS) < _CACHED_CLASSES:
        _PLANS[cls] = plan
    return plan


def describe_event(event: object) -> dict[str, Any]:
    """The key fields of an event, found by field name: stream, offset, count, payload bytes,
    error code. Works for every protocol's attrs events without knowing their classes."""
    found: dict[str, Any] = {}
    plan = _plan(event)
    if plan is None:
        return found
    for name in plan.stream:
        value = getattr(event, name)
        if value is not None:
            found["stream"] = _text(value)
            break
    for name in plan.offset:
        value = getattr(event, name)
        if value is not None:
            found["offset"] = _text(value)
            break
    for name in plan.count:
        value = getattr(event, name)
        if isinstance(value, tuple | list):
            found["count"] = len(value)
            found["payload_bytes"] = _payload_size(value)
            break
    else:
        count = getattr(event, "count", None)
        if isinstance(count, int) and not isinstance(count, bool):
            found["count"] = count
        payload = sum(_payload_size(getattr(event, n)) for n in plan.payload)
        if payload:
            found["payload_bytes"] = payload
    for name in plan.code:
        value = getattr(event, name)
        if value is not None:
            found["error_code"] = _text(value)
            break
    return found


def short_repr(value: object, limit: int = 200, depth: int = 0) -> str:
    """A repr that stays short however big the event: long bytes and tuples are cut, with their
    size said. Cheaper than ``repr`` of a whole record batch, which rows never need."""
    if type(value) in _SCALARS:
        return shorten(repr(value), limit)
    if isinstance(value, bytes):
        if len(value) <= 32:
            return repr(value)
        return f"{value[:24]!r}...({len(value)} bytes)"
    if isinstance(value, tuple) and not hasattr(value, "_fields"):  # named tuples keep their repr
        parts = [short_repr(v, limit, depth + 1) for v in value[:3]]
        if len(value) > 3:
            parts.append(f"...(+{len(value) - 3})")
        return "(" + ", ".join(parts) + ("," if len(value) == 1 else "") + ")"
    names = _field_names(value)
    if names and depth < 3:
        head = type(value).__name__ + "("
        parts = []
        size = len(head)
        for name in names:
            field = getattr(value, name)
            kind = type(field)
            if kind in _SCALARS:  # the common fields, without a call each
                text = repr(field)
                part = f"{name}={text if len(text) <= limit else text[: limit - 3] + '...'}"
            elif kind is bytes and len(field) <= 32:
                part = f"{name}={field!r}"
            else:
                part = f"{name}={short_repr(field, limit, depth + 1)}"
            parts.append(part)
            size += len(part) + 2
            if size > limit:  # the rest would be cut off anyway
                text = head + ", ".join(parts)
                if len(text) > limit:
                    return text[: limit - 3] + "..."
        return shorten(head + ", ".join(parts) + ")", limit)
    return shorten(repr(value), limit)


def shorten(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters, ``...`` marking the cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
