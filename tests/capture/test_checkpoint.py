"""Checkpointed decoding: a ``FlowTable`` saved with ``snapshot`` between any two segments and
``restore``d (in this process or another) goes on exactly as an uninterrupted run, for every
protocol, any cut points and any chunking of the packets."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import pickle
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from s3p_codec import Role, SnapshotError, s3p
from s3p_codec.capture import FlowTable, Limits, Row, Segment, read_segments
from s3p_codec.capture._packets import TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN
from tests.capture.test_fuzz_flows import segments as odd_segments

CAPTURES = Path(__file__).resolve().parents[2] / "examples" / "captures"
SAMPLES = sorted(p for p in CAPTURES.iterdir() if ".pcap" in p.name)


def _decode_as(path: Path) -> dict[int, str]:
    """The sample's port map: its server's port, and the protocol its name starts with."""
    meta = json.loads(path.with_name(path.name.partition(".")[0] + ".json").read_text())
    protocol = path.name.partition(".")[0].partition("_")[0]
    return {int(meta["port"]): protocol}


_SEGMENTS = {p.name: list(read_segments(str(p), 0)) for p in SAMPLES}


def comparable(row: Row) -> tuple[Any, ...]:
    """A row as equality sees it: every column, and its event (errors by type and message:
    two runs raise equal errors, never the same object)."""
    event = row.event
    shown: object = (type(event), str(event)) if isinstance(event, Exception) else event
    return (*attrs.astuple(row, recurse=False)[:-1], shown)


def straight(segments: list[Segment], decode_as: dict[int, str]) -> list[tuple[Any, ...]]:
    table = FlowTable(decode_as)
    rows = [row for segment in segments for row in table.add(segment)]
    return [comparable(r) for r in rows + table.finish()]


def with_cuts(
    segments: list[Segment], decode_as: dict[int, str], cuts: set[int]
) -> list[tuple[Any, ...]]:
    """Decode with the table saved and restored before each segment whose index is in
    ``cuts`` (and before the end when ``len(segments)`` is)."""
    table = FlowTable(decode_as)
    rows: list[Row] = []
    for index, segment in enumerate(segments):
        if index in cuts:
            table = FlowTable.restore(table.snapshot())
        rows += table.add(segment)
    if len(segments) in cuts:
        table = FlowTable.restore(table.snapshot())
    return [comparable(r) for r in rows + table.finish()]


def rechunk(segments: list[Segment], data: st.DataObject) -> list[Segment]:
    """The same bytes in other packets: each payload cut at drawn points, packets renumbered."""
    out: list[Segment] = []
    for segment in segments:
        payload = segment.payload
        whole = len(payload) == segment.length
        if len(payload) < 2 or not whole or segment.flags & (TCP_SYN | TCP_RST):
            out.append(segment)
            continue
        points = data.draw(
            st.lists(st.integers(1, len(payload) - 1), max_size=4, unique=True).map(sorted)
        )
        bounds = [0, *points, len(payload)]
        for i, (start, end) in enumerate(itertools.pairwise(bounds)):
            last = i == len(bounds) - 2
            out.append(
                attrs.evolve(
                    segment,
                    seq=(segment.seq + start) % 2**32,
                    payload=payload[start:end],
                    length=end - start,
                    flags=segment.flags if last else segment.flags & ~TCP_FIN,
                )
            )
    return [attrs.evolve(s, number=n) for n, s in enumerate(out, 1)]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_cut_of_every_sample_gives_the_rows_of_a_straight_run(path: Path) -> None:
    segments = _SEGMENTS[path.name]
    for decode_as in (_decode_as(path), {}):  # by the port map, and by sniffing
        expected = straight(segments, decode_as)
        assert expected, "the sample decodes to rows"
        assert with_cuts(segments, decode_as, set(range(len(segments) + 1))) == expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sample=st.sampled_from(SAMPLES),
    sniffed=st.booleans(),
    data=st.data(),
)
def test_any_cuts_and_any_chunking_give_the_rows_of_a_straight_run(
    sample: Path, sniffed: bool, data: st.DataObject
) -> None:
    segments = rechunk(_SEGMENTS[sample.name], data)
    decode_as = {} if sniffed else _decode_as(sample)
    cuts = data.draw(st.sets(st.integers(0, len(segments)), max_size=8))
    assert with_cuts(segments, decode_as, cuts) == straight(segments, decode_as)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(segments=odd_segments(), data=st.data())
def test_odd_flows_resume_from_any_cut(segments: list[Segment], data: st.DataObject) -> None:
    # Out of order, overlapping, reset, self-connections, port reuse, snap-length cuts: the
    # reassembly's held pieces and closed keys are saved and restored with the rest.
    cuts = data.draw(st.sets(st.integers(0, len(segments)), max_size=6))
    decode_as = {7500: "s3p", 9092: "rustlog"}
    assert with_cuts(segments, decode_as, cuts) == straight(segments, decode_as)


def _finish_elsewhere(blob: bytes, rest: list[Segment]) -> list[tuple[Any, ...]]:
    table = FlowTable.restore(blob)
    rows = [row for segment in rest for row in table.add(segment)]
    return [comparable(r) for r in rows + table.finish()]


@pytest.mark.parametrize("name", ["s2s_h2.pcap", "pravega_official.pcap", "durable.pcap.gz"])
def test_a_snapshot_is_restored_in_another_process(name: str) -> None:
    segments = _SEGMENTS[name]
    decode_as = _decode_as(CAPTURES / name)
    half = len(segments) // 2
    table = FlowTable(decode_as)
    head = [comparable(r) for s in segments[:half] for r in table.add(s)]
    assert table.flows, "the cut falls inside an open conversation"
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        tail = pool.apply(_finish_elsewhere, (table.snapshot(), segments[half:]))
    assert head + tail == straight(segments, decode_as)


def _s3p_conversation(appends: int, record: bytes) -> list[Segment]:
    """Segments of one S3P connection: a handshake, then ``appends`` answered appends."""
    client, server = s3p.Connection(Role.CLIENT), s3p.Connection(Role.SERVER)
    ends = {True: ("10.0.0.1", 40000), False: ("10.0.0.2", 7500)}
    seq = {True: 1000, False: 5000}
    out: list[Segment] = []

    def packet(from_client: bool, flags: int, payload: bytes = b"") -> None:
        (src, sport), (dst, dport) = ends[from_client], ends[not from_client]
        number = len(out) + 1
        out.append(Segment("long.pcap", 0, number, 1.7e9 + number / 1000, src, sport, dst,
                           dport, seq[from_client], seq[not from_client], flags, payload,
                           len(payload)))  # fmt: skip
        seq[from_client] += len(payload) + (1 if flags & TCP_SYN else 0)

    packet(True, TCP_SYN)
    packet(False, TCP_SYN | TCP_ACK)
    for n in range(appends):
        request = client.send(s3p.Append(b"orders", (record,)))
        server.receive_data(request)
        list(server.events())
        reply = server.send(s3p.AppendReply(s3p.Timestamp(1_700_000_000_000 + n, 0)))
        client.receive_data(reply)
        list(client.events())
        packet(True, TCP_ACK, request)
        packet(False, TCP_ACK, reply)
    return out


def test_a_snapshot_keeps_what_is_in_flight_not_the_conversation_age() -> None:
    segments = _s3p_conversation(3000, b"x" * 1024)
    table = FlowTable({7500: "s3p"})
    sizes = {}
    for index, segment in enumerate(segments, 1):
        table.add(segment)
        if index in (2002, 6002):  # after 1,000 and after 3,000 answered appends
            sizes[index] = len(table.snapshot())
    assert sizes[6002] < 32 * 1024, sizes
    assert abs(sizes[6002] - sizes[2002]) < 256, sizes  # not one byte more per message


def test_a_message_in_flight_is_kept_whole_and_only_it() -> None:
    segments = _s3p_conversation(1, b"y" * 300_000)
    request = segments[2]
    head, tail = request.payload[:150_000], request.payload[150_000:]
    cut = [*segments[:2], attrs.evolve(request, payload=head, length=len(head))]
    table = FlowTable({7500: "s3p"})
    for segment in cut:
        table.add(segment)
    blob = table.snapshot()
    assert 150_000 <= len(blob) < 150_000 + 32 * 1024
    rest = attrs.evolve(request, number=4, seq=request.seq + len(head), payload=tail,
                        length=len(tail))  # fmt: skip
    table = FlowTable.restore(blob)
    rows = table.add(rest) + table.add(attrs.evolve(segments[3], number=5)) + table.finish()
    assert [r.event_type for r in rows if r.kind == "event"] == ["Append", "AppendReply"]


def test_snapshots_refuse_what_is_not_theirs() -> None:
    table = FlowTable({7500: "s3p"})
    blob = table.snapshot()
    with pytest.raises(SnapshotError, match="no S3PK header"):
        FlowTable.restore(b"not a snapshot")
    with pytest.raises(SnapshotError, match="format"):
        FlowTable.restore(blob[:4] + bytes((blob[4] + 1,)) + blob[5:])
    with pytest.raises(SnapshotError, match="damaged"):
        FlowTable.restore(blob[: len(blob) // 2])
    with pytest.raises(SnapshotError, match="not a FlowTable"):
        FlowTable.restore(blob[:5] + pickle.dumps(Limits(), protocol=5))


class _Boom:
    def __reduce__(self) -> tuple[Any, tuple[str]]:
        import os

        return os.system, ("echo owned",)


def test_a_snapshot_never_calls_what_it_names() -> None:
    evil = FlowTable({}).snapshot()[:5] + pickle.dumps(_Boom(), protocol=5)
    with pytest.raises(SnapshotError, match=r"(posix|nt|os)\.system"):
        FlowTable.restore(evil)
