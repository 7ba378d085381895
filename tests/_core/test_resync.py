"""FrameSync: dropping a damaged frame, scanning for a plausible header, reporting the loss."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from s3p_codec._core import Direction, ReceiveBuffer, RemoteProtocolError
from s3p_codec._core.resync import FrameSync

_HEADER = struct.Struct(">I")  # a bare length, then a payload that starts with "{" and ends "}"
_C2S = Direction.CLIENT_TO_SERVER


def _frame(body: bytes) -> bytes:
    payload = b"{" + body + b"}"
    return _HEADER.pack(len(payload)) + payload


def _length(fields: tuple[int, ...]) -> int | None:
    return fields[0] if 2 <= fields[0] <= 64 else None


def _check(data: bytes | bytearray, start: int, end: int) -> bool:
    return data[start + 4] == ord("{") and data[end - 1] == ord("}")


def _buffer(data: bytes) -> ReceiveBuffer:
    buffer = ReceiveBuffer()
    buffer.feed(data)
    return buffer


def test_a_gap_inside_a_frame_keeps_the_boundary_and_drops_the_rest() -> None:
    sync = FrameSync()
    assert sync.gap(3, missing=10)
    buffer = _buffer(b"1234567" + _frame(b"next"))
    assert sync.drop(buffer)
    assert buffer.peek(4) == _frame(b"next")[:4]


def test_a_gap_longer_than_the_frame_loses_the_boundary() -> None:
    sync = FrameSync()
    assert not sync.gap(11, missing=10)
    assert not sync.gap(1, missing=None)


def test_a_gap_inside_the_dropped_part_of_a_frame_still_fits() -> None:
    sync = FrameSync()
    assert sync.gap(2, missing=10)
    assert sync.gap(8, missing=None)
    assert not sync.gap(1, missing=None)


def test_scanning_finds_the_next_plausible_frame_and_reports_what_was_skipped() -> None:
    sync = FrameSync()
    error = RemoteProtocolError("bad length", code="bad")
    sync.lose(error, start=100)
    garbage = b"\xff\xff{junk\x00\x00\x00"
    buffer = ReceiveBuffer()
    buffer.feed(b"x" * 100)
    buffer.skip(100)
    buffer.feed(garbage + _frame(b"ok"))
    assert sync.scan(buffer, _HEADER, _length, _check, anchor=b"{")
    assert buffer.peek(8) == _frame(b"ok")[:8]
    reported = sync.resynchronized(_C2S, buffer.position)
    assert reported is not None
    assert (reported.start, reported.skipped, reported.resynchronized) == (100, len(garbage), True)
    assert not sync.scanning


def test_a_candidate_not_all_here_is_waited_for() -> None:
    sync = FrameSync()
    sync.lose(None, start=0)
    whole = b"zz" + _frame(b"a" * 20)
    buffer = _buffer(whole[:10])
    assert not sync.scan(buffer, _HEADER, _length, _check)
    assert buffer.position == 2  # the garbage before the candidate is gone
    buffer.feed(whole[10:])
    assert sync.scan(buffer, _HEADER, _length, _check)
    assert sync.resynchronized(_C2S, buffer.position) is None  # a gap has no error to report


def test_abandoned_reports_the_rest_of_a_stream_that_never_resynchronised() -> None:
    sync = FrameSync()
    error = RemoteProtocolError("bad", code="bad")
    sync.lose(error, start=5)
    sync.lose(RemoteProtocolError("later", code="later"), start=9)  # the first cause stays
    reported = sync.abandoned(_C2S, 50)
    assert reported is not None
    assert (reported.error, reported.start, reported.skipped) == (error, 5, 45)
    assert not reported.resynchronized


@given(st.binary(max_size=200), st.lists(st.integers(1, 30), max_size=20), st.booleans())
def test_scanning_finds_the_same_frame_under_any_chunking(
    garbage: bytes, cuts: list[int], anchored: bool
) -> None:
    wire = garbage + _frame(b"sync") * 2
    whole = FrameSync()
    whole.lose(None, 0)
    buffer = _buffer(wire)
    anchor = b"{" if anchored else None
    assert whole.scan(buffer, _HEADER, _length, _check, anchor=anchor)
    expected = buffer.position
    chunked = FrameSync()
    chunked.lose(None, 0)
    buffer = ReceiveBuffer()
    at = 0
    found = False
    for cut in [*cuts, len(wire)]:
        buffer.feed(wire[at : at + cut])
        at += cut
        if chunked.scan(buffer, _HEADER, _length, _check, anchor=anchor):
            found = True
            break
    assert found
    assert buffer.position == expected
