"""Small pcap files for the Spark tests, written with dpkt (a packet library no one here wrote).

A conversation is a TCP handshake, the application bytes each side sends (one segment per chunk)
and a FIN from both sides. ``write_rotated`` splits one capture into several files the way
``tcpdump -C`` does (consecutive packets, numbered file names), so that flows span files.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path

import dpkt

Packet = tuple[float, bytes]


def _frame(src: str, sport: int, dst: str, dport: int, seq: int, ack: int, flags: int,  # noqa: PLR0917
           data: bytes = b"") -> bytes:  # fmt: skip
    tcp = dpkt.tcp.TCP(sport=sport, dport=dport, seq=seq, ack=ack, flags=flags, win=65535,
                       data=data)  # fmt: skip
    ip = dpkt.ip.IP(src=socket.inet_aton(src), dst=socket.inet_aton(dst), p=dpkt.ip.IP_PROTO_TCP,
                    data=tcp)  # fmt: skip
    ip.len = len(bytes(ip))
    eth = dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, type=dpkt.ethernet.ETH_TYPE_IP,
                                 data=ip)  # fmt: skip
    return bytes(eth)


def conversation(
    client: tuple[str, int],
    server: tuple[str, int],
    exchanges: Sequence[tuple[str, bytes]],
    start: float = 1_700_000_000.0,
    step: float = 0.001,
) -> list[Packet]:
    """Packets of one TCP connection: handshake, each (``"c"``/``"s"``, bytes) chunk, FINs."""
    syn, ack, fin, psh = dpkt.tcp.TH_SYN, dpkt.tcp.TH_ACK, dpkt.tcp.TH_FIN, dpkt.tcp.TH_PUSH
    cseq, sseq = 1000, 5000
    ts = start
    out: list[Packet] = []

    def emit(from_client: bool, flags: int, data: bytes = b"") -> None:
        nonlocal ts, cseq, sseq
        if from_client:
            out.append((ts, _frame(*client, *server, cseq, sseq, flags, data)))
            cseq += len(data) + (1 if flags & (syn | fin) else 0)
        else:
            out.append((ts, _frame(*server, *client, sseq, cseq, flags, data)))
            sseq += len(data) + (1 if flags & (syn | fin) else 0)
        ts += step

    emit(True, syn)
    emit(False, syn | ack)
    emit(True, ack)
    for side, data in exchanges:
        emit(side == "c", psh | ack, data)
    emit(True, fin | ack)
    emit(False, fin | ack)
    emit(True, ack)
    return out


def interleave(*flows: Sequence[Packet]) -> list[Packet]:
    """All packets of several flows in timestamp order (a capture of concurrent connections)."""
    return sorted((p for flow in flows for p in flow), key=lambda p: p[0])


def write_pcap(path: Path, packets: Sequence[Packet]) -> Path:
    """One pcap file (Ethernet link type) holding ``packets``."""
    with path.open("wb") as f:
        writer = dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
        for ts, frame in packets:
            writer.writepkt(frame, ts=ts)
    return path


def write_rotated(folder: Path, name: str, packets: Sequence[Packet], per_file: int) -> list[Path]:
    """Split ``packets`` into files of ``per_file`` packets named like ``tcpdump -C``'s."""
    paths = []
    for index in range(0, len(packets), per_file):
        number = index // per_file
        path = folder / (name if number == 0 else f"{name}{number}")
        paths.append(write_pcap(path, packets[index : index + per_file]))
    return paths


def s3p_exchanges(
    stream: bytes, appends: int, ms: int = 1_700_000_001_000
) -> list[tuple[str, bytes]]:
    """A real S3P conversation, encoded by the codec: CREATE then ``appends`` APPENDs, replied."""
    from s3p_codec import Role, s3p

    client, server = s3p.Connection(Role.CLIENT), s3p.Connection(Role.SERVER)
    out: list[tuple[str, bytes]] = []

    def request(event: object, reply: object) -> None:
        wire = client.send(event)
        server.receive_data(wire)
        assert list(server.events()) == [event]
        answer = server.send(reply)
        client.receive_data(answer)
        out.extend((("c", wire), ("s", answer)))

    request(s3p.Create(stream=stream), s3p.Ok())
    for i in range(appends):
        request(
            s3p.Append(stream=stream, records=(b"record-%d" % i, b"x" * (i + 1))),
            s3p.AppendReply(timestamp=s3p.Timestamp(ms=ms + i, seq=0)),
        )
    return out
