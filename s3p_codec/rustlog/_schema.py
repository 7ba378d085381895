"""Each message's fields, declared once, and everything derived from them.

The declaration is the event class: each field names its JSON type in its annotation
(``partition: Annotated[int, "u32"]``, the spelling of the spec's JSON Schema), and ``kinds``
says what each type means. From the classes this module derives:

- ``KNOWN_FIELDS`` (the fields each ``type`` defines; the others are ignored: "Add optional fields
  to existing messages" is a "Backward compatible change") and ``OPTIONAL_FIELDS``;
- one decoder per ``type`` (JSON object -> event, every field checked, ``FieldError`` naming the
  first bad field in field order), in ``REQUEST_DECODERS``/``RESPONSE_DECODERS`` and the tables
  the frame loop of ``wire`` looks up once per frame;
- one encoder per event class (event -> JSON object in field order, every field checked,
  ``LocalProtocolError`` if invalid), behind ``encode``;
- the trusted constructor inside each decoder: parser-built events skip attrs' ``__init__``
  (their values are checked and exact already) and have their slots filled directly.

Decoders and encoders are written out as Python source, one function per message, as attrs and
dataclasses write ``__init__``: a loop over per-field checkers would cost a Python call per
field, about as much as all the checks of a small request. A decoder reads every field, tests
them all in one expression (each kind's ``fast`` test) and only when that fails calls the
kinds' readers, which name the culprit. ``source(cls)`` shows the code of a class.

A rule that spans fields is written once beside the table: FetchResponse's "`next_offset` =
last record offset + 1" when there are records.

Schemas the spec leaves out, decided here (and in the package docstring):

- ``{"type":"DescribePartition","topic":str,"partition":u32}`` answered by
  ``{"type":"DescribePartitionResponse","topic":str,"partition":u32,"high_watermark":u64,
  "log_start_offset":u64,"segment_count":usize}`` (one entry of DescribeTopicResponse, named).
- ``{"type":"MetricsFetchResponse","metrics":{...}}``: one free-form JSON object under
  ``metrics``, so the message keeps the evolution rule (extra top-level fields are ignored) and a
  metric can never collide with ``type``.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any, Final

from s3p_codec._core import LocalProtocolError
from s3p_codec.rustlog._events import (
    REQUEST_TYPES,
    RESPONSE_TYPES,
    ErrorCode,
    FetchResponse,
    Record,
    Request,
    Response,
)
from s3p_codec.rustlog._kinds import (
    FAST_NAMES,
    AmbiguousNumber,
    Context,
    FieldError,
    Kind,
    TooDeep,
    check_extras,
    check_sizes,
    field_kinds,
)
from s3p_codec.rustlog._limits import Limits

__all__ = [
    "KNOWN_FIELDS",
    "OPTIONAL_FIELDS",
    "REQUEST_DECODERS",
    "RESPONSE_DECODERS",
    "AmbiguousNumber",
    "Context",
    "FieldError",
    "TooDeep",
    "check_extras",
    "encode",
    "source",
]

Decoder = Callable[[dict[str, Any], Context], Any]
Encoder = Callable[[Any, Limits], dict[str, object]]


# --- rules that span fields ----------------------------------------------------------------


def _fetch_response_rules(records: tuple[Record, ...], next_offset: int, ctx: Context) -> None:
    """"`next_offset` = last record offset + 1" when there are records; then record sizes."""
    if records and next_offset != records[-1].offset + 1:
        expected = records[-1].offset + 1
        raise FieldError(
            f"`next_offset` = last record offset + 1: expected {expected}, got {next_offset}"
        )
    if ctx.check_record_size:
        payloads = tuple(record.payload for record in records)
        check_sizes(payloads, ctx.limits.max_record_size, "records")


def _write_fetch_response_rules(event: FetchResponse) -> None:
    """"`next_offset` = last record offset + 1" for a FetchResponse we send."""
    records = event.records
    if records and event.next_offset != records[-1][0] + 1:
        raise LocalProtocolError(
            f"`next_offset` = last record offset + 1: expected {records[-1][0] + 1}, "
            f"got {event.next_offset}",
            code=ErrorCode.INVALID_REQUEST,
        )


_DECODE_RULES: Final[dict[type, Callable[..., None]]] = {FetchResponse: _fetch_response_rules}
"""Checks after every field is read: called with the fields' values, then the context."""
_ENCODE_RULES: Final[dict[type, Callable[[Any], None]]] = {
    FetchResponse: _write_fetch_response_rules
}
"""Checks after every field is written: called with the event."""


# --- generating the code of one message ----------------------------------------------------

_SOURCES: dict[type, str] = {}


def _compile(cls: type, what: str, lines: list[str], names: dict[str, Any]) -> Any:
    """Run the generated ``lines`` (one function) and return it; its source stays readable."""
    text = "\n".join(lines) + "\n"
    filename = f"<rustlog {what} of {cls.__name__}>"
    namespace = dict(names)
    exec(compile(text, filename, "exec"), namespace)  # our own generated source
    # Tracebacks and profilers show the generated lines, as for attrs' generated methods.
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    _SOURCES[cls] = _SOURCES.get(cls, "") + text
    return namespace[what]


def _extras_test(fields: tuple[tuple[str, Kind], ...]) -> str:
    """When to look at the fields a message does not know (``check_extras``)."""
    if any(kind.optional for _, kind in fields):
        return "True"  # a field may be absent: the count says nothing
    return f"len(obj) != {len(fields) + 1}"  # the known fields and "type"


