"""One TCP conversation, from segments to rows: which protocol it speaks, and feeding that
protocol's Observer.

The plan:

1. Segments go to the conversation's reassembly (``Conversation.add``), which hands on ordered
   stream items per direction: data, gaps, ends.
2. Until the protocol is decided, the items are held, and the first bytes of each side are
   sniffed (``_detect``), unless the port map names the protocol. Once decided (or once too
   much is held: ``MAX_UNDECIDED``), the held items are fed to the protocol's Observer, made
   by ``observers``, and ``ConversationRows`` (``_rows``) makes the rows of what it reports.
3. Once a direction has begun, its in-order segments skip the reassembly's general path: the
   in-order step (``HalfStream.take_in_order``) takes them and their payload goes straight to
   the Observer (``add``). The lanes (``_lanes``) do the same from the raw packets of a
   classic pcap file, through the ``Lane`` this decoder registers per direction in its
   table's lanes, and hand their payloads on in runs (``observe_run``).
4. A direction first seen mid-stream starts with a zero-size gap when its Observer can
   resynchronize, so that it hunts for a frame start instead of misreading the middle of one.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

import s3p_codec
from s3p_codec._core import Direction, Observer
from s3p_codec.capture._detect import DEFAULT_PORTS, SNIFF_LIMIT, sniff
from s3p_codec.capture._packets import PacketRef, Segment, bare, segment_of
from s3p_codec.capture._reassembly import (
    HELD_PIECE_COST,
    Conversation,
    Endpoint,
    FlowKey,
    HalfStream,
    StreamData,
    StreamEnd,
    StreamGap,
    StreamItem,
)
from s3p_codec.capture._rows import PACKET_ITEMS, ConversationRows, Row

__all__ = [
    "MAX_UNDECIDED",
    "FlowDecoder",
    "Lane",
    "ObserverFactory",
    "default_observer",
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


MAX_UNDECIDED = 4 * SNIFF_LIMIT
"""Bytes (payload plus ``HELD_PIECE_COST`` per piece) a conversation may hold while its protocol
is not decided yet; past this, sniffing decides with what it has."""


def _ends(conversation: Conversation) -> tuple[Endpoint, Endpoint]:
    """The two endpoints of a conversation's key, lower first (equal for a self-connection)."""
    key = conversation.key
    return (key[0], key[1]), (key[2], key[3])


