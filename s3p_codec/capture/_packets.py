"""Captured frames to TCP segments: link layers, IPv4 and IPv6, TCP.

Link layers: Ethernet (VLAN tags included, as dpkt decodes them), Linux cooked captures SLL and
SLL2 (``tcpdump -i any``), BSD loopback NULL and LOOP (and raw IP). Network layers: IPv4 and
IPv6. Everything else (ARP, UDP, ICMP, IP fragments after the first) is skipped.

The plan:

1. A ``Packet`` is one record of a capture file: its link type and raw bytes (``_pcap`` reads
   them). ``decode_packet`` makes the ``Segment`` it carries, with just what reassembly and the
   rows need.
2. Plain IPv4 over a link header of fixed size (nearly every packet of a capture) is read by
   ``fast_ipv4_tcp`` with one ``struct`` unpack of both headers, from the frame where it lies
   (a record in a chunk of the file: nothing is copied but the payload). ``FRAMES`` holds that
   unpack per link type; ``link_struct`` builds it, and the in-place lanes build theirs with
   it too.
3. Everything else (VLAN tags, IPv6, IP options the fast unpack does not take, anything odd or
   broken) goes through dpkt's classes (``decode_with_dpkt``). The two ways agree on every
   packet: a property test checks it.
4. Addresses are turned into text by ``address`` only, cached: a capture names few hosts, and
   the fast path, dpkt's path and ``segment_of`` (a ``PacketRef`` made into its ``Segment``)
   all go through it.

dpkt is imported on first use: it imports every protocol module it has (a fifth of a second),
and only packets the fast path does not take need it. So the TCP flag bits are written out here.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from typing import Any, Literal

import attrs

__all__ = [
    "FRAMES",
    "IPV4_TCP_FIELDS",
    "TCP_ACK",
    "TCP_FIN",
    "TCP_PSH",
    "TCP_RST",
    "TCP_SYN",
    "Packet",
    "PacketRef",
    "Segment",
    "address",
    "bare",
    "decode_packet",
    "decode_with_dpkt",
    "fast_ipv4_tcp",
    "link_struct",
    "segment_of",
]

# The flag bits of the TCP header's control field (RFC 9293, section 3.1).
#: TCP flag bit: FIN (the sender closed its direction).
TCP_FIN = 0x01
#: TCP flag bit: SYN (connection start).
TCP_SYN = 0x02
#: TCP flag bit: RST (connection reset).
TCP_RST = 0x04
#: TCP flag bit: PSH.
TCP_PSH = 0x08
#: TCP flag bit: ACK.
TCP_ACK = 0x10

# Link types (https://www.tcpdump.org/linktypes.html).
LINKTYPE_NULL = 0
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_RAW_OPENBSD = 12
LINKTYPE_RAW_BSD = 14
LINKTYPE_LOOP = 108
LINKTYPE_LINUX_SLL = 113
LINKTYPE_LINUX_SLL2 = 276
LINKTYPE_IPV4 = 228
LINKTYPE_IPV6 = 229
_RAW_IP = {LINKTYPE_RAW, LINKTYPE_RAW_OPENBSD, LINKTYPE_RAW_BSD, LINKTYPE_IPV4, LINKTYPE_IPV6}


@attrs.frozen(slots=True)
class Packet:
    """One record of a capture file: 1-based ``number`` as Wireshark counts, raw link bytes."""

    number: int
    ts: float
    linktype: int
    data: bytes


@attrs.frozen(slots=True)
class Segment:
    """One TCP segment, with just what reassembly and the rows need (picklable).

    ``file_index`` orders files of a rotated capture set; (file_index, number) orders segments.
    ``length`` is the payload length the IP header declares; ``payload`` may be shorter when the
    capture's snap length cut the packet (the reassembler reports the rest as missing).
    """

    file: str
    file_index: int
    number: int
    ts: float
    src: str
    sport: int
    dst: str
    dport: int
    seq: int
    ack: int
    flags: int
    payload: bytes
    length: int

    @property
    def order(self) -> tuple[int, int]:
        """Sort key of this segment within a capture set."""
        return (self.file_index, self.number)


def bare(segment: Segment) -> Segment:
    """``segment`` without its payload: what a checkpoint keeps of a segment that only says
    which packet carried some bytes (those bytes are kept where they wait, if they do)."""
    return attrs.evolve(segment, payload=b"") if segment.payload else segment


PacketRef = tuple[int, str, int, float, int, bytes, int, int, int, bytes, int]
"""A TCP packet kept without its ``Segment``: (end offset of its payload in its direction's
stream, file, number, ts, file index, the 12 bytes of its IPv4 addresses and ports as they lie in
the packet, seq, ack, flags, payload, length). Its first four items are what a row needs of a
packet (``_rows.PacketMap`` keeps them so); ``segment_of`` makes the rest into the
``Segment``."""

_PORTS = struct.Struct("!HH")


def segment_of(packet: Segment | PacketRef) -> Segment:
    """The ``Segment`` of a packet: itself, or the one a ``PacketRef`` stands for."""
    if isinstance(packet, Segment):
        return packet
    _, file, number, ts, file_index, key, seq, ack, flags, payload, length = packet
    sport, dport = _PORTS.unpack_from(key, 8)
    return Segment(
        file, file_index, number, ts, address(key[:4]), sport, address(key[4:8]), dport, seq,
        ack, flags, payload, length,
    )  # fmt: skip


_ADDRESSES: dict[bytes, str] = {}
_MAX_ADDRESSES = 65536


def address(raw: bytes) -> str:
    """The text of a 4-byte IPv4 or 16-byte IPv6 address, cached (at most ``_MAX_ADDRESSES``)."""
    text = _ADDRESSES.get(raw)
    if text is None:
        text = socket.inet_ntoa(raw) if len(raw) == 4 else str(ipaddress.IPv6Address(raw))
        if len(_ADDRESSES) < _MAX_ADDRESSES:
            _ADDRESSES[raw] = text
    return text


# Where IPv4 starts in each link layer whose header has a fixed size, and where the EtherType
# that says it is IPv4 is (None: there is none, the version nibble decides).
_IPV4_AT: dict[int, tuple[int, int | None]] = {
    LINKTYPE_ETHERNET: (14, 12),
    LINKTYPE_LINUX_SLL: (16, 14),
    LINKTYPE_LINUX_SLL2: (20, 0),
    LINKTYPE_NULL: (4, None),
    LINKTYPE_LOOP: (4, None),
    LINKTYPE_RAW: (0, None),
    LINKTYPE_RAW_OPENBSD: (0, None),
    LINKTYPE_RAW_BSD: (0, None),
    LINKTYPE_IPV4: (0, None),
}
IPV4_TCP_FIELDS = "BxHxxHxBxx4s4sHHIIBB"
"""An IPv4 header without options and the TCP header after it, in ``struct`` notation:
version/IHL, total length, flags/fragment, protocol, addresses, ports, seq, ack, data offset,
flags."""
_TCP_HEADER = struct.Struct("!HHIIBB")  # ports, seq, ack, data offset, flags


def link_struct(linktype: int, fields: str) -> struct.Struct:
    """The one ``struct`` that reads ``fields`` (IPv4 and TCP header fields, in ``struct``
    notation, from the IP header on) of a frame of ``linktype``: from its EtherType on, the
    EtherType first, when the link layer has one; from the IP header otherwise."""
    at, ethertype_at = _IPV4_AT[linktype]
    if ethertype_at is None:
        return struct.Struct("!" + fields)
    pad = at - ethertype_at - 2
    return struct.Struct("!H" + (f"{pad}x" if pad else "") + fields)


Frame = tuple[int, int | None, struct.Struct]
"""Where IPv4 starts in a frame, where its EtherType is (None: none), and the one unpack of a
plain IPv4/TCP frame (``link_struct`` of ``IPV4_TCP_FIELDS``)."""

#: Per link type the fast path reads: its ``Frame``.
FRAMES: dict[int, Frame] = {
    linktype: (at, ethertype_at, link_struct(linktype, IPV4_TCP_FIELDS))
    for linktype, (at, ethertype_at) in _IPV4_AT.items()
}


def decode_packet(packet: Packet, file: str = "", file_index: int = 0) -> Segment | None:
    """The TCP segment a packet carries, or None (not TCP/IP, malformed, or a later fragment).

    Plain IPv4 over a fixed-size link header (nearly every packet of a capture) is read with one
    ``struct`` unpack (two with IP options), for speed; everything else (VLAN tags, IPv6,
    anything unusual or broken) goes through dpkt. The two paths agree on every packet: a
    property test checks it.
    """
    frame = FRAMES.get(packet.linktype)
    if frame is not None:
        data = packet.data
        segment = fast_ipv4_tcp(
            data, 0, len(data), frame, file, file_index, packet.number, packet.ts
        )
        if segment is not False:
            return segment
    return decode_with_dpkt(packet, file, file_index)


def fast_ipv4_tcp(  # noqa: PLR0917 - a hot path: no keyword-argument overhead
    buf: bytes,
    base: int,
    size: int,
    frame: Frame,
    file: str,
    file_index: int,
    number: int,
    ts: float,
) -> Segment | Literal[False] | None:
    """Decode plain IPv4/TCP by hand from the frame ``buf[base : base + size]``, read in place
    (``buf`` may hold many records); ``frame`` is the link type's ``FRAMES`` entry. None for
    clean non-TCP IPv4, False to ask dpkt."""
    at, ethertype_at, headers = frame
    if size < at + 40:
        return False
    if ethertype_at is None:
        (
            version_ihl, total, fragment, proto, src_raw, dst_raw, sport, dport, seq, ack, offset,
            flags,
        ) = headers.unpack_from(buf, base + at)  # fmt: skip
    else:
        (
            ethertype, version_ihl, total, fragment, proto, src_raw, dst_raw, sport, dport, seq,
            ack, offset, flags,
        ) = headers.unpack_from(buf, base + ethertype_at)  # fmt: skip
        if ethertype != 0x0800:
            return False
    if version_ihl == 0x45:  # no IP options: the one unpack read both headers
        ihl = 20
        if proto != 6 or fragment & 0x1FFF:
            return None
        tcp_at = at + 20
        end = at + total if total else size
        if end - tcp_at < 20:
            return False
    else:
        ihl = (version_ihl & 0x0F) << 2
        if version_ihl >> 4 != 4 or ihl < 20:
            return False
        if proto != 6 or fragment & 0x1FFF:
            return None
        tcp_at = at + ihl
        end = at + total if total else size
        if end - tcp_at < 20 or size < tcp_at + 20:
            return False
        sport, dport, seq, ack, offset, flags = _TCP_HEADER.unpack_from(buf, base + tcp_at)
    header = (offset >> 4) << 2
    stop = end if end < size else size
    if header < 20 or stop < tcp_at + header:
        return False
    payload = buf[base + tcp_at + header : base + stop]
    length = stop - tcp_at - header  # len(payload)
    if total and total - ihl - header > length:
        # The IP header declares more than was captured: the snap length cut the payload.
        length = total - ihl - header
    return Segment(
        file, file_index, number, ts, address(src_raw), sport, address(dst_raw), dport, seq, ack,
        flags & 0xFF, payload, length,
    )  # fmt: skip


def _network_layer(linktype: int, buf: bytes) -> Any:
    """The dpkt IP or IP6 object inside a link-layer frame, or None."""
    import dpkt  # noqa: PLC0415 - on first use (see the module docstring)

    if linktype == LINKTYPE_ETHERNET:
        frame: object = dpkt.ethernet.Ethernet(buf)
        return getattr(frame, "data", None)
    if linktype == LINKTYPE_LINUX_SLL:
        return dpkt.sll.SLL(buf).data
    if linktype == LINKTYPE_LINUX_SLL2:
        return dpkt.sll2.SLL2(buf).data
    if linktype in (LINKTYPE_NULL, LINKTYPE_LOOP):
        # The 4-byte address family is in host order for NULL, network order for LOOP, and its
        # IPv6 value differs per OS (10, 24, 28, 30): the IP version nibble says it all.
        buf = buf[4:]
    elif linktype not in _RAW_IP:
        return None
    if not buf:
        return None
    version = buf[0] >> 4
    if version == 4:
        return dpkt.ip.IP(buf)
    if version == 6:
        return dpkt.ip6.IP6(buf)
    return None


def decode_with_dpkt(packet: Packet, file: str = "", file_index: int = 0) -> Segment | None:
    """``decode_packet`` through dpkt's classes: every link type, VLANs, IPv6, odd packets."""
    import dpkt  # noqa: PLC0415 - on first use (see the module docstring)

    try:
        net = _network_layer(packet.linktype, packet.data)
    except (dpkt.Error, struct.error, ValueError, IndexError):
        return None
    if isinstance(net, dpkt.ip.IP):
        if net.p != dpkt.ip.IP_PROTO_TCP or net.offset != 0:
            return None
        # A zero total length means TCP segmentation offload: trust the captured bytes.
        declared = net.len - (net.hl << 2) if net.len else None
    elif isinstance(net, dpkt.ip6.IP6):
        if net.nxt != dpkt.ip.IP_PROTO_TCP and not isinstance(net.data, dpkt.tcp.TCP):
            return None
        declared = _ipv6_tcp_length(net)
    else:
        return None
    tcp = net.data
    if not isinstance(tcp, dpkt.tcp.TCP):
        return None
    payload = bytes(tcp.data)
    length = len(payload)
    if declared is not None:
        length = max(declared - (tcp.off << 2), len(payload))
    return Segment(
        file=file,
        file_index=file_index,
        number=packet.number,
        ts=packet.ts,
        src=address(bytes(net.src)),
        sport=int(tcp.sport),
        dst=address(bytes(net.dst)),
        dport=int(tcp.dport),
        seq=int(tcp.seq),
        ack=int(tcp.ack),
        flags=int(tcp.flags) & 0xFF,
        payload=payload,
        length=length,
    )


def _ipv6_tcp_length(net: object) -> int | None:
    plen = int(getattr(net, "plen", 0))
    if not plen:
        return None
    # Extension headers sit between the fixed header and TCP; dpkt keeps them in extension_hdrs.
    ext = sum(len(bytes(h)) for h in getattr(net, "extension_hdrs", {}).values() if h is not None)
    return plen - ext
