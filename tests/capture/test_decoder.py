"""From segments to rows: protocol choice, packet numbers, pairing, gaps, mid-stream starts."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from s3p_codec import Direction, s3p
from s3p_codec.capture import (
    Row,
    RowErrorCode,
    decode_files,
    decode_flow,
    decode_segments,
    segments_from_bytes,
)
from tests.capture.conftest import s3p_exchanges
from tests.capture.synth import Flow, Frame, write_capture

CLIENT = ("10.0.0.1", 40000)
SERVER = ("10.0.0.2", 7500)


def conversation(flow: Flow, handshake: bool = True, mss: int = 1460) -> list[Frame]:
    frames = flow.handshake() if handshake else []
    for request, reply in s3p_exchanges():
        frames += flow.send(True, request, mss) + flow.send(False, reply, mss)
    return frames + flow.close()


def rows_of(frames: list[Frame], **kwargs: Any) -> list[Row]:
    return list(decode_segments(segments_from_bytes(write_capture(frames)), **kwargs))


def events(rows: Sequence[Row]) -> list[str]:
    return [r.event_type for r in rows if r.kind == "event"]


EXPECTED = [
    "Create", "Ok", "Append", "AppendReply", "Read", "ReadReply", "Trim", "Ok", "Delete", "Ok",
]  # fmt: skip


def test_a_clean_s3p_conversation_gives_one_row_per_event() -> None:
    rows = rows_of(conversation(Flow(CLIENT, SERVER)))
    assert events(rows) == EXPECTED
    assert {r.protocol for r in rows} == {"s3p"}
    assert {(r.client, r.server) for r in rows} == {("10.0.0.1:40000", "10.0.0.2:7500")}
    requests = [r for r in rows if r.direction == "client_to_server"]
    replies = [r for r in rows if r.direction == "server_to_client"]
    assert [r.pair_id for r in requests] == [r.pair_id for r in replies]
    assert len({r.pair_id for r in requests}) == 5
    assert all(r.latency_ms is None for r in requests)
    # every reply is the next packet after its request: one tick of the synthetic clock
    assert [r.latency_ms for r in replies] == pytest.approx([1.0] * 5, abs=0.01)


def test_rows_carry_packet_numbers_times_and_key_fields() -> None:
    rows = rows_of(conversation(Flow(CLIENT, SERVER)))
    create, _ok, append, append_reply, _read, read_reply = rows[:6]
    # packets 1-3 are the handshake; then one packet per request or reply
    assert [r.first_packet for r in rows] == list(range(4, 14))
    assert all(r.first_packet == r.last_packet for r in rows)
    assert create.ts == pytest.approx(1_700_000_000.004)
    assert append.stream == "orders"
    assert append.count == 2
    assert append.payload_bytes == len(b"helloworld")
    assert append_reply.offset == "1700000000000-1"
    assert read_reply.count == 1
    assert read_reply.payload_bytes == 5
    assert create.wire_bytes == len(s3p_exchanges()[0][0])
    assert isinstance(append.event, s3p.Append)
    assert create.conversation == "<memory>#1"


def test_an_event_spread_over_many_packets_names_its_first_and_last() -> None:
    rows = rows_of(conversation(Flow(CLIENT, SERVER), mss=7))
    append = next(r for r in rows if r.event_type == "Append")
    assert append.last_packet > append.first_packet


def test_content_sniffing_finds_s3p_on_any_port() -> None:
    rows = rows_of(conversation(Flow(("10.0.0.1", 51000), ("10.0.0.2", 9999))))
    assert events(rows) == EXPECTED
    assert rows[0].protocol == "s3p"


def test_decode_as_overrides_sniffing_and_names_the_server() -> None:
    f = Flow(("10.0.0.1", 3000), ("10.0.0.2", 9999))
    frames = conversation(f, handshake=False)
    rows = rows_of(frames, decode_as={9999: "s3p"})
    assert rows[0].server == "10.0.0.2:9999"
    assert "Append" in events(rows)


def test_unknown_traffic_is_one_undecoded_row_per_direction() -> None:
    f = Flow(CLIENT, ("10.0.0.2", 9999))
    frames = f.handshake() + f.send(True, b"\x16\x03\x01 tls?") + f.send(False, b"xx") + f.close()
    rows = rows_of(frames)
    assert [(r.kind, r.protocol, r.wire_bytes) for r in rows] == [
        ("undecoded", "unknown", 8),
        ("undecoded", "unknown", 2),
    ]


def test_synthetic_capture_with_reordering_retransmission_overlap_gap_and_midstream_start() -> None:
    """The issue's verification capture: every impairment at once, decoded as specified."""
    exchanges = s3p_exchanges()
    f = Flow(CLIENT, SERVER)
    f.handshake()  # not captured: the capture starts in the middle of the first exchange
    create, ok = exchanges[0]
    f.send(True, create[:9])
    frames = [f.segment(True, create[9:])]  # the first bytes seen sit inside a frame
    f.send(False, ok[:2])
    frames.append(f.segment(False, ok[2:]))
    # Append: in three pieces, out of order, one repeated, the last overlapping the middle
    wire = exchanges[1][0]
    base = f.seq[True]
    a = f.at(True, base, wire[:10])
    b = f.at(True, base + 10, wire[10:20])
    c = f.at(True, base + 15, wire[15:])
    f.seq[True] += len(wire)
    frames += [c, b, a, b]
    frames += f.send(False, exchanges[1][1])
    # Read is lost by the capture (the server acknowledges it: a proven gap); its reply is seen
    f.send(True, exchanges[2][0])
    frames.append(f.ack(False))
    frames += f.send(False, exchanges[2][1])
    for request, reply in exchanges[3:]:
        frames += f.send(True, request) + f.send(False, reply)
    frames += f.close()
    rows = rows_of(frames)
    kinds = [(r.direction[0], r.kind, r.event_type) for r in rows]
    # a mid-stream start in each direction is reported as a zero-size gap, then decoding resumes
    assert kinds[0] == ("c", "gap", "Gap")
    assert rows[0].wire_bytes == 0
    assert ("s", "gap", "Gap") in kinds
    assert [k for k in kinds if k[1] == "event"] == [
        ("c", "event", "Append"), ("s", "event", "AppendReply"),
        ("s", "event", "ReadReply"),
        ("c", "event", "Trim"), ("s", "event", "Ok"),
        ("c", "event", "Delete"), ("s", "event", "Ok"),
    ]  # fmt: skip
    lost = [r for r in rows if r.kind == "gap" and r.wire_bytes]
    assert [r.wire_bytes for r in lost] == [len(exchanges[2][0])]
    assert "resynchronized" in lost[0].detail
    append = next(r for r in rows if r.event_type == "Append")
    assert append.event == s3p.Append(b"orders", (b"hello", b"world"))
    # the Append's first bytes came in the 5th frame, its last ones in the 3rd
    assert (append.first_packet, append.last_packet) == (5, 3)


