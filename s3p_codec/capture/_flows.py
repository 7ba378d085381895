"""Every open conversation of a capture: the flow table, and the bounds that keep it small.

The plan:

1. ``FlowTable.add`` finds a segment's conversation by ``flow_key`` (or opens one: a
   ``Conversation`` and its ``FlowDecoder``) and hands the segment on; rows come back.
2. Capture time, never the machine's clock, closes conversations: one silent for
   ``idle_timeout`` seconds (``advance_clock`` says when some are due; only ``add`` closes
   them), and the least recently active one when ``max_flows`` are open (the ``OrderedDict``
   keeps them in that order). A conversation both of whose sides ended is closed at once; its
   key is remembered a while (``CLOSED_LINGER``) to recognise its stray last segments.
3. Memory follows the connections open at a time, not the capture's size, and a ``snapshot``
   of the table (its open conversations, reassembly and Observers included) is restored
   exactly, in another process too.
4. ``decode_segments`` and ``decode_flow`` run a table over given segments: the pipeline's
   third step, one flow at a time on Spark.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs

from s3p_codec._core import Observer, checkpoint
from s3p_codec.capture._decoder import FlowDecoder, Lane, default_observer
from s3p_codec.capture._packets import TCP_ACK, TCP_SYN, Segment
from s3p_codec.capture._reassembly import DEFAULT_MAX_PENDING, Conversation, FlowKey, flow_key
from s3p_codec.capture._rows import Row

__all__ = [
    "CLOSED_LINGER",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_FLOWS",
    "FlowTable",
    "Limits",
    "decode_flow",
    "decode_segments",
]


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
    may hold behind a hole (see ``HELD_PIECE_COST``). Raises ValueError when negative.
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
            return ts
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
