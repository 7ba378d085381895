"""Rows: one decoded event (or error, or gap) of a capture, and the one place rows are made.

The plan:

1. ``COLUMNS`` is the one schema every output shares (pandas, JSON lines, Parquet, and the Spark
   data source): the same names, types and order. A ``Row`` also keeps the typed event itself
   (``Row.event``) so a notebook can look at it with its rich repr; that object is never written
   to files. An event row's ``detail`` text is made only when read (``LATER``).
2. ``ConversationRows`` makes every row of one conversation once its protocol is decided: from
   what the protocol's Observer reports (events, errors, gaps, each a span of byte offsets in
   one direction), from the bytes no row covered (``undecoded``), and when the conversation is
   closed early (``evicted``) or its Observer raises (a ``decoder_failure`` error).
3. Observers report byte offsets; rows name packets. ``PacketMap`` keeps, per direction, which
   packet carried which offsets, back to the last row reported only, so its size follows what
   is in flight. A reply's latency pairs it with its request's time through the Observer's
   ``pair_id`` (the last ``MAX_TIMED_REQUESTS`` requests).
4. ``capture_error_row`` and ``file_error_row`` are the rows of a capture file that cannot be
   read or breaks off.
"""

from __future__ import annotations

import enum
import html
import operator
from collections.abc import Sequence
from typing import Any

import attrs

from s3p_codec._core import Direction, Observed, ObservedError, ObservedGap
from s3p_codec.capture._describe import describe_event, plain, short_repr, shorten
from s3p_codec.capture._packets import PacketRef, Segment
from s3p_codec.capture._pcap import CaptureFileError
from s3p_codec.capture._reassembly import Conversation, Endpoint, StreamData, StreamGap, StreamItem

__all__ = [
    "COLUMNS",
    "COLUMN_NAMES",
    "ERROR_KINDS",
    "LATER",
    "MAX_TIMED_REQUESTS",
    "PACKET_ITEMS",
    "Column",
    "ConversationRows",
    "PacketMap",
    "Row",
    "RowErrorCode",
    "RowPacket",
    "capture_error_row",
    "file_error_row",
    "is_error",
    "row_packet",
]


@attrs.frozen(slots=True)
class Column:
    """One output column: ``kind`` is ``str``, ``int``, ``float`` or ``bool``."""

    name: str
    kind: str
    nullable: bool
    doc: str


class RowErrorCode(enum.StrEnum):
    """The ``error_code`` of rows the capture layer writes itself; every other error row
    carries its protocol's ``ErrorCode`` value."""

    DECODER_FAILURE = "decoder_failure"
    """A protocol Observer raised instead of reporting: the direction is abandoned."""
    CAPTURE_FILE = "capture_file"
    """The capture file is unreadable or cut short (a ``capture_error`` row)."""


#: Every column of a decoded-event row, in order, with its type, nullability and meaning.
COLUMNS: tuple[Column, ...] = (
    Column("file", "str", False, "capture file of the event's first packet"),
    Column("first_packet", "int", False, "packet number (1-based, per file) of the first byte"),
    Column("last_packet", "int", False, "packet number of the last byte (may be in a later file)"),
    Column("ts", "float", False, "capture time of the first packet, seconds since the epoch"),
    Column("conversation", "str", False, "id of the TCP connection: file#packet of its start"),
    Column("client", "str", False, "client address:port"),
    Column("server", "str", False, "server address:port"),
    Column("direction", "str", False, "client_to_server or server_to_client"),
    Column("protocol", "str", False, "s3p, rustlog, s2s, pravega, durable or unknown"),
    Column("kind", "str", False, "event, error, gap, undecoded, evicted or capture_error"),
    Column("event_type", "str", False, "event class name (Append, ReadReply, ...)"),
    Column("pair_id", "int", True, "links replies to the request they answer"),
    Column("latency_ms", "float", True, "reply's first packet minus request's last packet"),
    Column("stream", "str", True, "stream, topic or segment name"),
    Column("offset", "str", True, "offset, timestamp or sequence number the event names"),
    Column("count", "int", True, "records (or events) carried, or the count asked for"),
    Column("payload_bytes", "int", True, "bytes of record payloads carried"),
    Column("wire_bytes", "int", False, "bytes of the event on the wire"),
    Column("error_code", "str", True, "the protocol's error code, or the capture's (RowErrorCode)"),
    Column("detail", "str", False, "short human-readable description"),
)
COLUMN_NAMES = tuple(c.name for c in COLUMNS)
_COLUMN_VALUES = operator.attrgetter(*COLUMN_NAMES)
"""A row's written columns as one tuple: one C call, not twenty attribute reads in Python."""


