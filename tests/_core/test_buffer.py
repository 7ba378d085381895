"""ReceiveBuffer: exact consumption, bounded lines, and linear cost under any chunking."""

from __future__ import annotations

import struct
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec._core.buffer import BufferOverflow, ReceiveBuffer


def test_take_returns_none_and_consumes_nothing_when_short() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"abc")
    assert buf.take(4) is None
    assert buf.take(2) == b"ab"
    assert buf.position == 2
    assert len(buf) == 1


def test_read_line_strips_the_terminator_and_waits_for_it() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"+OK\r")
    assert buf.read_line(16) is None
    buf.feed(b"\nrest")
    assert buf.read_line(16) == b"+OK"
    assert buf.take_all() == b"rest"
    assert not buf


def test_read_line_does_not_accept_lf_alone() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"+OK\n+NO\r\n")
    assert buf.read_line(16) == b"+OK\n+NO"


def test_a_terminator_split_across_feeds_is_found() -> None:
    buf = ReceiveBuffer()
    for byte in b"hello\r\nworld\r\n":
        buf.feed(bytes([byte]))
    assert buf.read_line(16) == b"hello"
    assert buf.read_line(16) == b"world"


def test_an_overlong_line_overflows_before_its_terminator() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"x" * 10)
    assert buf.read_line(10) is None
    buf.feed(b"x")
    with pytest.raises(BufferOverflow):
        buf.read_line(10)


def test_a_line_at_exactly_the_limit_is_accepted() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"x" * 10 + b"\r")
    assert buf.read_line(10) is None  # the CR may begin the terminator
    buf.feed(b"\n")
    assert buf.read_line(10) == b"x" * 10


def test_position_survives_compaction() -> None:
    buf = ReceiveBuffer()
    payload = b"y" * 200_000
    buf.feed(payload + b"tail")
    assert buf.take(len(payload)) == payload
    assert buf.position == len(payload)
    assert buf.peek(4) == b"tail"
    assert buf.skip(10) == 4
    assert buf.position == len(payload) + 4


@given(st.binary(max_size=300), st.lists(st.integers(1, 40), max_size=30))
def test_lines_are_the_same_under_any_chunking(data: bytes, cuts: list[int]) -> None:
    whole = ReceiveBuffer()
    whole.feed(data)
    expected = []
    while (line := whole.read_line(1000)) is not None:
        expected.append(line)
    chunked = ReceiveBuffer()
    got = []
    rest = data
    for cut in [*cuts, len(data)]:
        chunked.feed(rest[:cut])
        rest = rest[cut:]
        while (line := chunked.read_line(1000)) is not None:
            got.append(line)
    assert got == expected


def _feed_bytewise(size: int) -> float:
    buf = ReceiveBuffer()
    chunk = b"a" * size
    began = time.perf_counter()
    for i in range(size):
        buf.feed(chunk[i : i + 1])
        assert buf.read_line(size + 1) is None
    buf.feed(b"\r\n")
    assert buf.read_line(size + 1) == chunk
    return time.perf_counter() - began


def test_a_long_line_fed_one_byte_at_a_time_costs_linear_time() -> None:
    # A rescanning buffer is quadratic: 4x the bytes would cost 16x. Allow generous noise.
    _feed_bytewise(20_000)
    small = min(_feed_bytewise(50_000) for _ in range(3))
    large = min(_feed_bytewise(200_000) for _ in range(3))
    assert large < small * 8, (small, large)


def test_window_exposes_the_unconsumed_bytes_in_place_for_unpack_from() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"xx\x00\x00\x00\x03abc\x00")
    buf.skip(2)
    data, start, end = buf.window()
    assert bytes(data[start:end]) == b"\x00\x00\x00\x03abc\x00"
    (length,) = struct.unpack_from(">I", data, start)
    assert bytes(data[start + 4 : start + 4 + length]) == b"abc"
    assert buf.position == 2  # reading the window consumes nothing
    assert len(buf) == 8
    buf.skip(4 + length)
    data, start, end = buf.window()
    assert bytes(data[start:end]) == b"\x00"


def test_window_is_empty_when_everything_is_consumed() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"abc")
    assert buf.take_all() == b"abc"
    _data, start, end = buf.window()
    assert start == end
