"""An event of any protocol to the key columns of its row: stream, offset, count, payload size,
error code, and a short readable text.

The five protocols name the same ideas differently (``stream``, ``topic``, ``segment``...), and
a capture table wants one column for each idea; the fields are found by name on the attrs
events, so a protocol's new event type gets its columns without a line here.
"""

from __future__ import annotations

import enum
from typing import Any

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
    if isinstance(value, bytes | bytearray | memoryview):
        return len(value)
    if depth > 4:
        return 0
    if isinstance(value, tuple | list):
        return sum(_payload_size(v, depth + 1) for v in value)
    names = _field_names(value)
    return sum(_payload_size(getattr(value, n), depth + 1) for n in names if n in _PAYLOAD_FIELDS)


def _field_names(value: object) -> tuple[str, ...]:
    """Field names of an attrs instance (empty for anything else)."""
    cls = type(value)
    if not attrs.has(cls):
        return ()
    return tuple(f.name for f in attrs.fields(cls))


def describe_event(event: object) -> dict[str, Any]:
    """The key fields of an event, found by field name: stream, offset, count, payload bytes,
    error code. Works for every protocol's attrs events without knowing their classes."""
    found: dict[str, Any] = {}
    names = set(_field_names(event))
    if not names:
        return found
    for name in _STREAM_FIELDS:
        if name in names and getattr(event, name) is not None:
            found["stream"] = _text(getattr(event, name))
            break
    for name in _OFFSET_FIELDS:
        if name in names and getattr(event, name) is not None:
            found["offset"] = _text(getattr(event, name))
            break
    for name in _COUNT_FIELDS:
        if name in names and isinstance(getattr(event, name), tuple | list):
            found["count"] = len(getattr(event, name))
            found["payload_bytes"] = _payload_size(getattr(event, name))
            break
    else:
        count = getattr(event, "count", None)
        if isinstance(count, int) and not isinstance(count, bool):
            found["count"] = count
        payload = sum(_payload_size(getattr(event, n)) for n in _PAYLOAD_FIELDS if n in names)
        if payload:
            found["payload_bytes"] = payload
    for name in _CODE_FIELDS:
        if name in names and getattr(event, name) is not None:
            found["error_code"] = _text(getattr(event, name))
            break
    return found


def short_repr(value: object, limit: int = 200, depth: int = 0) -> str:
    """A repr that stays short however big the event: long bytes and tuples are cut, with their
    size said. Cheaper than ``repr`` of a whole record batch, which rows never need."""
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
        inner = ", ".join(f"{n}={short_repr(getattr(value, n), limit, depth + 1)}" for n in names)
        return shorten(f"{type(value).__name__}({inner})", limit)
    return shorten(repr(value), limit)


def shorten(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters, ``...`` marking the cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
