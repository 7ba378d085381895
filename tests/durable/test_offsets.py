"""Offsets: validity, sentinels, the reference shape and its ordering."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec.durable import offsets

PARTS = st.integers(min_value=0, max_value=10**16 - 1)


@pytest.mark.parametrize("char", [",", "&", "=", "?", "/"])
def test_offsets_must_not_contain_comma_ampersand_equals_question_mark_or_slash(char: str) -> None:
    assert offsets.offset_error(f"12{char}34") is not None


@pytest.mark.parametrize("bad", ["", " ", "a b", "a\x00", "a\n", "a\r\n", "caf\u00e9", "a\x7f"])
def test_offsets_are_printable_ascii_tokens_without_spaces(bad: str) -> None:
    assert offsets.offset_error(bad) is not None


def test_offsets_should_be_under_256_characters() -> None:
    assert offsets.offset_error("a" * 256) is None
    assert offsets.offset_error("a" * 257) is not None
    assert offsets.offset_error("a" * 300, max_length=300) is None


@pytest.mark.parametrize("good", ["-1", "now", "0000000000000000_0000000000000042", "abc-DEF_~.:"])
def test_valid_offsets_and_sentinels_pass(good: str) -> None:
    assert offsets.offset_error(good) is None


def test_the_sentinels_are_minus_one_and_now() -> None:
    assert offsets.BEGINNING == "-1"
    assert offsets.NOW == "now"
    assert offsets.is_sentinel("-1")
    assert offsets.is_sentinel("now")
    assert not offsets.is_sentinel("0000000000000000_0000000000000000")


def test_format_offset_is_the_reference_shape() -> None:
    assert offsets.format_offset(0, 42) == "0000000000000000_0000000000000042"
    assert offsets.format_offset(3, 0) == "0000000000000003_0000000000000000"


def test_format_offset_refuses_parts_out_of_range() -> None:
    with pytest.raises(ValueError, match="offset parts"):
        offsets.format_offset(-1, 0)
    with pytest.raises(ValueError, match="offset parts"):
        offsets.format_offset(0, 10**16)


@given(PARTS, PARTS)
def test_format_and_parse_round_trip(read_seq: int, position: int) -> None:
    assert offsets.parse_offset(offsets.format_offset(read_seq, position)) == (read_seq, position)


@given(PARTS, PARTS, PARTS, PARTS)
def test_formatted_offsets_sort_lexicographically_like_their_positions(
    a: int, b: int, c: int, d: int
) -> None:
    left, right = offsets.format_offset(a, b), offsets.format_offset(c, d)
    assert (left < right) == ((a, b) < (c, d))


@pytest.mark.parametrize(
    "other", ["-1", "now", "1_", "_1", "1_2_3", "a_1", "1_\u0661", "1" * 17 + "_1"]
)
def test_parse_offset_refuses_other_shapes(other: str) -> None:
    assert offsets.parse_offset(other) is None


@given(st.text())
def test_offset_error_never_raises(text: str) -> None:
    offsets.offset_error(text)
    offsets.parse_offset(text)
