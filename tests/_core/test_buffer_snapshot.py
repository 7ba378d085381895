"""ReceiveBuffer rules that mutation testing found unchecked (docs/development.rst, "Mutation
testing"): a pickled buffer resumes exactly where the original would, whatever it was doing (a
consumed prefix, a bytearray storage, a payload collected aside), and ``len``/``bool`` count the
frame being collected aside."""

from __future__ import annotations

import pickle
import struct

import pytest

from s3p_codec._core.buffer import ASIDE_MIN, BufferOverflow, FrameTooLong, ReceiveBuffer

_FRAME = struct.Struct(">HI")


def _frame(tag: int, payload: bytes) -> bytes:
    return _FRAME.pack(tag, len(payload)) + payload


def _roundtrip(buf: ReceiveBuffer) -> ReceiveBuffer:
    restored = pickle.loads(pickle.dumps(buf))
    assert type(restored) is type(buf)
    return restored


def test_a_snapshot_keeps_only_the_unconsumed_bytes_and_their_offset() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"abcdef")
    assert buf.take(2) == b"ab"
    state = buf.__getstate__()
    assert (bytes(state["data"]), state["pos"], state["base"]) == (b"cdef", 0, 2)
    assert state["line_scan"] == buf.line_scan
    restored = _roundtrip(buf)
    assert (restored.position, len(restored)) == (2, 4)
    assert restored.take_all() == b"cdef"
    assert restored.position == 6


def test_a_snapshot_of_an_untouched_buffer_is_its_storage_as_is() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"xyz")
    state = buf.__getstate__()
    assert (state["data"], state["pos"], state["base"]) == (b"xyz", 0, 0)


def test_a_snapshot_keeps_a_bytearray_storage_a_bytearray() -> None:
    buf = ReceiveBuffer()
    wire = _frame(1, b"one") + _frame(2, b"two")
    buf.feed(wire[:12])
    assert buf.take_frame(_FRAME, 16) == ((1, 3), b"one")
    buf.feed(wire[12:])  # the second frame spans chunks: a bytearray
    buf.pos += 1  # a consumed prefix inside the bytearray
    state = buf.__getstate__()
    assert type(state["data"]) is bytearray
    assert bytes(state["data"]) == wire[10:]
    buf.pos -= 1
    restored = _roundtrip(buf)
    assert restored.take_frame(_FRAME, 16) == ((2, 3), b"two")
    assert restored.position == len(wire)


def test_a_snapshot_taken_while_a_payload_is_aside_resumes_it() -> None:
    payload = bytes(range(256)) * (ASIDE_MIN // 256 + 8)
    wire = b"xy" + _frame(9, payload) + _frame(1, b"after")
    buf = ReceiveBuffer()
    buf.feed(wire[:1000])
    assert buf.take(2) == b"xy"
    assert buf.take_frame(_FRAME, len(payload)) is None
    buf.feed(wire[1000:40_000])
    assert buf  # the frame being collected is buffered, though the storage is empty
    assert buf._aside is not None
    state = buf.__getstate__()
    assert all(type(piece) is not memoryview for piece in state["_aside"])
    assert b"".join(state["_aside"]) == wire[2 + _FRAME.size : 40_000]
    restored = _roundtrip(buf)
    assert (restored.position, len(restored)) == (2, 40_000 - 2)
    assert restored
    # The rest of the payload and the next frame in one chunk: the storage holds the next frame
    # while the payload is still aside, and both count.
    restored.feed(wire[40_000:])
    assert len(restored) == len(wire) - 2
    assert restored.take_frame(_FRAME, len(payload)) == ((9, len(payload)), payload)
    assert restored.take_frame(_FRAME, 16) == ((1, 5), b"after")
    assert restored.position == len(wire)
    assert not restored


def test_the_internal_errors_say_what_was_refused() -> None:
    overflow = BufferOverflow(10)
    assert (overflow.limit, str(overflow)) == (10, "line longer than 10 bytes")
    too_long = FrameTooLong(1000, 999, (7, 1000))
    assert str(too_long) == "frame length 1000 outside 0..999"


# --- reads, bounds and offsets the main buffer tests left open -----------------------------


def _aside_buffer() -> tuple[ReceiveBuffer, bytes]:
    """A buffer collecting a big payload aside, with 90 000 bytes of its frame received."""
    wire = _frame(3, bytes(range(256)) * (ASIDE_MIN // 256 + 100))
    buf = ReceiveBuffer()
    buf.feed(wire[:100])
    assert buf.take_frame(_FRAME, len(wire)) is None
    buf.feed(wire[100:90_000])
    assert buf._aside is not None
    return buf, wire


def test_every_read_while_a_payload_is_aside_sees_the_frame_first() -> None:
    buf, wire = _aside_buffer()
    assert buf.peek_byte(1) == wire[1]
    buf, wire = _aside_buffer()
    data, start, end = buf.window()
    assert bytes(data[start:end]) == wire[:90_000]
    buf, wire = _aside_buffer()
    assert buf.take(4) == wire[:4]
    assert (buf.position, len(buf)) == (4, 90_000 - 4)
    assert buf.take(4) == wire[4:8]  # a second read does not put anything back again
    assert (buf.position, len(buf)) == (8, 90_000 - 8)
    buf, wire = _aside_buffer()
    assert buf.take_all() == wire[:90_000]
    buf, wire = _aside_buffer()
    assert buf.skip(6) == 6
    assert buf.take(2) == wire[6:8]
    buf, wire = _aside_buffer()
    assert buf.find(wire[6:10]) == 6
    buf, wire = _aside_buffer()
    with pytest.raises(BufferOverflow):
        buf.read_line(16)


def test_a_payload_goes_aside_from_a_bytearray_storage_too() -> None:
    payload = bytes(range(256)) * (ASIDE_MIN // 256 + 4)
    wire = _frame(5, payload) + b"tail"
    buf = ReceiveBuffer()
    buf.feed(wire[:3])
    assert buf.take_frame(_FRAME, len(payload)) is None
    buf.feed(wire[3:1000])  # the header spanned chunks: the storage is a bytearray
    assert type(buf.window()[0]) is bytearray
    assert buf.take_frame(_FRAME, len(payload)) is None
    assert buf._aside is not None
    buf.feed(wire[1000:])
    assert buf.take_frame(_FRAME, len(payload)) == ((5, len(payload)), payload)
    assert buf.take_all() == b"tail"


def test_a_fed_bytearray_is_copied_since_the_caller_may_change_it() -> None:
    chunk = bytearray(b"hello")
    buf = ReceiveBuffer()
    buf.feed(chunk)
    chunk[0:5] = b"XXXXX"
    buf.feed(memoryview(b" world"))
    assert buf.take_all() == b"hello world"


def test_take_of_exactly_what_is_buffered_succeeds() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"abcd")
    assert buf.take(4) == b"abcd"
    assert buf.take(0) == b""


def test_peek_byte_and_find_are_relative_to_the_unconsumed_bytes() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"xxabcab")
    buf.skip(2)
    assert (buf.peek_byte(), buf.peek_byte(4), buf.peek_byte(5)) == (ord("a"), ord("b"), -1)
    assert buf.find(b"ab") == 0
    assert buf.find(b"ab", 1) == 3
    assert buf.find(b"zz") == -1


def test_an_empty_line_is_a_line() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"\r\nnext\r\n")
    assert buf.read_line(4) == b""
    assert buf.read_line(4) == b"next"


def test_a_cr_past_the_bound_followed_by_another_byte_overflows() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"x" * 10 + b"\rx")
    with pytest.raises(BufferOverflow) as caught:
        buf.read_line(10)
    assert caught.value.limit == 10
    buf = ReceiveBuffer()
    buf.feed(b"x" * 12 + b"\r\n")
    with pytest.raises(BufferOverflow) as caught:
        buf.read_line(10)
    assert caught.value.limit == 10