@attrs.frozen(slots=True)
class Row:
    """One line of the decoded table; ``event`` (not written out) is the typed event or error."""

    file: str
    first_packet: int
    last_packet: int
    ts: float
    conversation: str
    client: str
    server: str
    direction: str
    protocol: str
    kind: str
    event_type: str
    pair_id: int | None
    latency_ms: float | None
    stream: str | None
    offset: str | None
    count: int | None
    payload_bytes: int | None
    wire_bytes: int
    error_code: str | None
    detail: str
    event: object = attrs.field(default=None, eq=False, repr=False)

    @property
    def is_error(self) -> bool:
        """The one definition of an error row that ``stats``, the table, the ``error`` filter
        word and the notebook share: see ``is_error``."""
        return is_error(self.kind, self.error_code)

    def as_dict(self) -> dict[str, Any]:
        """The written columns, in ``COLUMNS`` order."""
        return dict(zip(COLUMN_NAMES, _COLUMN_VALUES(self), strict=True))

    def as_tuple(self) -> tuple[Any, ...]:
        """The written columns as a tuple (Spark rows)."""
        values: tuple[Any, ...] = _COLUMN_VALUES(self)
        return values

    def _repr_html_(self) -> str:
        cells = "".join(
            f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
            for k, v in self.as_dict().items()
        )
        event = html.escape(repr(self.event))
        return f"<table>{cells}<tr><th>event</th><td><code>{event}</code></td></tr></table>"


ERROR_KINDS = ("error", "capture_error")
"""Row kinds that are errors whatever their ``error_code``: a broken stream, an unreadable file."""


def is_error(kind: str, error_code: str | None) -> bool:
    """True for an error row: a decoding error, an unreadable capture, or an event carrying an
    error code (the protocol's own error replies, such as S3P's ``-ERR_UNKNOWN_STREAM``).

    Taking the two columns, not a ``Row``, lets a DataFrame or a Spark row use the same rule:
    ``kind==error`` alone misses the error replies, which are well-formed events.
    """
    return kind in ERROR_KINDS or error_code is not None


class _Later(str):
    """The type of ``LATER``."""

    __slots__ = ()


LATER = _Later("")
"""What an event row is given as its ``detail`` when it is built: the text (``short_repr`` of
the event) is made the first time ``row.detail`` is read, and kept. Most readers never ask
(counting, ``stats``, the table, which shows the detail of other rows only)."""


class _Detail:
    """``Row.detail``: the slot attrs made for it, read through here so that ``LATER`` becomes
    the text of ``row.event``. Every reader (``==``, ``hash``, ``repr``, pickling,
    ``as_tuple``) goes through here, so a row's values are the same as when the text was made
    up front."""

    def __init__(self, slot: Any) -> None:
        self._slot = slot

    def __get__(self, row: Row | None, owner: type | None = None) -> Any:
        if row is None:
            return self._slot
        value = self._slot.__get__(row, owner)
        if type(value) is _Later:
            value = short_repr(row.event)
            self._slot.__set__(row, value)
        return value

    def __set__(self, row: Row, value: str) -> None:
        self._slot.__set__(row, value)


