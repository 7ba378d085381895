"""JSON in and out: the standard library by default, orjson when it is installed.

Both backends must give identical results for every payload (a test runs both). Where the two
parsers differ, the standard library's behaviour, restricted as below, is the reference:

- The payload is decoded as UTF-8 explicitly ("All payloads are UTF-8 encoded JSON"); given bytes,
  ``json.loads`` would also guess UTF-16 and UTF-32. A UTF-8 byte order mark is invalid JSON.
- ``NaN``, ``Infinity`` and ``-Infinity`` are rejected ("Valid JSON: Must parse successfully with
  standard JSON parser"; they are not JSON).
- When orjson rejects a payload (lone surrogate escapes, ``1e400``, very large integers), the
  standard library decides, so the outcome, event or error, is the same. orjson also reads
  integers beyond 64 bits as floats without complaint: typed fields reject both spellings with
  one message, and free-form values flag such a float as ambiguous (``exact_integers`` is False)
  so that the caller can decode that payload again with the standard library.
- Nesting: the standard library's parser recurses, so its depth limit depends on the caller's
  stack (``RecursionError`` here means malformed JSON), while orjson stops at 1024. The decoder
  (``wire``) holds both to ``MAX_JSON_DEPTH`` levels, at almost no cost: the parts of a message
  that its schema checks are shallow by construction, so only unknown fields, free-form values
  and messages already rejected are walked (``too_deep``).

Encoding is compact, keeps non-ASCII characters as UTF-8 and writes keys in insertion order, so
both backends produce the same bytes for every event without floats. Floats (only possible in
free-form metrics and details) may be spelled differently (``1e-07`` against ``1e-7``) but decode
to the same value.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from s3p_codec._core.checkpoint import allow
from s3p_codec._core.convert import as_tuple
from s3p_codec._core.extras import MissingExtra
from s3p_codec.rustlog._limits import MAX_JSON_DEPTH

__all__ = ["ORJSON", "STDLIB", "JsonBackend", "JsonDecodeFailure", "backend", "default_backend"]


class JsonDecodeFailure(Exception):
    """The payload is not UTF-8 (``utf8`` True) or not valid JSON; the caller types the error."""

    def __init__(self, message: str, *, utf8: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.utf8 = utf8


@attrs.frozen(slots=True)
class JsonBackend:
    """A pair of functions: ``loads(payload) -> value`` and ``dumps(value) -> bytes``.

    ``loads`` raises ``JsonDecodeFailure`` and nothing else. ``dumps`` is given only values
    already checked to be JSON (str keys, finite floats, 64-bit integers, valid strings).
    """

    name: str
    loads: Callable[[bytes], object]
    dumps: Callable[[object], bytes]
    exact_integers: bool
    """False when integers beyond 64 bits may come back as floats (orjson)."""
    loads_fast: Callable[[bytes | bytearray], object] | None = None
    """Optional quicker ``loads`` for the hot path, which also takes a ``bytearray``: when it
    raises one of ``fast_failures``, ``loads`` decides (same value, or ``JsonDecodeFailure``)."""
    fast_failures: tuple[type[Exception], ...] = attrs.field(default=(), converter=as_tuple)

    def __reduce__(self) -> tuple[Callable[[str], JsonBackend], tuple[str]]:
        # A snapshot names the backend; its functions (closures over orjson) do not pickle.
        return backend, (self.name,)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)

DEPTH_MESSAGE = f"JSON nested deeper than {MAX_JSON_DEPTH} levels"


def _children(node: Any) -> Iterator[object]:
    return iter(node.values() if type(node) is dict else node)


def too_deep(value: object, limit: int) -> bool:
    """True if ``value`` nests containers more than ``limit`` levels (``value`` is level 1).

    Depth first, one iterator per open level: memory is bounded by ``limit`` whatever the
    width (a frame of 3.4 million ``{}`` holds no extra copy of them), empty containers are
    never descended, and each element costs one type check.
    """
    kind = type(value)
    if kind is not dict and kind is not list:
        return False  # a scalar nests nothing
    if limit < 1:
        return True
    levels: list[Iterator[object]] = [_children(value)]
    while levels:
        for child in levels[-1]:
            kind = type(child)
            if kind is dict or kind is list:
                if len(levels) >= limit:
                    return True  # ``child`` sits at level len(levels) + 1, past the limit
                if child:  # an empty container has nothing deeper to visit
                    levels.append(_children(child))
                    break
        else:
            levels.pop()
    return False


def _stdlib_loads(payload: bytes | bytearray) -> object:
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonDecodeFailure(
            f"invalid UTF-8 in payload at byte {exc.start}", utf8=True
        ) from None
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise JsonDecodeFailure(DEPTH_MESSAGE) from None
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, over-long integer literals
        raise JsonDecodeFailure(f"malformed JSON: {exc}") from None
    return value


def _stdlib_dumps(value: object) -> bytes:
    return _ENCODER.encode(value).encode("utf-8")


STDLIB = JsonBackend(
    "json",
    _stdlib_loads,
    _stdlib_dumps,
    exact_integers=True,
    loads_fast=_stdlib_loads,
    fast_failures=(JsonDecodeFailure,),
)
"""The standard library's ``json``: always available, the reference behaviour."""


def _make_orjson() -> JsonBackend | None:
    try:
        import orjson  # noqa: PLC0415 - optional extra
    except ImportError:  # pragma: no cover - orjson is an optional extra
        return None
    orjson_loads = orjson.loads
    orjson_dumps = orjson.dumps
    failure = orjson.JSONDecodeError

    def loads(payload: bytes) -> object:
        try:
            value = orjson_loads(payload)
        except failure:
            # Let the reference decide: it either fails the same way or accepts what orjson
            # refuses (lone surrogate escapes, 1e400, huge integers), and then its value counts.
            return _stdlib_loads(payload)
        return value

    def dumps(value: object) -> bytes:
        return orjson_dumps(value)

    # The hot path calls orjson directly (no wrapper frame); on any failure ``loads`` decides.
    return JsonBackend(
        "orjson",
        loads,
        dumps,
        exact_integers=False,
        loads_fast=orjson_loads,
        fast_failures=(ValueError,),
    )


ORJSON: JsonBackend | None = _make_orjson()
"""orjson, when installed (the ``orjson`` extra); else None."""


def default_backend() -> JsonBackend:
    """orjson when installed, else the standard library."""
    return ORJSON if ORJSON is not None else STDLIB


@allow
def backend(name: str | JsonBackend | None = None) -> JsonBackend:
    """Resolve ``"json"``, ``"orjson"``, a backend, or None (the default).

    Raises ``ValueError`` for an unknown name, and ``MissingExtra`` (extra ``orjson``) for
    ``"orjson"`` without the orjson package.
    """
    if isinstance(name, JsonBackend):
        return name
    if name is None:
        return default_backend()
    if name == "json":
        return STDLIB
    if name == "orjson":
        if ORJSON is None:
            raise MissingExtra("orjson", "the rustlog orjson JSON backend", "orjson")
        return ORJSON
    raise ValueError(f"unknown JSON backend {name!r}; use 'json' or 'orjson'")
