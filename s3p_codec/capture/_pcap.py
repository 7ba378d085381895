"""Capture files to TCP segments: pcap and pcapng (optionally gzip-compressed).

Link layers: Ethernet (VLAN tags included, as dpkt decodes them), Linux cooked captures SLL and
SLL2 (``tcpdump -i any``), BSD loopback NULL and LOOP (and raw IP). Network layers: IPv4 and
IPv6. Everything else (ARP, UDP, ICMP, IP fragments after the first) is skipped.

This module is the first of the three pure steps of the capture pipeline (segments per file,
grouping by flow, decoding per flow); ``read_segments`` depends only on its arguments, so a Spark
task can call it on one file of a rotated capture set while other tasks read the others.

Both formats are read here, strictly forward (a pipe works: no seeking), each read bounded by
the bytes the file really holds: a file cut inside a packet says where it breaks off, and a
record claiming gigabytes costs what is there. pcapng interfaces keep their own link type and
timestamp resolution.
"""

from __future__ import annotations

import gzip
import io
import ipaddress
import re
import socket
import struct
import zlib
from collections.abc import Iterable, Iterator
from typing import IO, Any, Literal

import attrs

__all__ = [
    "CaptureFileError",
    "Packet",
    "PrefixedStream",
    "Segment",
    "TCP_ACK",
    "TCP_FIN",
    "TCP_PSH",
    "TCP_RST",
    "TCP_SYN",
    "capture_order",
    "decode_packet",
    "maybe_gunzip",
    "rotation_key",
    "open_capture",
    "read_packets",
    "read_segments",
    "segments_from_bytes",
]

# The flag bits of the TCP header's control field (RFC 9293, section 3.1), written out here so
# that importing this module does not import dpkt: dpkt imports every protocol module it has
# (a fifth of a second), and only packets the fast readers do not take need it.
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

_GZIP_MAGIC = b"\x1f\x8b"
# Link types (https://www.tcpdump.org/linktypes.html) and how far the network header is.
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


class CaptureFileError(Exception):
    """A capture file is unreadable (bad header) or ends in the middle of a record.

    Segments read before a truncation are still valid: the reader yields them first and raises
    at the point where the file breaks off, so callers can keep what came before.
    """

    def __init__(self, file: str, message: str) -> None:
        super().__init__(f"{file}: {message}")
        self.file = file
        self.message = message

    def __reduce__(self) -> tuple[object, ...]:
        return (CaptureFileError, (self.file, self.message))


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


class PrefixedStream(io.RawIOBase):
    """A stream with bytes already read from it put back in front (no seeking needed): how a
    pipe's first bytes are looked at (gzip or not, pcap or pcapng) and still decoded. Reads
    return the bytes there are, like a raw stream; errors are those of the stream behind."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        super().__init__()
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        """Always true: this stream is for reading."""
        return True

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` from the put-back head first, then from the rest; return the count."""
        view = memoryview(buffer).cast("B")
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(view))
        view[: len(data)] = data
        return len(data)

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes, fewer when no more are there yet (a pipe): gzip's reader asks
        for 8 KiB at a time and must get the bytes already written, not wait for 8 KiB."""
        if self._head:
            if size < 0:
                head, self._head = self._head, b""
                return head + self._rest.read()
            head, self._head = self._head[:size], self._head[size:]
            return head
        read1 = getattr(self._rest, "read1", None)
        return bytes(read1(size) if read1 is not None and size >= 0 else self._rest.read(size))


def maybe_gunzip(raw: IO[bytes]) -> IO[bytes]:
    """``raw`` itself, or a gunzipping reader over it when it starts with gzip's magic.

    ``raw`` may be a pipe: its first two bytes are peeked at (or read and put back in front),
    never sought.
    """
    peek = getattr(raw, "peek", None)
    head = peek(2)[:2] if peek is not None and not raw.seekable() else b""
    source: Any
    if len(head) == 2:
        # A buffered pipe (standard input): looked at, nothing consumed. gzip's reader asks for
        # 8 KiB at a time, so it gets the pipe through ``PrefixedStream``, which hands out what is
        # there instead of waiting for 8 KiB.
        source = raw if head != _GZIP_MAGIC else PrefixedStream(b"", raw)
    elif raw.seekable():
        head = raw.read(2)
        raw.seek(0)
        source = raw
    else:
        head = _read_exactly(raw.read, 2)
        source = PrefixedStream(head, raw)
    if head == _GZIP_MAGIC:
        unzipped: IO[bytes] = gzip.GzipFile(fileobj=source, mode="rb")  # type: ignore[assignment]
        return unzipped
    stream: IO[bytes] = source
    return stream


def open_capture(path: str) -> IO[bytes]:
    """Open ``path`` for reading, transparently gunzipping it (the caller closes it)."""
    return maybe_gunzip(open(path, "rb"))


_PCAP_MAGIC = {
    b"\xd4\xc3\xb2\xa1": ("<", 1_000_000),
    b"\xa1\xb2\xc3\xd4": (">", 1_000_000),
    b"\x4d\x3c\xb2\xa1": ("<", 1_000_000_000),  # nanosecond timestamps
    b"\xa1\xb2\x3c\x4d": (">", 1_000_000_000),
}
_PCAPNG_SHB = b"\x0a\x0d\x0d\x0a"
MAX_RECORD = 1 << 18
"""Largest classic pcap record accepted, whatever the file header's snap length says: libpcap's
``MAXIMUM_SNAPLEN`` (256 KiB, its bound for every link type read here) and Wireshark's
``WTAP_MAX_PACKET_SIZE_STANDARD``, both of which refuse a longer record as corruption. Trusting
the snap length let a 9 MB gzip whose record claims 2 GiB of zeros end in MemoryError."""
MAX_BLOCK = 64 << 20
"""Largest pcapng block accepted (libpcap stops at 16 MiB); a longer one is corruption."""
READ_CHUNK = 1 << 20
"""Reads longer than this go in chunks of this size, so a record that claims more bytes than
the file still holds costs only what the file holds (a 4 GiB claim in a 1 KiB file allocates
at most one chunk, instead of 4 GiB up front)."""


def _read_exactly(read: Any, size: int) -> bytes:
    """Up to ``size`` bytes (fewer only at the end of the stream), memory bounded by the bytes
    that really come: a pipe's short reads are retried, and large sizes are read in chunks."""
    data = read(size) if size <= READ_CHUNK else read(READ_CHUNK)
    if len(data) == size or not data:
        return bytes(data)
    parts = bytearray(data)
    while len(parts) < size:
        more = read(min(size - len(parts), READ_CHUNK))
        if not more:
            break
        parts += more
    return bytes(parts)


