"""Reading capture files: formats, compression, link layers, IPv4/IPv6, broken files."""

from __future__ import annotations

import io
import socket
import struct
from pathlib import Path

import dpkt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec.capture import (
    CaptureFileError,
    capture_order,
    read_packets,
    read_segments,
    segments_from_bytes,
)
from s3p_codec.capture._packets import (
    LINKTYPE_ETHERNET,
    LINKTYPE_LINUX_SLL,
    LINKTYPE_LINUX_SLL2,
    LINKTYPE_LOOP,
    LINKTYPE_NULL,
    LINKTYPE_RAW,
    TCP_ACK,
    TCP_SYN,
    Packet,
    decode_packet,
    decode_with_dpkt,
)
from tests.capture.synth import Flow, link_frame, write_capture

LINKTYPES = [
    LINKTYPE_ETHERNET, LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2, LINKTYPE_NULL, LINKTYPE_LOOP,
    LINKTYPE_RAW,
]  # fmt: skip


@pytest.mark.parametrize("linktype", LINKTYPES)
@pytest.mark.parametrize("v6", [False, True], ids=["ipv4", "ipv6"])
@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_every_link_layer_and_ip_version_gives_the_tcp_segments(
    linktype: int, v6: bool, fmt: str
) -> None:
    client = ("fd00::1", 40000) if v6 else ("10.0.0.1", 40000)
    server = ("fd00::2", 7500) if v6 else ("10.0.0.2", 7500)
    f = Flow(client, server, linktype=linktype)
    frames = f.handshake() + f.send(True, b"request") + f.send(False, b"reply") + f.close()
    segs = list(segments_from_bytes(write_capture(frames, linktype=linktype, fmt=fmt)))
    assert [s.number for s in segs] == list(range(1, 9))
    assert segs[0].flags & TCP_SYN
    assert not segs[0].flags & TCP_ACK
    assert (segs[3].src, segs[3].sport, segs[3].dst, segs[3].dport) == (*client, *server)
    assert segs[3].payload == b"request"
    assert segs[4].payload == b"reply"
    assert segs[3].seq == 1001
    assert segs[3].ts == pytest.approx(frames[3][0])


@pytest.mark.parametrize("nano", [False, True])
def test_gzip_and_nanosecond_captures_read_the_same(nano: bool, tmp_path: Path) -> None:
    f = Flow()
    frames = f.handshake() + f.send(True, b"x" * 3000)
    path = tmp_path / "cap.pcap.gz"
    path.write_bytes(write_capture(frames, compress=True, nano=nano))
    segs = list(read_segments(str(path), file_index=3))
    assert b"".join(s.payload for s in segs) == b"x" * 3000
    assert {s.file for s in segs} == {str(path)}
    assert {s.file_index for s in segs} == {3}
    assert segs[-1].order == (3, 6)
    assert isinstance(segs[0].ts, float)


def test_packets_that_are_not_tcp_are_skipped() -> None:
    f = Flow()
    udp = dpkt.ip.IP(
        src=socket.inet_aton("10.0.0.1"), dst=socket.inet_aton("10.0.0.2"), p=dpkt.ip.IP_PROTO_UDP,
        data=dpkt.udp.UDP(sport=53, dport=53, data=b"dns"),
    )  # fmt: skip
    udp.len = len(udp)
    arp = dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_ARP, data=dpkt.arp.ARP())
    frames = [
        (1.0, link_frame(LINKTYPE_ETHERNET, udp)),
        (2.0, bytes(arp)),
        (3.0, b"\x00\x01"),  # a runt frame
        f.segment(True, b"tcp"),
    ]
    segs = list(segments_from_bytes(write_capture(frames)))
    assert [(s.number, s.payload) for s in segs] == [(4, b"tcp")]


def test_a_file_that_is_not_a_capture_raises(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"hello, this is not a capture")
    with pytest.raises(CaptureFileError, match="not a pcap or pcapng file") as info:
        list(read_segments(str(path)))
    assert info.value.file == str(path)


def test_a_file_cut_mid_record_gives_its_whole_records_then_raises(tmp_path: Path) -> None:
    f = Flow()
    data = write_capture(f.handshake() + f.send(True, b"abc"))
    path = tmp_path / "cut.pcap"
    path.write_bytes(data + b"\x01\x02\x03")  # three bytes of a 16-byte record header
    reader = read_segments(str(path))
    got = [next(reader) for _ in range(4)]
    assert got[-1].payload == b"abc"
    with pytest.raises(CaptureFileError, match="broken after packet 4"):
        next(reader)


def test_a_file_cut_inside_a_packet_body_says_so_after_its_whole_packets(
    tmp_path: Path,
) -> None:
    f = Flow()
    data = write_capture(f.handshake() + f.send(True, b"abcdef"))
    path = tmp_path / "cut.pcap"
    path.write_bytes(data[:-3])  # the last packet lost its last three bytes
    reader = read_segments(str(path))
    assert len([next(reader) for _ in range(3)]) == 3  # the handshake, whole
    with pytest.raises(CaptureFileError, match="broken inside packet 4"):
        next(reader)


