"""FrameSync's rules in detail: where a gap leaves the boundary, how ``scan`` tries offsets (each
once, a whole candidate only, waiting for it and its lookahead unless the stream ended, dropping
what no candidate can begin with) and what is reported, in which direction, when."""

from __future__ import annotations

import struct

import pytest

from s3p_codec._core import Direction, ReceiveBuffer, RemoteProtocolError
from s3p_codec._core.resync import FrameSync
from s3p_codec.rustlog import ErrorCode

_HEADER = struct.Struct(">I")  # a bare length, then a payload that starts with "{" and ends "}"
_S2C = Direction.SERVER_TO_CLIENT


def _frame(body: bytes) -> bytes:
    payload = b"{" + body + b"}"
    return _HEADER.pack(len(payload)) + payload


def _buffer(data: bytes) -> ReceiveBuffer:
    buffer = ReceiveBuffer()
    buffer.feed(data)
    return buffer


class _Protocol:
    """``payload_length`` and ``check`` that count their calls: ``scan`` tries each offset of a
    chunk once, so more calls than ``most`` (the offsets a test expects tried) is a failure, and
    never an endless loop; and ``scan`` hands ``check`` only whole candidates."""

    def __init__(self, most: int, *, lengths: int = 64, empty: bool = False) -> None:
        self.most = most
        self.lengths = lengths  # the longest plausible payload
        self.empty = empty  # a header alone is a frame (payload length 0)
        self.calls = 0

    def length(self, fields: tuple[int, ...]) -> int | None:
        self.calls += 1
        assert self.calls <= self.most, "more offsets tried than there are"
        (value,) = fields
        if self.empty:
            return 0 if value == 0 else None
        return value if 2 <= value <= self.lengths else None

    def check(self, data: bytes | bytearray, start: int, end: int) -> bool:
        assert end <= len(data), "check was given a candidate that is not all here"
        if self.empty:
            return end - start == _HEADER.size
        return data[start + 4] == ord("{") and data[end - 1] == ord("}")


def _error() -> RemoteProtocolError:
    return RemoteProtocolError("bad length", code=ErrorCode.INVALID_REQUEST, fatal=False)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        ([], "<FrameSync in step>"),
        (["gap"], "<FrameSync dropping 8>"),
        (["lose"], "<FrameSync scanning>"),
        (["gap", "lose"], "<FrameSync scanning>"),
    ],
)
def test_the_repr_says_which_of_the_three_states_it_is_in(steps: list[str], expected: str) -> None:
    sync = FrameSync()
    for step in steps:
        if step == "gap":
            assert sync.gap(2, missing=10)
        else:
            sync.lose(None, 0)
    assert repr(sync) == expected


def test_a_gap_that_ends_exactly_where_the_frame_ends_keeps_the_boundary() -> None:
    sync = FrameSync()
    assert sync.gap(10, missing=10)
    assert repr(sync) == "<FrameSync in step>"
    buffer = _buffer(_frame(b"next"))
    assert sync.drop(buffer)
    assert buffer.position == 0  # nothing of the next frame was dropped


def test_a_gap_longer_than_what_is_left_to_drop_loses_the_boundary() -> None:
    sync = FrameSync()
    assert sync.gap(2, missing=10)  # 8 bytes still to drop
    assert not sync.gap(9, missing=None)
    assert repr(sync) == "<FrameSync in step>"  # nothing left to drop: the caller calls lose
    buffer = _buffer(b"abc")
    assert sync.drop(buffer)
    assert buffer.position == 0


def test_a_gap_while_scanning_changes_nothing() -> None:
    sync = FrameSync()
    sync.lose(None, 0)
    assert not sync.gap(1, missing=10)
    assert repr(sync) == "<FrameSync scanning>"


def test_a_sync_that_never_lost_the_boundary_reports_nothing() -> None:
    sync = FrameSync()
    assert sync.resynchronized(_S2C, 10) is None
    assert sync.abandoned(_S2C, 10) is None


def test_the_reports_carry_their_direction() -> None:
    error = _error()
    sync = FrameSync()
    sync.lose(error, 3)
    protocol = _Protocol(1)
    assert sync.scan(_buffer(_frame(b"ok")), _HEADER, protocol.length, protocol.check)
    found = sync.resynchronized(_S2C, 7)
    assert found is not None
    assert (found.direction, found.error, found.start, found.skipped, found.resynchronized) == (
        _S2C,
        error,
        3,
        4,
        True,
    )
    sync.lose(error, 20)
    lost = sync.abandoned(_S2C, 50)
    assert lost is not None
    assert (lost.direction, lost.error, lost.start, lost.skipped, lost.resynchronized) == (
        _S2C,
        error,
        20,
        30,
        False,
    )