setattr(Row, "detail", _Detail(Row.__dict__["detail"]))  # noqa: B010 - replaces attrs' slot


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


def file_error_row(file: str, exc: Exception) -> Row:
    """The ``capture_error`` row of a file whose reading raised ``exc``: the capture layer's
    words, or the OS's own ("[Errno 2] No such file or directory: 'x'"), as the Spark reader
    words the same row (the command line says it shorter on stderr)."""
    message = exc.message if isinstance(exc, CaptureFileError) else str(exc)
    return capture_error_row(file, type(exc).__name__, message, exc)


_DIRECTION_TEXT = {d: d.value for d in Direction}  # ``Enum.value`` is a property: a call each
MAX_TIMED_REQUESTS = 256
"""Requests per conversation whose capture time is kept to give their replies a latency: the
most recent ones (pipelined requests that far behind are past measuring)."""

RowPacket = Sequence[Any]
"""What a row needs of a packet: (end offset of its payload, file, number, ts), the first four
items of a ``PacketRef``."""
PACKET_ITEMS = 4
"""Items a ``RowPacket`` takes where packets lie flat in one list (``PacketMap``, a run)."""


def row_packet(end: int, segment: Segment | PacketRef) -> RowPacket:
    """What a row needs of the packet ``segment`` whose payload ends at offset ``end`` (a
    ``PacketRef`` says its own end)."""
    if isinstance(segment, tuple):
        return segment[:PACKET_ITEMS]
    return (end, segment.file, segment.number, segment.ts)


def _endpoint_text(endpoint: Endpoint) -> str:
    host, port = endpoint
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class PacketMap:
    """Which packet carried which offsets of one direction, from the last event reported on.

    The packets lie flat in one list, four items each (``RowPacket``): a tuple per packet would
    be an object for the garbage collector to count and look at, one per packet of the
    capture."""

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
        # ``row_packet``'s items, written out: this runs for every data segment fed.
        self._entries += (end, segment.file, segment.number, segment.ts)

    def extend(self, packets: list[Any]) -> None:
        """Remember ``packets``, flat as kept here: four items each (``RowPacket``), in order."""
        self._entries += packets

    def _find(self, offset: int, start: int) -> int:
        entries = self._entries
        last = len(entries) - PACKET_ITEMS
        i = start
        while i < last and entries[i] <= offset:
            i += PACKET_ITEMS
        return i

    def span(self, start: int, end: int) -> tuple[RowPacket, RowPacket] | None:
        """First and last packet of the bytes [start, end); forget packets before ``start``."""
        entries = self._entries
        if not entries:
            return None
        head = self._find(start, self._head)
        tail = self._find(max(start, end - 1), head)
        first, last = entries[head : head + PACKET_ITEMS], entries[tail : tail + PACKET_ITEMS]
        self._head = head
        if head > 4096 * PACKET_ITEMS and head * 2 > len(entries):
            del entries[:head]
            self._head = 0
        return first, last