def _classic_records(
    stream: IO[bytes], name: str, order: str, divisor: int, snaplen: int
) -> Iterator[tuple[float, int, bytes]]:
    """The records of a classic pcap file after its 24-byte header.

    Read here rather than by dpkt, whose reader hands out a packet cut short by the end of the
    file as if it were whole: a capture killed mid-write must say where it breaks off.
    """
    record = struct.Struct(order + "IIII")
    limit = MAX_RECORD
    read = stream.read
    number = 0
    while head := _read_exactly(read, 16):
        number += 1
        if len(head) < 16:
            raise CaptureFileError(
                name, f"broken after packet {number - 1} (record header cut at {len(head)} of 16)"
            )
        sec, frac, caplen, _ = record.unpack(head)
        if caplen > limit:
            raise CaptureFileError(
                name, f"broken at packet {number} (claims {caplen} bytes, over the {MAX_RECORD}"
                " bytes any record may hold, MAX_RECORD)"
            )
        data = _read_exactly(read, caplen)
        if len(data) < caplen:
            raise CaptureFileError(
                name, f"broken inside packet {number} ({len(data)} of its {caplen} bytes)"
            )
        yield sec + frac / divisor, 0, data


class _Interface:
    __slots__ = ("linktype", "snaplen", "units")

    def __init__(self, linktype: int, snaplen: int, units: float) -> None:
        self.linktype = linktype
        self.snaplen = snaplen
        self.units = units  # timestamp units per second


_EPB = 6
_SPB = 3
_OLD_PB = 2
_IDB = 1


def _pcapng_records(stream: IO[bytes], name: str) -> Iterator[tuple[float, int, bytes]]:
    """The packets of a pcapng stream (the section header's magic already read), with each
    interface's own link type and timestamp resolution. Blocks other than packets and
    interfaces are skipped; a block cut short or malformed stops the file with an error."""
    read = stream.read
    order = "<"
    interfaces: list[_Interface] = []
    number = 0
    block_type = 0x0A0D0D0A
    first = True
    while True:
        if first:
            head = _PCAPNG_SHB + _read_exactly(read, 4)
            first = False
        else:
            head = _read_exactly(read, 8)
            if not head:
                return
        if len(head) < 8:
            raise CaptureFileError(name, f"broken after packet {number} (block header cut)")
        if head[:4] == _PCAPNG_SHB:
            magic = _read_exactly(read, 4)
            if magic == b"\x4d\x3c\x2b\x1a":
                order = "<"
            elif magic == b"\x1a\x2b\x3c\x4d":
                order = ">"
            else:
                raise CaptureFileError(name, "not a pcap or pcapng file (bad byte-order magic)")
            interfaces = []  # a new section numbers its interfaces afresh
            (length,) = struct.unpack(order + "I", head[4:8])
            body_size = length - 16
            block_type = 0x0A0D0D0A
        else:
            block_type, length = struct.unpack(order + "II", head)
            body_size = length - 12
        if length % 4 or body_size < 0 or length > MAX_BLOCK:
            raise CaptureFileError(
                name, f"broken after packet {number} (block of type {block_type:#x} claims "
                f"{length} bytes)"
            )  # fmt: skip
        body = _read_exactly(read, body_size + 4)
        if len(body) < body_size + 4:
            raise CaptureFileError(
                name, f"broken inside the block after packet {number} "
                f"({len(body) + len(head)} of its {length} bytes)"
            )  # fmt: skip
        try:
            packet = _pcapng_block(block_type, body[:body_size], order, interfaces)
        except (struct.error, IndexError) as exc:
            raise CaptureFileError(
                name, f"broken after packet {number} (malformed block {block_type:#x}: {exc})"
            ) from None
        if packet is not None:
            number += 1
            yield packet


