"""Type codes, the typed set, directions and event shapes."""

from __future__ import annotations

import attrs
import pytest

from s3p_codec import pravega as p
from s3p_codec.pravega._events import REPLIES, REQUESTS, TYPED

# The codes the protocol decisions list, each of which must be a typed event with its real layout.
NOTES_CODES = {
    "HELLO": -127, "PADDING": -1, "PARTIAL_EVENT": -2, "FLUSH_TO_STORAGE": -3, "EVENT": 0,
    "SETUP_APPEND": 1, "APPEND_SETUP": 2, "APPEND_BLOCK": 3, "APPEND_BLOCK_END": 4,
    "CONDITIONAL_APPEND": 5, "DATA_APPENDED": 7, "CONDITIONAL_CHECK_FAILED": 8,
    "READ_SEGMENT": 9, "SEGMENT_READ": 10, "GET_STREAM_SEGMENT_INFO": 11,
    "STREAM_SEGMENT_INFO": 12, "CREATE_SEGMENT": 20, "SEGMENT_CREATED": 21, "SEAL_SEGMENT": 28,
    "SEGMENT_SEALED": 29, "DELETE_SEGMENT": 30, "SEGMENT_DELETED": 31, "TRUNCATE_SEGMENT": 38,
    "SEGMENT_TRUNCATED": 39, "WRONG_HOST": 50, "SEGMENT_IS_SEALED": 51,
    "SEGMENT_ALREADY_EXISTS": 52, "NO_SUCH_SEGMENT": 53, "INVALID_EVENT_NUMBER": 55,
    "SEGMENT_IS_TRUNCATED": 56, "OPERATION_UNSUPPORTED": 57, "AUTH_TOKEN_CHECK_FAILED": 60,
    "ERROR_MESSAGE": 61, "CONDITIONAL_BLOCK_END": 89, "KEEP_ALIVE": 100,
}  # fmt: skip


@pytest.mark.parametrize(("name", "code"), sorted(NOTES_CODES.items()))
def test_every_code_of_the_notes_is_typed(name: str, code: int) -> None:
    kind = p.CommandType(code)
    assert kind.name == name
    assert kind in TYPED
    assert TYPED[kind].TYPE is kind


def test_all_codes_fit_in_a_signed_byte() -> None:
    # "Type codes (all fit in -127..127)"
    assert all(-127 <= int(kind) <= 127 for kind in p.CommandType)


def test_every_real_code_travels_one_way_except_hello_and_keep_alive() -> None:
    both = REQUESTS & REPLIES
    assert both == {p.CommandType.HELLO, p.CommandType.KEEP_ALIVE}
    assert set(p.CommandType) - {p.CommandType.EVENT} == REQUESTS | REPLIES


@pytest.mark.parametrize("cls", sorted(TYPED.values(), key=lambda c: int(c.TYPE)))
def test_events_are_frozen_slotted_and_fields_follow_the_wire_order(cls: type) -> None:
    assert attrs.has(cls)
    assert "__slots__" in cls.__dict__
    names = [a.name for a in attrs.fields(cls)]
    wire = [f[0] for f in cls.FIELDS]
    if cls is not p.Padding:
        assert names == wire
    optional = [f for f in cls.FIELDS if len(f) == 3]
    # Optional fields are trailing: "fields were added at the end over time".
    assert cls.FIELDS[len(cls.FIELDS) - len(optional) :] == tuple(optional)


def test_events_are_immutable() -> None:
    event = p.SegmentCreated(1, "s")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        event.segment = "t"  # type: ignore[misc]


def test_opaque_carries_the_code_name() -> None:
    assert p.Opaque(p.CommandType.READ_TABLE, b"x").name == "READ_TABLE"