def test_decode_flow_gives_the_same_rows_from_shuffled_segments() -> None:
    f = Flow(CLIENT, SERVER)
    segs = list(segments_from_bytes(write_capture(conversation(f, mss=9))))
    expected = list(decode_segments(segs))
    shuffled = segs[:]
    random.Random(3).shuffle(shuffled)
    assert decode_flow(shuffled) == expected


def test_flows_spanning_rotated_files_decode_as_one_file(tmp_path: Path) -> None:
    frames = conversation(Flow(CLIENT, SERVER), mss=11)
    whole = tmp_path / "whole.pcap"
    whole.write_bytes(write_capture(frames))
    cut = len(frames) // 2
    parts = [tmp_path / "rot.pcap", tmp_path / "rot.pcap1", tmp_path / "rot.pcap10"]
    parts[0].write_bytes(write_capture(frames[:cut]))
    parts[1].write_bytes(write_capture(frames[cut : cut + 3]))
    parts[2].write_bytes(write_capture(frames[cut + 3 :]))
    one = list(decode_files([str(whole)]))
    # given in the wrong order on purpose: capture_order puts rot.pcap1 before rot.pcap10
    rotated = list(decode_files([str(p) for p in reversed(parts)]))
    assert [r.event for r in rotated] == [r.event for r in one]
    assert events(rotated) == EXPECTED
    assert {r.file for r in rotated} == {str(p) for p in parts}