def _pcapng_block(
    block_type: int, body: bytes, order: str, interfaces: list[_Interface]
) -> tuple[float, int, bytes] | None:
    if block_type == _IDB:
        linktype, _, snaplen = struct.unpack_from(order + "HHI", body)
        interfaces.append(_Interface(linktype, snaplen, _tsresol(body[8:], order)))
        return None
    if block_type == _EPB:
        iface, high, low, caplen, _ = struct.unpack_from(order + "IIIII", body)
        info = interfaces[iface]
        return ((high << 32) | low) / info.units, info.linktype, body[20 : 20 + caplen]
    if block_type == _SPB:
        (origlen,) = struct.unpack_from(order + "I", body)
        info = interfaces[0]
        caplen = min(origlen, info.snaplen or origlen, len(body) - 4)
        return 0.0, info.linktype, body[4 : 4 + caplen]
    if block_type == _OLD_PB:
        iface, _, high, low, caplen, _ = struct.unpack_from(order + "HHIIII", body)
        info = interfaces[iface]
        return ((high << 32) | low) / info.units, info.linktype, body[20 : 20 + caplen]
    return None


def _tsresol(options: bytes, order: str) -> float:
    """Timestamp units per second from an interface's options (``if_tsresol``, default 10^6)."""
    at = 0
    while at + 4 <= len(options):
        code, size = struct.unpack_from(order + "HH", options, at)
        if code == 0:
            break
        if code == 9 and size >= 1:
            value = options[at + 4]
            return float(2 ** (value & 0x7F)) if value & 0x80 else float(10**value)
        at += 4 + ((size + 3) & ~3)
    return 1_000_000.0


def _reader(stream: IO[bytes], name: str) -> Iterator[tuple[float, int, bytes]]:
    """(timestamp, link type, bytes) of every packet, from the file's first byte on."""
    magic = _read_exactly(stream.read, 4)
    if not magic:
        raise CaptureFileError(name, "empty file (no capture header)")
    known = _PCAP_MAGIC.get(magic)
    if known is not None:
        rest = _read_exactly(stream.read, 20)
        if len(rest) < 20:
            raise CaptureFileError(name, "not a pcap or pcapng file (header cut short)")
        order, divisor = known
        snaplen, network = struct.unpack(order + "II", rest[12:20])
        linktype = network & 0x0FFFFFFF  # the upper bits carry FCS information
        for ts, _, data in _classic_records(stream, name, order, divisor, snaplen):
            yield ts, linktype, data
        return
    if magic == _PCAPNG_SHB:
        yield from _pcapng_records(stream, name)
        return
    raise CaptureFileError(name, f"not a pcap or pcapng file (starts with {magic!r})")


def read_packets(path: str, stream: IO[bytes] | None = None) -> Iterator[Packet]:
    """Every record of one capture file, in file order.

    ``stream`` (already gunzipped, see ``maybe_gunzip``) may be a pipe: it is read strictly
    forward, and each packet is yielded as soon as its record is complete. Raises
    ``CaptureFileError`` for a file that is not a capture, and after the last whole record
    of a file that breaks off mid-record (``tcpdump`` killed hard).
    """
    own = stream is None
    fileobj: IO[bytes] = open_capture(path) if stream is None else stream
    try:
        number = 0
        records = _reader(fileobj, path)
        while True:
            try:
                ts, linktype, data = next(records)
            except StopIteration:
                return
            except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                raise CaptureFileError(path, f"broken after packet {number} ({exc})") from None
            number += 1
            yield Packet(number, ts, linktype, data)
    finally:
        if own:
            fileobj.close()


def _network_layer(linktype: int, buf: bytes) -> Any:
    """The dpkt IP or IP6 object inside a link-layer frame, or None."""
    import dpkt  # noqa: PLC0415 - on first use (see TCP_FIN)

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


