"""In-order packets of a capture file straight to their conversation's Observer: the way most
packets take in ``decode_files``.

Nearly every packet of a capture continues one direction of a conversation already open: the
next bytes in sequence, or an acknowledgement without payload. ``FlowTable.add`` would make a
``Segment`` of it, find its conversation by ``flow_key`` (two address strings), and go through
``FlowDecoder.add`` and ``HalfStream.take_in_order`` to the Observer. Here, a classic pcap file
read in place (``SegmentReader.records``), such a packet is found by the 12 bytes that name its
addresses and ports in the packet itself (its ``Lane``, which the ``FlowDecoder`` registered in
``FlowTable.open_lanes``); the table's clock moves on (``FlowTable.advance_clock``), the same
in-order step takes it (``HalfStream.take_in_order``), and its payload slice goes to the
Observer. What is kept of the packet (for the rows' packet numbers, and as the conversation's
last packet) is a ``PacketRef``, a tuple. Every other packet (SYN, FIN, RST, out of order,
behind or before a hole, cut by the snap length, IPv6, IP options, a new or unknown
conversation, one whose idle timeout expires others) becomes a ``Segment`` and goes through
``FlowTable.add``, the general way.

Consecutive in-order packets of one direction (a message sent in several segments, possibly
with acknowledgements of the same conversation in between; ``RUN_BYTES`` at most) go to the
Observer in one call: an Observer gives the same output however its bytes are cut (also while
it resynchronizes after a gap, an error or a start mid-stream: each protocol's Observer tests
check it on damaged streams), and nothing else happens between those packets, so the rows are
the same, in the same order; they only come once the last of them was read.

Rows and errors are those ``FlowTable.add`` gives packet by packet: a test compares both ways on
generated captures (drops, reorders, duplicates, snap cuts, resets, overlaps, mid-stream starts,
idle gaps).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from s3p_codec._core import Direction
from s3p_codec.capture._packets import (
    FRAMES,
    Packet,
    decode_with_dpkt,
    fast_ipv4_tcp,
    link_struct,
)
from s3p_codec.capture._pcap import CaptureFileError, maybe_gunzip
from s3p_codec.capture._reassembly import HalfStream
from s3p_codec.capture._rows import Row
from s3p_codec.capture._scan import SegmentReader

if TYPE_CHECKING:
    from s3p_codec.capture._decoder import FlowDecoder, Lane
    from s3p_codec.capture._flows import FlowTable

__all__ = ["scan"]

RUN_BYTES = 1 << 18
"""Bytes of consecutive in-order payload one Observer call takes at most: a long one-way transfer
is fed in pieces of this size, so what waits for the Observer stays small."""
_PROGRESS_EVERY = 4096
"""Packets between two (possibly empty) row lists, so a progress bar moves in a silent file."""
_LANE_FIELDS = "BxHxxHxBxx12sIIBB"
"""An IPv4 header without options and the TCP header after it, read with the 12 bytes of
addresses and ports as one: version/IHL, total length, flags/fragment, protocol, addresses and
ports, seq, ack, data offset, flags."""


_HEADERS = {linktype: link_struct(linktype, _LANE_FIELDS) for linktype in FRAMES}


def scan(reader: SegmentReader, raw: IO[bytes], table: FlowTable) -> Iterator[list[Row]]:
    """Add every packet of the open capture file ``raw`` to ``table``, as ``table.add`` of each
    of ``reader``'s segments would; yield the rows, a list at a time (empty lists too, every
    few thousand packets). Raises what reading raises, after the rows of the packets before."""
    stream = maybe_gunzip(raw)
    linktype = reader.in_place(raw, stream)
    if linktype is None:
        for segment in reader.general(stream):
            yield table.add(segment)
        return
    yield from _in_place(reader, raw, linktype, table)


def _flush(
    decoder: FlowDecoder | None,
    direction: Direction | None,
    packets: list[Any],
    payloads: list[bytes],
) -> list[Row]:
    """The rows of a run's payloads, given to its Observer now."""
    if decoder is None or direction is None or not packets:
        return []
    return decoder.observe_run(direction, packets, payloads)