def test_a_broken_file_is_a_capture_error_row_and_decoding_goes_on(tmp_path: Path) -> None:
    good = tmp_path / "a.pcap"
    good.write_bytes(write_capture(conversation(Flow(CLIENT, SERVER))))
    junk = tmp_path / "b.pcap"
    junk.write_bytes(b"not a capture at all")
    cut = tmp_path / "c.pcap"
    whole = write_capture(conversation(Flow(CLIENT, ("10.0.0.3", 7500))))
    last = len(whole) - 54 - 16  # the last frame (54 bytes of headers) and its record header
    cut.write_bytes(whole[: last + 5])  # the file ends five bytes into a record header
    rows = list(decode_files([str(good), str(junk), str(cut)]))
    errors = [r for r in rows if r.kind == "capture_error"]
    assert [r.file for r in errors] == [str(junk), str(cut)]
    assert "not a pcap" in errors[0].detail
    assert "broken after packet" in errors[1].detail
    assert events(rows).count("Create") == 2  # the truncated file still gave its whole packets


class _Exploding:
    def observe(self, direction: Direction, data: bytes) -> Sequence[Any]:
        raise ValueError("boom")

    def gap(self, direction: Direction, size: int) -> Sequence[Any]:
        return []

    def close(self, direction: Direction) -> Sequence[Any]:
        return []


def test_an_observer_that_raises_is_reported_and_the_capture_goes_on() -> None:
    frames = conversation(Flow(CLIENT, SERVER)) + conversation(Flow(("10.0.0.9", 1), SERVER))
    calls: list[str] = []

    def observers(protocol: str) -> Any:
        calls.append(protocol)
        return _Exploding() if len(calls) == 1 else s3p.Observer()

    rows = rows_of(frames, observers=observers)
    crashed = [r for r in rows if r.error_code == "decoder_failure"]
    assert len(crashed) == 2  # one per direction of the first conversation
    assert "boom" in crashed[0].detail
    assert {r.error_code for r in crashed} == {RowErrorCode.DECODER_FAILURE}
    assert events(rows) == EXPECTED


def _rustlog_exchanges(n: int) -> list[tuple[bytes, bytes]]:
    from s3p_codec import Role, rustlog

    client, server = rustlog.Connection(Role.CLIENT), rustlog.Connection(Role.SERVER)
    out = []
    for i in range(n):
        wire = client.send(rustlog.Produce("logs", 0, (f"record {i}".encode(),)))
        server.receive_data(wire)
        list(server.events())
        reply = server.send(rustlog.ProduceResponse(i, 1))
        client.receive_data(reply)
        list(client.events())
        out.append((wire, reply))
    return out


def test_a_length_prefixed_protocol_resynchronises_after_a_gap_at_a_plausible_header() -> None:
    f = Flow(CLIENT, ("10.0.0.2", 9092))
    frames = f.handshake()
    exchanges = _rustlog_exchanges(4)
    for i, (request, reply) in enumerate(exchanges):
        if i == 1:
            f.send(True, request[:20])  # the first part of this request is lost
            frames += f.send(True, request[20:])
            frames.append(f.ack(False))
        else:
            frames += f.send(True, request)
        frames += f.send(False, reply)
    frames += f.close()
    rows = rows_of(frames)
    assert rows[0].protocol == "rustlog"
    gaps = [r for r in rows if r.kind == "gap"]
    assert [g.wire_bytes for g in gaps] == [20]
    produced = [r.event.records for r in rows if r.event_type == "Produce"]
    # the request cut by the gap is lost; decoding picks up again at the next frame header
    assert produced == [(b"record 0",), (b"record 2",), (b"record 3",)]
    assert events(rows).count("ProduceResponse") == 4


