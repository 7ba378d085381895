"""The Observer: both directions, pairing, reassembled appends, resynchronisation."""

from __future__ import annotations

import struct
import uuid
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import Direction, Role
from s3p_codec import pravega as p
from s3p_codec._core import Observed, ObservedError, ObservedGap
from s3p_codec._core import Observer as ObserverProtocol
from tests.observer_support import Damage, damaged_decoding, damages

C2S = Direction.CLIENT_TO_SERVER
S2C = Direction.SERVER_TO_CLIENT
W = uuid.UUID(int=3)


def client_bytes(block_size: int = 64) -> bytes:
    conn = p.Connection(Role.CLIENT, block_size=block_size)
    wire = conn.send(p.Hello()) + conn.send(p.SetupAppend(11, W, "seg"))
    for i in range(5):
        wire += conn.send(p.Append(W, i, (bytes([i]) * 30,)))
    wire += conn.send(p.FlushAppends()) + conn.send(p.ReadSegment("seg", 0, 100, "", 12))
    return wire


def server_bytes() -> bytes:
    conn = p.Connection(Role.SERVER)
    return (
        conn.send(p.Hello())
        + conn.send(p.AppendSetup(11, "seg", W, p.NULL_EVENT_NUMBER))
        + conn.send(p.DataAppended(W, 4, -1, 11, 190))
        + conn.send(p.SegmentRead("seg", 0, True, False, b"data", 12))
    )


def events(records: list[Any]) -> list[Any]:
    return [r.event for r in records if isinstance(r, Observed)]


def test_satisfies_the_observer_protocol() -> None:
    assert isinstance(p.Observer(), ObserverProtocol)


def test_both_directions_decode_and_appends_are_reassembled() -> None:
    obs = p.Observer()
    up = list(obs.observe(C2S, client_bytes()))
    down = list(obs.observe(S2C, server_bytes()))
    got = events(up)
    assert got[0] == p.Hello()
    assert got[1] == p.SetupAppend(11, W, "seg")
    data = [d for e in got if isinstance(e, p.Append) for d in e.events]
    assert data == [bytes([i]) * 30 for i in range(5)]
    assert isinstance(got[-1], p.ReadSegment)
    assert [type(e).__name__ for e in events(down)] == [
        "Hello", "AppendSetup", "DataAppended", "SegmentRead"
    ]  # fmt: skip


def test_replies_pair_with_requests_by_request_id() -> None:
    obs = p.Observer()
    up = [r for r in obs.observe(C2S, client_bytes()) if isinstance(r, Observed)]
    down = [r for r in obs.observe(S2C, server_bytes()) if isinstance(r, Observed)]
    assert up[0].pair_id is None
    assert down[0].pair_id is None
    setup = next(r for r in up if isinstance(r.event, p.SetupAppend))
    read = next(r for r in up if isinstance(r.event, p.ReadSegment))
    segment_read = next(r for r in down if isinstance(r.event, p.SegmentRead))
    assert segment_read.pair_id == read.pair_id is not None
    assert setup.pair_id is not None


def test_offsets_cover_the_stream() -> None:
    obs = p.Observer()
    wire = client_bytes()
    records = [r for r in obs.observe(C2S, wire) if isinstance(r, Observed)]
    assert records[0].start == 0
    assert records[-1].end == len(wire)
    first_append = next(r for r in records if isinstance(r.event, p.Append))
    assert wire[first_append.start + 4 : first_append.start + 8] != b""
    assert struct.unpack_from(">i", wire, first_append.start)[0] == 3  # starts at AppendBlock


def test_garbage_between_frames_is_reported_and_skipped() -> None:
    obs = p.Observer()
    ka = p.encode(p.KeepAlive())
    junk = b"\x7f\x7f\x7f\x7f\x00\x00\x00\x01garbage!"
    records = list(obs.observe(C2S, ka + junk + p.encode(p.CreateSegment(1, "s")) + ka))
    errors = [r for r in records if isinstance(r, ObservedError)]
    assert len(errors) == 1
    assert errors[0].error.code is p.ErrorCode.UNKNOWN_COMMAND
    assert errors[0].resynchronized
    assert errors[0].start == len(ka)
    assert errors[0].skipped == len(junk)
    assert events(records) == [p.KeepAlive(), p.CreateSegment(1, "s"), p.KeepAlive()]


def test_a_bad_payload_is_reported_and_decoding_goes_on_at_the_next_frame() -> None:
    obs = p.Observer()
    bad = struct.pack(">iiqH", 21, 12, 1, 50) + b"ab"  # string runs past the frame
    records = list(obs.observe(S2C, bad + p.encode(p.SegmentCreated(1, "s"))))
    assert isinstance(records[0], ObservedError)
    assert records[0].error.code is p.ErrorCode.MALFORMED
    assert records[0].resynchronized
    assert events(records) == [p.SegmentCreated(1, "s")]


