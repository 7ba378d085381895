"""Reassembled TCP conversations to rows: protocol choice, the protocol's Observer, packet mapping.

The pipeline is three pure steps, so one process (``decode_files``) and a cluster (Spark) run the
same code:

1. ``pcap.read_segments(path, file_index)``: the TCP segments of one capture file;
2. ``tcp.flow_key(segment)``: the key to group segments of one connection by, across files;
3. ``decode_flow(segments)``: one key's segments (any order: they are sorted by
   ``Segment.order``) reassembled, decoded and turned into rows.

``FlowTable`` does steps 2 and 3 incrementally for a whole capture in one pass, holding only the
connections still open (a connection's state is dropped as soon as both sides closed).

Observers report byte offsets in each direction's stream; the decoder remembers which packet
carried which offsets (only back to the last event reported) to give every row its packet
numbers and capture time, and pairs replies with requests through the Observer's ``pair_id``.
"""

from __future__ import annotations

import socket
import struct
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import IO, Any

import attrs

import s3p_codec
from s3p_codec._core import Direction, Observed, ObservedError, ObservedGap, Observer, checkpoint
from s3p_codec.capture import _lanes as lanes
from s3p_codec.capture._describe import describe_event, plain, short_repr, shorten
from s3p_codec.capture._detect import DEFAULT_PORTS, SNIFF_LIMIT, sniff
from s3p_codec.capture._packets import (
    TCP_ACK,
    TCP_SYN,
    PacketRef,
    Segment,
    bare,
    decode_packet,
    segment_of,
)
from s3p_codec.capture._pcap import CaptureFileError, capture_order, maybe_gunzip, read_packets
from s3p_codec.capture._reassembly import (
    DEFAULT_MAX_PENDING,
    HELD_PIECE_COST,
    Conversation,
    Endpoint,
    FlowKey,
    HalfStream,
    StreamData,
    StreamEnd,
    StreamGap,
    StreamItem,
    flow_key,
)
from s3p_codec.capture._remote import input_size, open_input
from s3p_codec.capture._scan import SegmentReader
from s3p_codec.capture._table import LATER, Row, RowErrorCode

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_FLOWS",
    "FileOutcome",
    "FlowDecoder",
    "FlowTable",
    "Limits",
    "ObserverFactory",
    "decode_files",
    "decode_flow",
    "decode_segments",
    "decode_stream",
    "describe_event",
    "feed_file",
    "short_repr",
]

#: Makes a fresh ``Observer`` for one conversation.
ObserverFactory = Callable[[], Observer[Any]]


def _resynchronizes(observer: object) -> bool:
    """Whether ``observer`` can hunt for a frame start (S3P at a line start, the length-prefixed
    protocols at a plausible header): then a direction first seen mid-stream begins with a
    zero-size gap, so the Observer hunts instead of misreading the middle of a frame. HTTP (S2S,
    Durable Streams) has no such marker: its Observers abandon a direction after a gap, so a
    mid-stream HTTP direction is fed as is and decodes from the first message that starts
    cleanly, if any. An Observer class that does not say (``resynchronizes``) is fed as is."""
    return bool(getattr(type(observer), "resynchronizes", False))


def default_observer(protocol: str) -> Observer[Any]:
    """A fresh ``Observer`` of a protocol package, through its public API only
    (``s3p@0.2.0``: the S3P Observer of that version)."""
    name, _, version = protocol.partition("@")
    module = getattr(s3p_codec, name)
    observer: Observer[Any] = module.Observer(version=version) if version else module.Observer()
    return observer


_DIRECTION_TEXT = {d: d.value for d in Direction}  # ``Enum.value`` is a property: a call each
MAX_TIMED_REQUESTS = 256
"""Requests per conversation whose capture time is kept to give their replies a latency: the
most recent ones (pipelined requests that far behind are past measuring)."""
MAX_UNDECIDED = 4 * SNIFF_LIMIT
"""Bytes (payload plus ``HELD_PIECE_COST`` per piece) a conversation may hold while its protocol
is not decided yet; past this, sniffing decides with what it has."""


def _ends(conversation: Conversation) -> tuple[Endpoint, Endpoint]:
    """The two endpoints of a conversation's key, lower first (equal for a self-connection)."""
    key = conversation.key
    return (key[0], key[1]), (key[2], key[3])


def _endpoint_text(endpoint: Endpoint) -> str:
    host, port = endpoint
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


Packet = Sequence[Any]
"""What a row needs of a packet: (end offset of its payload, file, number, ts), the first four
items of a ``PacketRef``."""
_PACKET = 4


def _packet(end: int, segment: Segment | PacketRef) -> Packet:
    if isinstance(segment, tuple):
        return segment[:_PACKET]
    return (end, segment.file, segment.number, segment.ts)


Lane = tuple["FlowDecoder", HalfStream, HalfStream, Direction | None, FlowKey]
"""What ``lanes`` needs to take a packet of one direction of an open conversation without a
``Segment``: its decoder, the sender's half, the other half, the direction (None until it has
begun: then only packets without payload take the lane) and the conversation's key."""


def _raw_key(sender: Endpoint, receiver: Endpoint) -> bytes | None:
    """The 12 bytes of an IPv4 packet from ``sender`` to ``receiver`` that name them: addresses
    (IP header) and ports (TCP header), as they follow each other in the packet; None for IPv6."""
    if ":" in sender[0] or ":" in receiver[0]:
        return None
    return (
        socket.inet_aton(sender[0])
        + socket.inet_aton(receiver[0])
        + struct.pack("!HH", sender[1], receiver[1])
    )


