"""A Durable Streams server on the asyncio adapter, with an in-memory store.

    python -m examples.durable_server                 # http://127.0.0.1:4437
    python -m examples.durable_server --port 0        # an OS-chosen port, printed on stdout

It implements the whole protocol: create (TTL, Expires-At, closed, initial body), append
(Stream-Seq, idempotent producers, close), catch-up, long-poll and SSE reads (JSON mode,
base64 for binary streams), HEAD, DELETE, ETag/304, cursors, TTL and expiry, forks (with
sub-offsets) and soft delete. The codec types and validates every request and builds every
response; this file holds only the store and the protocol's decisions.

Decisions the spec leaves to servers:
- ``Stream-Seq`` is scoped per stream (not per writer identity).
- Offsets are ``%016d_%016d``: a fixed read sequence 0 and the stream's byte position; reads
  accept ``-1``, ``now`` and offsets of that shape (anything else is 400).
- A JSON-mode POST is one entry (one offset) holding its flattened messages; a fork
  sub-offset counts messages (JSON) or bytes (other types) inside the entry after the anchor.
- Catch-up responses are at most ``max_chunk`` bytes (1 MiB), and SSE connections are closed
  after ``sse_max_seconds`` (60 s) so that CDNs can collapse readers.
- "Servers MUST serialize validation + append operations per (stream, producerId)": every
  append is validated and applied in one synchronous step of the event loop (no ``await``
  in between), so appends are serialized per stream.
- Subscriptions (the reserved ``__ds`` APIs, sections 6-7) live in
  ``examples/_durable_subscriptions.py``: control requests are routed before any stream
  operation, and ``Settings.subscription_limits`` bounds them.

Connections follow the example servers' policy (``examples/_policy.py``): ``--idle-timeout``
(300 s), ``--request-timeout`` (30 s for a whole request, body included), ``--max-connections``
(1024, shedding the idlest) and ``--max-connections-per-address`` (off). A long poll or an SSE
response in progress is the server's turn, never idleness.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import bisect
import contextlib
import random
import re
import sys
import time
from collections.abc import Callable, Iterator

import attrs

from examples import _cli, _policy
from examples._durable_subscriptions import SubscriptionLimits, Subscriptions
from s3p_codec import RemoteProtocolError, Role, durable
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.asyncio import AsyncioConnection

jsonmode, offsets, producers = durable.jsonmode, durable.offsets, durable.producer
DEFAULT_PORT = 4437
ZERO = offsets.format_offset(0, 0)
_MEDIA_TYPE = re.compile(r"[\w.+-]+/[\w.+-]+")

Conn = AsyncioConnection[durable.Response | durable.SSEEvent, durable.Request]


@attrs.define
class Entry:
    """One append: its end offset and its bytes (binary) or flattened messages (JSON)."""

    offset: str
    data: bytes = b""
    items: tuple[bytes, ...] = ()
    end: int = 0
    """The byte position ``offset`` names (reads bisect on it)."""


@attrs.define(eq=False)
class Stream:
    path: str
    content_type: str
    json: bool
    tail: str
    entries: list[Entry] = attrs.Factory(list)
    ttl: int | None = None
    expires_at: str | None = None
    expires_at_ts: float | None = None
    last_access: float = 0.0
    closed: bool = False
    closed_by: tuple[str, int, int] | None = None
    producers: dict[str, producers.ProducerState] = attrs.Factory(dict)
    last_seq: bytes | None = None
    forked_from: str | None = None
    fork_offset: str | None = None
    fork_sub_offset: int = 0
    refs: int = 0
    soft_deleted: bool = False
    waiters: list[asyncio.Future[None]] = attrs.Factory(list)
    history: tuple[tuple[Stream, int], ...] = ()
    """A fork's inherited entries, resolved once when it is made: the first ``n`` own entries
    of each ancestor, oldest first (offsets into the parents, never a walk per read)."""
    depth: int = 0
    """Forks between this stream and its root (bounded by ``Settings.max_fork_depth``)."""
    base: int = 0
    """The position its own first entry begins at (a fork's offset into its source)."""

    def notify(self) -> None:
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)
        self.waiters.clear()


def _key(offset: str) -> tuple[int, int]:
    parsed = offsets.parse_offset(offset)
    assert parsed is not None
    return parsed


def _position(offset: str) -> int:
    return _key(offset)[1]


