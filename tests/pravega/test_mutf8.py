"""Java modified UTF-8: every form the protocol names, in strict and lenient mode."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec.pravega._mutf8 import MAX_UTF_BYTES, MUTF8Error, decode, encode


def test_ascii_is_one_byte_per_character() -> None:
    assert encode("segment/0") == b"segment/0"
    assert decode(b"segment/0") == "segment/0"


def test_nul_is_written_as_c0_80() -> None:
    assert encode("a\x00b") == b"a\xc0\x80b"
    assert decode(b"a\xc0\x80b") == "a\x00b"


def test_strict_rejects_a_raw_nul_byte() -> None:
    with pytest.raises(MUTF8Error, match="NUL"):
        decode(b"a\x00b")
    with pytest.raises(MUTF8Error, match="NUL"):
        decode(b"\xc3\xa9\x00")


def test_lenient_accepts_a_raw_nul_byte_like_java() -> None:
    assert decode(b"a\x00b", strict=False) == "a\x00b"


@pytest.mark.parametrize(
    ("text", "wire"),
    [
        ("\u0080", b"\xc2\x80"),
        ("é", b"\xc3\xa9"),
        ("\u07ff", b"\xdf\xbf"),
        ("\u0800", b"\xe0\xa0\x80"),
        ("€", b"\xe2\x82\xac"),
        ("\uffff", b"\xef\xbf\xbf"),
    ],
)
def test_two_and_three_byte_forms(text: str, wire: bytes) -> None:
    assert encode(text) == wire
    assert decode(wire) == text


def test_supplementary_characters_are_surrogate_pairs_of_three_bytes_each() -> None:
    # U+1F600 = D83D DE00: "each UTF-16 surrogate encoded separately as 3 bytes"
    assert encode("\U0001f600") == b"\xed\xa0\xbd\xed\xb8\x80"
    assert decode(b"\xed\xa0\xbd\xed\xb8\x80") == "\U0001f600"
    assert decode(b"\xed\xa0\xbd\xed\xb8\x80", strict=False) == "\U0001f600"


@pytest.mark.parametrize("strict", [True, False])
def test_four_byte_forms_are_rejected(strict: bool) -> None:
    with pytest.raises(MUTF8Error):
        decode(b"\xf0\x9f\x98\x80", strict=strict)


@pytest.mark.parametrize(
    ("wire", "lenient"),
    [
        (b"\xc1\x81", "A"),  # overlong 2-byte "A"
        (b"\xe0\x81\x81", "A"),  # overlong 3-byte "A"
        (b"\xe0\x9f\xbf", "\u07ff"),  # overlong 3-byte U+07FF
        (b"\xc0\xaf", "/"),
    ],
)
def test_overlong_forms_rejected_strict_accepted_lenient(wire: bytes, lenient: str) -> None:
    with pytest.raises(MUTF8Error):
        decode(wire)
    assert decode(wire, strict=False) == lenient


@pytest.mark.parametrize(
    ("wire", "lenient"),
    [
        (b"\xed\xa0\xbd", "\ud83d"),  # lone high surrogate
        (b"\xed\xb8\x80x", "\ude00x"),  # lone low surrogate
        (b"\xed\xa0\xbd\xed\xa0\xbd", "\ud83d\ud83d"),  # high followed by high
        (b"\xed\xb8\x80\xed\xa0\xbd", "\ude00\ud83d"),  # pair in the wrong order
    ],
)
def test_broken_surrogates_rejected_strict_accepted_lenient(wire: bytes, lenient: str) -> None:
    with pytest.raises(MUTF8Error, match="surrogate"):
        decode(wire)
    assert decode(wire, strict=False) == lenient


@pytest.mark.parametrize(
    "wire",
    [b"\x80", b"abc\xbf", b"\xc3", b"\xe2\x82", b"\xc3\x41", b"\xe2\x41\x82", b"\xff", b"\xf8"],
)
@pytest.mark.parametrize("strict", [True, False])
def test_structurally_broken_input_is_rejected_in_both_modes(wire: bytes, strict: bool) -> None:
    with pytest.raises(MUTF8Error):
        decode(wire, strict=strict)


def test_strict_encode_refuses_lone_surrogates() -> None:
    with pytest.raises(MUTF8Error, match="surrogate"):
        encode("\ud800")


def test_lenient_encode_writes_a_lone_surrogate_like_java() -> None:
    assert encode("\ud800", strict=False) == b"\xed\xa0\x80"
    assert decode(b"\xed\xa0\x80", strict=False) == "\ud800"


def test_65535_bytes_is_the_limit() -> None:
    assert len(encode("a" * 65535)) == MAX_UTF_BYTES
    assert len(encode("é" * 32767 + "a")) == 65535
    with pytest.raises(MUTF8Error, match="65535"):
        encode("a" * 65536)
    with pytest.raises(MUTF8Error, match="65535"):
        encode("\x00" * 32768)  # 2 bytes each once written
    assert decode(b"a" * 65535) == "a" * 65535


@given(st.text())
def test_round_trip_of_any_text(text: str) -> None:
    wire = encode(text) if len(text) * 3 <= 65535 else None
    if wire is None:
        return
    assert b"\x00" not in wire
    assert all(byte < 0xF0 for byte in wire)
    assert decode(wire) == text
    assert decode(wire, strict=False) == text


@given(st.binary(max_size=40))
def test_garbage_gives_text_or_mutf8_error(data: bytes) -> None:
    for strict in (True, False):
        try:
            text = decode(data, strict=strict)
        except MUTF8Error:
            continue
        assert isinstance(text, str)
        if strict:
            assert encode(text) == data
