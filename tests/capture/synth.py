"""Synthesised captures for tests and benchmarks, built with dpkt's packet classes and writers.

``Flow`` plays both ends of one TCP connection and hands out link-layer frames; tests reorder,
duplicate or drop them before ``write_capture`` puts them in a pcap or pcapng file.
"""

from __future__ import annotations

import gzip
import io
import socket
import struct

import dpkt

from s3p_codec.capture._packets import (
    LINKTYPE_ETHERNET,
    LINKTYPE_LINUX_SLL,
    LINKTYPE_LINUX_SLL2,
    LINKTYPE_LOOP,
    LINKTYPE_NULL,
    LINKTYPE_RAW,
)

SYN = dpkt.tcp.TH_SYN
ACK = dpkt.tcp.TH_ACK
FIN = dpkt.tcp.TH_FIN
RST = dpkt.tcp.TH_RST
PSH = dpkt.tcp.TH_PUSH

Frame = tuple[float, bytes]


def _ip_packet(src: str, dst: str, tcp: dpkt.tcp.TCP) -> dpkt.Packet:
    if ":" in src:
        s, d = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
        tcp.sum = 0
        ip6 = dpkt.ip6.IP6(src=s, dst=d, nxt=dpkt.ip.IP_PROTO_TCP, hlim=64, data=tcp)
        ip6.plen = len(bytes(tcp))
        return ip6
    ip = dpkt.ip.IP(
        src=socket.inet_aton(src), dst=socket.inet_aton(dst), p=dpkt.ip.IP_PROTO_TCP, data=tcp
    )
    ip.len = len(ip)
    return ip


def link_frame(linktype: int, ip: dpkt.Packet) -> bytes:
    """Wrap an IP packet in the link layer ``linktype``."""
    raw = bytes(ip)
    v6 = isinstance(ip, dpkt.ip6.IP6)
    ethtype = dpkt.ethernet.ETH_TYPE_IP6 if v6 else dpkt.ethernet.ETH_TYPE_IP
    if linktype == LINKTYPE_ETHERNET:
        eth = dpkt.ethernet.Ethernet(
            src=b"\x02\x00\x00\x00\x00\x01", dst=b"\x02\x00\x00\x00\x00\x02", type=ethtype
        )
        return bytes(eth) + raw
    if linktype == LINKTYPE_LINUX_SLL:
        return bytes(dpkt.sll.SLL(type=0, hrd=772, hlen=6, hdr=b"\x00" * 8, ethtype=ethtype)) + raw
    if linktype == LINKTYPE_LINUX_SLL2:
        return bytes(dpkt.sll2.SLL2(ethtype=ethtype, intindex=1, hrd=772, type=0, hlen=6)) + raw
    if linktype == LINKTYPE_NULL:
        return struct.pack("<I", 10 if v6 else 2) + raw  # host order (little-endian Linux)
    if linktype == LINKTYPE_LOOP:
        return struct.pack(">I", 24 if v6 else 2) + raw
    if linktype == LINKTYPE_RAW:
        return raw
    raise ValueError(linktype)


class Flow:
    """Both ends of one TCP connection; every method returns frames (ts, bytes)."""

    def __init__(
        self,
        client: tuple[str, int] = ("10.0.0.1", 40000),
        server: tuple[str, int] = ("10.0.0.2", 7500),
        *,
        linktype: int = LINKTYPE_ETHERNET,
        isn_client: int = 1000,
        isn_server: int = 5000,
        ts: float = 1_700_000_000.0,
        tick: float = 0.001,
    ) -> None:
        self.client = client
        self.server = server
        self.linktype = linktype
        self.seq = {True: isn_client, False: isn_server}  # next sequence number per side
        self.ts = ts
        self.tick = tick

    def _frame(self, from_client: bool, seq: int, ack: int, flags: int, data: bytes) -> Frame:
        src, dst = (self.client, self.server) if from_client else (self.server, self.client)
        tcp = dpkt.tcp.TCP(
            sport=src[1], dport=dst[1], seq=seq % (1 << 32), ack=ack % (1 << 32), flags=flags,
            win=65535, data=data,
        )  # fmt: skip
        self.ts += self.tick
        return (self.ts, link_frame(self.linktype, _ip_packet(src[0], dst[0], tcp)))

    def handshake(self) -> list[Frame]:
        c, s = self.seq[True], self.seq[False]
        frames = [
            self._frame(True, c, 0, SYN, b""),
            self._frame(False, s, c + 1, SYN | ACK, b""),
            self._frame(True, c + 1, s + 1, ACK, b""),
        ]
        self.seq[True] += 1
        self.seq[False] += 1
        return frames

    def send(self, from_client: bool, data: bytes, mss: int = 1460) -> list[Frame]:
        """``data`` in segments of at most ``mss`` bytes, each acknowledging the peer."""
        frames = []
        for i in range(0, len(data), mss):
            chunk = data[i : i + mss]
            frames.append(self.segment(from_client, chunk))
        return frames

    def segment(self, from_client: bool, data: bytes, flags: int = ACK | PSH) -> Frame:
        seq, ack = self.seq[from_client], self.seq[not from_client]
        frame = self._frame(from_client, seq, ack, flags, data)
        self.seq[from_client] += len(data)
        return frame

    def at(self, from_client: bool, seq: int, data: bytes, flags: int = ACK | PSH) -> Frame:
        """A segment at an explicit sequence number (retransmissions, overlaps); seq unchanged."""
        return self._frame(from_client, seq, self.seq[not from_client], flags, data)

    def ack(self, from_client: bool, ack: int | None = None) -> Frame:
        value = self.seq[not from_client] if ack is None else ack
        return self._frame(from_client, self.seq[from_client], value, ACK, b"")

    def fin(self, from_client: bool) -> Frame:
        seq, ack = self.seq[from_client], self.seq[not from_client]
        frame = self._frame(from_client, seq, ack, FIN | ACK, b"")
        self.seq[from_client] += 1
        return frame

    def rst(self, from_client: bool) -> Frame:
        return self._frame(from_client, self.seq[from_client], 0, RST, b"")

    def close(self) -> list[Frame]:
        return [self.fin(True), self.fin(False), self.ack(True)]


def write_capture(
    frames: list[Frame],
    *,
    linktype: int = LINKTYPE_ETHERNET,
    fmt: str = "pcap",
    compress: bool = False,
    nano: bool = False,
) -> bytes:
    """The bytes of a capture file holding ``frames`` in the order given."""
    out = io.BytesIO()
    writer: dpkt.pcap.Writer | dpkt.pcapng.Writer
    if fmt == "pcapng":
        writer = dpkt.pcapng.Writer(out, snaplen=65535, linktype=linktype)
    else:
        writer = dpkt.pcap.Writer(out, snaplen=65535, linktype=linktype, nano=nano)
    for ts, buf in frames:
        writer.writepkt(buf, ts=ts)
    data = out.getvalue()
    return gzip.compress(data) if compress else data