class _PacketMap:
    """Which packet carried which offsets of one direction, from the last event reported on.

    The packets lie flat in one list, four items each (``Packet``): a tuple per packet would be
    an object for the garbage collector to count and look at, one per packet of the capture."""

    __slots__ = ("_entries", "_head")

    def __init__(self) -> None:
        self._entries: list[Any] = []  # by end offset, ascending
        self._head = 0  # index of the first item of the first packet still needed

    def __getstate__(self) -> list[Any]:
        return self._entries[self._head :]  # a snapshot keeps the packets still needed only

    def __setstate__(self, entries: list[Any]) -> None:
        self._entries, self._head = entries, 0

    def add(self, end: int, segment: Segment) -> None:
        """Remember that ``segment`` carried the bytes up to offset ``end``."""
        self._entries += (end, segment.file, segment.number, segment.ts)

    def extend(self, packets: list[Any]) -> None:
        """Remember ``packets``, flat as kept here: four items each (``Packet``), in order."""
        self._entries += packets

    def _find(self, offset: int, start: int) -> int:
        entries = self._entries
        last = len(entries) - _PACKET
        i = start
        while i < last and entries[i] <= offset:
            i += _PACKET
        return i

    def span(self, start: int, end: int) -> tuple[Packet, Packet] | None:
        """First and last packet of the bytes [start, end); forget packets before ``start``."""
        entries = self._entries
        if not entries:
            return None
        head = self._find(start, self._head)
        tail = self._find(max(start, end - 1), head)
        first, last = entries[head : head + _PACKET], entries[tail : tail + _PACKET]
        self._head = head
        if head > 4096 * _PACKET and head * 2 > len(entries):
            del entries[:head]
            self._head = 0
        return first, last


def _bare_item(item: StreamItem) -> StreamItem:
    """A held item as a snapshot keeps it: its segment without the payload (``pcap.bare``)."""
    if item.segment is None or not item.segment.payload:
        return item
    return attrs.evolve(item, segment=bare(item.segment))


