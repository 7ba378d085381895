"""Hypothesis-generated packet sequences through the capture layer: whatever the flows (odd,
one-sided, self-connections, port reuse, resets, snap-length cuts, wrapped sequence numbers),
each becomes rows or an error row, and nothing raises."""

from __future__ import annotations

import io
from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from s3p_codec.capture import (
    CaptureFileError,
    Limits,
    Row,
    Segment,
    decode_flow,
    decode_segments,
    decode_stream,
    flow_key,
    read_packets,
)
from s3p_codec.capture._rows import COLUMN_NAMES
from tests.capture.conftest import s3p_exchanges
from tests.capture.synth import write_capture

# Few endpoints, so that generated segments collide into the same flows, self-connections
# (src == dst) and reused port pairs; 7500 and 9092 make the S3P and RustLog decoders run.
ENDPOINTS = [
    ("10.0.0.1", 40000),
    ("10.0.0.2", 7500),
    ("10.0.0.1", 7500),
    ("10.0.0.2", 9092),
    ("fe80::1", 40000),
]
_WIRE = [part for exchange in s3p_exchanges() for part in exchange]
KINDS = {"event", "error", "gap", "undecoded", "capture_error", "evicted"}


@st.composite
def segments(draw: st.DrawFn) -> list[Segment]:
    count = draw(st.integers(1, 40))
    isns = draw(st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=2))
    out = []
    ts = 1_700_000_000.0
    cursor = {True: isns[0], False: isns[1]}
    for number in range(1, count + 1):
        src = draw(st.sampled_from(ENDPOINTS))
        dst = draw(st.sampled_from(ENDPOINTS))
        side = src < dst
        payload = draw(
            st.one_of(
                st.just(b""),
                st.binary(max_size=40),
                st.sampled_from(_WIRE),
                st.sampled_from(_WIRE).map(lambda w: w[: len(w) // 2]),
            )
        )
        seq = draw(
            st.one_of(
                st.just(cursor[side]),  # in order
                st.integers(0, 2**32 - 1),  # anywhere
                st.just((cursor[side] + draw(st.integers(-60, 60))) % 2**32),  # near
            )
        )
        cursor[side] = (seq + len(payload)) % 2**32
        cut = draw(st.sampled_from([0, 0, 0, 5, 1000]))  # bytes the snap length cut off
        ts += draw(st.sampled_from([0.0, 0.001, 0.5, 10.0, 400.0, -0.001]))
        out.append(
            Segment(
                file="fuzz.pcap",
                file_index=0,
                number=number,
                ts=ts,
                src=src[0],
                sport=src[1],
                dst=dst[0],
                dport=dst[1],
                seq=seq,
                ack=draw(st.one_of(st.just(cursor[not side]), st.integers(0, 2**32 - 1))),
                flags=draw(st.integers(0, 0xFF)),
                payload=payload,
                length=len(payload) + cut,
            )
        )
    return out


def check(rows: list[Row]) -> None:
    for row in rows:
        assert isinstance(row, Row)
        assert row.kind in KINDS
        assert row.first_packet >= 0
        assert row.wire_bytes >= 0
        assert set(row.as_dict()) == set(COLUMN_NAMES)


TINY = Limits(idle_timeout=5.0, max_flows=2, max_pending=1500)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(segments())
def test_any_packet_sequence_gives_rows_never_an_exception(segs: list[Segment]) -> None:
    check(list(decode_segments(segs)))
    check(list(decode_segments(segs, limits=TINY)))
    check(list(decode_segments(segs, {7500: "durable", 9092: "s2s", 40000: "pravega"})))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(segments())
def test_each_flow_alone_decodes_as_in_the_whole_capture(segs: list[Segment]) -> None:
    """What Spark relies on: one key's segments, shuffled, give the rows that key gets in a
    one-pass decode of everything (without idle timeouts, which depend on other flows' time)."""
    limits = Limits(idle_timeout=0)
    whole = list(decode_segments(segs, limits=limits))
    by_key: dict[object, list[Segment]] = defaultdict(list)
    for seg in segs:
        by_key[flow_key(seg)].append(seg)
    per_flow = [row for key in by_key for row in decode_flow(by_key[key][::-1], limits=limits)]
    assert sorted(whole, key=repr) == sorted(per_flow, key=repr)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 400))
def test_damaged_capture_bytes_end_in_a_capture_error_never_another_exception(
    noise: bytes, cut: int
) -> None:
    from tests.capture.synth import Flow

    flow = Flow()
    frames = flow.handshake() + flow.send(True, _WIRE[0]) + flow.close()
    for fmt in ("pcap", "pcapng"):
        data = write_capture(frames, fmt=fmt)
        damaged = data[:cut] + noise
        try:
            for _ in read_packets("x", io.BytesIO(damaged)):
                pass
        except CaptureFileError:
            pass
        rows = list(decode_stream(io.BytesIO(damaged)))
        check(rows)
