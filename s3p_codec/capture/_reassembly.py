"""TCP reassembly: segments of one connection in, ordered byte streams per direction out.

Hand-written on purpose: dpkt parses headers but does not reassemble, and the libraries that do
(scapy's TCP stream tools, pynids) either buffer whole captures or need C extensions. What this
module handles, per direction:

- out-of-order segments (held until the hole before them is filled);
- retransmitted and overlapping segments (no byte is delivered twice; the first copy of a byte
  that the capture shows wins, whether it was delivered or still held behind a hole);
- SYN (the stream starts one past the SYN's sequence number), FIN (the stream ends at the FIN's
  sequence number, once every byte before it arrived), RST (both directions end now);
- a missing handshake (capture started mid-stream): the first segment seen fixes offset 0;
- segments the capture missed, reported as a ``StreamGap``: when the peer acknowledges bytes after
  a hole (it received them, so no retransmission will ever fill the hole), when what waits
  behind a hole costs more than ``max_pending`` bytes of memory (payload plus
  ``HELD_PIECE_COST`` per held piece), and at FIN, RST or end of capture;
- payloads cut by the capture's snap length (the missing tail is a gap);
- sequence number wrap-around (offsets are 64-bit and unwrapped near the next expected byte).

Offsets are positions in one direction's byte stream, gaps included: offset 0 is the first byte
after the SYN (or the first byte seen). Memory is bounded by ``max_pending`` per direction, and
holding N pieces costs O(N log N) time whatever order they arrive in.

Nearly every packet only continues its direction: no flag but ACK, nothing held on either side,
its payload whole and at the next offset. ``HalfStream.take_in_order`` is the one test of that
and the one step that takes such a packet (the next offset moves on, nothing is held or
allocated); ``Conversation.add`` tries it first, and so do the decoder (``FlowDecoder.add``) and
the lanes (``_lanes``), which call it with the packet's fields and no ``Segment``. Every other
packet takes ``HalfStream.segment``: held as pieces, delivered when the hole before it fills.

A self-connection (one address and port at both ends: a socket connected to itself) has a single
endpoint; its conversation holds one ``HalfStream`` and every byte travels in that direction.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
from sortedcontainers import SortedList  # type: ignore[import-untyped]

from s3p_codec.capture._packets import (
    TCP_ACK,
    TCP_FIN,
    TCP_RST,
    TCP_SYN,
    PacketRef,
    Segment,
    bare,
    segment_of,
)

__all__ = [
    "Conversation",
    "DEFAULT_MAX_PENDING",
    "Endpoint",
    "HELD_PIECE_COST",
    "FlowKey",
    "HalfStream",
    "StreamData",
    "StreamEnd",
    "StreamGap",
    "StreamItem",
    "flow_key",
]

#: An ``(address, port)`` pair.
Endpoint = tuple[str, int]
FlowKey = tuple[str, int, str, int]
"""Both endpoints of a connection, lower one first, so both directions share one key."""

_SEQ_MOD = 1 << 32
_SEQ_MASK = _SEQ_MOD - 1
_HALF = 1 << 31
DEFAULT_MAX_PENDING = 4 << 20
"""Bytes of memory one direction may hold behind a hole before the hole is declared lost."""
HELD_PIECE_COST = 600
"""Bytes of memory one held piece costs besides its payload (its key, tuple, bytes header and the
segment it came from, measured with tracemalloc at about 580): what ``max_pending`` counts per
piece, so a flood of one-byte segments is bounded as tightly as a few large ones."""


def flow_key(segment: Segment) -> FlowKey:
    """The direction-independent key of the connection a segment belongs to."""
    src, dst = segment.src, segment.dst
    if dst < src or (dst == src and segment.dport < segment.sport):
        return (dst, segment.dport, src, segment.sport)
    return (src, segment.sport, dst, segment.dport)


@attrs.frozen(slots=True)
class StreamData:
    """``data`` travelled from ``sender`` at ``offset``; ``segment`` carried (the end of) it."""

    sender: Endpoint
    offset: int
    data: bytes
    segment: Segment


@attrs.frozen(slots=True)
class StreamGap:
    """``size`` bytes from ``sender`` at ``offset`` were never captured.

    ``segment`` is the packet whose arrival proved the loss (or the last one of the flow).
    """

    sender: Endpoint
    offset: int
    size: int
    segment: Segment
    reason: str = ""  # "max_pending" when given up on because too much waited behind it


@attrs.frozen(slots=True)
class StreamEnd:
    """No more bytes come from ``sender``: it sent FIN, the connection was reset, or the capture
    ended (``reason`` ``"fin"``, ``"rst"`` or ``"eof"``)."""

    sender: Endpoint
    offset: int
    reason: Literal["fin", "rst", "eof"]
    segment: Segment | None


#: What a ``HalfStream`` hands on: in-order data, a gap, or the end of the direction.
StreamItem = StreamData | StreamGap | StreamEnd
_NOT_PLAIN = TCP_SYN | TCP_FIN | TCP_RST
_NOTHING_HELD: list[int] = []  # shared, never modified: ``_deliver`` deletes nothing from it


def _cost(start: int, end: int, data: bytes | None) -> int:
    """Memory one held piece costs: its payload (none for bytes the snap length cut) and its
    bookkeeping."""
    return HELD_PIECE_COST + (0 if data is None else end - start)


class HalfStream:
    """One direction of a connection: puts its segments back in order.

    Held bytes are kept as non-overlapping pieces: a segment that overlaps bytes already held (or
    delivered) only adds the bytes nobody sent before, so the first copy of every byte wins.
    """

    __slots__ = (
        "_held", "_last", "_pending_bytes", "_starts", "base", "closed", "fin_at", "max_pending",
        "next", "sender", "syn_seq",
    )  # fmt: skip

    def __init__(self, sender: Endpoint, max_pending: int = DEFAULT_MAX_PENDING) -> None:
        self.sender = sender
        self.max_pending = max_pending
        self.base: int | None = None  # sequence number of offset 0
        self.syn_seq: int | None = None
        self.next = 0  # offset of the next byte to deliver
        self.fin_at: int | None = None
        self.closed = False
        # The last segment this side sent (or the ``PacketRef`` that stands for it).
        self._last: Segment | PacketRef | None = None
        # Sorted starts of the held pieces: an empty list until something is held (most
        # directions never hold anything, and a SortedList costs a kilobyte).
        self._starts: Any = _NOTHING_HELD
        # start -> (end, bytes or None for bytes the capture cut off, segment that carried them)
        self._held: dict[int, tuple[int, bytes | None, Segment]] = {}
        self._pending_bytes = 0

    def __getstate__(self) -> dict[str, Any]:
        # A snapshot: segments stand for their packets only (file, number, time), so their
        # payloads are left out; held bytes are kept once, in ``_held``'s pieces.
        state = {name: getattr(self, name) for name in self.__slots__}
        last = self.last_segment
        state["_last"] = None if last is None else bare(last)
        state["_held"] = {s: (e, data, bare(seg)) for s, (e, data, seg) in self._held.items()}
        state["_starts"] = list(self._starts)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        starts = state["_starts"]
        self._starts = SortedList(starts) if starts else _NOTHING_HELD

    @property
    def last_segment(self) -> Segment | None:
        """The last segment this side sent (None before the first)."""
        last = self._last
        if last is None or isinstance(last, Segment):
            return last
        self._last = segment = segment_of(last)
        return segment

    @last_segment.setter
    def last_segment(self, segment: Segment | PacketRef | None) -> None:
        self._last = segment

    @property
    def started(self) -> bool:
        """True once offset 0 is fixed (by a SYN or the first segment seen)."""
        return self.base is not None

    def _offset(self, seq: int) -> int:
        """Unwrap a 32-bit sequence number to the stream offset nearest the next expected byte."""
        assert self.base is not None
        rel = (seq - self.base) % _SEQ_MOD
        return self.next + ((rel - self.next + _HALF) % _SEQ_MOD) - _HALF

    def segment(self, seg: Segment) -> list[StreamItem]:
        """Take one segment sent by this side; return what it completes, in stream order."""
        self._last = seg
        syn = bool(seg.flags & TCP_SYN)
        fin = bool(seg.flags & TCP_FIN)
        if self.base is None:
            if syn:
                self.base = (seg.seq + 1) % _SEQ_MOD
                self.syn_seq = seg.seq
            elif seg.length or fin:
                self.base = seg.seq  # mid-stream start: the first byte seen is offset 0
            else:
                return []
        if self.closed:
            return []
        data_seq = (seg.seq + 1) % _SEQ_MOD if syn else seg.seq
        offset = self._offset(data_seq)
        captured = len(seg.payload)
        if fin and self.fin_at is None:
            self.fin_at = offset + seg.length
        # Held, then delivered at once when it is the next: a segment comes here only when
        # ``take_in_order`` did not take it (a SYN or FIN with data, an overlap, the first
        # segment of a direction seen mid-stream, a hole on either side), so rarely in order.
        if captured:
            self._hold(offset, offset + captured, seg.payload, seg)
        if seg.length > captured:
            # The snap length cut this segment: its tail was never captured.
            self._hold(offset + captured, offset + seg.length, None, seg)
        out = self._deliver()
        if self._pending_bytes > self.max_pending and self._starts:
            # Too much waits behind a hole: give up on it so memory stays bounded.
            out += self._skip_to(self._starts[0], seg, "max_pending")
        return out

    def take_in_order(  # noqa: PLR0917 - the lanes call it per packet: no keyword arguments
        self,
        other: HalfStream,
        seq: int,
        flags: int,
        size: int,
        length: int,
        packet: Segment | PacketRef,
    ) -> int:
        """The in-order step: take a packet of this direction that only continues it, as nearly
        every packet does. That is a packet without SYN, FIN or RST; with nothing held on this
        side (nor on ``other``, the opposite direction, when it carries an ACK that could give
        up on a hole there); its whole payload captured (``size`` bytes of the ``length`` sent);
        and a payload, if any, starting exactly at the next offset (sequence number ``seq``) of
        a direction that is open and saw no FIN.

        Return the offset its payload starts at (the next offset, for a packet without
        payload), ``packet`` being remembered as this side's last: ``Conversation.add`` would
        have returned that payload as one ``StreamData`` at that offset, and nothing for a
        packet without payload. Otherwise -1, with nothing changed: ``Conversation.add`` takes
        it the general way. The lanes, ``FlowDecoder.add`` and ``Conversation.add`` all take
        packets through here first."""
        if flags & _NOT_PLAIN or self._starts or (flags & TCP_ACK and other._starts):
            return -1
        at = self.next
        if size:
            base = self.base
            if (
                size != length
                or base is None
                or self.closed
                or self.fin_at is not None
                or (seq - base - at) & _SEQ_MASK  # not at the next offset (mod 2**32)
            ):
                return -1
            self.next = at + size
        elif length:
            return -1  # a payload the snap length cut entirely: a gap
        self._last = packet
        return at

    def acknowledged(self, ack: int, seg: Segment) -> list[StreamItem]:
        """The peer acknowledged up to ``ack``: a hole it covers, with data behind, is lost."""
        if self.base is None or self.closed or not self._starts:
            return []
        acked = self._offset(ack)
        if self.fin_at is not None:
            acked = min(acked, self.fin_at)
        if acked <= self.next:
            return []
        return self._skip_to(min(acked, self._starts[0]), seg)

    def finish(self, reason: Literal["rst", "eof"], seg: Segment | None) -> list[StreamItem]:
        """No more segments will come: deliver what is held (holes become gaps) and end."""
        if self.closed or self.base is None:
            self.closed = True
            return []
        last = seg if seg is not None else self.last_segment
        assert last is not None  # a started stream has seen a segment
        out: list[StreamItem] = []
        while self._starts:
            out += self._skip_to(self._starts[0], last)
        if self.fin_at is not None and self.fin_at > self.next:
            out += self._skip_to(self.fin_at, last)
        if not self.closed:
            self.closed = True
            out.append(StreamEnd(self.sender, self.next, reason, seg))
        return out

    def _hold(self, start: int, end: int, data: bytes | None, seg: Segment) -> None:
        """Keep the bytes of [start, end) that are neither delivered nor held already."""
        if self._starts is _NOTHING_HELD:
            self._starts = SortedList()
        starts, held = self._starts, self._held
        pos = max(start, self.next)
        if not starts or pos > starts[-1]:
            # The usual case (in order behind a hole): nothing held at or after ``pos`` but
            # possibly the last piece overlapping it.
            if starts and held[starts[-1]][0] > pos:
                pos = held[starts[-1]][0]
            if pos < end:
                self._keep(pos, end, data, start, seg)
            return
        i = starts.bisect_right(pos) - 1
        if i >= 0 and held[starts[i]][0] > pos:
            pos = held[starts[i]][0]
        while pos < end:
            j = starts.bisect_left(pos)
            upcoming = starts[j] if j < len(starts) else end
            if upcoming > pos:
                piece_end = min(upcoming, end)
                self._keep(pos, piece_end, data, start, seg)
                pos = piece_end
            else:
                pos = held[upcoming][0]

    def _keep(self, pos: int, end: int, data: bytes | None, start: int, seg: Segment) -> None:
        piece = None if data is None else data[pos - start : end - start]
        self._starts.add(pos)
        self._held[pos] = (end, piece, seg)
        self._pending_bytes += _cost(pos, end, piece)

    def _skip_to(self, offset: int, seg: Segment, reason: str = "") -> list[StreamItem]:
        out: list[StreamItem] = []
        if offset > self.next:
            out.append(StreamGap(self.sender, self.next, offset - self.next, seg, reason))
            self.next = offset
        return out + self._deliver()

    def _deliver(self) -> list[StreamItem]:
        out: list[StreamItem] = []
        starts, held = self._starts, self._held
        taken = 0
        while taken < len(starts) and starts[taken] <= self.next:
            start = starts[taken]
            taken += 1
            end, data, seg = held.pop(start)
            self._pending_bytes -= _cost(start, end, data)
            if end <= self.next:
                continue
            if data is None:
                out.append(StreamGap(self.sender, self.next, end - self.next, seg))
            else:
                out.append(StreamData(self.sender, self.next, data[self.next - start :], seg))
            self.next = end
        if taken == len(starts):
            # Nothing held any more: back to the shared empty list, which ``take_in_order``
            # tests without the call a SortedList's ``len`` costs.
            self._starts = _NOTHING_HELD
        elif taken:
            del starts[:taken]  # SortedList: O(log n) per piece
        if self.fin_at is not None and self.next >= self.fin_at and not self.closed:
            self.closed = True
            out.append(StreamEnd(self.sender, self.next, "fin", self.last_segment))
        return out


class Conversation:
    """Both directions of one TCP connection (one SYN, or one mid-stream start).

    ``client`` is known from the handshake (the side that sent SYN without ACK); without one it
    stays None and the decoding layer decides by ports.
    """

    __slots__ = ("client", "closing", "first", "halves", "key", "reset")

    def __init__(self, key: FlowKey, first: Segment, max_pending: int = DEFAULT_MAX_PENDING):
        self.key = key
        self.first = first
        a: Endpoint = (key[0], key[1])
        b: Endpoint = (key[2], key[3])
        # One entry only for a self-connection (a == b).
        self.halves = {a: HalfStream(a, max_pending), b: HalfStream(b, max_pending)}
        self.client: Endpoint | None = None
        self.reset = False
        # A FIN or RST came, or ``finish``: until then no direction can have ended, so a caller
        # checking ``finished`` after every segment needs to ask only once this is True.
        self.closing = False

    def __getstate__(self) -> dict[str, Any]:
        state = {name: getattr(self, name) for name in self.__slots__}
        state["first"] = bare(self.first)  # it names the conversation; its bytes are in a half
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    @property
    def finished(self) -> bool:
        """True once both directions ended (FIN both ways, or a reset)."""
        return all(h.closed for h in self.halves.values())

    def is_new_connection(self, seg: Segment) -> bool:
        """A SYN that cannot belong to this connection (port reuse after it ended)."""
        if not (seg.flags & TCP_SYN) or seg.flags & TCP_ACK:
            return False
        half = self.halves[(seg.src, seg.sport)]
        if half.syn_seq is None:
            return half.started or self.finished
        return half.syn_seq != seg.seq

    def add(self, seg: Segment) -> list[StreamItem]:
        """Take one segment of this connection; return what it completes."""
        sender: Endpoint = (seg.src, seg.sport)
        receiver: Endpoint = (seg.dst, seg.dport)
        half = self.halves[sender]
        other = self.halves[receiver]
        payload = seg.payload
        at = half.take_in_order(other, seg.seq, seg.flags, len(payload), seg.length, seg)
        if at >= 0:
            return [StreamData(sender, at, payload, seg)] if payload else []
        if seg.flags & TCP_SYN and self.client is None:
            self.client = receiver if seg.flags & TCP_ACK else sender
        if seg.flags & (TCP_FIN | TCP_RST):
            self.closing = True
        if seg.flags & TCP_RST:
            self.reset = True
            out = half.finish("rst", seg)
            return out + other.finish("rst", seg)
        out = []
        if seg.flags & TCP_ACK:
            out += other.acknowledged(seg.ack, seg)
        return out + half.segment(seg)

    def finish(self) -> list[StreamItem]:
        """End of capture: flush both directions."""
        self.closing = True
        out: list[StreamItem] = []
        for half in self.halves.values():
            out += half.finish("eof", None)
        return out