# The fast path: where IPv4 starts in each link layer whose header is fixed-size, and how to tell
# that it is IPv4 (the EtherType field, or nothing: the version nibble decides).
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
_IPV4_HEADER = struct.Struct("!BxHxxHxB")  # version/IHL, total length, flags/fragment, protocol
_TCP_HEADER = struct.Struct("!HHIIBB")  # ports, seq, ack, data offset, flags
_ADDRESSES: dict[bytes, str] = {}
_IPV4_TCP = "BxHxxHxBxx4s4sHHIIBB"
"""An IPv4 header without options and the TCP header after it: version/IHL, total length,
flags/fragment, protocol, addresses, ports, seq, ack, data offset, flags."""


def _frame(at: int, ethertype_at: int | None) -> tuple[int, int | None, struct.Struct]:
    """``_IPV4_AT``'s entry with the one ``struct`` that reads, from the EtherType on (or from
    the IP header when there is none), every header field of a plain IPv4/TCP frame."""
    if ethertype_at is None:
        return at, None, struct.Struct("!" + _IPV4_TCP)
    pad = at - ethertype_at - 2
    return at, ethertype_at, struct.Struct("!H" + (f"{pad}x" if pad else "") + _IPV4_TCP)


#: Per link type: where IPv4 starts, where its EtherType is, and the one unpack of both headers.
FRAMES = {linktype: _frame(*where) for linktype, where in _IPV4_AT.items()}


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
    return _decode_with_dpkt(packet, file, file_index)


def fast_ipv4_tcp(  # noqa: PLR0917 - a hot path: no keyword-argument overhead
    buf: bytes,
    base: int,
    size: int,
    frame: tuple[int, int | None, struct.Struct],
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
        length = total - ihl - header
    src = _ADDRESSES.get(src_raw) or _address(src_raw)
    dst = _ADDRESSES.get(dst_raw) or _address(dst_raw)
    return Segment(
        file, file_index, number, ts, src, sport, dst, dport, seq, ack, flags & 0xFF, payload,
        length,
    )  # fmt: skip


def _address(raw: bytes) -> str:
    text = socket.inet_ntoa(raw) if len(raw) == 4 else str(ipaddress.IPv6Address(raw))
    if len(_ADDRESSES) < 65536:
        _ADDRESSES[raw] = text
    return text


def _decode_with_dpkt(packet: Packet, file: str = "", file_index: int = 0) -> Segment | None:
    """``decode_packet`` through dpkt's classes: every link type, VLANs, IPv6, odd packets."""
    import dpkt  # noqa: PLC0415 - on first use (see TCP_FIN)

    try:
        net = _network_layer(packet.linktype, packet.data)
    except (dpkt.Error, struct.error, ValueError, IndexError):
        return None
    if isinstance(net, dpkt.ip.IP):
        if net.p != dpkt.ip.IP_PROTO_TCP or net.offset != 0:
            return None
        src = _address(bytes(net.src))
        dst = _address(bytes(net.dst))
        # A zero total length means TCP segmentation offload: trust the captured bytes.
        declared = net.len - (net.hl << 2) if net.len else None
    elif isinstance(net, dpkt.ip6.IP6):
        if net.nxt != dpkt.ip.IP_PROTO_TCP and not isinstance(net.data, dpkt.tcp.TCP):
            return None
        src = _address(bytes(net.src))
        dst = _address(bytes(net.dst))
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
        src=src,
        sport=int(tcp.sport),
        dst=dst,
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


def read_segments(path: str, file_index: int = 0, name: str | None = None) -> Iterator[Segment]:
    """Every TCP segment of one capture file, in file order (step one of the pipeline).

    ``name`` is what rows show as the capture file (default: ``path``).
    """
    # The reader lives in its own module, which builds on this one.
    from s3p_codec.capture._scan import SegmentReader  # noqa: PLC0415

    return iter(SegmentReader(path, file=name, file_index=file_index))


_DIGITS = re.compile(r"(\d+)")


def rotation_key(path: str) -> list[tuple[int, int | str]]:
    """The sort key of ``capture_order``: the name's digit runs compare as numbers."""
    return [(1, int(part)) if part.isdigit() else (0, part) for part in _DIGITS.split(path)]


def capture_order(paths: Iterable[str]) -> list[str]:
    """Files of a rotated set in capture order: digits compare as numbers (``cap2`` < ``cap10``).

    ``tcpdump -C`` names its files ``cap``, ``cap1``, ``cap2``, ...; plain string order would put
    ``cap10`` before ``cap2`` and break flows that span files.
    """
    return sorted(paths, key=rotation_key)


def segments_from_bytes(data: bytes, file: str = "<memory>") -> Iterator[Segment]:
    """Segments of an in-memory capture (tests, notebooks)."""
    for packet in read_packets(file, maybe_gunzip(io.BytesIO(data))):
        segment = decode_packet(packet, file)
        if segment is not None:
            yield segment