Lane = tuple["FlowDecoder", HalfStream, HalfStream, Direction | None, FlowKey]
"""What ``_lanes`` needs to take a packet of one direction of an open conversation without a
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


def _bare_item(item: StreamItem) -> StreamItem:
    """A held item as a snapshot keeps it: its segment without the payload (``bare``)."""
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
        # Made once the protocol is decided: every row of this conversation comes from it.
        self._rows: ConversationRows | None = None
        # Tuples, not sets: at most two members, and a set costs 216 bytes per flow.
        self._begun: tuple[Direction, ...] = ()
        # Per sender whose direction has begun: its half, the other half, its direction.
        self._lanes: dict[Endpoint, tuple[HalfStream, HalfStream, Direction]] = {}
        self._held_bytes = 0
        self._held_payload = False  # bytes or gaps among the held items
        #: The last packet of this conversation taken so far: its ``Segment``, or the
        #: ``PacketRef`` the lanes keep instead (``last_segment`` makes it a ``Segment``).
        self.last_packet: Segment | PacketRef = conversation.first
        self.last_seen = conversation.first.ts
        self.carried_data = False
        # The table's lanes (``_lanes``), and this conversation's keys in them per sender.
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

    def _open_lane(self, sender: Endpoint, direction: Direction) -> None:
        """Let ``add`` (and the lanes) take ``sender``'s in-order segments straight to the
        Observer."""
        halves = self.conversation.halves
        receiver = next((e for e in halves if e != sender), sender)
        self._lanes[sender] = (halves[sender], halves[receiver], direction)
        raw = self._raw.get(sender)
        if raw is not None and self._raw_lanes is not None:
            key = self.conversation.key
            self._raw_lanes[raw] = (self, halves[sender], halves[receiver], direction, key)

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
        """The rows of in-order packets of one direction, one after the other, which the lanes
        took (``HalfStream.take_in_order`` and all): one call of the Observer for all.

        Their rows are those the packets would give one by one, as every Observer gives the same
        output in any chunking of its bytes: the rows of the first ones come later (after the
        last was read), never in another order, as nothing else came in between. ``packets``
        are theirs as ``PacketMap`` keeps them, flat: four items each."""
        rows = self._rows
        assert rows is not None  # a direction begins only once the protocol is decided
        # From the start of the first packet's payload to the end of the last one's.
        size = packets[-PACKET_ITEMS] - packets[0] + len(payloads[0])
        if not rows.run(direction, packets, size):
            return []
        data = payloads[0] if len(payloads) == 1 else b"".join(payloads)
        return self._observe_bytes(direction, data)

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
        made = self._rows or ConversationRows(self.conversation, self.protocol, self.client)
        rows.append(made.evicted(self.last_packet, event_type, detail, error_code))
        return rows

    def finish(self) -> list[Row]:
        """The capture has no more segments for this conversation: flush everything."""
        rows = self._items(self.conversation.finish())
        if not self.decided and not self._held_payload:
            # Nothing but handshakes or stray ACKs (say, the last ACK after both FINs): there is
            # nothing to decode and no protocol to guess.
            self.decided = True
            self._held = []
            self._rows = ConversationRows(self.conversation, None, None)
        if not self.decided:
            for endpoint in self._done:
                self._done[endpoint] = True
            rows += self._decide(final=True)
        if self._rows is not None:
            rows += self._rows.undecoded()
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
        crashed: Exception | None = None
        if protocol is not None:
            try:
                self._observer = self.observers(protocol)
            except Exception as exc:  # a protocol package that fails to import: say so, go on
                self.protocol = None
                crashed = exc
        self._rows = ConversationRows(conv, self.protocol, client)
        if crashed is not None:
            crash = self._rows.crash(Direction.CLIENT_TO_SERVER, crashed)
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
        rows = self._rows
        assert rows is not None  # a direction begins only once the protocol is decided
        if not rows.carried(direction, offset + len(data), len(data), segment):
            return []
        return self._observe_bytes(direction, data)

    def _observe_bytes(self, direction: Direction, data: bytes) -> list[Row]:
        """The rows of ``data`` fed to the Observer (whose packets are mapped already)."""
        observer, rows = self._observer, self._rows
        assert observer is not None  # ``rows`` said the Observer takes these bytes
        assert rows is not None
        try:
            outputs = observer.observe(direction, data)
        except Exception as exc:  # an Observer must not raise; keep the capture going
            return [rows.crash(direction, exc)]
        return rows.of(outputs) if outputs else []

    def _feed(self, items: Iterable[StreamItem]) -> list[Row]:
        found: list[Row] = []
        observer, rows = self._observer, self._rows
        assert rows is not None  # fed only once the protocol is decided
        for item in items:
            direction = self._direction(item.sender)
            if isinstance(item, StreamData) and direction in self._begun:
                found += self._observe_data(direction, item.offset, item.data, item.segment)
                continue
            if not rows.item(direction, item) or observer is None:
                continue  # counted; no row will ever need this direction's packets
            if direction not in self._begun and not isinstance(item, StreamEnd):
                self._begun += (direction,)
                self._open_lane(item.sender, direction)
                midstream = self.conversation.halves[item.sender].syn_seq is None
                if midstream and _resynchronizes(observer):
                    # The capture began mid-stream: the first byte seen may sit inside a frame,
                    # so the Observer starts by hunting for a plausible frame start.
                    found.extend(self._observe_gap(observer, direction, 0))
            try:
                if isinstance(item, StreamData):
                    outputs = observer.observe(direction, item.data)
                elif isinstance(item, StreamGap):
                    outputs = observer.gap(direction, item.size)
                else:
                    outputs = observer.close(direction)
            except Exception as exc:  # an Observer must not raise; keep the capture going
                found.append(rows.crash(direction, exc))
                continue
            found.extend(rows.of(outputs))
        return found

    def _observe_gap(self, observer: Observer[Any], direction: Direction, size: int) -> list[Row]:
        """The rows of a gap fed to the Observer. One that raises abandons the direction
        without a row of its own: the data that follows is fed all the same (and says it)."""
        rows = self._rows
        assert rows is not None
        try:
            outputs = observer.gap(direction, size)
        except Exception:  # an Observer must not raise; keep the capture going
            rows.abandon(direction)
            return []
        return rows.of(outputs)
