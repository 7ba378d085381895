"""ReceiveBuffer: exact consumption, bounded lines, and linear cost under any chunking."""

from __future__ import annotations

import struct
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec._core.buffer import BufferOverflow, FrameTooLong, ReceiveBuffer


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
    began = time.process_time()
    for i in range(size):
        buf.feed(chunk[i : i + 1])
        assert buf.read_line(size + 1) is None
    buf.feed(b"\r\n")
    assert buf.read_line(size + 1) == chunk
    return time.process_time() - began


def test_a_long_line_fed_one_byte_at_a_time_costs_linear_time() -> None:
    # A rescanning buffer is quadratic: 4x the bytes would cost 16x. Allow generous noise, and
    # count this process's CPU time only (the suite may share the machine).
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


# --- adopting chunks, take_frame and payloads aside ----------------------------------------

_FRAME = struct.Struct(">HI")  # a tag and a payload length, as length-prefixed codecs have


def _frame(tag: int, payload: bytes) -> bytes:
    return _FRAME.pack(tag, len(payload)) + payload


def test_a_chunk_fed_into_an_empty_buffer_is_adopted_without_a_copy() -> None:
    buf = ReceiveBuffer()
    chunk = _frame(1, b"abc") + _frame(2, b"")
    buf.feed(chunk)
    data, start, end = buf.window()
    assert data is chunk
    assert (start, end) == (0, len(chunk))
    assert buf.take_frame(_FRAME, 16) == ((1, 3), b"abc")
    assert buf.take_frame(_FRAME, 16) == ((2, 0), b"")
    assert buf.take_frame(_FRAME, 16) is None
    assert buf.position == len(chunk)
    assert not buf


def test_a_frame_spanning_chunks_copies_only_the_unconsumed_tail() -> None:
    buf = ReceiveBuffer()
    wire = _frame(1, b"one") + _frame(2, b"two")
    buf.feed(wire[:12])
    assert buf.take_frame(_FRAME, 16) == ((1, 3), b"one")
    assert buf.take_frame(_FRAME, 16) is None
    buf.feed(wire[12:])
    data, start, end = buf.window()
    assert isinstance(data, bytearray)
    assert bytes(data[start:end]) == wire[9:]
    assert buf.take_frame(_FRAME, 16) == ((2, 3), b"two")
    assert buf.position == len(wire)


def test_a_big_frame_spanning_many_chunks_grows_a_bytearray() -> None:
    buf = ReceiveBuffer()
    wire = _frame(1, bytes(range(200)) * 50)
    buf.feed(wire[:6000])
    buf.feed(wire[6000:6100])  # the tail is longer than this chunk
    data, start, end = buf.window()
    assert isinstance(data, bytearray)
    assert bytes(data[start:end]) == wire[:6100]
    for at in range(6100, len(wire), 100):
        buf.feed(wire[at : at + 100])
    assert buf.take_frame(_FRAME, len(wire)) == ((1, len(wire) - _FRAME.size), wire[_FRAME.size :])
    assert not buf


def test_take_frame_rejects_a_length_over_the_limit_before_the_payload_arrives() -> None:
    buf = ReceiveBuffer()
    buf.feed(_FRAME.pack(7, 1000))
    with pytest.raises(FrameTooLong) as caught:
        buf.take_frame(_FRAME, 999)
    assert (caught.value.length, caught.value.limit, caught.value.fields) == (1000, 999, (7, 1000))
    assert len(buf) == _FRAME.size  # nothing consumed


def test_take_frame_rejects_a_negative_signed_length() -> None:
    signed = struct.Struct(">ii")
    buf = ReceiveBuffer()
    buf.feed(signed.pack(1, -1))
    with pytest.raises(FrameTooLong):
        buf.take_frame(signed, 100)


def test_a_big_payload_goes_aside_and_is_joined_once_with_offsets_kept() -> None:
    payload = bytes(range(256)) * 1024  # 256 KiB
    wire = b"xy" + _frame(9, payload) + _frame(1, b"after")
    buf = ReceiveBuffer()
    buf.feed(wire[:1000])
    assert buf.take(2) == b"xy"
    assert buf.take_frame(_FRAME, len(payload)) is None
    at = 1000
    for size in (5, 70_000, 1, 30_000, 100_000):  # pieces big and small
        buf.feed(wire[at : at + size])
        at += size
        assert buf.position == 2  # the frame is not consumed until it is returned
        assert len(buf) == at - 2
        assert buf.take_frame(_FRAME, len(payload)) is None
    buf.feed(wire[at:])
    assert buf.take_frame(_FRAME, len(payload)) == ((9, len(payload)), payload)
    assert buf.position == len(wire) - len(_frame(1, b"after"))
    assert buf.take_frame(_FRAME, 16) == ((1, 5), b"after")
    assert buf.position == len(wire)
    assert not buf


