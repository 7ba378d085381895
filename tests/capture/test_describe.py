"""The key columns of an event's row: the batch shortcuts of ``_payload_size`` and the common
cases of ``_text`` give exactly what the plain definitions give."""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

import attrs
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec.capture import _describe as describe
from s3p_codec.capture._describe import _PAYLOAD_FIELDS, _payload_size, _text, plain


@attrs.frozen
class Record:
    payload: Any
    offset: int = 0


@attrs.frozen
class Batch:
    records: Any
    data: Any = b""
    name: str = "s"


class Pair(NamedTuple):
    ms: int
    value: Any


class Code(enum.Enum):
    ONE = "ERR_ONE"


def reference_size(value: object, depth: int = 0) -> int:
    """The plain definition: bytes count, sequences add up their items, attrs objects their
    payload fields, five levels deep at most."""
    if isinstance(value, bytes | bytearray | memoryview):
        return len(value)
    if depth > 4:
        return 0
    if isinstance(value, tuple | list):
        return sum(reference_size(v, depth + 1) for v in value)
    if attrs.has(type(value)):
        return sum(
            reference_size(getattr(value, f.name), depth + 1)
            for f in attrs.fields(type(value))
            if f.name in _PAYLOAD_FIELDS
        )
    return 0


_LEAF = st.one_of(
    st.binary(max_size=20),
    st.builds(bytearray, st.binary(max_size=5)),
    st.integers(),
    st.text(max_size=5),
    st.none(),
    st.booleans(),
)
values = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.lists(st.binary(max_size=9), max_size=6).map(tuple),  # a batch of bytes
        st.lists(st.builds(Record, inner), max_size=4).map(tuple),  # a batch of one class
        st.lists(st.tuples(st.integers(), inner), max_size=4).map(tuple),  # pairs
        st.builds(Pair, st.integers(), inner),
        st.builds(Batch, inner, inner),
    ),
    max_leaves=30,
)


@given(values, st.integers(0, 6))
def test_payload_size_is_the_plain_definition_at_any_depth(value: object, depth: int) -> None:
    assert _payload_size(value, depth) == reference_size(value, depth)


def reference_text(value: object) -> str | None:
    value = plain(value)
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return str(value)


_PLAIN = st.one_of(st.binary(), st.text(), st.integers(), st.booleans(), st.none())


@given(_PLAIN | st.sampled_from(Code))
def test_text_of_plain_values_is_the_plain_definition(value: object) -> None:
    assert _text(value) == reference_text(value)


def test_batches_of_records_are_summed_without_a_call_per_record(monkeypatch: Any) -> None:
    calls = []
    inner = describe._payload_size

    def counting(value: object, depth: int = 0) -> int:
        calls.append(depth)
        return inner(value, depth)

    monkeypatch.setattr(describe, "_payload_size", counting)
    assert counting(tuple(b"x" * n for n in range(1000))) == sum(range(1000))
    assert len(calls) == 1