class FlowDecoder:
    """One TCP conversation, from segments to rows."""

    def __init__(
        self,
        conversation: Conversation,
        decode_as: Mapping[int, str],
        observers: Callable[[str], Observer[Any]] = default_observer,
        lanes: dict[bytes, Lane] | None = None,
    ) -> None:
        self.conversation = conversation
        self._decode_as = decode_as
        #: Makes the Observer once the protocol is decided (not kept in a snapshot).
        self.observers = observers
        self._held: list[StreamItem] = []
        # Sniffing state, made when the first bytes come (most flows of a scan never carry any).
        self._prefix: dict[Endpoint, bytearray] = {}
        self._done: dict[Endpoint, bool] = {}
        self.decided = False
        self.protocol: str | None = None
        self.client: Endpoint | None = None
        self._observer: Observer[Any] | None = None
        self._maps: dict[Direction, _PacketMap] = {}
        self._requests: dict[int, float] = {}
        # Tuples, not sets: at most two members, and a set costs 216 bytes per flow.
        self._abandoned: tuple[Direction, ...] = ()
        self._begun: tuple[Direction, ...] = ()
        # Per sender whose direction has begun: its half, the other half, its direction.
        self._lanes: dict[Endpoint, tuple[HalfStream, HalfStream, Direction]] = {}
        self._reported: tuple[Direction, ...] = ()
        self._undecoded: dict[Direction, list[Any]] = {}
        self._gap_reasons: dict[tuple[Direction, int], str] = {}  # a few at most, popped
        self._held_bytes = 0
        self._held_payload = False  # bytes or gaps among the held items
        #: The last packet of this conversation taken so far: its ``Segment``, or the
        #: ``PacketRef`` the lanes keep instead (``last_segment`` makes it a ``Segment``).
        self.last_packet: Segment | PacketRef = conversation.first
        self.last_seen = conversation.first.ts
        self.carried_data = False
        self._texts: tuple[Endpoint | None, str, str, str] | None = None  # see _endpoint_texts
        # The table's lanes (``lanes`` module), and this conversation's keys in them per sender.
        self._raw_lanes = lanes
        self._raw: dict[Endpoint, bytes] = {}
        if lanes is not None:
            self._open_raw_lanes(lanes)

    def __getstate__(self) -> dict[str, Any]:
        # A snapshot (``FlowTable.snapshot``) leaves out the Observer factory (the caller's, and
        # given again on restore) and the table's lanes (a restored table takes every packet
        # through ``add``); a packet reference becomes the segment it stands for.
        state = self.__dict__.copy()
        state["observers"] = state["_raw_lanes"] = None
        state["_raw"] = {}
        state["last_packet"] = bare(self.last_segment)
        state["_held"] = [_bare_item(item) for item in self._held]
        return state

    @property
    def last_segment(self) -> Segment:
        """The last segment of this conversation taken so far."""
        last = self.last_packet
        if isinstance(last, Segment):
            return last
        self.last_packet = segment = segment_of(last)
        return segment

    @last_segment.setter
    def last_segment(self, segment: Segment) -> None:
        self.last_packet = segment

    # -- lanes -------------------------------------------------------------------------------

    def _open_raw_lanes(self, lanes: dict[bytes, Lane]) -> None:
        """Let packets without payload of either side take the lanes from now on."""
        conv = self.conversation
        halves = conv.halves
        for sender in halves:
            receiver = next((e for e in halves if e != sender), sender)
            raw = _raw_key(sender, receiver)
            if raw is not None:
                self._raw[sender] = raw
                lanes[raw] = (self, halves[sender], halves[receiver], None, conv.key)

    def close_lanes(self) -> None:
        """Take no more packets through the lanes: the table forgets this conversation."""
        lanes = self._raw_lanes
        if lanes is not None:
            for raw in self._raw.values():
                lane = lanes.get(raw)
                if lane is not None and lane[0] is self:
                    del lanes[raw]
            self._raw = {}

    def observe_run(
        self, direction: Direction, packets: list[Any], payloads: list[bytes]
    ) -> list[Row]:
        """``_observe_data`` of in-order packets of one direction, one after the other, which
        ``lanes`` took (``HalfStream.take_in_order`` and all): one call of the Observer for all.

        Their rows are those the packets would give one by one, as every Observer gives the same
        output in any chunking of its bytes: the rows of the first ones come later (after the
        last was read), never in another order, as nothing else came in between. ``packets``
        are theirs as ``_PacketMap`` keeps them, flat: four items each."""
        size = packets[-_PACKET] - packets[0] + len(payloads[0])
        if direction not in self._reported:  # only silent directions get an undecoded row
            entry = self._undecoded.get(direction)
            if entry is None:
                self._undecoded[direction] = [packets[:_PACKET], packets[-_PACKET:], size]
            else:
                entry[1] = packets[-_PACKET:]
                entry[2] += size
        observer = self._observer
        if observer is None or direction in self._abandoned:
            return []
        (self._maps.get(direction) or self._map(direction)).extend(packets)
        data = payloads[0] if len(payloads) == 1 else b"".join(payloads)
        return self._observe_bytes(observer, direction, data)

    # -- input -------------------------------------------------------------------------------

    def add(self, segment: Segment) -> list[Row]:
        """Take one segment of this conversation; return the rows it completes."""
        self.last_packet = segment
        if segment.payload or segment.length:
            self.carried_data = True
            if self._lanes:
                # Nearly every segment just continues its direction: straight to the Observer.
                lane = self._lanes.get((segment.src, segment.sport))
                if lane is not None:
                    half, other, direction = lane
                    payload = segment.payload
                    offset = half.take_in_order(
                        other, segment.seq, segment.flags, len(payload), segment.length, segment
                    )
                    if offset >= 0:
                        return self._observe_data(direction, offset, payload, segment)
        return self._items(self.conversation.add(segment))

    def evict(self, event_type: str, detail: str, error_code: str | None) -> list[Row]:
        """Close this conversation early (idle, or the open-flow limit): flush it as at the end
        of the capture, then one ``evicted`` row saying why (none for a flow that never carried
        a byte, such as a lone SYN, so scans stay quiet)."""
        rows = self.finish()
        if not self.carried_data:
            return rows
        last = _packet(0, self.last_packet)
        rows.append(
            self._row(
                Direction.CLIENT_TO_SERVER,
                (last, last),
                "evicted",
                event_type,
                pair_id=None,
                event=None,
                wire_bytes=0,
                detail=detail,
                error_code=error_code,
            )
        )
        return rows

    def finish(self) -> list[Row]:
        """The capture has no more segments for this conversation: flush everything."""
        rows = self._items(self.conversation.finish())
        if not self.decided and not self._held_payload:
            # Nothing but handshakes or stray ACKs (say, the last ACK after both FINs): there is
            # nothing to decode and no protocol to guess.
            self.decided = True
            self._held = []
        if not self.decided:
            for endpoint in self._done:
                self._done[endpoint] = True
            rows += self._decide(final=True)
        rows += self._undecoded_rows()
        return rows

    def _items(self, items: list[StreamItem]) -> list[Row]:
        if not items:
            return []
        if self.decided:
            return self._feed(items)
        if not self._done:
            self._prefix = {e: bytearray() for e in self.conversation.halves}
            self._done = dict.fromkeys(self.conversation.halves, False)
        self._held.extend(items)
        for item in items:
            prefix = self._prefix[item.sender]
            if not isinstance(item, StreamEnd):
                self._held_payload = True
            if isinstance(item, StreamData):
                self._held_bytes += len(item.data) + HELD_PIECE_COST
            if isinstance(item, StreamData) and not self._done[item.sender]:
                prefix += item.data[: max(0, SNIFF_LIMIT - len(prefix))]
            else:
                self._done[item.sender] = True
        if not self._held_payload:
            return []  # only ends so far (a lone SYN closing): no protocol to choose yet
        return self._decide(final=False)

    # -- protocol choice ---------------------------------------------------------------------

    def _decide(self, final: bool) -> list[Row]:
        conv = self.conversation
        a, b = _ends(conv)  # equal for a self-connection: one side, every byte client-sent
        protocol: str | None = None
        client = conv.client
        for endpoint in (a, b):
            mapped = self._decode_as.get(endpoint[1])
            if mapped is not None:
                protocol = mapped
                client = client or (b if endpoint == a else a)
                break
        if protocol is None:
            # Without a handshake, guess that the side on the higher (ephemeral) port is the
            # client; sniffing tries that orientation first and the other next.
            first = client or (a if a[1] > b[1] else b)
            second = b if first == a else a
            verdict = sniff(
                bytes(self._prefix[first]),
                bytes(self._prefix[second]) if second != first else b"",
                first_done=self._sniff_done(first, final),
                second_done=self._sniff_done(second, final) or second == first,
                first_is_client=True if client is not None else None,
            )
            if verdict is None:
                return []
            if verdict.protocol is not None:
                protocol = verdict.protocol
                client = first if verdict.first_is_client else second
            else:
                for endpoint in (a, b):
                    fallback = DEFAULT_PORTS.get(endpoint[1])
                    if fallback is not None:
                        protocol = fallback
                        client = client or (b if endpoint == a else a)
                        break
                client = client or first
        self.decided = True
        self.protocol = None if protocol is None else protocol.partition("@")[0]
        self.client = client
        if protocol is not None:
            try:
                self._observer = self.observers(protocol)
            except Exception as exc:  # a protocol package that fails to import: say so, go on
                self.protocol = None
                crash = self._crash_row(Direction.CLIENT_TO_SERVER, exc)
                return [crash, *self._feed(self._take_held())]
        return self._feed(self._take_held())

    def _sniff_done(self, endpoint: Endpoint, final: bool) -> bool:
        """No more bytes of this side will change the verdict: it ended, its prefix is full
        (SNIFF_LIMIT: the guess is final), or too much is held waiting for a decision."""
        return (
            final
            or self._done[endpoint]
            or len(self._prefix[endpoint]) >= SNIFF_LIMIT
            or self._held_bytes > MAX_UNDECIDED
        )

    def _take_held(self) -> list[StreamItem]:
        held, self._held = self._held, []
        self._prefix = {}
        self._held_bytes = 0
        return held

    # -- feeding the Observer ----------------------------------------------------------------

    def _direction(self, sender: Endpoint) -> Direction:
        if sender == self.client:
            return Direction.CLIENT_TO_SERVER
        return Direction.SERVER_TO_CLIENT

    def _observe_data(
        self, direction: Direction, offset: int, data: bytes, segment: Segment
    ) -> list[Row]:
        """``_feed`` of one ``StreamData`` in a direction already begun (the common case)."""
        if direction not in self._reported:  # only silent directions get an undecoded row
            entry = self._undecoded.get(direction)
            packet = _packet(offset + len(data), segment)
            if entry is None:
                self._undecoded[direction] = [packet, packet, len(data)]
            else:
                entry[1] = packet
                entry[2] += len(data)
        observer = self._observer
        if observer is None or direction in self._abandoned:
            return []
        (self._maps.get(direction) or self._map(direction)).add(offset + len(data), segment)
        return self._observe_bytes(observer, direction, data)

    def _observe_bytes(
        self, observer: Observer[Any], direction: Direction, data: bytes
    ) -> list[Row]:
        """The rows of ``data`` fed to the Observer (whose packets are mapped already)."""
        try:
            outputs = observer.observe(direction, data)
        except Exception as exc:  # an Observer must not raise; keep the capture going
            self._abandon(direction)
            return [self._crash_row(direction, exc)]
        return self._rows(outputs) if outputs else []

    def _feed(self, items: Iterable[StreamItem]) -> list[Row]:
        rows: list[Row] = []
        observer = self._observer
        for item in items:
            direction = self._direction(item.sender)
            if isinstance(item, StreamData) and direction in self._begun:
                rows += self._observe_data(direction, item.offset, item.data, item.segment)
                continue
            self._count_undecoded(direction, item)
            if observer is None or direction in self._abandoned:
                continue  # no row will ever need this direction's packets
            if isinstance(item, StreamData):
                self._map(direction).add(item.offset + len(item.data), item.segment)
            elif isinstance(item, StreamGap):
                self._map(direction).add(item.offset + item.size, item.segment)
                if item.reason:
                    self._gap_reasons[(direction, item.offset)] = item.reason
            if direction not in self._begun and not isinstance(item, StreamEnd):
                self._begun += (direction,)
                self._open_lane(item.sender, direction)
                midstream = self.conversation.halves[item.sender].syn_seq is None
                if midstream and _resynchronizes(observer):
                    # The capture began mid-stream: the first byte seen may sit inside a frame,
                    # so the Observer starts by hunting for a plausible frame start.
                    rows.extend(self._rows(self._observe_gap(observer, direction, 0)))
            try:
                if isinstance(item, StreamData):
                    outputs = observer.observe(direction, item.data)
                elif isinstance(item, StreamGap):
                    outputs = observer.gap(direction, item.size)
                else:
                    outputs = observer.close(direction)
            except Exception as exc:  # an Observer must not raise; keep the capture going
                self._abandon(direction)
                rows.append(self._crash_row(direction, exc))
                continue
            rows.extend(self._rows(outputs))
        return rows

    def _open_lane(self, sender: Endpoint, direction: Direction) -> None:
        """Let ``add`` (and ``lanes``) take ``sender``'s in-order segments straight to the
        Observer."""
        halves = self.conversation.halves
        receiver = next((e for e in halves if e != sender), sender)
        self._lanes[sender] = (halves[sender], halves[receiver], direction)
        raw = self._raw.get(sender)
        if raw is not None and self._raw_lanes is not None:
            key = self.conversation.key
            self._raw_lanes[raw] = (self, halves[sender], halves[receiver], direction, key)

    def _abandon(self, direction: Direction) -> None:
        """Feed this direction no more, and forget which packets carried it."""
        self._abandoned += (direction,)
        self._maps.pop(direction, None)

    def _map(self, direction: Direction) -> _PacketMap:
        packets = self._maps.get(direction)
        if packets is None:
            packets = self._maps[direction] = _PacketMap()
        return packets

    def _observe_gap(self, observer: Observer[Any], direction: Direction, size: int) -> Any:
        try:
            return observer.gap(direction, size)
        except Exception as exc:  # an Observer must not raise; keep the capture going
            self._abandon(direction)
            return [self._crash_row(direction, exc)]

    def _count_undecoded(self, direction: Direction, item: StreamItem) -> None:
        if isinstance(item, StreamEnd):
            return
        entry = self._undecoded.get(direction)
        size = len(item.data) if isinstance(item, StreamData) else item.size
        packet = _packet(item.offset + size, item.segment)
        if entry is None:
            self._undecoded[direction] = [packet, packet, size]
        else:
            entry[1] = packet
            entry[2] += size

    def _undecoded_rows(self) -> list[Row]:
        """A row per direction whose bytes gave no row at all: an unrecognised protocol, or
        traffic the protocol's Observer passed over in silence (say, a REST call beside S2S
        appends and reads), so that no byte of a capture goes unaccounted for."""
        rows = []
        for direction, (first, last, size) in self._undecoded.items():
            if direction in self._reported or not size:
                continue
            if self._observer is None:
                detail = f"{size} bytes of an unrecognised protocol"
            else:
                detail = f"{size} bytes the {self.protocol} decoder reported nothing for"
            rows.append(
                self._row(
                    direction,
                    (first, last),
                    "undecoded",
                    "Undecoded",
                    pair_id=None,
                    event=None,
                    wire_bytes=size,
                    detail=detail,
                )
            )
        self._undecoded = {}
        return rows

    def _rows(self, outputs: Sequence[object]) -> list[Row]:
        rows = []
        for out in outputs:
            direction = getattr(out, "direction", None)  # any of Observed, -Error, -Gap
            if isinstance(direction, Direction) and direction not in self._reported:
                self._reported += (direction,)
            if isinstance(out, Observed):
                rows.append(self._event_row(out))
            elif isinstance(out, ObservedError):
                span = self._map(out.direction).span(out.start, out.start + 1)
                if span is None:
                    continue
                what = "resynchronized" if out.resynchronized else "direction abandoned"
                if not out.resynchronized:
                    # The Observer gave up on this direction: its later bytes give no row, so
                    # neither they nor their packets are kept.
                    self._abandon(out.direction)
                rows.append(
                    self._row(
                        out.direction,
                        (span[0], span[1]),
                        "error",
                        type(out.error).__name__,
                        pair_id=None,
                        event=out.error,
                        error_code=str(plain(out.error.code)),
                        wire_bytes=out.skipped,
                        detail=f"{out.error.message} ({what}, {out.skipped} bytes skipped)",
                    )
                )
            elif isinstance(out, ObservedGap):
                span = self._map(out.direction).span(out.start, out.start + max(out.size, 1))
                if span is None:
                    continue
                what = "resynchronized" if out.resynchronized else "not resynchronized yet"
                if self._gap_reasons.pop((out.direction, out.start), "") == "max_pending":
                    limit = self.conversation.halves[next(iter(self.conversation.halves))]
                    what += (
                        f"; not waited for: more than max_pending={limit.max_pending} bytes "
                        "were held behind it"
                    )
                rows.append(
                    self._row(
                        out.direction,
                        (span[0], span[1]),
                        "gap",
                        "Gap",
                        pair_id=None,
                        event=out,
                        wire_bytes=out.size,
                        detail=f"{out.size} bytes missing ({what})",
                    )
                )
        return rows

    def _event_row(self, out: Observed[Any]) -> Row:
        """The row of one decoded event: ``_row``'s, built in one go (one per event)."""
        direction, event, pair_id = out.direction, out.event, out.pair_id
        span = self._map(direction).span(out.start, out.end)
        assert span is not None  # an event covers bytes we fed, so packets were recorded
        first, last = span
        latency = None
        if pair_id is not None:
            if direction is Direction.CLIENT_TO_SERVER:
                requests = self._requests
                if pair_id not in requests:
                    requests[pair_id] = last[3]
                    if len(requests) > MAX_TIMED_REQUESTS:
                        # Oldest first (dicts keep insertion order): a reply that far behind
                        # has its row without a latency, and state stays flat however long
                        # the conversation (a reply may repeat a pair, so none is popped).
                        del requests[next(iter(requests))]
            elif pair_id in self._requests:
                latency = (first[3] - self._requests[pair_id]) * 1000.0
        fields = describe_event(event)
        get = fields.get
        texts = self._texts
        if texts is None or texts[0] is not self.client:
            texts = self._texts = self._endpoint_texts()
        return Row(
            first[1], first[2], last[2], first[3], texts[1], texts[2], texts[3],
            _DIRECTION_TEXT[direction], self.protocol or "unknown", "event", type(event).__name__,
            pair_id, latency, get("stream"), get("offset"), get("count"), get("payload_bytes"),
            out.end - out.start, get("error_code"), LATER, event,
        )  # fmt: skip

    def _crash_row(self, direction: Direction, exc: Exception) -> Row:
        first = _packet(0, self.conversation.first)
        return self._row(
            direction,
            (first, first),
            "error",
            type(exc).__name__,
            pair_id=None,
            event=exc,
            error_code=RowErrorCode.DECODER_FAILURE.value,
            wire_bytes=0,
            detail=shorten(f"decoder failed, direction abandoned: {exc!r}"),
        )

    def _endpoint_texts(self) -> tuple[Endpoint | None, str, str, str]:
        """(``client`` they are for, conversation id, client and server text) of the rows."""
        conv = self.conversation
        client = self.client or (conv.key[0], conv.key[1])
        server = next((e for e in conv.halves if e != client), client)
        conversation = f"{conv.first.file}#{conv.first.number}"
        return self.client, conversation, _endpoint_text(client), _endpoint_text(server)

    def _row(
        self,
        direction: Direction,
        span: tuple[Packet, Packet],
        kind: str,
        event_type: str,
        *,
        pair_id: int | None,
        event: object,
        wire_bytes: int,
        detail: str,
        latency_ms: float | None = None,
        stream: str | None = None,
        offset: str | None = None,
        count: int | None = None,
        payload_bytes: int | None = None,
        error_code: str | None = None,
    ) -> Row:
        first, last = span
        texts = self._texts
        if texts is None or texts[0] is not self.client:
            texts = self._texts = self._endpoint_texts()
        return Row(
            file=first[1],
            first_packet=first[2],
            last_packet=last[2],
            ts=first[3],
            conversation=texts[1],
            client=texts[2],
            server=texts[3],
            direction=_DIRECTION_TEXT[direction],
            protocol=self.protocol or "unknown",
            kind=kind,
            event_type=event_type,
            pair_id=pair_id,
            latency_ms=latency_ms,
            stream=stream,
            offset=offset,
            count=count,
            payload_bytes=payload_bytes,
            wire_bytes=wire_bytes,
            error_code=error_code,
            detail=detail,
            event=event,
        )


