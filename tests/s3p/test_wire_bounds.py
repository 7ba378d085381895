"""Wire rules that mutation testing found unchecked (docs/development.rst, "Mutation testing"):
CRLF after a payload collected aside, the exact edges of the reader's bounds, and what its
errors say."""

from __future__ import annotations

import pytest

from s3p_codec.s3p._events import ErrorCode
from s3p_codec.s3p._wire import Malformed, WireBuffer, WireReader, WireValue


def read_all(data: bytes, **bounds: int) -> list[WireValue]:
    reader = WireReader(**bounds)
    reader.feed(data)
    out = []
    while (value := reader.next_value()) is not None:
        out.append(value)
    return out


@pytest.mark.parametrize("trailer", [b"\r!", b"!\n", b"\n\r"])
def test_a_large_payload_collected_aside_needs_both_bytes_of_its_crlf(trailer: bytes) -> None:
    """ "MUST NOT accept LF-only or CR-only separators": after a payload that arrived in
    pieces, as after a whole one, half a CRLF is refused."""
    size = 1 << 17
    header = b"$%d\r\n" % size
    buffer = WireBuffer()
    buffer.feed(header + b"x" * 1000)
    assert buffer.read_header() == (0x24, size)
    assert buffer.take_bulk(size) is None  # collected aside from here
    buffer.feed(b"x" * (size - 1000))
    assert buffer.take_bulk(size) is None  # the CRLF is not here yet
    buffer.feed(trailer)
    with pytest.raises(Malformed, match="not followed by CRLF") as caught:
        buffer.take_bulk(size)
    assert caught.value.code is ErrorCode.BAD_FORMAT


def test_a_large_payload_collected_aside_is_read_with_its_crlf() -> None:
    size = 1 << 17
    reader = WireReader()
    reader.feed(b"*1\r\n$%d\r\n" % size + b"y" * 500)
    assert reader.next_value() is None
    reader.feed(b"y" * (size - 500) + b"\r")
    assert reader.next_value() is None
    reader.feed(b"\n")
    assert reader.next_value() == (b"y" * size,)
    assert not reader.in_value


def test_an_array_of_exactly_max_elements_is_accepted() -> None:
    assert read_all(b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", max_elements=2) == [(b"a", b"b")]
    with pytest.raises(Malformed, match="array of 3 elements is too long") as caught:
        read_all(b"*3\r\n", max_elements=2)
    assert caught.value.code is ErrorCode.LIMITS


def test_a_bulk_string_of_exactly_max_bulk_is_accepted() -> None:
    assert read_all(b"$3\r\nabc\r\n", max_bulk=3) == [b"abc"]
    with pytest.raises(Malformed) as caught:
        read_all(b"$4\r\n", max_bulk=3)
    assert caught.value.code is ErrorCode.LIMITS
    assert caught.value.message == "bulk string of 4 bytes exceeds the limit of 3"


def test_nesting_exactly_max_depth_is_accepted() -> None:
    nest = b"*1\r\n" * 3 + b"$1\r\nx\r\n"
    assert read_all(nest, max_depth=3) == [(((b"x",),),)]
    with pytest.raises(Malformed, match="nested deeper than 2"):
        read_all(nest, max_depth=2)


def test_the_default_nesting_bound_is_32() -> None:
    assert read_all(b"*1\r\n" * 32 + b"$1\r\nx\r\n")
    with pytest.raises(Malformed, match="nested deeper than 32"):
        read_all(b"*1\r\n" * 33 + b"$1\r\nx\r\n")


def test_mixed_types_in_a_nested_array_are_refused_in_the_spec_s_words() -> None:
    with pytest.raises(Malformed) as caught:
        read_all(b"*1\r\n*2\r\n$1\r\na\r\n+b\r\n")
    assert caught.value.code is ErrorCode.BAD_FORMAT
    assert caught.value.message == "arrays MUST NOT contain mixed types"


@pytest.mark.parametrize("trailer", [b"\r!", b"!\n"])
def test_a_whole_payload_needs_both_bytes_of_its_crlf(trailer: bytes) -> None:
    buffer = WireBuffer()
    buffer.feed(b"$3\r\nabc" + trailer)
    assert buffer.read_header() == (0x24, 3)
    with pytest.raises(Malformed, match="not followed by CRLF"):
        buffer.take_bulk(3)


def test_a_line_of_exactly_the_bound_is_read_and_one_more_byte_is_refused() -> None:
    buffer = WireBuffer()
    buffer.feed(b"12345\r")
    assert buffer.read_line(5) is None  # the CR may begin the CRLF
    buffer.feed(b"\n")
    assert buffer.read_line(5) == b"12345"
    buffer = WireBuffer()
    buffer.feed(b"123456\r\n")
    with pytest.raises(Malformed, match="line longer than 5 bytes"):
        buffer.read_line(5)
    buffer = WireBuffer()
    buffer.feed(b"1234567")
    with pytest.raises(Malformed, match="line longer than 5 bytes without CRLF"):
        buffer.read_line(5)


@pytest.mark.parametrize(
    ("data", "message"), [(b"\nx", "LF without CR"), (b"\rx", "CR without LF")]
)
def test_a_bare_separator_at_the_first_byte_is_refused(data: bytes, message: str) -> None:
    buffer = WireBuffer()
    buffer.feed(data)
    with pytest.raises(Malformed, match=message):
        buffer.read_line(16)


def test_an_empty_line_at_the_first_byte_is_a_line() -> None:
    buffer = WireBuffer()
    buffer.feed(b"\r\n+OK\r\n")
    assert buffer.read_line(16) == b""
    assert buffer.read_line(16) == b"+OK"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b"$-1\r\n",
            "RESP nulls and signs are not part of S3P (bulk string length starts with '-')",
        ),
        (b"*12x3\r\n", "array length must be ASCII decimal digits, got b'12x'"),
        (b"$x\r\n", "bulk string length must be ASCII decimal digits, got b'x'"),
    ],
)
def test_a_non_decimal_length_is_refused_showing_the_digits_read(data: bytes, message: str) -> None:
    with pytest.raises(Malformed) as caught:
        read_all(data)
    assert caught.value.code is ErrorCode.BAD_FORMAT
    assert caught.value.message == message
