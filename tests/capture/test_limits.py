"""Bounded memory and time whatever the capture: self-connections, idle and surplus flows,
segments held behind a hole, abandoned directions, records that claim more than the file holds."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from s3p_codec import Direction
from s3p_codec.capture import (
    FlowTable,
    Limits,
    Segment,
    decode_files,
    decode_segments,
    flow_key,
    segments_from_bytes,
)
from s3p_codec.capture._reassembly import HELD_PIECE_COST, Conversation, StreamGap
from tests.capture.conftest import s3p_exchanges
from tests.capture.synth import Flow, write_capture
from tests.capture.test_decoder import CLIENT, EXPECTED, SERVER, conversation, events, rows_of

SELF = ("127.0.0.1", 7500)
CREATE = s3p_exchanges()[0][0]


def seg(number: int, src: tuple[str, int], dst: tuple[str, int], seq: int,  # noqa: PLR0917
        flags: int, payload: bytes = b"", ts: float | None = None) -> Segment:  # fmt: skip
    when = 1_700_000_000.0 + number * 1e-3 if ts is None else ts
    return Segment(
        "x", 0, number, when, src[0], src[1], dst[0], dst[1], seq, 0, flags, payload, len(payload)
    )


def test_a_self_connection_gives_rows_not_a_crash(tmp_path: Path) -> None:
    """Issue 20.1: 7500 -> 7500 on one address made ``_decide`` raise ValueError."""
    frames = conversation(Flow(SELF, SELF, isn_server=1000))  # one socket: one sequence space
    rows = rows_of(frames)
    assert events(rows) == ["Create", "Append", "Read", "Trim", "Delete"]
    assert {(r.client, r.server, r.direction) for r in rows} == {
        ("127.0.0.1:7500", "127.0.0.1:7500", "client_to_server")
    }
    # Two sequence spaces on one endpoint (what a confused capture shows): rows, no exception.
    odd = rows_of(conversation(Flow(SELF, SELF)))
    assert odd
    assert {r.kind for r in odd} <= {"event", "gap", "error", "undecoded"}
    path = tmp_path / "self.pcap"
    path.write_bytes(write_capture(frames))
    assert len(list(decode_files([str(path)]))) == len(rows)


def test_an_idle_conversation_is_closed_with_a_row_saying_so() -> None:
    idle = Flow(CLIENT, SERVER)
    frames = idle.handshake() + idle.send(True, CREATE)
    other = Flow(("10.0.0.7", 41000), SERVER, ts=1_700_000_400.0)  # 400 s later
    frames += conversation(other)
    rows = rows_of(frames)
    evicted = [r for r in rows if r.kind == "evicted"]
    assert [(r.event_type, r.client, r.error_code) for r in evicted] == [
        ("IdleTimeout", "10.0.0.1:40000", None)
    ]
    assert "idle timeout 300 s" in evicted[0].detail
    assert rows.index(evicted[0]) < next(i for i, r in enumerate(rows) if "41000" in r.client)
    never = rows_of(frames, limits=Limits(idle_timeout=0))
    assert not [r for r in never if r.kind == "evicted"]


def test_the_open_flow_limit_closes_the_least_recently_active_with_a_row() -> None:
    frames = []
    for i in range(3):
        flow = Flow((f"10.0.0.{10 + i}", 40000), SERVER, ts=1_700_000_000.0 + i)
        frames += flow.handshake() + flow.send(True, CREATE)
    table = FlowTable(max_flows=2)
    rows = []
    for segment in segments_from_bytes(write_capture(frames)):
        rows += table.add(segment)
        assert len(table.flows) <= 2
    evicted = [r for r in rows if r.kind != "event"]
    assert [(r.kind, r.event_type, r.client, r.error_code) for r in evicted] == [
        ("evicted", "FlowLimit", "10.0.0.10:40000", "flow_limit")
    ]
    assert "2 conversations open at once" in evicted[0].detail


def test_syn_only_flows_are_bounded_and_quiet() -> None:
    """Issue 21.16: 100k SYN-only flows cost +801 MiB; now at most max_flows are kept."""
    syns = [seg(i + 1, (f"10.1.{i >> 8}.{i & 255}", 20000), SERVER, i, 0x02) for i in range(3000)]
    table = FlowTable(max_flows=100)
    rows = []
    for segment in syns:
        rows += table.add(segment)
    assert rows == []  # a lone SYN carries nothing to report
    assert len(table.flows) == 100
    assert len(table._closed) <= 100


def _behind_a_hole(count: int, reverse: bool = False) -> list[Segment]:
    c, s = ("10.0.0.1", 40000), ("10.0.0.2", 9999)
    order = range(count, 0, -1) if reverse else range(1, count + 1)
    # byte 0 never comes, so every one-byte segment after it is held
    held = [seg(n, c, s, 1 + i, 0x18, b"x") for n, i in enumerate(order, 2)]
    return [seg(1, c, s, 0, 0x02), *held]


def test_held_segments_count_their_bookkeeping_against_max_pending() -> None:
    """Issue 21.17: 320k one-byte segments held 185 MB while max_pending saw 320 KB."""
    segs = _behind_a_hole(1000)
    conv = Conversation(flow_key(segs[0]), segs[0], max_pending=100 * (HELD_PIECE_COST + 1))
    items = []
    for segment in segs:
        items += conv.add(segment)
        half = conv.halves[("10.0.0.1", 40000)]
        assert half._pending_bytes <= 100 * (HELD_PIECE_COST + 1)
    gaps = [i for i in items if isinstance(i, StreamGap)]
    assert gaps[0].offset == 0
    assert gaps[0].size == 1
    assert gaps[0].segment.number == 102  # the 101st held piece went over the bound


@pytest.mark.slow
def test_segments_held_behind_a_hole_in_any_order_take_n_log_n_time() -> None:
    """Issue 21.17: list.insert made reverse-order holes quadratic (40 s for 320k before)."""
    segs = _behind_a_hole(100_000, reverse=True)
    start = time.perf_counter()
    rows = list(decode_segments(segs, limits=Limits(max_pending=1 << 40)))
    assert time.perf_counter() - start < 15
    assert sum(r.wire_bytes for r in rows if r.kind == "undecoded") == 100_001


def test_an_abandoned_direction_keeps_no_packets() -> None:
    """Issue 21.18: every packet of an abandoned direction stayed in the packet map."""
    c, s = ("10.0.0.1", 40000), ("10.0.0.2", 4437)
    segs = [seg(1, c, s, 0, 0x02), seg(2, c, s, 1, 0x18, b"BREW / HTCPCP/1.0\r\n\r\n")]
    at = 1 + len(segs[1].payload)
    for n in range(3, 2003):
        segs.append(seg(n, c, s, at, 0x18, bytes(100)))
        at += 100
    table = FlowTable({4437: "durable"})
    rows = []
    for segment in segs:
        rows += table.add(segment)
    decoder = table.flows[flow_key(segs[0])]
    assert [r.kind for r in rows] == ["error"]
    assert "direction abandoned" in rows[0].detail
    packets = decoder._rows._maps.get(Direction.CLIENT_TO_SERVER)
    assert packets is None or packets._entries == []
    # unknown protocols keep none either: their rows need first and last packet only
    table = FlowTable()
    for segment in segs:
        table.add(segment.__class__(**{**_fields(segment), "dport": 5555}))
    (decoder,) = table.flows.values()
    assert all(m._entries == [] for m in decoder._rows._maps.values())  # none made at all
    (undecoded,) = table.finish()
    assert (undecoded.first_packet, undecoded.last_packet) == (2, 2002)


def _fields(segment: Segment) -> dict[str, object]:
    return {name: getattr(segment, name) for name in Segment.__slots__ if name != "__weakref__"}


_CLAIM = r"""
import resource, struct, sys
from s3p_codec.capture import CaptureFileError, read_packets
path = sys.argv[1]
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
try:
    list(read_packets(path))