# -- many conversations ----------------------------------------------------------------------


CLOSED_LINGER = 240.0
"""Seconds of capture time during which stray segments of a closed connection (the last ACK, a
retransmitted FIN) are recognised as such rather than opening a new, empty conversation: twice
the usual 2 x MSL of TCP's TIME-WAIT."""

DEFAULT_IDLE_TIMEOUT = 300.0
"""Seconds of capture time without a segment after which a conversation is closed (flushed, with
an ``evicted``/``IdleTimeout`` row); later segments of it start a new conversation. 0 disables."""
DEFAULT_MAX_FLOWS = 50_000
"""Conversations open at once; at the limit the least recently active one is closed with an
``evicted``/``FlowLimit`` row (error code ``flow_limit``). A flow that carried no bytes (a lone
SYN) costs about 2 KiB, so the default bounds a SYN flood to about 100 MiB."""


@attrs.frozen
class Limits:
    """The bounds that keep decoding an endless or hostile capture in bounded memory.

    ``idle_timeout``: seconds of capture time before a silent conversation is closed (0: never);
    ``max_flows``: conversations open at once; ``max_pending``: bytes of memory one direction
    may hold behind a hole (see ``tcp.HELD_PIECE_COST``). Raises ValueError when negative.
    """

    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    max_flows: int = DEFAULT_MAX_FLOWS
    max_pending: int = DEFAULT_MAX_PENDING

    def __attrs_post_init__(self) -> None:
        if self.idle_timeout < 0 or self.max_flows < 1 or self.max_pending < 0:
            raise ValueError(f"limits must be positive: {self}")