def test_a_stream_that_ends_after_a_gap_lost_the_boundary_reports_nothing() -> None:
    sync = FrameSync()
    sync.lose(None, 5)  # a gap: no error to report
    assert sync.abandoned(_S2C, 50) is None


def test_a_stream_that_ends_after_resynchronising_abandons_nothing() -> None:
    sync = FrameSync()
    sync.lose(_error(), 0)
    protocol = _Protocol(10)
    assert sync.scan(_buffer(_frame(b"ok")), _HEADER, protocol.length, protocol.check)
    assert sync.abandoned(_S2C, 100) is None


def test_a_frame_that_is_only_a_header_is_found_at_the_last_offset() -> None:
    sync = FrameSync()
    sync.lose(None, 0)
    buffer = _buffer(b"\xff\xff" + _HEADER.pack(0))
    protocol = _Protocol(3, empty=True)
    assert sync.scan(buffer, _HEADER, protocol.length, protocol.check)
    assert buffer.position == 2
    assert protocol.calls == 3


def test_the_end_of_the_stream_inside_a_candidate_tries_the_next_offsets() -> None:
    # At offset 1 a plausible header announces a payload far longer than the stream; a whole
    # frame starts at offset 2.
    wire = b"\xee\x01" + _frame(b"ab")
    sync = FrameSync()
    sync.lose(None, 0)
    buffer = _buffer(wire)
    protocol = _Protocol(len(wire), lengths=1 << 30)
    assert not sync.scan(buffer, _HEADER, protocol.length, protocol.check)
    assert buffer.position == 1  # waiting for the candidate at offset 1
    assert sync.scan(buffer, _HEADER, protocol.length, protocol.check, final=True)
    assert buffer.position == 2
    assert buffer.peek(len(wire) - 2) == _frame(b"ab")


def test_a_candidate_waits_for_its_lookahead_without_scanning_again() -> None:
    sync = FrameSync()
    sync.lose(None, 0)
    frame = _frame(b"abcdef")
    buffer = _buffer(b"zz" + frame[:6])
    protocol = _Protocol(4)
    assert not sync.scan(buffer, _HEADER, protocol.length, protocol.check, lookahead=4)
    assert buffer.position == 2
    tried = protocol.calls
    buffer.feed(frame[6:])  # the whole candidate, not yet the next frame's header
    assert not sync.scan(buffer, _HEADER, protocol.length, protocol.check, lookahead=4)
    buffer.feed(b"\x00\x00\x00")
    assert not sync.scan(buffer, _HEADER, protocol.length, protocol.check, lookahead=4)
    assert protocol.calls == tried  # nothing was scanned while the bytes were awaited
    buffer.feed(b"\x00")
    assert sync.scan(buffer, _HEADER, protocol.length, protocol.check, lookahead=4)
    assert buffer.position == 2
    assert protocol.calls == tried + 1


def test_a_candidate_whose_lookahead_never_comes_is_checked_when_the_stream_ends() -> None:
    sync = FrameSync()
    sync.lose(None, 0)
    buffer = _buffer(_frame(b"last"))
    protocol = _Protocol(2)
    assert not sync.scan(buffer, _HEADER, protocol.length, protocol.check, lookahead=4)
    assert sync.scan(buffer, _HEADER, protocol.length, protocol.check, lookahead=4, final=True)
    assert buffer.position == 0


def test_an_anchored_scan_keeps_only_the_bytes_a_later_header_may_begin_with() -> None:
    sync = FrameSync()
    sync.lose(None, 0)
    buffer = _buffer(b"x" * 20)
    protocol = _Protocol(0)
    assert sync.scan(buffer, _HEADER, protocol.length, protocol.check, anchor=b"{") is False
    assert (buffer.position, len(buffer)) == (16, 4)
    buffer.feed(_frame(b"ok"))
    protocol.most = 10
    assert sync.scan(buffer, _HEADER, protocol.length, protocol.check, anchor=b"{")
    assert buffer.position == 20


def test_an_unanchored_scan_keeps_only_the_bytes_after_the_last_offset_tried() -> None:
    sync = FrameSync()
    sync.lose(None, 0)
    buffer = _buffer(b"x" * 20)
    protocol = _Protocol(17)
    assert sync.scan(buffer, _HEADER, protocol.length, protocol.check) is False
    assert (buffer.position, len(buffer), protocol.calls) == (17, 3, 17)
