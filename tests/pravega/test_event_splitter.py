"""The Event-frame splitter of append reassembly inside a larger buffer.

``parse_events(data, start, end, out)`` reads only ``data[start:end]``: "reassembled data must be
whole Event frames" ("i32 0, i32 len, data"), and the bytes before ``start`` or after ``end`` are
someone else's (the block before, or the part of the block not yet complete). Each case is
checked against a one-header-at-a-time reference walk.
"""

from __future__ import annotations

import struct

import pytest

from s3p_codec.pravega import _wire
from s3p_codec.pravega._wire import parse_events


def frame(code: int, payload: bytes) -> bytes:
    return struct.pack(">ii", code, len(payload)) + payload


def reference(data: bytes, start: int, end: int) -> tuple[list[bytes], int]:
    out, pos = [], start
    while pos + 8 <= end:
        _code, size = struct.unpack_from(">ii", data, pos)
        if pos + 8 + size > end:
            break
        out.append(data[pos + 8 : pos + 8 + size])
        pos += 8 + size
    return out, pos


def split(data: bytes, start: int, end: int) -> tuple[list[bytes], int]:
    out: list[bytes] = []
    stop = parse_events(data, start, end, out)
    return out, stop


@pytest.mark.parametrize("before", [0, 1, 3, 8, 20])
@pytest.mark.parametrize("inside", [0, 1, 8, 9, 16, 17, 40])
@pytest.mark.parametrize("after", [0, 1, 8, 30])
def test_equal_frames_around_the_range_are_not_taken(before: int, inside: int, after: int) -> None:
    body = [bytes([i]) * 5 for i in range(before + inside + after)]
    frames = [frame(0, e) for e in body]
    data = b"".join(frames)
    start = len(b"".join(frames[:before]))
    end = start + len(b"".join(frames[before : before + inside]))
    got = split(data, start, end)
    assert got == (body[before : before + inside], end)
    assert got == reference(data, start, end)


@pytest.mark.parametrize("tail", range(8))
@pytest.mark.parametrize("start", [1, 5, 9, 30])
def test_less_than_a_header_at_the_end_of_the_buffer_waits(tail: int, start: int) -> None:
    data = bytes(start) + b"\x00" * tail
    assert split(data, start, len(data)) == ([], start)


@pytest.mark.parametrize("run", [1, 7, 8, 9, 10, 16, 17, 33])
@pytest.mark.parametrize("size", [1, 5, 255, 256])
def test_a_run_of_empty_events_ends_at_the_first_non_empty_one(run: int, size: int) -> None:
    # An empty Event's header is eight zero bytes: the next header must be read whole.
    events = [b""] * run + [b"\x00" * size] + [b""] * 3
    data = b"".join(frame(0, e) for e in events)
    for start, end in ((0, len(data)), (0, len(data) - 1)):
        assert split(data, start, end) == reference(data, start, end)
    assert split(data, 0, len(data))[0] == events


@pytest.mark.parametrize("before", [0, 8, 9])
@pytest.mark.parametrize("run", [8, 9, 12, 20])
@pytest.mark.parametrize("at", [1, 6, 7, 8, 11])
def test_a_different_size_inside_a_run_stops_it_there(before: int, run: int, at: int) -> None:
    events = [b"a" * 3] * (before + run)
    events[before + min(at, run - 1)] = b"b" * 4
    data = b"".join(frame(0, e) for e in events) + frame(0, b"a" * 3) * 4
    start = 11 * before
    for end in (len(data), len(data) - 11):
        assert split(data, start, end) == reference(data, start, end)


def test_the_format_cache_gives_the_same_piece_when_asked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Varied sizes are cut by struct formats built from cached pieces; an empty cache first.
    monkeypatch.setattr(_wire, "_PIECES", _wire._Pieces())
    events = [bytes([n]) * n for n in (3, 14, 3, 15, 14, 92, 3, 15)]
    data = b"".join(frame(0, e) for e in events)
    for _ in range(2):
        assert split(data, 0, len(data)) == (events, len(data))
