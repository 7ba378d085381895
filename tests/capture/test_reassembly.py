"""TCP reassembly: order, retransmissions, overlaps, SYN/FIN/RST, mid-stream starts, gaps."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from s3p_codec.capture import segments_from_bytes
from s3p_codec.capture._packets import Segment
from s3p_codec.capture._reassembly import (
    Conversation,
    StreamData,
    StreamEnd,
    StreamGap,
    StreamItem,
    flow_key,
)
from tests.capture.synth import ACK, PSH, Flow, Frame, write_capture

CLIENT = ("10.0.0.1", 40000)
SERVER = ("10.0.0.2", 7500)


def segments(frames: list[Frame]) -> list[Segment]:
    return list(segments_from_bytes(write_capture(frames)))


def run(frames: list[Frame], max_pending: int = 1 << 22) -> list[StreamItem]:
    segs = segments(frames)
    conv = Conversation(flow_key(segs[0]), segs[0], max_pending)
    items: list[StreamItem] = []
    for seg in segs:
        items += conv.add(seg)
    return items + conv.finish()


def stream(items: list[StreamItem], sender: tuple[str, int]) -> bytes:
    """The bytes a side sent, a missing byte shown as ``?``; offsets must be contiguous."""
    out = bytearray()
    for item in items:
        if item.sender != sender:
            continue
        if isinstance(item, StreamData):
            assert item.offset == len(out)
            out += item.data
        elif isinstance(item, StreamGap):
            assert item.offset == len(out)
            out += b"?" * item.size
    return bytes(out)


def ends(items: list[StreamItem]) -> dict[tuple[str, int], str]:
    return {i.sender: i.reason for i in items if isinstance(i, StreamEnd)}


def test_in_order_both_directions_with_handshake_and_fin() -> None:
    f = Flow(CLIENT, SERVER)
    frames = f.handshake() + f.send(True, b"a" * 4000) + f.send(False, b"b" * 10) + f.close()
    items = run(frames)
    assert stream(items, CLIENT) == b"a" * 4000
    assert stream(items, SERVER) == b"b" * 10
    assert ends(items) == {CLIENT: "fin", SERVER: "fin"}


def test_the_handshake_names_the_client() -> None:
    f = Flow(CLIENT, SERVER)
    segs = segments(f.handshake())
    conv = Conversation(flow_key(segs[1]), segs[1])
    for seg in segs[1:]:  # the SYN-ACK alone already says who the client is
        conv.add(seg)
    assert conv.client == CLIENT


def test_out_of_order_segments_are_put_back_in_order() -> None:
    f = Flow(CLIENT, SERVER)
    data = bytes(range(256)) * 40
    handshake = f.handshake()
    frames = f.send(True, data, mss=500)
    random.Random(7).shuffle(frames)
    items = run(handshake + frames)
    assert stream(items, CLIENT) == data


def test_retransmissions_are_delivered_once() -> None:
    f = Flow(CLIENT, SERVER)
    frames = f.handshake()
    first = f.segment(True, b"hello ")
    second = f.segment(True, b"world")
    items = run([*frames, first, first, second, first, second])
    assert stream(items, CLIENT) == b"hello world"


def test_overlapping_segments_keep_the_first_copy_of_each_byte() -> None:
    f = Flow(CLIENT, SERVER)
    frames = f.handshake()
    base = f.seq[True]
    frames += [
        f.at(True, base, b"abcdef"),
        f.at(True, base + 3, b"XYZghi"),  # overlaps 3 bytes already delivered
        f.at(True, base + 12, b"mno"),  # after a hole
        f.at(True, base + 8, b"QQklQQ"),  # fills the hole and overlaps both neighbours
    ]
    items = run(frames)
    assert stream(items, CLIENT) == b"abcdefghiQklmno"


def test_capture_started_mid_stream_takes_the_first_byte_seen_as_offset_zero() -> None:
    f = Flow(CLIENT, SERVER)
    f.handshake()  # not captured
    f.send(True, b"lost part")  # not captured either
    frames = f.send(True, b"seen part") + f.send(False, b"reply") + f.close()
    items = run(frames)
    assert stream(items, CLIENT) == b"seen part"
    assert stream(items, SERVER) == b"reply"


def test_a_hole_the_peer_acknowledged_is_a_gap_right_away() -> None:
    f = Flow(CLIENT, SERVER)
    frames = f.handshake()
    f.segment(True, b"0123456789")  # lost by the capture, received by the server
    after = f.segment(True, b"abc")
    items = run([*frames, after, f.ack(False)])
    gap = [i for i in items if isinstance(i, StreamGap)]
    assert gap
    assert gap[0].size == 10
    assert gap[0].offset == 0
    # reported when the server's ACK arrived, before the end of the capture
    assert gap[0].segment.flags & ACK
    assert not gap[0].segment.payload
    assert stream(items, CLIENT) == b"?" * 10 + b"abc"


def test_a_hole_still_open_at_fin_becomes_a_gap() -> None:
    f = Flow(CLIENT, SERVER)
    frames = f.handshake()
    frames.append(f.segment(True, b"head"))
    f.segment(True, b"-lost-")
    frames.append(f.segment(True, b"tail"))
    frames.append(f.fin(True))
    items = run(frames)
    assert stream(items, CLIENT) == b"head??????tail"
    assert ends(items)[CLIENT] == "fin"


def test_bytes_waiting_behind_a_hole_are_bounded() -> None:
    f = Flow(CLIENT, SERVER)
    frames = f.handshake()
    f.segment(True, b"x" * 100)  # lost
    frames += f.send(True, b"y" * 5000, mss=1000)
    segs = segments(frames)
    conv = Conversation(flow_key(segs[0]), segs[0], max_pending=2500)
    items: list[StreamItem] = []
    for seg in segs:
        items += conv.add(seg)
    # no ACK, no FIN: the bound alone forced the gap before the end of the capture
    assert [i.size for i in items if isinstance(i, StreamGap)] == [100]
    assert stream(items, CLIENT).startswith(b"?" * 100 + b"y" * 2000)


def test_reset_ends_both_directions_and_flushes_held_data_with_gaps() -> None:
    f = Flow(CLIENT, SERVER)
    frames = f.handshake() + f.send(True, b"req")
    f.segment(False, b"lost")
    frames.append(f.segment(False, b"after"))
    frames.append(f.rst(True))
    items = run(frames)
    assert ends(items) == {CLIENT: "rst", SERVER: "rst"}
    assert stream(items, SERVER) == b"????after"


def test_end_of_capture_ends_open_directions() -> None:
    f = Flow(CLIENT, SERVER)
    items = run(f.handshake() + f.send(True, b"open"))
    assert stream(items, CLIENT) == b"open"
    assert ends(items) == {CLIENT: "eof", SERVER: "eof"}


def test_sequence_numbers_wrap_around() -> None:
    f = Flow(CLIENT, SERVER, isn_client=(1 << 32) - 700)
    data = bytes(range(256)) * 10
    frames = f.handshake() + f.send(True, data, mss=300) + f.close()
    items = run(frames)
    assert stream(items, CLIENT) == data
    assert ends(items)[CLIENT] == "fin"


def test_a_payload_cut_by_the_snap_length_leaves_a_gap() -> None:
    f = Flow(CLIENT, SERVER)
    frames = f.handshake()
    ts, full = f.segment(True, b"0123456789")
    frames.append((ts, full[:-4]))  # the capture kept all headers but only 6 payload bytes
    frames.append(f.segment(True, b"next"))
    items = run(frames)
    assert stream(items, CLIENT) == b"012345????next"


def test_keepalive_probes_do_not_disturb_the_stream() -> None:
    f = Flow(CLIENT, SERVER)
    frames = f.handshake() + f.send(True, b"data")
    frames.append(f.at(True, f.seq[True] - 1, b"\x00", ACK))  # keep-alive: one old byte
    frames += f.send(True, b"more")
    assert stream(run(frames), CLIENT) == b"datamore"


def test_port_reuse_is_a_new_connection() -> None:
    f = Flow(CLIENT, SERVER)
    frames = f.handshake() + f.send(True, b"one") + f.close()
    segs = segments(frames)
    conv = Conversation(flow_key(segs[0]), segs[0])
    for seg in segs:
        conv.add(seg)
    again = segments(Flow(CLIENT, SERVER, isn_client=90000).handshake())
    assert conv.is_new_connection(again[0])
    assert not conv.is_new_connection(segs[0])  # a retransmitted SYN is not


@given(
    data=st.binary(min_size=1, max_size=3000),
    mss=st.integers(1, 700),
    seed=st.integers(0, 2**32),
    duplicates=st.integers(0, 5),
    isn=st.integers(0, 2**32 - 1),
)
def test_any_order_and_duplication_of_segments_gives_the_sent_bytes(
    data: bytes, mss: int, seed: int, duplicates: int, isn: int
) -> None:
    rng = random.Random(seed)
    f = Flow(CLIENT, SERVER, isn_client=isn)
    handshake = f.handshake()
    base = f.seq[True]
    frames = []
    for i in range(0, len(data), mss):  # overlapping re-segmentations as well as plain ones
        frames.append(f.at(True, base + i, data[i : i + mss], ACK | PSH))
        j = rng.randrange(len(data))
        frames.append(f.at(True, base + j, data[j : j + rng.randint(1, 2 * mss)], ACK | PSH))
    frames += [rng.choice(frames) for _ in range(duplicates)]
    rng.shuffle(frames)
    items = run(handshake + frames)
    assert stream(items, CLIENT) == data