def test_a_record_longer_than_any_snap_length_is_corruption(tmp_path: Path) -> None:
    data = bytearray(write_capture(Flow().handshake()))
    struct.pack_into("<I", data, 24 + 8, 1 << 30)  # first record's captured length: 1 GiB
    path = tmp_path / "corrupt.pcap"
    path.write_bytes(bytes(data))
    with pytest.raises(CaptureFileError, match=r"broken at packet 1 \(claims 1073741824 bytes"):
        list(read_segments(str(path)))


@pytest.mark.parametrize("nano", [False, True])
@pytest.mark.parametrize("big_endian", [False, True])
def test_classic_pcap_reads_as_dpkt_reads_it(nano: bool, big_endian: bool) -> None:
    f = Flow()
    frames = [(ts + 0.123456789, buf) for ts, buf in f.handshake() + f.send(True, b"xyz")]
    data = write_capture(frames, nano=nano)
    if big_endian:  # rewrite every header field big-endian, as a big-endian machine writes
        data = _swap_endianness(data)
    with_dpkt = [(float(ts), bytes(buf)) for ts, buf in dpkt.pcap.Reader(io.BytesIO(data))]
    ours = [(p.ts, p.data) for p in read_packets("x.pcap", io.BytesIO(data))]
    assert ours == with_dpkt
    assert len(ours) == 4


def _swap_endianness(data: bytes) -> bytes:
    out = bytearray(data[:24])
    magic, major, minor, zone, sigfigs, snaplen, network = struct.unpack("<IHHiIII", data[:24])
    out[:24] = struct.pack(">IHHiIII", magic, major, minor, zone, sigfigs, snaplen, network)
    at = 24
    while at < len(data):
        fields = struct.unpack_from("<IIII", data, at)
        out += struct.pack(">IIII", *fields) + data[at + 16 : at + 16 + fields[2]]
        at += 16 + fields[2]
    return bytes(out)


def test_capture_errors_pickle() -> None:
    import pickle

    error = pickle.loads(pickle.dumps(CaptureFileError("a.pcap", "bad")))
    assert (error.file, error.message) == ("a.pcap", "bad")


def test_rotated_files_sort_numerically() -> None:
    names = ["cap.pcap10", "cap.pcap2", "cap.pcap", "cap.pcap1"]
    assert capture_order(names) == ["cap.pcap", "cap.pcap1", "cap.pcap2", "cap.pcap10"]
    stamped = ["t-2024-01-02_10.pcap", "t-2024-01-02_9.pcap"]
    assert capture_order(stamped) == ["t-2024-01-02_9.pcap", "t-2024-01-02_10.pcap"]


@given(
    linktype=st.sampled_from(LINKTYPES),
    payload=st.binary(max_size=64),
    flags=st.integers(0, 255),
    cut=st.integers(0, 200),
    flips=st.lists(st.tuples(st.integers(0, 80), st.integers(0, 255)), max_size=4),
)
def test_the_fast_path_and_dpkt_agree_on_every_packet(
    linktype: int, payload: bytes, flags: int, cut: int, flips: list[tuple[int, int]]
) -> None:
    f = Flow(linktype=linktype)
    ts, frame = f.segment(True, payload, flags)
    raw = bytearray(frame[: len(frame) - cut] if cut < len(frame) else frame)
    for at, value in flips:  # corrupt header bytes: lengths, versions, offsets, types
        if at < len(raw):
            raw[at] = value
    packet = Packet(1, ts, linktype, bytes(raw))
    assert decode_packet(packet) == decode_with_dpkt(packet)


def test_the_tcp_flag_bits_are_dpkts_and_reading_a_capture_does_not_import_dpkt() -> None:
    """dpkt is imported when an odd packet needs it, not with the package (it imports every
    protocol module it has, a fifth of a second of every run)."""
    import subprocess
    import sys

    from s3p_codec.capture import _packets as packets

    flags = (packets.TCP_FIN, packets.TCP_SYN, packets.TCP_RST, packets.TCP_PSH, packets.TCP_ACK)
    assert flags == (
        dpkt.tcp.TH_FIN, dpkt.tcp.TH_SYN, dpkt.tcp.TH_RST, dpkt.tcp.TH_PUSH, dpkt.tcp.TH_ACK,
    )  # fmt: skip
    sample = Path(__file__).resolve().parents[2] / "examples" / "captures" / "s3p.pcap"
    code = (
        "import sys\nfrom s3p_codec.capture import decode_files\n"
        f"rows = sum(1 for _ in decode_files([{str(sample)!r}]))\n"
        "print(rows, 'dpkt' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rows, imported = out.stdout.split()
    assert int(rows) > 0
    assert imported == "False"