def test_gap_inside_a_frame_of_known_length_skips_to_its_end() -> None:
    obs = p.Observer()
    frame = p.encode(p.SegmentRead("seg", 0, False, False, bytes(100), 1))
    after = p.encode(p.SegmentCreated(2, "t"))
    out = list(obs.observe(S2C, frame[:50]))
    out += obs.gap(S2C, 30)
    out += obs.observe(S2C, frame[80:] + after)
    gaps = [r for r in out if isinstance(r, ObservedGap)]
    assert gaps == [ObservedGap(S2C, 50, 30, resynchronized=True)]
    assert events(out) == [p.SegmentCreated(2, "t")]


def test_gap_of_unknown_extent_scans_for_a_plausible_header() -> None:
    obs = p.Observer()
    out = list(obs.gap(C2S, 1000))
    tail = p.encode(p.ReadSegment("seg", 5, 10, "", 3))
    keep_alives = p.encode(p.KeepAlive()) * 20
    out += obs.observe(C2S, b"\x01\x02\x03" + tail[5:] + keep_alives + tail)
    assert isinstance(out[0], ObservedGap)
    assert not out[0].resynchronized
    got = events(out)
    assert got[-1] == p.ReadSegment("seg", 5, 10, "", 3)
    assert got[:-1] == [p.KeepAlive()] * (len(got) - 1)
    assert len(got) >= 2  # a few may be swallowed by a false but self-consistent candidate


def test_close_reports_an_unfinished_frame_or_failed_scan() -> None:
    obs = p.Observer()
    obs.observe(S2C, p.encode(p.SegmentCreated(1, "s"))[:10])
    (record,) = obs.close(S2C)
    assert isinstance(record, ObservedError)
    assert record.error.code is p.ErrorCode.BAD_FRAME
    assert not record.resynchronized
    obs.observe(C2S, b"\x7f" * 40)
    (scan,) = obs.close(C2S)
    assert isinstance(scan, ObservedError)
    assert scan.error.code is p.ErrorCode.UNKNOWN_COMMAND
    assert scan.skipped == 40


def test_a_broken_block_is_reported_and_later_blocks_still_decode() -> None:
    obs = p.Observer()
    setup = p.encode(p.SetupAppend(1, W, "s"))
    bad = p.encode(p.AppendBlock(W, b"x")) + p.encode(p.AppendBlockEnd(W, 0, b"", 1, 0, 1))
    good = p.encode(p.AppendBlockEnd(W, 0, struct.pack(">ii", 0, 1) + b"y", 1, 1, 1))
    out = list(obs.observe(C2S, setup + bad + good))
    assert isinstance(out[1], ObservedError)
    assert out[1].error.code is p.ErrorCode.INVALID_APPEND
    assert events(out)[-1] == p.Append(W, 1, (b"y",), 1)


@given(st.binary(max_size=300), st.data())
def test_observer_survives_any_bytes(garbage: bytes, data: Any) -> None:
    obs = p.Observer()
    wire = client_bytes()
    at = data.draw(st.integers(0, len(wire)))
    mixed = wire[:at] + garbage + wire[at:]
    cuts = sorted(data.draw(st.lists(st.integers(0, len(mixed)), max_size=5)))
    last = 0
    out: list[Any] = []
    for cut in [*cuts, len(mixed)]:
        out += obs.observe(C2S, mixed[last:cut])
        last = cut
    out += obs.close(C2S)
    for record in out:
        assert isinstance(record, Observed | ObservedError | ObservedGap)
    if not garbage:
        assert not [r for r in out if isinstance(r, ObservedError)]


@given(damages())
def test_a_damaged_stream_decodes_the_same_in_any_chunking(damage: Damage) -> None:
    # Resynchronising checks the header after a candidate frame: it waits for those bytes
    # instead of taking the candidate when they have not come yet.
    whole, split = damaged_decoding(p.Observer, client_bytes(), damage)
    assert split == whole


def more_server_bytes() -> bytes:
    """``server_bytes`` and then the replies a server sends between appends and reads."""
    conn = p.Connection(Role.SERVER)
    conn.send(p.Hello())
    inside = p.encode(p.SegmentCreated(18, "s")) + p.encode(p.KeepAlive())
    events_inside = struct.pack(">ii", 0, len(inside)) + inside
    return server_bytes() + (
        conn.send(p.KeepAlive())
        + conn.send(p.SegmentCreated(13, "seg/1"))
        + conn.send(p.WrongHost(14, "seg", "host:1234", "at x\n"))
        + conn.send(p.SegmentIsSealed(15, "seg", "", 190))
        + conn.send(p.SegmentRead("seg", 4, False, True, bytes(40), 16))
        # Segment data is the user's bytes: here events whose contents look like replies.
        + conn.send(p.SegmentRead("seg", 44, False, False, events_inside, 17))
    )


# Server-shaped garbage: headers of real reply types, a KeepAlive, a header with no payload.
_GARBAGE = st.binary(max_size=12) | st.sampled_from(
    [
        p.encode(p.KeepAlive()),
        struct.pack(">ii", 10, 8),
        struct.pack(">ii", 21, 0),
        struct.pack(">iiq", 7, 40, 1),
        struct.pack(">i", -127),
    ]
)


@given(damages(garbage=_GARBAGE))
def test_a_damaged_reply_stream_decodes_the_same_in_any_chunking(damage: Damage) -> None:
    whole, split = damaged_decoding(p.Observer, more_server_bytes(), damage, S2C)
    assert split == whole
