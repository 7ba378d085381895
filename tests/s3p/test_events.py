"""Timestamps and events: parse, format, integer ordering, immutability, exact types."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given

from s3p_codec import s3p
from s3p_codec.s3p import ErrorCode, Timestamp, TimestampStrategy
from s3p_codec.s3p._events import MAX_U64
from s3p_codec.testing.s3p import timestamps


def test_timestamp_parse_and_format() -> None:
    stamp = Timestamp.parse(b"1700000001234-7")
    assert stamp == Timestamp(1700000001234, 7)
    assert bytes(stamp) == stamp.format() == b"1700000001234-7"
    assert str(stamp) == "1700000001234-7"
    assert Timestamp.parse("0-0") == Timestamp(0, 0)
    assert Timestamp.parse(b"%d-%d" % (MAX_U64, MAX_U64)) == Timestamp(MAX_U64, MAX_U64)


@pytest.mark.parametrize(
    "text",
    [b"", b"1", b"1-", b"-1", b"1--1", b"1-1-1", b"+1-0", b"1-+0", b" 1-0", b"1-0 ", b"a-0",
     b"\xd9\xa1-0", b"18446744073709551616-0", b"0-18446744073709551616"],
)  # fmt: skip
def test_timestamp_parse_refuses_what_the_abnf_excludes(text: bytes) -> None:
    with pytest.raises(ValueError, match="timestamp"):
        Timestamp.parse(text)


def test_timestamps_order_by_ms_then_seq_as_integers_not_strings() -> None:
    assert Timestamp(9, 0) < Timestamp(10, 0)
    assert Timestamp.parse(b"9-0") < Timestamp.parse(b"10-0")
    assert Timestamp(5, 9) < Timestamp(5, 10) < Timestamp(6, 0)
    assert sorted([Timestamp(10, 0), Timestamp(9, 99), Timestamp(9, 100)]) == [
        Timestamp(9, 99),
        Timestamp(9, 100),
        Timestamp(10, 0),
    ]


@given(timestamps())
def test_timestamp_format_and_parse_round_trip(stamp: Timestamp) -> None:
    assert Timestamp.parse(bytes(stamp)) == stamp
    assert stamp.is_valid


def test_invalid_timestamps_are_flagged_for_send_side_validation() -> None:
    assert not Timestamp(-1, 0).is_valid
    assert not Timestamp(0, MAX_U64 + 1).is_valid
    assert not Timestamp(True, 0).is_valid
    assert not Timestamp(1.0, 0).is_valid  # type: ignore[arg-type]


def test_events_are_frozen_slotted_attrs_classes() -> None:
    for cls in (s3p.Create, s3p.Append, s3p.Read, s3p.Trim, s3p.Delete, s3p.Ok,
                s3p.AppendReply, s3p.ReadReply, s3p.ErrorReply):  # fmt: skip
        assert attrs.has(cls)
        assert "__slots__" in cls.__dict__
    event = s3p.Delete(b"orders")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        event.stream = b"other"  # type: ignore[misc]
    assert hash(s3p.Append(b"s", (b"a",))) == hash(s3p.Append(b"s", (b"a",)))


def test_error_codes_are_the_spec_strings() -> None:
    assert [code.value for code in ErrorCode] == [
        "ERR_BAD_FORMAT",
        "ERR_STREAM_EXISTS",
        "ERR_UNKNOWN_STREAM",
        "ERR_LIMITS",
        "ERR_NON_MONOTONIC_ID",  # v0.2.0 only: refused on the wire by a v0.1.0 connection
    ]
    assert ErrorCode.LIMITS == "ERR_LIMITS"
    assert [s.value for s in TimestampStrategy] == ["server", "client"]


def test_request_and_reply_aliases_cover_every_event() -> None:
    assert set(s3p.Request.__args__) == {s3p.Create, s3p.Append, s3p.Read, s3p.Trim, s3p.Delete}
    assert set(s3p.Reply.__args__) == {s3p.Ok, s3p.AppendReply, s3p.ReadReply, s3p.ErrorReply}
