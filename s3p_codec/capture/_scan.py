"""The TCP segments of one capture file, read straight from its bytes: the reader behind
``read_segments`` and ``decode_files``.

``read_packets`` then ``decode_packet`` cost two reads, a ``Packet`` and a copy of every record.
A classic pcap file whose link header has a fixed size (Ethernet, SLL, SLL2, NULL, LOOP, raw IP)
is read here in chunks of ``READ_CHUNK`` bytes instead, and each record's IPv4 and TCP headers
are read where they lie in the chunk: two ``unpack_from`` calls (the record's, the headers') and
the slice of the payload per packet. Everything else takes the general way, record by record:
pcapng; gzip-compressed files (a broken compressed stream must break off at the same packet, not
one chunk earlier); pipes (nothing is read ahead of the current record); and every packet the
in-place reader does not take (IPv6, VLAN tags, anything odd goes through dpkt, as
``decode_packet`` does). Both ways give the same segments and the same errors at the same
packet: a test checks it.

``decode_files`` reads the records here too (``SegmentReader.records``), but most of them never
become a ``Segment``: ``lanes`` hands an in-order packet's payload straight to its flow. What it
keeps of such a packet is a ``PacketRef``, a plain tuple from which ``segment_of`` builds the
``Segment`` only when something asks for it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import IO

from s3p_codec.capture._pcap import (
    _ADDRESSES,
    _PCAP_MAGIC,
    FRAMES,
    MAX_RECORD,
    READ_CHUNK,
    CaptureFileError,
    Packet,
    Segment,
    _address,
    _decode_with_dpkt,
    _read_exactly,
    decode_packet,
    fast_ipv4_tcp,
    maybe_gunzip,
    read_packets,
)
from s3p_codec.capture._remote import open_input

__all__ = ["PacketRef", "Record", "SegmentReader", "segment_of"]

PacketRef = tuple[int, str, int, float, int, bytes, int, int, int, bytes, int]
"""A TCP packet kept without its ``Segment``: (end offset of its payload in its direction's
stream, file, number, ts, file index, the 12 bytes of its IPv4 addresses and ports as they lie in
the packet, seq, ack, flags, payload, length). Its first four items are what a row needs of a
packet (see ``observe._PacketMap``); ``segment_of`` makes the rest into the ``Segment``."""

Record = tuple[bytes, int, int, int, float]
"""One record of a classic pcap file read in place: (chunk, where the frame starts in the chunk,
captured length, packet number, timestamp)."""

_PORTS = struct.Struct("!HH")


def segment_of(packet: Segment | PacketRef) -> Segment:
    """The ``Segment`` of a packet: itself, or the one a ``PacketRef`` stands for."""
    if isinstance(packet, Segment):
        return packet
    _, file, number, ts, file_index, key, seq, ack, flags, payload, length = packet
    src_raw, dst_raw = key[:4], key[4:8]
    sport, dport = _PORTS.unpack_from(key, 8)
    return Segment(
        file, file_index, number, ts, _ADDRESSES.get(src_raw) or _address(src_raw), sport,
        _ADDRESSES.get(dst_raw) or _address(dst_raw), dport, seq, ack, flags, payload, length,
    )  # fmt: skip


class SegmentReader:
    """Iterate the TCP segments of one capture file, in file order; ``packets`` is the number
    of records read so far (all of them once the iteration ended, the last whole one when it
    raised ``CaptureFileError``).

    ``stream`` is the open file (gzip-compressed or not); without it ``path`` is opened and
    closed here. ``file`` is what the segments name as their file (default: ``path``).
    """

    def __init__(
        self,
        path: str,
        stream: IO[bytes] | None = None,
        file: str | None = None,
        file_index: int = 0,
    ) -> None:
        self.path = path
        self.stream = stream
        self.file = path if file is None else file
        self.file_index = file_index
        self.packets = 0
        self._format = ("<", 1_000_000, 0)  # byte order, timestamp divisor, snap length

    def __iter__(self) -> Iterator[Segment]:
        if self.stream is not None:
            yield from self._segments(self.stream)
            return
        with open_input(self.path) as raw:
            yield from self._segments(raw)

    def _segments(self, raw: IO[bytes]) -> Iterator[Segment]:
        stream = maybe_gunzip(raw)
        linktype = self.in_place(raw, stream)
        if linktype is not None:
            yield from self._chunks(raw, linktype)
            return
        yield from self.general(stream)

    def in_place(self, raw: IO[bytes], stream: IO[bytes]) -> int | None:
        """The link type of a capture ``records`` can read in place (``stream``, what
        ``maybe_gunzip`` made of ``raw``, is ``raw`` itself: a seekable classic pcap file whose
        link header has a fixed size), its header read; None otherwise, nothing read."""
        if stream is not raw or not _seekable(raw):
            return None
        start = raw.tell()
        head = _read_exactly(raw.read, 24)
        known = _PCAP_MAGIC.get(head[:4]) if len(head) == 24 else None
        if known is not None:
            order, divisor = known
            snaplen, network = struct.unpack(order + "II", head[16:24])
            linktype: int = network & 0x0FFFFFFF
            if linktype in FRAMES:
                self._format = (order, divisor, snaplen)
                return linktype
        raw.seek(start)
        return None

    def general(self, stream: IO[bytes]) -> Iterator[Segment]:
        """The segments of ``stream`` (gunzipped) record by record: the way of every capture
        ``in_place`` does not take."""
        file, index = self.file, self.file_index
        for packet in read_packets(self.path, stream):
            self.packets = packet.number
            segment = decode_packet(packet, file, index)
            if segment is not None:
                yield segment

    def _chunks(self, raw: IO[bytes], linktype: int) -> Iterator[Segment]:
        file, index = self.file, self.file_index
        frame = FRAMES[linktype]
        for buf, base, caplen, number, ts in self.records(raw):
            segment = fast_ipv4_tcp(buf, base, caplen, frame, file, index, number, ts)
            if segment is False:
                packet = Packet(number, ts, linktype, buf[base : base + caplen])
                segment = _decode_with_dpkt(packet, file, index)
            if segment is not None:
                yield segment

    def records(self, raw: IO[bytes]) -> Iterator[Record]:
        """The records of a classic pcap file after its header (``in_place`` read it), a chunk
        of ``READ_CHUNK`` bytes read at a time; ``packets`` counts them as they come. Raises
        ``CaptureFileError`` where ``pcap._classic_records`` does (a record cut short, an
        impossible length), after the records before it."""
        order, divisor, _ = self._format  # the snap length is not trusted: MAX_RECORD
        name = self.path
        unpack_record = struct.Struct(order + "IIII").unpack_from
        limit = MAX_RECORD
        read = raw.read
        buf = b""
        pos = 0
        number = 0
        while True:
            if len(buf) - pos < 16:
                buf = buf[pos:] + _read_exactly(read, READ_CHUNK)
                pos = 0
                if len(buf) < 16:
                    if not buf:
                        return
                    raise CaptureFileError(
                        name, f"broken after packet {number} (record header cut at "
                        f"{len(buf)} of 16)"
                    )  # fmt: skip
            number += 1
            sec, frac, caplen, _ = unpack_record(buf, pos)
            if caplen > limit:
                raise CaptureFileError(
                    name, f"broken at packet {number} (claims {caplen} bytes, over the "
                    f"{MAX_RECORD} bytes any record may hold, MAX_RECORD)"
                )  # fmt: skip
            base = pos + 16
            end = base + caplen
            if end > len(buf):
                # The record runs past the chunk: what is left of it, and the next chunk.
                buf = buf[pos:] + _read_exactly(read, max(end - len(buf), READ_CHUNK))
                base, end = 16, 16 + caplen
                if end > len(buf):
                    raise CaptureFileError(
                        name, f"broken inside packet {number} ({len(buf) - 16} of its "
                        f"{caplen} bytes)"
                    )  # fmt: skip
            pos = end
            self.packets = number
            yield buf, base, caplen, number, sec + frac / divisor


def _seekable(raw: IO[bytes]) -> bool:
    try:
        return raw.seekable()
    except (OSError, ValueError):
        return False
