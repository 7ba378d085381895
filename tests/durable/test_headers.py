"""Header value syntax: Stream-Closed, Stream-TTL, RFC 3339 timestamps, integers."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec.durable import _headers as headers


@pytest.mark.parametrize("value", [b"true", b"TRUE", b"True", b" true "])
def test_stream_closed_is_present_when_its_value_is_true_case_insensitively(value: bytes) -> None:
    assert headers.is_true(value)


@pytest.mark.parametrize("value", [None, b"false", b"yes", b"1", b"", b"truee"])
def test_other_stream_closed_values_must_be_treated_as_absent(value: bytes | None) -> None:
    assert not headers.is_true(value)


@pytest.mark.parametrize(("text", "seconds"), [("0", 0), ("1", 1), ("3600", 3600)])
def test_ttl_is_a_non_negative_decimal_integer(text: str, seconds: int) -> None:
    assert headers.parse_ttl(text) == seconds


@pytest.mark.parametrize("text", ["+3600", "03600", "3600.0", "3.6e3", "-1", "", " 1", "1 ", "abc"])
def test_ttl_must_not_have_leading_zeros_signs_decimal_points_or_exponents(text: str) -> None:
    assert headers.parse_ttl(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "2025-01-01T00:00:00Z",
        "2025-01-01T00:00:00.123Z",
        "2025-01-01t00:00:00z",
        "2025-06-30T23:59:60+02:00",
        "2025-01-01T00:00:00.123456789-05:30",
    ],
)
def test_expires_at_accepts_rfc3339_timestamps(text: str) -> None:
    instant = headers.parse_rfc3339(text)
    assert instant is not None
    assert instant.tzinfo is not None


@pytest.mark.parametrize(
    "text",
    [
        "not-a-timestamp",
        "2025-01-01",
        "2025-01-01 00:00:00Z",
        "2025-01-01T00:00:00",
        "2025-13-01T00:00:00Z",
        "2025-02-30T00:00:00Z",
        "2025-01-01T24:00:00Z",
        "2025-01-01T00:00:00+24:00",
    ],
)
def test_expires_at_refuses_what_is_not_rfc3339(text: str) -> None:
    assert headers.parse_rfc3339(text) is None


def test_rfc3339_offsets_give_the_same_instant() -> None:
    left = headers.parse_rfc3339("2025-01-01T01:30:00+01:30")
    right = headers.parse_rfc3339("2025-01-01T00:00:00Z")
    assert left == right == datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)


@pytest.mark.parametrize("text", ["1abc", "0xyz", "1e3", "-1", "+1", "1.0", "", "9007199254740992"])
def test_producer_integers_refuse_other_formats_and_values_over_2_53_minus_1(text: str) -> None:
    assert headers.parse_non_negative(text, 2**53 - 1) is None


@given(st.text(max_size=40))
def test_header_parsers_never_raise(text: str) -> None:
    headers.parse_ttl(text)
    headers.parse_rfc3339(text)
    headers.parse_non_negative(text, 2**53 - 1)