def test_the_line_bound_counts_from_the_unconsumed_start() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"ab" + b"x" * 10)
    assert buf.take(2) == b"ab"
    assert buf.read_line(10) is None  # 10 bytes pending: within the bound


def test_a_terminator_split_across_feeds_is_found_after_the_offset_moved() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"first\r\n")
    assert buf.read_line(16) == b"first"  # everything consumed: base moves on
    for piece in (b"sec", b"ond\r", b"\nthird", b"\r", b"\n"):
        buf.feed(piece)
    assert buf.read_line(16) == b"second"
    assert buf.read_line(16) == b"third"
    assert buf.position == len(b"first\r\nsecond\r\nthird\r\n")


def test_compaction_keeps_the_offset_and_frees_the_consumed_prefix() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"ab")
    assert buf.take(1) == b"a"
    buf.feed(b"c" * 100)  # spans chunks: a bytearray with base 1
    buf.feed(b"d" * 200_000)
    assert buf.take(70_000) is not None
    assert buf.take(40_000) is not None  # 110 000 of 200 101 consumed: compact
    assert buf.position == 1 + 110_000
    _, start, end = buf.window()
    assert (start, end) == (0, 200_101 - 110_000)


def test_want_is_cleared_by_every_storage_change() -> None:
    buf, _ = _aside_buffer()
    buf.want = 99
    buf.peek(1)  # the payload aside is put back
    assert buf.want == 0
    buf.want = 99
    buf.skip(1)
    assert buf.want == 0
    payload = b"q" * (ASIDE_MIN + 10)
    wire = _frame(1, payload) + b"zz"
    buf = ReceiveBuffer()
    buf.feed(wire[:50])
    buf.want = 99
    assert buf.take_frame(_FRAME, len(payload)) is None  # put aside
    assert buf.want == 0
    buf.want = 99
    buf.feed(wire[50:])  # completes the payload; the storage is the rest of the chunk
    assert buf.want == 0
    buf = ReceiveBuffer()
    buf.feed(b"ab")
    buf.take(1)
    buf.feed(b"c" * 100)
    buf.feed(b"d" * 200_000)
    buf.take(70_000)
    buf.want = 99
    buf.take(40_000)  # compacts
    assert buf.want == 0


def test_repr_names_the_class_the_size_and_the_offset() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"abc")
    buf.take(1)
    assert repr(buf) == "<ReceiveBuffer 2 bytes at offset 1>"


def test_find_at_the_first_byte_of_the_storage() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"abc")
    assert buf.find(b"a") == 0


def test_a_line_searched_piece_by_piece_after_the_offset_moved_is_found() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"first\r\n")
    assert buf.read_line(16) == b"first"
    lines = []
    for piece in (b"sec", b"ond\r", b"\nthird", b"\r", b"\n"):
        buf.feed(piece)
        while (line := buf.read_line(16)) is not None:
            lines.append(line)
    assert lines == [b"second", b"third"]


def test_a_chunk_fed_after_a_codec_consumed_everything_in_place_keeps_the_offset() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"abc")
    buf.pos = 3  # a codec's own loop consumed it all, compact not called yet
    buf.feed(b"d")
    assert (buf.position, buf.take_all()) == (3, b"d")
