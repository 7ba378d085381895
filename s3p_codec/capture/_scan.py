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
become a ``Segment``: ``_lanes`` hands an in-order packet's payload straight to its flow.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from typing import IO

from s3p_codec.capture._packets import (
    FRAMES,
    Packet,
    Segment,
    decode_packet,
    decode_with_dpkt,
    fast_ipv4_tcp,
)
from s3p_codec.capture._pcap import (
    MAX_RECORD,
    READ_CHUNK,
    classic_header,
    maybe_gunzip,
    read_exactly,
    read_packets,
    record_cut,
    record_header_cut,
    record_too_long,
)
from s3p_codec.capture._remote import open_input

__all__ = ["Record", "SegmentReader", "read_segments", "segments_from_bytes"]

Record = tuple[bytes, int, int, int, float]
"""One record of a classic pcap file read in place: (chunk, where the frame starts in the chunk,
captured length, packet number, timestamp)."""


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
        self._format = ("<", 1_000_000)  # byte order, timestamp units per second

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
        head = read_exactly(raw.read, 24)
        header = classic_header(head) if len(head) == 24 else None
        if header is not None:
            order, divisor, _, linktype = header  # the snap length is not trusted: MAX_RECORD
            if linktype in FRAMES:
                self._format = (order, divisor)
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
                segment = decode_with_dpkt(packet, file, index)
            if segment is not None:
                yield segment

    def records(self, raw: IO[bytes]) -> Iterator[Record]:
        """The records of a classic pcap file after its header (``in_place`` read it), a chunk
        of ``READ_CHUNK`` bytes read at a time; ``packets`` counts them as they come. Raises
        ``CaptureFileError`` where ``read_packets`` does (a record cut short, an impossible
        length), after the records before it."""
        order, divisor = self._format
        name = self.path
        unpack_record = struct.Struct(order + "IIII").unpack_from
        read = raw.read
        buf = b""
        pos = 0
        number = 0
        while True:
            if len(buf) - pos < 16:
                buf = buf[pos:] + read_exactly(read, READ_CHUNK)
                pos = 0
                if len(buf) < 16:
                    if not buf:
                        return
                    raise record_header_cut(name, number + 1, len(buf))
            number += 1
            sec, frac, caplen, _ = unpack_record(buf, pos)
            if caplen > MAX_RECORD:
                raise record_too_long(name, number, caplen)
            base = pos + 16
            end = base + caplen
            if end > len(buf):
                # The record runs past the chunk: what is left of it, and the next chunk.
                buf = buf[pos:] + read_exactly(read, max(end - len(buf), READ_CHUNK))
                base, end = 16, 16 + caplen
                if end > len(buf):
                    raise record_cut(name, number, len(buf) - 16, caplen)
            pos = end
            self.packets = number
            yield buf, base, caplen, number, sec + frac / divisor


def _seekable(raw: IO[bytes]) -> bool:
    try:
        return raw.seekable()
    except (OSError, ValueError):
        return False


def read_segments(path: str, file_index: int = 0, name: str | None = None) -> Iterator[Segment]:
    """Every TCP segment of one capture file, in file order (step one of the pipeline).

    ``name`` is what rows show as the capture file (default: ``path``).
    """
    return iter(SegmentReader(path, file=name, file_index=file_index))


def segments_from_bytes(data: bytes, file: str = "<memory>") -> Iterator[Segment]:
    """Segments of an in-memory capture (tests, notebooks)."""
    for packet in read_packets(file, maybe_gunzip(io.BytesIO(data))):
        segment = decode_packet(packet, file)
        if segment is not None:
            yield segment