def _in_place(
    reader: SegmentReader, raw: IO[bytes], linktype: int, table: FlowTable
) -> Iterator[list[Row]]:
    """``scan`` of a file ``SegmentReader.in_place`` reads: its records, each through a lane
    or the general way."""
    file, index = reader.file, reader.file_index
    frame = FRAMES[linktype]
    at, ethertype_at, _ = frame
    ethernet = ethertype_at is not None
    unpack = _HEADERS[linktype].unpack_from
    offset_of_headers = at if ethertype_at is None else ethertype_at
    need = at + 40
    tcp_at = at + 20
    lanes = table.open_lanes()
    # Bound once: a method looked up per packet costs what the rest of a lane packet costs.
    advance_clock = table.advance_clock
    take_in_order = HalfStream.take_in_order
    # The run: packets of one conversation (``run_decoder``) taken by the lanes one after the
    # other, whose payloads (all of ``run_direction``) the Observer has not seen yet.
    run_decoder: FlowDecoder | None = None
    run_direction: Direction | None = None
    run_packets: list[Any] = []
    run_payloads: list[bytes] = []
    tick = _PROGRESS_EVERY
    try:
        for buf, base, caplen, number, ts in reader.records(raw):
            lane: Lane | None = None
            if caplen >= need:
                # One unpack reads every header field, the addresses and ports as the 12 bytes
                # that key the lanes; only plain IPv4/TCP without options is looked up.
                if ethernet:
                    (
                        ethertype, version_ihl, total, fragment, proto, key, seq, ack, offset,
                        flags,
                    ) = unpack(buf, base + offset_of_headers)  # fmt: skip
                    if (
                        ethertype == 0x0800
                        and version_ihl == 0x45
                        and proto == 6
                        and not fragment & 0x1FFF
                    ):
                        lane = lanes.get(key)
                else:
                    (version_ihl, total, fragment, proto, key, seq, ack, offset, flags) = unpack(
                        buf, base + offset_of_headers
                    )
                    if version_ihl == 0x45 and proto == 6 and not fragment & 0x1FFF:
                        lane = lanes.get(key)
            if lane is not None:
                decoder, half, other, direction, flow = lane
                end = at + total if total else caplen  # a zero total length: TSO, trust caplen
                header = (offset >> 4) << 2
                stop = end if end < caplen else caplen
                size = stop - tcp_at - header  # payload bytes captured
                length = total - 20 - header if total else size  # payload bytes sent
                if end - tcp_at < 20 or header < 20 or size < 0 or (size and direction is None):
                    # A broken header, or data of a direction not begun (its first bytes go
                    # the general way: they decide the protocol).
                    lane = None
                else:
                    # The clock first: when idle conversations are due, ``add`` must close them
                    # before anything else happens, and nothing has changed yet.
                    clock = advance_clock(ts)
                    if clock is None:
                        lane = None
                    else:
                        now = clock
                        # What is kept of the packet: its end offset is right if the in-order
                        # step takes it (its payload then starts at ``half.next``).
                        if size:
                            payload = buf[base + tcp_at + header : base + stop]
                            stream_end = half.next + size
                            packet_ref = (
                                stream_end, file, number, ts, index, key, seq, ack, flags,
                                payload, length,
                            )  # fmt: skip
                        else:
                            packet_ref = (0, file, number, ts, index, key, seq, ack, flags, b"", 0)
                        if take_in_order(half, other, seq, flags, size, length, packet_ref) < 0:
                            lane = None
            if lane is None:
                # The general way: a Segment, through FlowTable.add.
                if run_packets:
                    rows = _flush(run_decoder, run_direction, run_packets, run_payloads)
                    run_packets, run_payloads = [], []
                    if rows:
                        yield rows
                run_decoder = None
                segment = fast_ipv4_tcp(buf, base, caplen, frame, file, index, number, ts)
                if segment is False:
                    packet = Packet(number, ts, linktype, buf[base : base + caplen])
                    segment = decode_with_dpkt(packet, file, index)
                if segment is not None:
                    rows = table.add(segment)
                    if rows:
                        yield rows
                if number >= tick:
                    tick = number + _PROGRESS_EVERY
                    yield []
                continue
            if decoder is not run_decoder:
                if run_packets:
                    rows = _flush(run_decoder, run_direction, run_packets, run_payloads)
                    run_packets, run_payloads = [], []
                    if rows:
                        yield rows
                run_decoder = decoder
                table.flows.move_to_end(flow)  # the most recently active (idle ones are first)
            decoder.last_seen = now
            decoder.last_packet = packet_ref
            if size:
                if run_packets and (
                    direction is not run_direction
                    or stream_end - size - run_packets[0] >= RUN_BYTES
                ):
                    rows = _flush(decoder, run_direction, run_packets, run_payloads)
                    run_packets, run_payloads = [], []
                    if rows:
                        yield rows
                run_direction = direction
                run_packets += (stream_end, file, number, ts)  # flat, as PacketMap keeps them
                run_payloads.append(payload)
            if number >= tick:
                tick = number + _PROGRESS_EVERY
                yield []
    except (CaptureFileError, OSError):
        rows = _flush(run_decoder, run_direction, run_packets, run_payloads)
        if rows:
            yield rows
        raise
    rows = _flush(run_decoder, run_direction, run_packets, run_payloads)
    if rows:
        yield rows