class FlowTable:
    """Every open conversation of a capture, fed segments in capture order.

    A conversation is flushed and forgotten once both of its sides closed, once it was idle for
    ``idle_timeout`` seconds of capture time, or when ``max_flows`` others are open and it is the
    least recently active one; so memory follows the connections open at a time, not the
    capture's size. Its key is remembered (for ``CLOSED_LINGER`` seconds of capture time, and
    ``max_flows`` keys at most) only to recognise its stray last segments.
    """

    def __init__(
        self,
        decode_as: Mapping[int, str] | None = None,
        observers: Callable[[str], Observer[Any]] = default_observer,
        max_pending: int = DEFAULT_MAX_PENDING,
        *,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_flows: int = DEFAULT_MAX_FLOWS,
    ) -> None:
        self.decode_as: Mapping[int, str] = dict(decode_as or {})
        self.observers = observers
        self.limits = Limits(idle_timeout, max_flows, max_pending)
        self.max_pending = max_pending
        # Least recently active first: the front is where idle and evicted flows are found.
        self.flows: OrderedDict[FlowKey, FlowDecoder] = OrderedDict()
        self._closed: OrderedDict[FlowKey, float] = OrderedDict()
        self._now = float("-inf")  # latest capture time seen (timestamps may step back a bit)
        # No open conversation was last seen before this (capture time): idle ones are looked
        # for only once the idle timeout has passed since then, not at every segment.
        self._oldest_seen = float("inf")
        # A dict once ``open_lanes`` was called: the lanes of open conversations (see
        # ``Lane``); None: every packet comes through ``add``.
        self.lanes: dict[bytes, Lane] | None = None

    # -- checkpoints ---------------------------------------------------------------------------

    def snapshot(self) -> bytes:
        """The decoding state of every open conversation, between two segments: reassembly of
        both directions, each Observer's protocol state, the packets of bytes not yet reported,
        pending requests for latency, and the closed keys kept for strays. ``restore`` it (in
        another process too) and feed on: the rows are exactly those of an uninterrupted run.

        Its size follows what is in flight (the bytes after each direction's last complete
        message, what waits behind a hole), never the conversation's age."""
        return checkpoint.dump(self)

    @classmethod
    def restore(
        cls, blob: bytes, observers: Callable[[str], Observer[Any]] = default_observer
    ) -> FlowTable:
        """The table a ``snapshot`` saved, making new Observers with ``observers``. Raises
        ``SnapshotError`` for a blob that is not a table's snapshot of this format."""
        table = checkpoint.load(blob, cls)
        table.observers = observers
        for decoder in table.flows.values():
            decoder.observers = observers
        return table

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["observers"] = state["lanes"] = None
        return state

    @classmethod
    def with_limits(
        cls,
        decode_as: Mapping[int, str] | None = None,
        observers: Callable[[str], Observer[Any]] = default_observer,
        limits: Limits | None = None,
    ) -> FlowTable:
        """A table bounded by ``limits`` (default: ``Limits()``)."""
        lim = limits or Limits()
        return cls(
            decode_as, observers, lim.max_pending,
            idle_timeout=lim.idle_timeout, max_flows=lim.max_flows,
        )  # fmt: skip

    def open_lanes(self) -> dict[bytes, Lane]:
        """The lanes of the conversations opened from now on, by the 12 bytes of addresses and
        ports of their packets (``Lane``): ``_lanes.scan`` takes their in-order packets straight
        to the Observer, with ``advance_clock`` and ``HalfStream.take_in_order``. A restored
        table's conversations have none: every packet of theirs comes through ``add``."""
        if self.lanes is None:
            self.lanes = {}
        return self.lanes

    def advance_clock(self, ts: float) -> float | None:
        """Capture time once a packet at ``ts`` is taken (the latest seen: timestamps may step
        back a little). None, with nothing changed, when at ``ts`` an open conversation has
        been idle past ``idle_timeout``: only ``add`` may take that packet, as it closes them
        first (the one rule of when they are due)."""
        if ts > self._now:
            idle = self.limits.idle_timeout
            if idle and ts - idle > self._oldest_seen:
                return None
            self._now = ts
        return self._now

    def add(self, segment: Segment) -> list[Row]:
        """Take one segment; return the rows it completes."""
        key = flow_key(segment)
        flows = self.flows
        decoder = flows.get(key)
        rows: list[Row] = []
        if self.advance_clock(segment.ts) is None:
            self._now = segment.ts
            rows += self._expire()
            decoder = flows.get(key)
        if decoder is None:
            if self._stray(key, segment):
                return rows
        elif segment.flags & TCP_SYN and decoder.conversation.is_new_connection(segment):
            rows += decoder.finish()
            del flows[key]
            decoder.close_lanes()
            decoder = None
        if decoder is None:
            if len(flows) >= self.limits.max_flows:
                rows += self._evict_oldest()
            conv = Conversation(key, segment, self.limits.max_pending)
            decoder = FlowDecoder(conv, self.decode_as, self.observers, self.lanes)
            flows[key] = decoder
            self._oldest_seen = min(self._oldest_seen, self._now)
        else:
            flows.move_to_end(key)
        decoder.last_seen = self._now
        rows += decoder.add(segment)
        conversation = decoder.conversation
        if conversation.closing and conversation.finished:
            rows += decoder.finish()
            del flows[key]
            decoder.close_lanes()
            self._remember_closed(key, segment.ts)
        return rows

    def _expire(self) -> list[Row]:
        """Close the conversations silent for ``idle_timeout`` seconds of capture time."""
        rows: list[Row] = []
        flows = self.flows
        deadline = self._now - self.limits.idle_timeout
        while flows:
            key, oldest = next(iter(flows.items()))
            if oldest.last_seen >= deadline:
                self._oldest_seen = oldest.last_seen  # the least recently seen of those open
                break
            del flows[key]
            oldest.close_lanes()
            idle = self._now - oldest.last_seen
            rows += oldest.evict(
                "IdleTimeout",
                f"closed after {idle:.0f} s without a segment (idle timeout "
                f"{self.limits.idle_timeout:g} s)",
                None,
            )
        else:
            self._oldest_seen = float("inf")  # none open
        return rows

    def _evict_oldest(self) -> list[Row]:
        key, oldest = self.flows.popitem(last=False)
        oldest.close_lanes()
        self._remember_closed(key, self._now)
        return oldest.evict(
            "FlowLimit",
            f"closed early: {self.limits.max_flows} conversations open at once (max_flows)",
            "flow_limit",
        )

    def _remember_closed(self, key: FlowKey, ts: float) -> None:
        closed = self._closed
        closed[key] = ts
        closed.move_to_end(key)
        if len(closed) > self.limits.max_flows:
            closed.popitem(last=False)

    def _stray(self, key: FlowKey, segment: Segment) -> bool:
        """True for a late segment of a connection that already closed (dropped)."""
        closed = self._closed
        while closed:  # forget connections closed long ago (capture time runs forward)
            oldest_key, oldest_ts = next(iter(closed.items()))
            if segment.ts - oldest_ts <= CLOSED_LINGER:
                break
            del closed[oldest_key]
        closed_at = closed.get(key)
        if closed_at is None:
            return False
        opening = segment.flags & TCP_SYN and not segment.flags & TCP_ACK
        if opening or segment.ts - closed_at > CLOSED_LINGER:
            del closed[key]  # the port pair is used again by a new connection
            return False
        return True

    def finish(self) -> list[Row]:
        """End of capture: flush every conversation still open."""
        rows: list[Row] = []
        for decoder in self.flows.values():
            rows += decoder.finish()
            decoder.close_lanes()
        self.flows = OrderedDict()
        self._closed.clear()
        return rows