def _decoder(cls: type) -> Decoder:
    """The decoder of ``cls``: checks ``obj``'s fields, builds the event without ``__init__``.

    Unknown fields are ignored, but one nested too deep raises ``TooDeep`` (``check_extras``).
    """
    fields = field_kinds(cls)
    names: dict[str, Any] = {
        "_new": object.__new__,
        "_cls": cls,
        "_extras": check_extras,
        "_known": frozenset({"type", *(name for name, _ in fields)}),
        **FAST_NAMES,
    }
    if not fields:
        names["_instance"] = cls()
        lines = ["def decode(obj, ctx):"]
        lines.append(f"    if {_extras_test(fields)}:")
        lines.append("        _extras(obj, _known, 1)")
        lines.append("    return _instance")
        singleton: Decoder = _compile(cls, "decode", lines, names)
        return singleton
    values = [f"v{index}" for index in range(len(fields))]
    lines = ["def decode(obj, ctx):"]
    reads = []
    for index, (v, (key, kind)) in enumerate(zip(values, fields, strict=True)):
        names[f"_read{index}"] = kind.read
        reads.append(f"        {v} = _read{index}(obj, {key!r}, ctx)")
    # A subscript costs less than ``get``; an absent field (an error, or a null) and any value
    # the fast tests refuse go to the readers, which name the culprit.
    lines.append("    try:")
    lines += [f"        {v} = obj[{key!r}]" for v, (key, _) in zip(values, fields, strict=True)]
    lines.append("    except KeyError:")
    lines += reads
    test = " and ".join(kind.fast.format(v=v) for v, (_, kind) in zip(values, fields, strict=True))
    lines.append("    else:")
    lines.append(f"        if not ({test}):")
    lines += ["    " + read for read in reads]
    for index, (v, (key, kind)) in enumerate(zip(values, fields, strict=True)):
        if kind.convert is not None:
            names[f"_convert{index}"] = kind.convert
            lines.append(f"    {v} = _convert{index}({v}, {key!r}, ctx)")
    rule = _DECODE_RULES.get(cls)
    if rule is not None:
        names["_rule"] = rule
        lines.append(f"    _rule({', '.join(values)}, ctx)")
    lines.append("    event = _new(_cls)")
    for index, (v, (key, _)) in enumerate(zip(values, fields, strict=True)):
        names[f"_set{index}"] = cls.__dict__[key].__set__  # the slot itself: no frozen check
        lines.append(f"    _set{index}(event, {v})")
    lines.append(f"    if {_extras_test(fields)}:")
    lines.append("        _extras(obj, _known, 1)")
    lines.append("    return event")
    decoder: Decoder = _compile(cls, "decode", lines, names)
    return decoder


def _encoder(cls: type) -> Encoder:
    """The encoder of ``cls``: every field checked and written, in field order."""
    fields = field_kinds(cls)
    names: dict[str, Any] = {}
    lines = ["def encode(event, limits):"]
    # Arrays and objects are seen to be of the right type before any field is written.
    for index, (key, kind) in enumerate(fields):
        if kind.shape is not None:
            names[f"_shape{index}"] = kind.shape
            lines.append(f"    _shape{index}(event.{key}, {key!r}, {cls.__name__!r}, limits)")
    items = [f'"type": {cls.TYPE!r}']  # type: ignore[attr-defined]
    for index, (key, kind) in enumerate(fields):
        names[f"_write{index}"] = kind.write
        items.append(f"{key!r}: _write{index}(event.{key}, {key!r}, limits)")
    lines.append(f"    out = {{{', '.join(items)}}}")
    rule = _ENCODE_RULES.get(cls)
    if rule is not None:
        names["_rule"] = rule
        lines.append("    _rule(event)")
    lines.append("    return out")
    encoder: Encoder = _compile(cls, "encode", lines, names)
    return encoder


def source(cls: type) -> str:
    """The generated code of ``cls``'s decoder and encoder (for reading and debugging)."""
    return _SOURCES.get(cls, "")


# --- the derived tables --------------------------------------------------------------------

_FIELDS: Final[dict[type[Request | Response], tuple[tuple[str, Kind], ...]]] = {
    cls: field_kinds(cls) for cls in (*REQUEST_TYPES, *RESPONSE_TYPES)
}

KNOWN_FIELDS: Final[dict[str, frozenset[str]]] = {
    cls.TYPE: frozenset({"type", *(name for name, _ in fields)}) for cls, fields in _FIELDS.items()
}
"""Every field a message type defines, ``type`` included."""
OPTIONAL_FIELDS: Final = frozenset(
    cls.TYPE for cls, fields in _FIELDS.items() if any(kind.optional for _, kind in fields)
)
"""Types with a field that may be absent: their field count says nothing about extras."""

#: The decoder of each request ``type``: checks the fields and builds the event.
REQUEST_DECODERS: Final[dict[str, Callable[[dict[str, Any], Context], Request]]] = {
    cls.TYPE: _decoder(cls) for cls in REQUEST_TYPES
}
#: The decoder of each response ``type``: checks the fields and builds the event.
RESPONSE_DECODERS: Final[dict[str, Callable[[dict[str, Any], Context], Response]]] = {
    cls.TYPE: _decoder(cls) for cls in RESPONSE_TYPES
}

_ENCODERS: Final[dict[type[Any], Encoder]] = {cls: _encoder(cls) for cls in _FIELDS}


def encode(event: object, limits: Limits) -> dict[str, object]:
    """The JSON object for ``event``, every field checked; ``LocalProtocolError`` if invalid."""
    encoder = _ENCODERS.get(type(event))
    if encoder is None:
        raise LocalProtocolError(
            f"{type(event).__name__} is not a RustLog event", code=ErrorCode.INVALID_REQUEST
        )
    return encoder(event, limits)
