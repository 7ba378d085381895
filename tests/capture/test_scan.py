"""The in-place classic-pcap reader gives what the record-by-record one gives: the same
segments, the same error at the same packet, the same packet count, whatever the chunking."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from s3p_codec.capture import CaptureFileError, Segment, decode_packet, read_packets
from s3p_codec.capture import _scan as scan_module
from s3p_codec.capture._packets import (
    LINKTYPE_ETHERNET,
    LINKTYPE_LINUX_SLL,
    LINKTYPE_LINUX_SLL2,
    LINKTYPE_LOOP,
    LINKTYPE_NULL,
    LINKTYPE_RAW,
)
from s3p_codec.capture._scan import SegmentReader
from tests.capture.synth import Flow, write_capture

LINKTYPES = [
    LINKTYPE_ETHERNET, LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2, LINKTYPE_NULL, LINKTYPE_LOOP,
    LINKTYPE_RAW,
]  # fmt: skip
Outcome = tuple[list[Segment], str | None, int]


def _record_by_record(path: str) -> Outcome:
    segments, error, packets = [], None, 0
    try:
        for packet in read_packets(path):
            packets = packet.number
            segment = decode_packet(packet, path, 2)
            if segment is not None:
                segments.append(segment)
    except CaptureFileError as exc:
        error = exc.message
    return segments, error, packets


def _in_place(path: str) -> Outcome:
    segments, error = [], None
    reader = SegmentReader(path, file_index=2)
    try:
        segments.extend(reader)
    except CaptureFileError as exc:
        error = exc.message
    return segments, error, reader.packets


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    linktype=st.sampled_from(LINKTYPES),
    payloads=st.lists(st.binary(max_size=300), min_size=1, max_size=12),
    flips=st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 255)), max_size=6),
    cut=st.integers(0, 4000),
    chunk=st.sampled_from([16, 17, 50, 64, 333, 1 << 20]),
    ipv6=st.booleans(),
)
def test_the_in_place_reader_and_the_record_reader_agree(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    linktype: int,
    payloads: list[bytes],
    flips: list[tuple[int, int]],
    cut: int,
    chunk: int,
    ipv6: bool,
) -> None:
    flow = (
        Flow(("fd00::1", 40000), ("fd00::2", 7500), linktype=linktype)
        if ipv6
        else Flow(linktype=linktype)
    )
    frames = flow.handshake()
    for i, payload in enumerate(payloads):
        frames.append(flow.segment(i % 2 == 0, payload))
    data = bytearray(write_capture(frames, linktype=linktype))
    for at, value in flips:  # corrupt bytes after the file header: records, link, IP, TCP
        if 24 + at < len(data):
            data[24 + at] = value
    if cut < len(data) - 24:
        del data[len(data) - cut :]  # a file that breaks off anywhere
    path = tmp_path / "cap.pcap"
    path.write_bytes(bytes(data))
    monkeypatch.setattr(scan_module, "READ_CHUNK", chunk)  # records across chunk boundaries
    assert _in_place(str(path)) == _record_by_record(str(path))


def test_gzip_and_pcapng_take_the_record_reader_with_the_same_result(tmp_path: Path) -> None:
    flow = Flow()
    frames = flow.handshake() + flow.send(True, b"x" * 5000) + flow.close()
    for name, data in (
        ("cap.pcap.gz", write_capture(frames, compress=True)),
        ("cap.pcapng", write_capture(frames, fmt="pcapng")),
        ("cap.pcap", write_capture(frames)),
    ):
        path = tmp_path / name
        path.write_bytes(data)
        segments, error, packets = _in_place(str(path))
        assert (error, packets) == (None, len(frames))
        assert b"".join(s.payload for s in segments) == b"x" * 5000
        assert _in_place(str(path)) == _record_by_record(str(path))