def decode_segments(
    segments: Iterable[Segment],
    decode_as: Mapping[int, str] | None = None,
    observers: Callable[[str], Observer[Any]] = default_observer,
    *,
    limits: Limits | None = None,
) -> Iterator[Row]:
    """Rows of a whole capture's segments, given in capture order (one pass, bounded memory)."""
    table = FlowTable.with_limits(decode_as, observers, limits)
    for segment in segments:
        yield from table.add(segment)
    yield from table.finish()


def decode_flow(
    segments: Iterable[Segment],
    decode_as: Mapping[int, str] | None = None,
    observers: Callable[[str], Observer[Any]] = default_observer,
    *,
    limits: Limits | None = None,
) -> list[Row]:
    """Rows of the segments of one flow key, in any order (step three of the pipeline).

    The segments are sorted by ``Segment.order``, so a Spark task that received them shuffled
    from many files decodes exactly as ``decode_segments`` does in one process.
    """
    return list(decode_segments(sorted(segments, key=_order), decode_as, observers, limits=limits))


def _order(segment: Segment) -> tuple[int, int]:
    return segment.order


@attrs.frozen
class FileOutcome:
    """How reading one input went: ``packets`` read before the end or ``error`` (None: whole).

    ``readable`` is False when not one packet came out of it (missing, not a capture, empty).
    """

    path: str
    packets: int
    error: Exception | None

    @property
    def readable(self) -> bool:
        """True when the input gave at least one packet, or was a whole, valid capture."""
        return self.packets > 0 or self.error is None