def test_an_http_protocol_seen_mid_stream_decodes_from_the_next_whole_message() -> None:
    from s3p_codec import Role, durable

    client = durable.Connection(Role.CLIENT, host="h")
    first = client.send(durable.Create("/v1/stream/a", content_type="text/plain"))
    f = Flow(CLIENT, ("10.0.0.2", 4437))
    f.handshake()
    f.send(True, first[:10])  # not captured: the capture starts inside the first request
    frames = f.send(True, first[10:])
    rows = rows_of(frames + f.close())
    assert {r.protocol for r in rows} == {"durable"}
    assert "Create" not in events(rows)


class _Silent(_Exploding):
    def observe(self, direction: Direction, data: bytes) -> Sequence[Any]:
        return []


def test_bytes_an_observer_passes_over_in_silence_are_still_accounted_for() -> None:
    rows = rows_of(conversation(Flow(CLIENT, SERVER)), observers=lambda protocol: _Silent())
    sizes = sum(len(req) + len(rep) for req, rep in s3p_exchanges())
    assert [(r.kind, r.protocol) for r in rows] == [("undecoded", "s3p")] * 2
    assert sum(r.wire_bytes for r in rows) == sizes
    assert "the s3p decoder reported nothing" in rows[0].detail


def test_closed_connections_are_forgotten_and_their_stray_segments_dropped() -> None:
    from s3p_codec.capture import FlowTable

    f = Flow(CLIENT, SERVER)
    frames = conversation(f)
    frames += [f.ack(True), f.at(True, f.seq[True] - 1, b"", 0x11)]  # late ACK, FIN again
    table = FlowTable()
    rows = []
    for segment in segments_from_bytes(write_capture(frames)):
        rows += table.add(segment)
    assert table.flows == {}  # nothing kept for the closed connection, strays included
    assert events(rows) == EXPECTED
    assert table.finish() == []
    # the same ports, later, with a new SYN: a new conversation
    again = conversation(Flow(CLIENT, SERVER, isn_client=777, ts=1_700_000_100.0))
    rows = []
    for segment in segments_from_bytes(write_capture(frames + again)):
        rows += table.add(segment)
    assert events(rows) == EXPECTED * 2
    assert len({r.conversation for r in rows}) == 2


class _Counting:
    """An Observer that records which calls it got (and decodes nothing)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Direction, int]] = []

    def observe(self, direction: Direction, data: bytes) -> Sequence[Any]:
        self.calls.append(("observe", direction, len(data)))
        return []

    def gap(self, direction: Direction, size: int) -> Sequence[Any]:
        self.calls.append(("gap", direction, size))
        return []

    def close(self, direction: Direction) -> Sequence[Any]:
        return []


class _Hunting(_Counting):
    resynchronizes = True


@pytest.mark.parametrize("kind", [_Counting, _Hunting])
def test_a_mid_stream_start_opens_with_a_zero_gap_only_for_an_observer_that_resynchronizes(
    kind: type[_Counting],
) -> None:
    made: list[_Counting] = []

    def factory(protocol: str) -> _Counting:
        made.append(kind())
        return made[-1]

    rows_of(conversation(Flow(CLIENT, SERVER), handshake=False), observers=factory)
    (observer,) = made
    zero_gaps = [c for c in observer.calls if c[0] == "gap" and c[2] == 0]
    first = {d: next(c[0] for c in observer.calls if c[1] is d) for d in Direction}
    if kind is _Hunting:
        assert sorted(d.value for _, d, _ in zero_gaps) == ["client_to_server", "server_to_client"]
        assert first == dict.fromkeys(Direction, "gap")
    else:
        assert zero_gaps == []
        assert first == dict.fromkeys(Direction, "observe")


def test_the_protocols_whose_observer_resynchronizes_say_so_themselves() -> None:
    import s3p_codec

    hunting = {p for p in s3p_codec.PROTOCOLS if getattr(s3p_codec, p).Observer.resynchronizes}
    assert hunting == {"s3p", "rustlog", "pravega"}