class ConversationRows:
    """The rows of one conversation whose protocol is decided (``protocol`` None: not one we
    decode; ``client`` the side that sent the requests).

    Its decoder tells it of every byte it feeds (``carried``, ``run``, ``item``: each says
    whether the Observer takes those bytes) and hands it what the Observer reports (``of``);
    so it keeps, per direction, the packets of the bytes not reported yet, how many bytes went
    by without a row (for the ``undecoded`` rows), and which directions were abandoned (an
    Observer that gave up on one, or raised: nothing more is fed or kept for it).
    """

    def __init__(
        self, conversation: Conversation, protocol: str | None, client: Endpoint | None
    ) -> None:
        self.conversation = conversation
        self.protocol = protocol
        self.client = client
        self.abandoned: tuple[Direction, ...] = ()  # a tuple: at most two, and a set is larger
        self._maps: dict[Direction, PacketMap] = {}
        self._requests: dict[int, float] = {}
        self._reported: tuple[Direction, ...] = ()
        # Per direction without a row so far: [first packet, last packet, bytes].
        self._undecoded: dict[Direction, list[Any]] = {}
        self._gap_reasons: dict[tuple[Direction, int], str] = {}  # a few at most, popped
        self._texts: tuple[str, str, str] | None = None  # see _endpoint_texts

    # -- the bytes fed -----------------------------------------------------------------------

    def feeds(self, direction: Direction) -> bool:
        """Whether the Observer takes bytes of ``direction``: there is one, and it did not give
        up on that direction."""
        return self.protocol is not None and direction not in self.abandoned

    def carried(self, direction: Direction, end: int, size: int, segment: Segment) -> bool:
        """``segment`` carried ``size`` bytes of ``direction``, up to offset ``end``: counted,
        and kept for the rows when the Observer takes them (the answer)."""
        if direction not in self._reported:  # only silent directions get an undecoded row
            packet = row_packet(end, segment)
            self._count(direction, packet, packet, size)
        # ``feeds``, written out: this runs for every data segment fed.
        if self.protocol is None or direction in self.abandoned:
            return False
        (self._maps.get(direction) or self._map(direction)).add(end, segment)
        return True

    def run(self, direction: Direction, packets: list[Any], size: int) -> bool:
        """``carried`` of in-order packets of one direction at once: ``packets`` flat, four
        items each (``RowPacket``), ``size`` bytes in all."""
        # ``_count`` and ``feeds``, written out: this runs for every run of the lanes.
        if direction not in self._reported:
            entry = self._undecoded.get(direction)
            if entry is None:
                first, last = packets[:PACKET_ITEMS], packets[-PACKET_ITEMS:]
                self._undecoded[direction] = [first, last, size]
            else:
                entry[1] = packets[-PACKET_ITEMS:]
                entry[2] += size
        if self.protocol is None or direction in self.abandoned:
            return False
        (self._maps.get(direction) or self._map(direction)).extend(packets)
        return True

    def item(self, direction: Direction, item: StreamItem) -> bool:
        """``carried`` of what reassembly handed on (data, a gap, the end): whether the
        Observer takes it."""
        if not isinstance(item, StreamData | StreamGap):
            return self.feeds(direction)
        size = len(item.data) if isinstance(item, StreamData) else item.size
        end = item.offset + size
        packet = row_packet(end, item.segment)
        self._count(direction, packet, packet, size)
        if not self.feeds(direction):
            return False
        self._map(direction).add(end, item.segment)
        if isinstance(item, StreamGap) and item.reason:
            self._gap_reasons[(direction, item.offset)] = item.reason
        return True

    def _count(self, direction: Direction, first: RowPacket, last: RowPacket, size: int) -> None:
        """Count ``size`` bytes of ``direction`` from packet ``first`` to ``last`` for its
        ``undecoded`` row (if it never gets another)."""
        entry = self._undecoded.get(direction)
        if entry is None:
            self._undecoded[direction] = [first, last, size]
        else:
            entry[1] = last
            entry[2] += size

    def _map(self, direction: Direction) -> PacketMap:
        packets = self._maps.get(direction)
        if packets is None:
            packets = self._maps[direction] = PacketMap()
        return packets

    def abandon(self, direction: Direction) -> None:
        """Feed this direction no more, and forget which packets carried it."""
        self.abandoned += (direction,)
        self._maps.pop(direction, None)

    # -- the rows ----------------------------------------------------------------------------

    def of(self, outputs: Sequence[object]) -> list[Row]:
        """The rows of what the Observer reported; a direction it gave up on is abandoned."""
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
                    self.abandon(out.direction)
                rows.append(
                    self._row(
                        out.direction,
                        span,
                        "error",
                        type(out.error).__name__,
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
                    halves = self.conversation.halves
                    limit = halves[next(iter(halves))].max_pending
                    what += (
                        f"; not waited for: more than max_pending={limit} bytes were held behind it"
                    )
                rows.append(
                    self._row(
                        out.direction,
                        span,
                        "gap",
                        "Gap",
                        event=out,
                        wire_bytes=out.size,
                        detail=f"{out.size} bytes missing ({what})",
                    )
                )
        return rows

    def crash(self, direction: Direction, exc: Exception) -> Row:
        """The row of an Observer that raised instead of reporting: the direction is
        abandoned, the capture goes on."""
        self.abandon(direction)
        first = row_packet(0, self.conversation.first)
        return self._row(
            direction,
            (first, first),
            "error",
            type(exc).__name__,
            event=exc,
            error_code=RowErrorCode.DECODER_FAILURE.value,
            wire_bytes=0,
            detail=shorten(f"decoder failed, direction abandoned: {exc!r}"),
        )

    def undecoded(self) -> list[Row]:
        """A row per direction whose bytes gave no row at all: an unrecognised protocol, or
        traffic the protocol's Observer passed over in silence (say, a REST call beside S2S
        appends and reads), so that no byte of a capture goes unaccounted for."""
        rows = []
        for direction, (first, last, size) in self._undecoded.items():
            if direction in self._reported or not size:
                continue
            if self.protocol is None:
                detail = f"{size} bytes of an unrecognised protocol"
            else:
                detail = f"{size} bytes the {self.protocol} decoder reported nothing for"
            rows.append(
                self._row(
                    direction,
                    (first, last),
                    "undecoded",
                    "Undecoded",
                    event=None,
                    wire_bytes=size,
                    detail=detail,
                )
            )
        self._undecoded = {}
        return rows

    def evicted(
        self, last: Segment | PacketRef, event_type: str, detail: str, error_code: str | None
    ) -> Row:
        """The ``evicted`` row of a conversation closed early, at its ``last`` packet."""
        packet = row_packet(0, last)
        return self._row(
            Direction.CLIENT_TO_SERVER,
            (packet, packet),
            "evicted",
            event_type,
            event=None,
            wire_bytes=0,
            detail=detail,
            error_code=error_code,
        )

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
        texts = self._texts or self._endpoint_texts()
        return Row(
            first[1], first[2], last[2], first[3], texts[0], texts[1], texts[2],
            _DIRECTION_TEXT[direction], self.protocol or "unknown", "event", type(event).__name__,
            pair_id, latency, get("stream"), get("offset"), get("count"), get("payload_bytes"),
            out.end - out.start, get("error_code"), LATER, event,
        )  # fmt: skip

    def _endpoint_texts(self) -> tuple[str, str, str]:
        """The conversation id, client and server text of the rows (made once)."""
        conv = self.conversation
        client = self.client or (conv.key[0], conv.key[1])
        server = next((e for e in conv.halves if e != client), client)
        conversation = f"{conv.first.file}#{conv.first.number}"
        self._texts = (conversation, _endpoint_text(client), _endpoint_text(server))
        return self._texts

    def _row(
        self,
        direction: Direction,
        span: tuple[RowPacket, RowPacket],
        kind: str,
        event_type: str,
        *,
        event: object,
        wire_bytes: int,
        detail: str,
        error_code: str | None = None,
    ) -> Row:
        first, last = span
        texts = self._texts or self._endpoint_texts()
        return Row(
            file=first[1],
            first_packet=first[2],
            last_packet=last[2],
            ts=first[3],
            conversation=texts[0],
            client=texts[1],
            server=texts[2],
            direction=_DIRECTION_TEXT[direction],
            protocol=self.protocol or "unknown",
            kind=kind,
            event_type=event_type,
            pair_id=None,
            latency_ms=None,
            stream=None,
            offset=None,
            count=None,
            payload_bytes=None,
            wire_bytes=wire_bytes,
            error_code=error_code,
            detail=detail,
            event=event,
        )