def decode_files(
    paths: Iterable[str],
    decode_as: Mapping[int, str] | None = None,
    *,
    progress: bool | None = False,
    observers: Callable[[str], Observer[Any]] = default_observer,
    limits: Limits | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
) -> Iterator[Row]:
    """Rows of one capture, possibly rotated into several files, in one pass.

    Files are read in ``capture_order`` (``cap2`` before ``cap10``) and flows carry on from one
    file to the next. A file that is not a capture, or that breaks off, gives a
    ``capture_error`` row and decoding goes on with the next file; ``on_file`` hears how each
    file went. ``progress`` shows a tqdm bar on stderr (None: only when stderr is a terminal,
    once the run took half a second; tqdm is needed only then).
    """
    ordered = capture_order(paths)
    sizes = {p: _size(p) for p in ordered}
    table = FlowTable.with_limits(decode_as, observers, limits)
    with _progress_bar(progress, sum(sizes.values())) as bar:
        yield from decode_in_turn(ordered, table, on_file, bar, sizes)
        yield from table.finish()


def decode_in_turn(
    paths: Iterable[str],
    table: FlowTable,
    on_file: Callable[[FileOutcome], None] | None = None,
    bar: Any = None,
    sizes: Mapping[str, int] | None = None,
) -> Iterator[Row]:
    """Rows of ``paths`` fed to ``table`` one after the other, in the order given (which may be
    an endless iterator: the objects a followed URL names as they appear); the conversations
    still open at the end are left open. ``bar`` (tqdm) is advanced by the bytes read, of
    ``sizes``."""
    for index, path in enumerate(paths):
        done = 0
        tick = 4096
        reader: SegmentReader | None = None
        error: Exception | None = None
        try:
            with open_input(path) as raw:
                reader = SegmentReader(path, raw, path, index)
                for rows in lanes.scan(reader, raw, table):
                    if rows:
                        yield from rows
                    if bar is not None and reader.packets >= tick:
                        tick = reader.packets + 4096
                        position = raw.tell()
                        bar.update(position - done)
                        done = position
        except (CaptureFileError, OSError) as exc:
            error = exc
            yield _capture_error_row(path, exc)
        packets = reader.packets if reader is not None else 0
        if on_file is not None:
            on_file(FileOutcome(path, packets, error))
        if bar is not None and sizes is not None:
            bar.update(sizes[path] - done)