except CaptureFileError as exc:
    print(exc.message)
"""


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_a_record_claiming_4_gib_costs_only_what_the_file_holds(tmp_path: Path, fmt: str) -> None:
    """Issue 21.15: a 4 GiB caplen reached read(caplen): MemoryError under an address-space
    limit. Reads are now bounded by what the file holds."""
    path = tmp_path / f"claim.{fmt}"
    if fmt == "pcap":
        import struct

        header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 0xFFFFFFFF, 1)
        path.write_bytes(header + struct.pack("<IIII", 0, 0, 0xFFFFFFF0, 0xFFFFFFF0) + bytes(99))
        expected = "broken at packet 1 (claims 4294967280 bytes, over the 262144 bytes"
    else:
        data = write_capture(Flow().handshake(), fmt="pcapng")
        path.write_bytes(data + b"\x06\x00\x00\x00\xfc\xff\xff\x0f" + bytes(99))
        expected = "claims 268435452 bytes"
    done = subprocess.run(
        [sys.executable, "-c", _CLAIM, str(path)], capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="positive"):
        Limits(max_flows=0)
    with pytest.raises(ValueError, match="positive"):
        Limits(idle_timeout=-1)


def test_clean_conversations_are_untouched_by_the_limits() -> None:
    frames = conversation(Flow(CLIENT, SERVER)) + conversation(Flow(("10.0.0.5", 41000), SERVER))
    assert events(rows_of(frames, limits=Limits(max_flows=1, idle_timeout=1))) == EXPECTED * 2


def test_a_gap_given_up_on_at_max_pending_says_so() -> None:
    """Issue 16: a flow's buffered-bytes limit, when hit, gives a row that says so."""
    f = Flow(CLIENT, SERVER)
    exchanges = s3p_exchanges()
    frames = f.handshake()
    lost = f.segment(True, exchanges[0][0])  # never captured
    frames += [f.segment(True, request) for request, _ in exchanges[1:]]
    del lost
    rows = rows_of(frames, limits=Limits(max_pending=2 * HELD_PIECE_COST))
    gaps = [r for r in rows if r.kind == "gap"]
    assert len(gaps) == 1
    assert gaps[0].wire_bytes == len(exchanges[0][0])
    assert "not waited for: more than max_pending=1200 bytes were held behind it" in (
        gaps[0].detail
    )
    assert events(rows) == ["Append", "Read", "Trim", "Delete"]