def test_any_read_while_a_payload_is_aside_sees_the_bytes_in_order() -> None:
    payload = b"p" * (200 * 1024)
    wire = _frame(3, payload)
    buf = ReceiveBuffer()
    buf.feed(wire[:100])
    assert buf.take_frame(_FRAME, len(payload)) is None
    buf.feed(wire[100:90_000])
    assert buf.peek(_FRAME.size) == wire[: _FRAME.size]  # the aside is put back
    assert buf.position == 0
    assert len(buf) == 90_000
    buf.feed(wire[90_000:])
    assert buf.take_all() == wire


@given(
    st.lists(st.tuples(st.integers(0, 65535), st.sampled_from([0, 1, 7, 70_000, 140_000]))),
    st.lists(st.integers(1, 50_000), max_size=40),
)
def test_frames_are_the_same_under_any_chunking(
    frames: list[tuple[int, int]], cuts: list[int]
) -> None:
    payloads = [(tag, bytes([tag % 251]) * size) for tag, size in frames[:6]]
    wire = b"".join(_frame(tag, payload) for tag, payload in payloads)
    buf = ReceiveBuffer()
    got: list[tuple[tuple[int, int], bytes]] = []
    at = 0
    for cut in [*cuts, len(wire)]:
        buf.feed(wire[at : at + cut])
        at += cut
        while (frame := buf.take_frame(_FRAME, 1 << 20)) is not None:
            got.append(frame)  # type: ignore[arg-type]
        if at >= len(wire):
            break
    assert got == [((tag, len(payload)), payload) for tag, payload in payloads]
    assert buf.position == len(wire)
    assert not buf


def test_a_huge_frame_fed_in_small_chunks_costs_linear_time() -> None:
    def feed(size: int) -> float:
        wire = _frame(1, b"z" * size)
        buf = ReceiveBuffer()
        began = time.process_time()
        for at in range(0, len(wire), 1460):
            buf.feed(wire[at : at + 1460])
            buf.take_frame(_FRAME, size)
        return time.process_time() - began

    # Both sizes well past the CPU caches, so that only the algorithm differs.
    small, big = min(feed(8 << 20) for _ in range(2)), min(feed(32 << 20) for _ in range(2))
    assert big < small * 4 * 3, (small, big)  # linear with slack; quadratic would be about 16x


# --- the storage read in place by codecs with their own readers --------------------------------


class _Joining(ReceiveBuffer):
    __slots__ = ()
    join_spans = True


def test_join_spans_joins_a_short_unconsumed_start_with_the_chunk_into_bytes() -> None:
    buf = _Joining()
    wire = _frame(1, b"one") + _frame(2, b"two")
    buf.feed(wire[:12])
    assert buf.take_frame(_FRAME, 16) == ((1, 3), b"one")
    buf.feed(wire[12:])  # 3 bytes left of the frame, 6 arriving: one bytes of 9
    assert type(buf.data) is bytes
    assert (buf.data, buf.pos, buf.base) == (wire[9:], 0, 9)
    assert buf.take_frame(_FRAME, 16) == ((2, 3), b"two")
    # A start longer than the chunk still grows a bytearray, in place from then on.
    buf.feed(wire[:8])
    buf.feed(wire[8:9])
    assert type(buf.data) is bytearray
    buf.feed(wire[9:10])
    assert buf.take_frame(_FRAME, 16) == ((1, 3), b"one")
    assert buf.position == len(wire) + 9


def test_want_is_cleared_whenever_the_storage_is_replaced_or_shifted() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"abc")
    buf.want = 10  # a codec's note: nothing to do below 10 bytes of storage
    buf.feed(b"d")  # a bytearray is started: the indices changed
    assert buf.want == 0
    buf.want = 10
    buf.feed(b"e")  # grown in place: the note still holds
    assert buf.want == 10
    buf.pos = 5
    buf.compact()  # everything consumed: reset
    assert (buf.want, buf.data, buf.position) == (0, b"", 5)
    buf.want = 3
    buf.feed(b"xyz")  # adopted
    assert buf.want == 0


def test_a_codec_with_its_own_headers_collects_a_payload_aside() -> None:
    payload = bytes(range(256)) * 400  # over ASIDE_MIN
    wire = b"LEN %d\n" % len(payload) + payload + b"!"
    buf = ReceiveBuffer()
    buf.feed(wire[:100])
    buf.pos = wire.index(b"\n") + 1  # the codec read its text header itself
    begin = buf.pos
    buf.put_aside(begin, begin + len(payload))
    assert buf.position == begin
    for at in range(100, len(wire), 999):
        buf.feed(wire[at : at + 999])
    assert not buf._aside_left
    assert buf.take_aside() == ((), payload)
    assert buf.data[buf.pos : buf.pos + 1] == b"!"  # the trailer, checked by the codec
    assert buf.position == len(wire) - 1
