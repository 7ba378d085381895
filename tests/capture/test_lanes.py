"""``decode_files`` takes most packets of a classic pcap file through ``lanes`` (no ``Segment``,
consecutive in-order payloads in one Observer call); every row and error must be what the
general way gives, a ``Segment`` per packet through ``FlowTable.add`` (``decode_stream``, which
reads record by record, takes it for every packet)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from s3p_codec import Role, pravega
from s3p_codec.capture import Limits, Row, decode_files, decode_stream
from s3p_codec.capture import _lanes as lanes
from s3p_codec.capture._packets import LINKTYPE_ETHERNET, LINKTYPE_LINUX_SLL, LINKTYPE_RAW
from tests.capture.conftest import s3p_exchanges
from tests.capture.synth import ACK, PSH, Flow, Frame, write_capture


def _rustlog_exchanges() -> list[tuple[bytes, bytes]]:
    req = b'{"type":"Produce","topic":"t","partition":0,"records":["aGVsbG8="]}'
    rep = b'{"type":"ProduceResponse","base_offset":0,"record_count":1}'
    return [(struct.pack(">I", len(req)) + req, struct.pack(">I", len(rep)) + rep)] * 2


def _pravega_exchanges() -> list[tuple[bytes, bytes]]:
    client, server = pravega.Connection(Role.CLIENT), pravega.Connection(Role.SERVER)
    out = [(client.send(pravega.Hello()), server.send(pravega.Hello()))]
    for i in range(1, 3):
        req = client.send(pravega.ReadSegment("scope/stream/0", i * 64, 64, "", i))
        data = b"x" * 900
        rep = server.send(pravega.SegmentRead("scope/stream/0", i * 64, False, False, data, i))
        out.append((req, rep))
    return out


WIRE = {7500: s3p_exchanges(), 9092: _rustlog_exchanges(), 12345: _pravega_exchanges()}
WIRE[5555] = [(b"GARBAGE" * 40, b"\x00" * 300)]  # a protocol nobody decodes


@st.composite
def conversations(draw: st.DrawFn, index: int, linktype: int) -> list[Frame]:
    """The frames of one conversation, in the order its ends send them: a handshake (or a start
    mid-stream), exchanges cut in segments with acknowledgements in between, retransmissions
    that overlap, and a FIN, a RST or nothing at the end."""
    port = draw(st.sampled_from(sorted(WIRE)))
    ipv6 = linktype != LINKTYPE_RAW and draw(st.integers(0, 9)) == 0
    client = (f"fd00::{index + 1}", 40000 + index) if ipv6 else (f"10.0.0.{index + 1}", 40000)
    server = ("fd00::100", port) if ipv6 else ("10.0.0.100", port)
    flow = Flow(
        client, server, linktype=linktype,
        isn_client=draw(st.integers(0, 2**32 - 1)), isn_server=draw(st.integers(0, 2**32 - 1)),
    )  # fmt: skip
    frames = [] if draw(st.integers(0, 4)) == 0 else flow.handshake()
    exchanges = WIRE[port][: draw(st.integers(1, len(WIRE[port])))]
    for request, reply in exchanges:
        for from_client, data in ((True, request), (False, reply)):
            mss = draw(st.sampled_from([7, 100, 536, 1460]))
            start = flow.seq[from_client]
            for at in range(0, len(data), mss):
                frames.append(flow.segment(from_client, data[at : at + mss]))
                if draw(st.integers(0, 3)) == 0:
                    frames.append(flow.ack(not from_client))  # the peer acknowledges
            if draw(st.integers(0, 5)) == 0 and len(data) > 10:
                cut = draw(st.integers(1, len(data) - 1))  # a retransmission that overlaps
                frames.append(flow.at(from_client, start + cut, data[cut : cut + mss]))
    ending = draw(st.sampled_from(["fin", "fin", "rst", "none"]))
    if ending == "fin":
        frames += flow.close()
    elif ending == "rst":
        frames.append(flow.rst(draw(st.booleans())))
    return frames


@st.composite
def captures(draw: st.DrawFn) -> bytes:
    """A capture of a few conversations, their packets interleaved, some dropped, duplicated,
    swapped, cut by the snap length or pushed in time (idle gaps, a clock stepping back)."""
    linktype = draw(st.sampled_from([LINKTYPE_ETHERNET, LINKTYPE_LINUX_SLL, LINKTYPE_RAW]))
    queues = [draw(conversations(i, linktype)) for i in range(draw(st.integers(1, 4)))]
    merged: list[bytes] = []
    while any(queues):
        live = [q for q in queues if q]
        queue = live[draw(st.integers(0, len(live) - 1))]
        for _ in range(draw(st.sampled_from([1, 1, 2, 5]))):  # bursts of one conversation
            if queue:
                merged.append(queue.pop(0)[1])
    out: list[Frame] = []
    ts = 1_700_000_000.0
    i = 0
    while i < len(merged):
        frame = merged[i]
        fate = draw(st.integers(0, 39))
        ts += draw(st.sampled_from([0.001, 0.001, 0.001, 400.0, -0.0005]))
        if fate == 0:  # dropped
            i += 1
            continue
        if fate == 1:
            out.append((ts, frame))  # duplicated
        elif fate == 2 and i + 1 < len(merged):
            merged[i], merged[i + 1] = merged[i + 1], frame  # swapped with the next
            frame = merged[i]
        elif fate == 3 and len(frame) > 60:
            frame = frame[: draw(st.integers(40, len(frame) - 1))]  # cut by the snap length
        out.append((ts, frame))
        i += 1
    return write_capture(out, linktype=linktype)


def _rows(rows: list[Row]) -> list[tuple[object, ...]]:
    return [(row.as_tuple(), type(row.event).__name__, repr(row.event)) for row in rows]


LIMITS = [None, Limits(idle_timeout=5.0, max_flows=2, max_pending=1500)]


@settings(
    max_examples=80, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)  # fmt: skip
@given(
    capture=captures(), limits=st.sampled_from(LIMITS), decode_as=st.booleans(),
    run_bytes=st.sampled_from([lanes.RUN_BYTES, 1, 600]),
)  # fmt: skip
def test_the_lanes_give_the_rows_of_the_general_way(
    tmp_path: Path, capture: bytes, limits: Limits | None, decode_as: bool, run_bytes: int
) -> None:
    path = tmp_path / "cap.pcap"
    path.write_bytes(capture)
    ports = {5555: "s3p"} if decode_as else None
    default, lanes.RUN_BYTES = lanes.RUN_BYTES, run_bytes  # runs cut short too
    try:
        fast = list(decode_files([str(path)], ports, limits=limits))
    finally:
        lanes.RUN_BYTES = default
    with open(path, "rb") as f:
        general = list(decode_stream(f, ports, name=str(path), limits=limits))
    assert _rows(fast) == _rows(general)
    assert fast == general


@pytest.mark.parametrize("linktype", [LINKTYPE_ETHERNET, LINKTYPE_RAW])
def test_a_message_in_many_segments_with_acks_between_is_one_observer_call(
    tmp_path: Path, linktype: int
) -> None:
    """The run of a message: its segments and the peer's acknowledgements reach the Observer
    as one piece, the rows naming the first and last packet of each message as ever."""
    calls: list[int] = []
    from s3p_codec.capture import default_observer

    def counting(protocol: str) -> object:
        observer = default_observer(protocol)
        observe = observer.observe

        def count(direction: object, data: bytes) -> object:
            calls.append(len(data))
            return observe(direction, data)  # type: ignore[arg-type]

        observer.observe = count  # type: ignore[method-assign]
        return observer

    flow = Flow(linktype=linktype)
    frames = flow.handshake()
    exchanges = s3p_exchanges()
    for request, reply in exchanges:
        for i in range(0, len(request), 3):
            frames.append(flow.segment(True, request[i : i + 3], ACK | PSH))
            frames.append(flow.ack(False))
        frames += flow.send(False, reply, mss=4)
    frames += flow.close()
    path = tmp_path / "cap.pcap"
    path.write_bytes(write_capture(frames, linktype=linktype))
    rows = list(decode_files([str(path)], observers=counting))  # type: ignore[arg-type]
    with open(path, "rb") as f:
        assert rows == list(decode_stream(f, name=str(path)))
    assert [r.kind for r in rows] == ["event"] * 2 * len(exchanges)
    # The first exchange goes the general way while its bytes choose the protocol; then one
    # call per message.
    later = [len(part) for exchange in exchanges[1:] for part in exchange]
    assert calls[-len(later) :] == later
    assert sum(calls) == sum(len(part) for exchange in exchanges for part in exchange)