def feed_file(table: FlowTable, path: str, file_index: int = 0) -> Iterator[list[Row]]:
    """Feed every packet of the capture file (or object URL) ``path`` to ``table``, as
    ``decode_files`` reads each of its files, and yield the rows they complete, a list at a time
    (empty lists too, every few thousand packets); the conversations still open stay open in
    ``table``, for the next file. Raises ``CaptureFileError`` for a file that is not a capture
    or breaks off, ``OSError`` for one that cannot be read, after the rows of the packets
    before (``decode_files`` makes either a ``capture_error`` row)."""
    with open_input(path) as raw:
        yield from lanes.scan(SegmentReader(path, raw, path, file_index), raw, table)


def decode_stream(
    stream: IO[bytes],
    decode_as: Mapping[int, str] | None = None,
    *,
    name: str = "-",
    observers: Callable[[str], Observer[Any]] = default_observer,
    limits: Limits | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
) -> Iterator[Row]:
    """Rows of a pcap or pcapng stream (gzip too) read strictly forward, each yielded as soon as
    the packet completing it was read: ``tcpdump -U -w - | ...``, a socket, a growing file.

    Nothing is sought and nothing is read ahead beyond the current record, so rows come while the
    stream is still being written. Memory is bounded by ``limits`` (idle conversations close
    after ``idle_timeout`` seconds of capture time, at most ``max_flows`` are open, each direction
    holds at most ``max_pending`` bytes behind a hole), so an endless stream decodes in flat
    memory. A stream that is not a capture, or breaks off, ends with a ``capture_error`` row
    (``name`` is the file name rows show). Never raises for bad input; I/O errors of ``stream``
    itself become that row too.
    """
    table = FlowTable.with_limits(decode_as, observers, limits)
    packets = 0
    error: Exception | None = None
    try:
        for packet in read_packets(name, maybe_gunzip(stream)):
            packets = packet.number
            segment = decode_packet(packet, name, 0)
            if segment is not None:
                yield from table.add(segment)
    except (CaptureFileError, OSError) as exc:
        error = exc
        yield _capture_error_row(name, exc)
    if on_file is not None:
        on_file(FileOutcome(name, packets, error))
    yield from table.finish()


class _NoBar:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _progress_bar(progress: bool | None, total: int) -> Any:
    """A tqdm bar (a context manager giving the bar), or one giving None when not wanted."""
    if progress is False:
        return _NoBar()
    from tqdm import tqdm  # noqa: PLC0415 - only progress bars need it

    return tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        delay=0.5 if progress is None else 0.0,
        disable=None if progress is None else not progress,
        desc="decoding",
        leave=False,
    )


def _size(path: str) -> int:
    return input_size(path)


def _capture_error_row(path: str, exc: Exception) -> Row:
    # The OS's own words ("[Errno 2] No such file or directory: 'x'"), as the Spark reader
    # words the same row; the command line says it shorter on stderr.
    message = exc.message if isinstance(exc, CaptureFileError) else str(exc)
    return capture_error_row(path, type(exc).__name__, message, exc)


def capture_error_row(
    file: str, error_type: str, message: str, error: Exception | None = None
) -> Row:
    """The row of a capture file that could not be read, or broke off (after its packets)."""
    return Row(
        file=file,
        first_packet=0,
        last_packet=0,
        ts=0.0,
        conversation=f"{file}#0",
        client="",
        server="",
        direction="",
        protocol="unknown",
        kind="capture_error",
        event_type=error_type,
        pair_id=None,
        latency_ms=None,
        stream=None,
        offset=None,
        count=None,
        payload_bytes=None,
        wire_bytes=0,
        error_code=RowErrorCode.CAPTURE_FILE.value,
        detail=shorten(message),
        event=error,
    )