def _end(entry: Entry) -> int:
    return entry.end


def _weight(entry: Entry) -> int:
    """The bytes an entry adds to a response (JSON: each message and its separator)."""
    return len(entry.data) + sum(len(item) + 1 for item in entry.items)


class Store:
    """Streams by path, with lazy TTL/expiry and fork reference counts."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.streams: dict[str, Stream] = {}
        self.clock = clock

    def expired(self, stream: Stream) -> bool:
        now = self.clock()
        if stream.expires_at_ts is not None and now >= stream.expires_at_ts:
            return True
        return stream.ttl is not None and now >= stream.last_access + stream.ttl

    def get(self, path: str) -> Stream | None:
        """The stream at ``path`` (soft-deleted ones included), expiring it if due."""
        stream = self.streams.get(path)
        if stream is None:
            return None
        if not stream.soft_deleted and self.expired(stream):
            if stream.refs > 0:
                stream.soft_deleted = True
            else:
                self.remove(stream)
                return None
        return stream

    def touch(self, stream: Stream) -> None:
        """Reads and writes reset a sliding TTL ("HEAD requests do not reset the countdown")."""
        stream.last_access = self.clock()

    def remove(self, stream: Stream) -> None:
        """Delete now, cascading to soft-deleted sources whose last fork this was."""
        self.streams.pop(stream.path, None)
        stream.notify()
        if stream.forked_from is not None:
            parent = self.streams.get(stream.forked_from)
            if parent is not None:
                parent.refs = max(0, parent.refs - 1)
                if parent.refs == 0 and parent.soft_deleted:
                    self.remove(parent)

    @staticmethod
    def inherit(source: Stream, cap: int) -> tuple[tuple[Stream, int], ...]:
        """What a fork of ``source`` at position ``cap`` inherits: ``source``'s history and its
        own entries, cut after the last entry ending at or before ``cap`` (a bisection per
        ancestor, so it costs the fork depth, not the entries)."""
        kept: list[tuple[Stream, int]] = []
        for ancestor, count in (*source.history, (source, len(source.entries))):
            cut = bisect.bisect_right(ancestor.entries, cap, 0, count, key=_end)
            if cut:
                kept.append((ancestor, cut))
            if cut < count:
                break
        return tuple(kept)

    @staticmethod
    def entries_after(stream: Stream, start: str) -> Iterator[tuple[int, Entry]]:
        """The entries a reader of ``stream`` sees that end after ``start`` (with the position
        each begins at), inherited ones first: found by bisection in each piece of the
        history, then read in order."""
        if start == offsets.BEGINNING:
            after = -1
        else:
            seq, after = _key(start)
            if seq > 0:
                return  # every entry is in read sequence 0
        for owner, count in (*stream.history, (stream, len(stream.entries))):
            entries = owner.entries
            for index in range(bisect.bisect_right(entries, after, 0, count, key=_end), count):
                yield (entries[index - 1].end if index else owner.base), entries[index]

    def append_entry(self, stream: Stream, data: bytes, items: tuple[bytes, ...]) -> Entry:
        size = sum(len(i) + 1 for i in items) if stream.json else len(data)
        end = _position(stream.tail) + size
        entry = Entry(offsets.format_offset(0, end), data, items, end)
        stream.entries.append(entry)
        stream.tail = entry.offset
        return entry


@attrs.frozen
class Settings:
    base_url: str = f"http://127.0.0.1:{DEFAULT_PORT}"
    long_poll_timeout: float = 20.0
    sse_max_seconds: float = 60.0
    max_chunk: int = 1 << 20
    stream_root: str = "/v1/stream/"
    max_fork_depth: int = 100
    """Forks of forks a stream may sit under; a PUT forking deeper is answered 400 (the
    spec's answer to parameters a server refuses: the reference server sets no bound)."""
    subscription_limits: SubscriptionLimits = attrs.Factory(SubscriptionLimits)


class App:
    """The protocol's decisions on top of a ``Store``."""

    def __init__(self, settings: Settings, store: Store | None = None) -> None:
        self.settings = settings
        self.store = store or Store()
        self.clock = self.store.clock
        self.randint: Callable[[int, int], int] = random.randint
        self.gatekeeper: _policy.Gatekeeper | None = None
        self.subscriptions = Subscriptions(
            self, settings.subscription_limits, root=settings.stream_root
        )
        """The connection policy of the server ``start`` made (None when driven directly)."""

    def cursor(self, client_cursor: str | None) -> str:
        return durable.cursor.response_cursor(client_cursor, self.clock(), self.randint)

    async def handle(self, conn: Conn) -> None:
        """Serve one connection: requests in order, one response each."""
        while True:
            try:
                request = await conn.next_event()
            except ConnectionClosed:
                return
            except RemoteProtocolError as exc:  # the adapter already sent exc.reply
                if exc.fatal or conn.closed:
                    return
                continue
            if isinstance(request, durable.Read) and request.live is durable.LiveMode.SSE:
                if not await self.sse(conn, request):
                    return
                continue
            try:
                if isinstance(request, durable.Read):
                    response = await self.read(request)
                else:
                    response = self.respond(request)
                    self.subscriptions.after(request, response)
            except RemoteProtocolError as exc:  # JSON-mode validation: 400 with its reply
                if not isinstance(exc.reply, durable.ErrorResponse):
                    raise
                response = exc.reply
            await conn.send(response)
            if conn.closed:
                return

    # -- dispatch ---------------------------------------------------------------------------

    def respond(self, request: durable.Request) -> durable.Response:
        if isinstance(request, (durable.SubscriptionRequest, durable.WebhookDelivery)):
            return self.subscriptions.respond(request)
        if isinstance(request, durable.Create):
            return self.create(request)
        if isinstance(request, durable.Append):
            return self.append(request)
        if isinstance(request, durable.Head):
            return self.head(request)
        if isinstance(request, durable.Delete):
            return self.delete(request)
        return durable.OptionsOk()

    def _existing(self, path: str) -> Stream | durable.ErrorResponse:
        stream = self.store.get(path)
        if stream is None:
            return durable.ErrorResponse(durable.ErrorCode.NOT_FOUND, "stream not found")
        if stream.soft_deleted:
            # "A soft-deleted stream returns 410 Gone for all client-facing operations"
            return durable.ErrorResponse(durable.ErrorCode.GONE, "stream is gone")
        return stream

    # -- PUT --------------------------------------------------------------------------------

    def create(self, request: durable.Create) -> durable.Response:
        conflict = durable.ErrorCode.CONFLICT
        content_type = request.content_type
        if content_type is not None and not _MEDIA_TYPE.match(content_type):
            content_type = None
        existing = self.store.get(request.path)
        if existing is not None:
            if existing.soft_deleted:
                return durable.ErrorResponse(conflict, "path held by a deleted stream with forks")
            return self._recreate(existing, request, content_type)
        if request.fork_offset is not None and offsets.parse_offset(request.fork_offset) is None:
            return durable.ErrorResponse(durable.ErrorCode.BAD_REQUEST, "invalid fork offset")
        source = None
        prefix: Entry | None = None
        tail = ZERO
        ttl, expires_at = request.ttl_seconds, request.expires_at
        if request.forked_from is not None:
            source = self.store.get(request.forked_from)
            if source is None:
                return durable.ErrorResponse(durable.ErrorCode.NOT_FOUND, "source not found")
            if source.soft_deleted:
                return durable.ErrorResponse(conflict, "source stream was deleted")
            if source.depth >= self.settings.max_fork_depth:
                return durable.ErrorResponse(
                    durable.ErrorCode.BAD_REQUEST,
                    f"fork chain too deep (at most {self.settings.max_fork_depth} forks)",
                )
            if content_type is not None and jsonmode.media_type(
                content_type
            ) != jsonmode.media_type(source.content_type):
                return durable.ErrorResponse(conflict, "content type differs from the source")
            content_type = source.content_type
            tail = request.fork_offset or source.tail
            if _key(tail) > _key(source.tail):
                return durable.ErrorResponse(
                    durable.ErrorCode.BAD_REQUEST, "fork offset beyond the source tail"
                )
            if request.fork_sub_offset:
                prefix = self._sub_offset_prefix(source, tail, request.fork_sub_offset)
                if prefix is None:
                    return durable.ErrorResponse(
                        durable.ErrorCode.BAD_REQUEST, "fork sub-offset past the next boundary"
                    )
            if ttl is None and expires_at is None:
                ttl, expires_at = source.ttl, source.expires_at
        content_type = content_type or "application/octet-stream"
        is_json = jsonmode.is_json(content_type)
        items: tuple[bytes, ...] = ()
        if is_json and request.body:
            items = jsonmode.flatten(request.body, initial=True)  # 400 raised as an error
        stream = Stream(
            path=request.path,
            content_type=content_type,
            json=is_json,
            tail=tail,
            base=_position(tail),
            ttl=ttl,
            expires_at=expires_at,
            last_access=self.clock(),
            closed=request.closed,
            forked_from=request.forked_from,
            fork_offset=tail if source is not None else None,
            fork_sub_offset=request.fork_sub_offset or 0,
        )
        if source is not None:
            stream.history = self.store.inherit(source, _position(tail))
            stream.depth = source.depth + 1
        if expires_at is not None:
            instant = durable.parse_rfc3339(expires_at)
            stream.expires_at_ts = instant.timestamp() if instant is not None else None
        if prefix is not None:
            self.store.append_entry(stream, prefix.data, prefix.items)
        if is_json and items:
            self.store.append_entry(stream, b"", items)
        elif not is_json and request.body:
            self.store.append_entry(stream, request.body, ())
        if source is not None:
            source.refs += 1
        self.store.streams[request.path] = stream
        return durable.Created(
            next_offset=stream.tail,
            content_type=stream.content_type,
            location=self.settings.base_url + request.path,
            closed=stream.closed,
        )

    def _recreate(
        self, stream: Stream, request: durable.Create, content_type: str | None
    ) -> durable.Response:
        # "return 200 OK if the existing stream's configuration (content type, TTL/expiry, and
        # closure status) matches the request, or 409 Conflict if it does not."
        wanted = jsonmode.media_type(content_type) or (
            None if request.forked_from else "application/octet-stream"
        )
        same = (
            (wanted is None or wanted == jsonmode.media_type(stream.content_type))
            and request.closed == stream.closed
            and request.forked_from == stream.forked_from
            and (request.fork_offset is None or request.fork_offset == stream.fork_offset)
            and (request.fork_sub_offset or 0) == stream.fork_sub_offset
        )
        if stream.forked_from is None or request.ttl_seconds or request.expires_at:
            same = same and request.ttl_seconds == stream.ttl
            same = same and request.expires_at == stream.expires_at
        if not same:
            return durable.ErrorResponse(
                durable.ErrorCode.CONFLICT, "stream exists with another configuration"
            )
        return durable.Created(
            next_offset=stream.tail,
            content_type=stream.content_type,
            closed=stream.closed,
            existed=True,
        )

    def _sub_offset_prefix(self, source: Stream, anchor: str, sub: int) -> Entry | None:
        found = next(self.store.entries_after(source, anchor), None)
        if found is None:
            return None
        first = found[1]
        if source.json:
            if sub > len(first.items):
                return None
            return Entry("", b"", first.items[:sub])
        if sub > len(first.data):
            return None
        return Entry("", first.data[:sub], ())

    # -- POST -------------------------------------------------------------------------------

    def append(self, request: durable.Append) -> durable.Response:
        found = self._existing(request.path)
        if isinstance(found, durable.ErrorResponse):
            return found
        stream = found
        self.store.touch(stream)
        producer = request.producer
        tuple_ = (producer.id, producer.epoch, producer.seq) if producer else None
        if stream.closed:
            # 1. "Stream closed -> 409 Conflict with Stream-Closed: true" (first in precedence),
            # unless this is the very (producer, epoch, seq) that closed it: a duplicate.
            if tuple_ is not None and tuple_ == stream.closed_by:
                assert producer is not None
                return durable.Appended(
                    stream.tail, closed=True, producer_epoch=producer.epoch,
                    producer_seq=producer.seq, duplicate=True,
                )  # fmt: skip
            if not request.body and producer is None:
                return durable.Appended(stream.tail, closed=True)  # idempotent close
            return durable.ErrorResponse(
                durable.ErrorCode.CONFLICT, "stream is closed", closed=True, next_offset=stream.tail
            )
        items: tuple[bytes, ...] = ()
        if request.body:
            # 2. "Content type mismatch -> 409 Conflict"
            if jsonmode.media_type(request.content_type) != jsonmode.media_type(
                stream.content_type
            ):
                return durable.ErrorResponse(durable.ErrorCode.CONFLICT, "content type mismatch")
            if stream.json:
                items = jsonmode.flatten(request.body)
        decision = None
        if producer is not None:
            decision = producers.check(
                stream.producers.get(producer.id), producer.epoch, producer.seq
            )
            outcome = decision.outcome
            if outcome is producers.ProducerOutcome.STALE_EPOCH:
                return durable.ErrorResponse(
                    durable.ErrorCode.FORBIDDEN, "stale producer epoch",
                    producer_epoch=decision.current_epoch,
                )  # fmt: skip
            if outcome is producers.ProducerOutcome.INVALID_EPOCH_SEQ:
                return durable.ErrorResponse(
                    durable.ErrorCode.BAD_REQUEST, "a new epoch must start at Producer-Seq 0"
                )
            if outcome is producers.ProducerOutcome.SEQUENCE_GAP:
                return durable.ErrorResponse(
                    durable.ErrorCode.CONFLICT, "producer sequence gap",
                    expected_seq=decision.expected_seq, received_seq=decision.received_seq,
                )  # fmt: skip
            if outcome is producers.ProducerOutcome.DUPLICATE:
                return durable.Appended(
                    stream.tail, closed=stream.closed, producer_epoch=producer.epoch,
                    producer_seq=decision.last_seq, duplicate=True,
                )  # fmt: skip
        if request.seq is not None:
            # 3. "If provided and less than or equal to the last appended sequence ... 409"
            seq = request.seq.encode("ascii")
            if stream.last_seq is not None and seq <= stream.last_seq:
                return durable.ErrorResponse(durable.ErrorCode.CONFLICT, "Stream-Seq regression")
            stream.last_seq = seq
        if request.body:
            self.store.append_entry(stream, b"" if stream.json else request.body, items)
        if decision is not None and decision.state is not None:
            assert producer is not None
            stream.producers[producer.id] = decision.state
        if request.close:
            stream.closed = True
            stream.closed_by = tuple_
        stream.notify()
        if producer is not None:
            return durable.Appended(
                stream.tail, closed=stream.closed, producer_epoch=producer.epoch,
                producer_seq=producer.seq,
            )  # fmt: skip
        return durable.Appended(stream.tail, closed=stream.closed)

    # -- HEAD / DELETE ----------------------------------------------------------------------

    def head(self, request: durable.Head) -> durable.Response:
        found = self._existing(request.path)
        if isinstance(found, durable.ErrorResponse):
            return found
        return durable.StreamInfo(
            next_offset=found.tail,
            content_type=found.content_type,
            closed=found.closed,
            ttl_seconds=found.ttl,
            expires_at=found.expires_at,
            etag=self._etag(found, "-1", found.tail, found.closed),
        )

    def delete(self, request: durable.Delete) -> durable.Response:
        found = self._existing(request.path)
        if isinstance(found, durable.ErrorResponse):
            return found
        if found.refs > 0:
            # "the server MUST transition the stream to a soft-deleted state"
            found.soft_deleted = True
            found.notify()
        else:
            self.store.remove(found)
        return durable.Deleted()

    # -- GET --------------------------------------------------------------------------------

    def _start(self, request: durable.Read, stream: Stream) -> str | durable.ErrorResponse:
        offset = request.offset
        if offset is None or offset == offsets.BEGINNING:
            return offsets.BEGINNING
        if offset == offsets.NOW:
            return stream.tail
        if offsets.parse_offset(offset) is None:
            return durable.ErrorResponse(durable.ErrorCode.BAD_REQUEST, "malformed offset")
        return offset

    def _slice(self, stream: Stream, start: str) -> tuple[list[Entry], bool]:
        """What follows ``start``, up to ``max_chunk`` bytes, and whether that is all of it.

        Whole entries, except that ``max_chunk`` bounds what one response (or SSE event) queues
        on its connection: an entry larger than that is served in parts, and an offset inside an
        entry is the byte (JSON: message) position it names; the read goes on from there."""
        limit = self.settings.max_chunk
        after = -1 if start == offsets.BEGINNING else _position(start)
        taken: list[Entry] = []
        size = 0
        for begin, entry in self.store.entries_after(stream, start):
            if begin >= after and _weight(entry) <= limit - size:
                taken.append(entry)
                size += _weight(entry)
                continue
            if taken:  # whole entries only after the first
                return taken, False
            # Read from inside an entry, or an entry over ``max_chunk``: a part of it.
            piece = self._part(stream, entry, begin, after - begin, limit)
            taken.append(piece)
            size += _weight(piece)
            if piece.end < entry.end:
                return taken, False
        return taken, True

    @staticmethod
    def _part(stream: Stream, entry: Entry, begin: int, skip: int, room: int) -> Entry:
        """The part of ``entry`` (which begins at ``begin``) after its first ``skip`` bytes (JSON:
        the messages they cover) and within ``room`` bytes: at least one byte, character
        (``text/*``) or message, so every read makes progress."""
        skip = max(skip, 0)
        if stream.json:
            kept: list[bytes] = []
            position = used = 0
            for item in entry.items:
                if position >= skip:
                    if kept and used + len(item) + 1 > room:
                        break
                    kept.append(item)
                    used += len(item) + 1
                position += len(item) + 1
            end = begin + position  # after the last message kept (or read past)
            return Entry(offsets.format_offset(0, end), b"", tuple(kept), end)
        data = entry.data
        cut = min(len(data), skip + max(room, 1))
        if stream.content_type.startswith("text/"):
            # Not inside a UTF-8 sequence: back to the character's first byte, or (when that
            # leaves nothing) on past its last.
            back = cut
            while skip < back < len(data) and data[back] & 0xC0 == 0x80:
                back -= 1
            if back == skip:
                while cut < len(data) and data[cut] & 0xC0 == 0x80:
                    cut += 1
            else:
                cut = back
        end = begin + cut
        return Entry(offsets.format_offset(0, end), data[skip:cut], (), end)

    def _body(self, stream: Stream, entries: list[Entry]) -> bytes:
        if stream.json:
            return jsonmode.format_messages(i for e in entries for i in e.items)
        return b"".join(e.data for e in entries)

    @staticmethod
    def _etag(stream: Stream, start: str, end: str, closed: bool) -> str:
        # "ETag: {internal_stream_id}:{start_offset}:{end_offset}", varying with closure.
        ident = base64.urlsafe_b64encode(stream.path.encode()).decode("ascii")
        return f'"{ident}:{start}:{end}{":c" if closed else ""}"'

    async def _wait(self, stream: Stream, timeout: float) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        stream.waiters.append(waiter)
        try:
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            pass
        finally:
            if waiter in stream.waiters:
                stream.waiters.remove(waiter)

    async def read(self, request: durable.Read) -> durable.Response:
        found = self._existing(request.path)
        if isinstance(found, durable.ErrorResponse):
            return found
        stream = found
        start = self._start(request, stream)
        if isinstance(start, durable.ErrorResponse):
            return start
        self.store.touch(stream)
        long_poll = request.live is durable.LiveMode.LONG_POLL
        if request.offset == offsets.NOW and not long_poll:
            # "Servers MUST return 200 OK with an empty response body" ([] for JSON), the tail
            # offset, Stream-Up-To-Date, and SHOULD return Cache-Control: no-store.
            return durable.Chunk(
                data=b"[]" if stream.json else b"",
                next_offset=stream.tail,
                content_type=stream.content_type,
                up_to_date=True,
                closed=stream.closed,
                cache_control="no-store",
            )
        entries, complete = self._slice(stream, start)
        if long_poll and not entries:
            if not stream.closed:
                await self._wait(stream, self.settings.long_poll_timeout)
                current = self.store.get(request.path)
                if current is not stream or stream.soft_deleted:
                    return durable.ErrorResponse(durable.ErrorCode.NOT_FOUND, "stream deleted")
                self.store.touch(stream)
                entries, complete = self._slice(stream, start)
            if not entries:
                # Timeout, or closed at the tail: "MUST NOT wait for the long-poll timeout".
                tail = stream.tail if start == offsets.BEGINNING else start
                return durable.LongPollTimeout(
                    next_offset=tail,
                    cursor=None if stream.closed else self.cursor(request.cursor),
                    closed=stream.closed,
                )
        end = entries[-1].offset if entries else stream.tail
        closed = stream.closed and complete and end == stream.tail
        etag = self._etag(stream, request.offset or offsets.BEGINNING, end, closed)
        if request.if_none_match is not None and request.if_none_match == etag:
            return durable.NotModified(etag=etag)
        return durable.Chunk(
            data=self._body(stream, entries),
            next_offset=end,
            content_type=stream.content_type,
            up_to_date=complete,
            closed=closed,
            cursor=self.cursor(request.cursor) if long_poll and not closed else None,
            etag=etag,
        )

    async def sse(self, conn: Conn, request: durable.Read) -> bool:
        """Stream an SSE response; False when the connection is gone."""
        found = self._existing(request.path)
        start = found if isinstance(found, durable.ErrorResponse) else self._start(request, found)
        if isinstance(start, durable.ErrorResponse):
            await conn.send(start)
            return not conn.closed
        assert isinstance(found, Stream)
        stream = found
        media = jsonmode.media_type(stream.content_type)
        # "For streams with any other content-type (binary streams), servers MUST
        # automatically base64-encode data events".
        # Held (flush=False) until the control event after it: a data event and its control
        # event go out in one write, so a reader never sees one without the other.
        await conn.send(
            durable.SSEStart(base64=not (media.startswith("text/") or stream.json)), flush=False
        )
        deadline = self.clock() + self.settings.sse_max_seconds
        offset = start
        try:
            while True:
                self.store.touch(stream)
                entries, complete = self._slice(stream, offset)
                tail, closed = stream.tail, stream.closed  # consistent with ``entries``
                if not entries and offset == offsets.BEGINNING:
                    offset = tail
                for index, entry in enumerate(entries):
                    await conn.send(durable.SSEData(self._body(stream, [entry])), flush=False)
                    offset = entry.offset
                    caught_up = complete and index == len(entries) - 1
                    await conn.send(self._control(offset, request, caught_up, closed and caught_up))
                if not entries:
                    # First event of an idle stream, a wake-up on close, or a keep-alive.
                    await conn.send(self._control(offset, request, complete, closed and complete))
                if closed and complete:
                    # "After emitting the final control event, servers MUST close the SSE
                    # connection" (the response body ends).
                    break
                if not complete:
                    continue
                remaining = deadline - self.clock()
                if remaining <= 0 or conn.writer.is_closing():
                    break
                await self._wait(stream, min(self.settings.long_poll_timeout, remaining))
                if self.store.get(request.path) is not stream or stream.soft_deleted:
                    break
            await conn.send(durable.SSEEnd())
        except (ConnectionError, ConnectionClosed):
            return False
        return not conn.closed

    def _control(
        self, offset: str, request: durable.Read, up_to_date: bool, closed: bool
    ) -> durable.SSEControl:
        # "MUST include streamCursor when the stream is open"; may be omitted once closed.
        return durable.SSEControl(
            next_offset=offset,
            cursor=None if closed else self.cursor(request.cursor),
            up_to_date=up_to_date,
            closed=closed,
        )


async def start(
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    *,
    long_poll_timeout: float = 20.0,
    sse_max_seconds: float = 60.0,
    policy: _policy.ConnectionPolicy | None = None,
) -> tuple[asyncio.Server, App]:
    """Listen on ``host:port`` (0: any free port); return the server and its app, whose
    ``gatekeeper`` applies ``policy`` (the defaults when None)."""
    app = App(Settings(long_poll_timeout=long_poll_timeout, sse_max_seconds=sse_max_seconds))
    app.gatekeeper = _policy.Gatekeeper(policy or _policy.ConnectionPolicy())
    server = await _policy.serve_guarded(
        app.gatekeeper, lambda: durable.Connection(Role.SERVER), app.handle, host, port
    )
    bound = server.sockets[0].getsockname()[1]
    app.settings = attrs.evolve(app.settings, base_url=f"http://{host}:{bound}")
    return server, app


async def _main(args: argparse.Namespace) -> None:
    server, app = await start(
        args.host,
        args.port,
        long_poll_timeout=args.long_poll_timeout,
        sse_max_seconds=args.sse_max_seconds,
        policy=_policy.ConnectionPolicy.from_args(args),
    )
    print(f"listening on {app.settings.base_url}", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=_cli.prog("durable_server"), description=__doc__.split("\n\n")[0]
    )
    _cli.add_address(parser, DEFAULT_PORT, server=True)
    _cli.add_verbose(parser)
    parser.add_argument("--long-poll-timeout", type=float, default=20.0, help="seconds")
    parser.add_argument("--sse-max-seconds", type=float, default=60.0)
    _policy.add_arguments(parser)
    args = parser.parse_args(argv)
    _cli.setup_logging(args.verbose)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(args))
    return 0


if __name__ == "__main__":
    from examples._cli import run as run_cli

    sys.exit(run_cli(main, "python -m examples.durable_server"))
