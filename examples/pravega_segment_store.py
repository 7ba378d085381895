"""An in-memory Pravega segment store on the asyncio adapter (127.0.0.1 by default).

::

    python -m examples.pravega_segment_store --port 12345
    python -m examples.pravega_segment_store --port 12345 --controller-port 9090

It speaks the real Pravega wire protocol (``s3p_codec.pravega``), so the codec does the framing,
the append-block reassembly and the Hello check; this file holds what only a store decides:

- ``CreateSegment`` -> ``SegmentCreated`` | ``SegmentAlreadyExists``. ``GetStreamSegmentInfo`` ->
  ``StreamSegmentInfo`` (``write_offset`` = length, ``start_offset`` = truncation point).
- ``SetupAppend`` -> ``AppendSetup`` with the writer's last stored event number
  (``NULL_EVENT_NUMBER`` for a writer never seen), so a writer that reconnects resends only what
  the store lacks. ``Append`` (reassembled from blocks) stores each event as its Event frame, as
  a real segment does, and answers ``DataAppended``. Event-number de-duplication: the events of
  an ``Append`` are numbered up to its ``event_number`` (consecutively, as the example client
  and the real one number them); those not above the writer's stored number are resends and are
  acknowledged without being stored again (counted in ``Segment.duplicates``).
- ``ConditionalAppend`` / ``ConditionalBlockEnd`` append only at ``expected_offset``, otherwise
  ``ConditionalCheckFailed``.
- ``ReadSegment`` -> ``SegmentRead`` of up to ``suggested_length`` bytes (at most 1 MiB), with
  ``at_tail`` when the read reaches the current end and ``end_of_segment`` when that end is a
  sealed one. A read at the tail of an open segment waits (``--tail-wait`` seconds) for data,
  then answers an empty ``at_tail`` read. Before ``start_offset``: ``SegmentIsTruncated``.
- ``SealSegment`` -> ``SegmentSealed``; later appends get ``SegmentIsSealed``.
  ``TruncateSegment`` -> ``SegmentTruncated`` (an offset past the end: ``ErrorMessage``).
  ``DeleteSegment`` -> ``SegmentDeleted``. A missing segment anywhere: ``NoSuchSegment``.
- ``Hello`` is answered with ``Hello(17, 5)``, ``KeepAlive`` echoed.
- For the official clients (PyPI ``pravega``), with ``--controller-port`` a gRPC controller
  (``examples.pravega_controller``) runs on the same event loop, and the store answers the
  commands the codec leaves ``Opaque`` (``examples.pravega_store_commands``): table segments
  (create, delete, conditional updates and removals with key versions, reads by key, by page
  and by delta, the reader groups' state), ``MergeSegments`` (``SegmentsMerged``),
  ``CreateTransientSegment`` and segment attributes (get, compare-and-set). Every other
  request gets ``OperationUnsupported``; a payload too short for its fields ``ErrorMessage``.

Connection policy (``ServerLimits``, each a flag; 0 turns one off): ``--max-reads-in-flight``
(16) ReadSegments answered at once per connection, with back-pressure beyond;
``--idle-timeout`` (300 s) without a request and nothing in flight; ``--request-timeout``
(30 s) for a request to arrive once begun and for a reply to be taken; ``--max-connections``
(1024), where a new connection sheds the idlest one; ``--max-connections-per-address`` (off)
the same per client IP address. SIGUSR1 drops every connection and stops
listening for ``--restart-pause`` seconds, data kept (a restart, for client tests).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import logging
import signal
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from examples import _cli, _policy, pravega_names
from examples import pravega_store_commands as commands
from s3p_codec import Role, pravega
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.asyncio import AsyncioConnection, serve

__all__ = ["Segment", "Store", "main", "start"]

log = logging.getLogger("pravega_segment_store")

MAX_READ = 1 << 20
_FRAME = pravega.encode(pravega.EventCommand(b""))[:4]  # i32 EVENT code, then i32 length, then data

Conn = AsyncioConnection[pravega.Event, pravega.Event]


class Segment:
    """One segment: its bytes (Event frames), truncation point, seal and writers' numbers."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.data = bytearray()
        self.start_offset = 0  # bytes before it were truncated away
        self.base = 0  # the offset of data[0]
        self.sealed = False
        self.deleted = False
        self.writers: dict[uuid.UUID, int] = {}
        self.duplicates = 0  # resent events acknowledged but not stored again
        self.modified = time.time_ns() // 1_000_000
        self.changed = asyncio.Event()

    @property
    def length(self) -> int:
        return self.base + len(self.data)

    def append(self, frames: Sequence[bytes]) -> None:
        for frame in frames:
            self.data += frame
        self.modified = time.time_ns() // 1_000_000
        self._wake()

    def read(self, offset: int, size: int) -> bytes:
        start = offset - self.base
        return bytes(self.data[start : start + size])

    def truncate(self, offset: int) -> None:
        if offset > self.start_offset:
            del self.data[: offset - self.base]
            self.base = self.start_offset = offset

    def _wake(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()


def event_frame(data: bytes) -> bytes:
    """How a segment stores an event: "i32 0, i32 len, data"."""
    return _FRAME + len(data).to_bytes(4, "big") + data


@attrs.frozen
class ServerLimits:
    """How much one client may hold of the store, and for how long (0 turns a bound off).

    ``max_reads_in_flight``: ``ReadSegment`` requests of one connection being answered at
    once; the next one is not even read off the socket until one finishes (back-pressure), so a
    client that pipelines reads and never reads the replies holds at most this many replies
    (of up to 1 MiB each). ``idle_timeout``: seconds a connection may stay without a request
    and with nothing in flight. ``request_timeout``: seconds a request may take to arrive once
    its first bytes did, and a reply to be taken by the client (slow senders and readers).
    ``max_connections``: at the cap a new connection sheds the connection idle the longest;
    if every connection is busy, the new one is closed instead. ``max_connections_per_address``
    (off by default: clients behind one NAT share an address): the same, among the
    connections from the new one's IP address.
    """

    max_reads_in_flight: int = 16
    idle_timeout: float = 300.0
    request_timeout: float = 30.0
    max_connections: int = 1024
    max_connections_per_address: int = 0

    def __attrs_post_init__(self) -> None:
        for name in attrs.fields_dict(ServerLimits):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")

    @property
    def policy(self) -> _policy.ConnectionPolicy:
        """The connection policy part, as the example servers share it (0 is off)."""
        return _policy.ConnectionPolicy(
            idle_timeout=self.idle_timeout or None,
            request_timeout=self.request_timeout or None,
            max_connections=self.max_connections or None,
            max_connections_per_address=self.max_connections_per_address or None,
        )


class Store:
    """Segments and table segments by name, shared by every connection."""

    def __init__(self, tail_wait: float = 1.0, limits: ServerLimits | None = None) -> None:
        self.limits = ServerLimits() if limits is None else limits
        self.gatekeeper = _policy.Gatekeeper(self.limits.policy)
        self.segments: dict[str, Segment] = {}
        self.tables: dict[str, commands.TableSegment] = {}
        self.attributes: dict[tuple[str, uuid.UUID], int] = {}
        self.tail_wait = tail_wait

    def get(self, name: str) -> Segment | None:
        return self.segments.get(name)

    # What the controller calls (it shares this process and event loop).

    def create_segment(self, name: str) -> bool:
        """Create an empty segment; False if the name is taken."""
        if name in self.segments or name in self.tables:
            return False
        self.segments[name] = Segment(name)
        return True

    def delete_segment(self, name: str) -> bool:
        """Delete a segment; False if there was none."""
        segment = self.segments.pop(name, None)
        if segment is None:
            return False
        segment.deleted = True
        segment._wake()
        return True

    def seal_segment(self, name: str) -> bool:
        """Seal a segment (later appends fail, readers see its end); False if missing."""
        segment = self.segments.get(name)
        if segment is None:
            return False
        segment.sealed = True
        segment._wake()
        return True

    def truncate_segment(self, name: str, offset: int) -> bool:
        """Drop the bytes before ``offset``; False if missing or the offset is past the end."""
        segment = self.segments.get(name)
        if segment is None or not 0 <= offset <= segment.length:
            return False
        segment.truncate(offset)
        return True

    def merge_segment(self, target: str, source: str) -> int:
        """Append all of ``source`` to ``target`` and delete ``source`` (a transaction commit).

        Returns the target's new length. Raises ``KeyError`` if either is missing and
        ``ValueError`` if ``source`` was truncated (its bytes are no longer all there).
        """
        into, origin = self.segments[target], self.segments[source]
        if origin.start_offset:
            raise ValueError(f"{source} is truncated")
        into.append([bytes(origin.data)])
        self.delete_segment(source)
        return into.length

    @property
    def shed(self) -> collections.Counter[str]:
        """Why the connection policy closed connections, counted."""
        return self.gatekeeper.shed

    async def handle(self, conn: Conn) -> None:
        """Serve one connection until it closes (or the connection policy closes it)."""
        address = _policy.peer_address(conn.writer)
        session = _Session(self, conn, address)
        async with self.gatekeeper.guard(address, session) as guard:
            if guard.refused:
                log.info("connection cap reached and every connection busy: refusing one")
                return
            try:
                async for request in conn:
                    session.last = asyncio.get_running_loop().time()
                    await session.dispatch(request)
            finally:
                for read in session.reads:
                    read.cancel()

    def drop_connections(self) -> int:
        """End every open connection at once (what clients see when a store process dies).

        Returns how many there were.
        """
        clients = list(self.gatekeeper.clients.values())
        for client in clients:
            client.close("dropped")
        return len(clients)


class _Session:
    """Per-connection state: which segment each writer appends to, reads in flight."""

    def __init__(self, store: Store, conn: Conn, address: str = "") -> None:
        self.store = store
        self.conn = conn
        self.address = address  # the client's IP address, for the per-address cap
        self.writers: dict[uuid.UUID, str] = {}
        self.reads: set[asyncio.Task[None]] = set()
        self.lock = asyncio.Lock()  # reads answer from their own tasks: one sender at a time
        slots = store.limits.max_reads_in_flight
        self.read_slots = asyncio.Semaphore(slots) if slots else None
        self.last = asyncio.get_running_loop().time()  # of the last request
        self.sending_since: float | None = None  # a reply the client has not taken yet

    @property
    def busy(self) -> bool:
        """Whether anything is in flight (a waiting tail read is not idleness)."""
        return bool(self.reads) or self.sending_since is not None

    @property
    def stalled_since(self) -> float | None:
        """Since when a reply has waited for the client to take it (idle for shedding)."""
        return self.sending_since

    def overdue(self, now: float, policy: _policy.ConnectionPolicy) -> str | None:
        """Why this connection must close now, or None (``Gatekeeper.sweep`` asks)."""
        idle, slow = policy.idle_timeout, policy.request_timeout
        codec = self.conn.conn
        partial = codec.activity.partial_since if isinstance(codec, _policy.WatchedCodec) else None
        if slow and partial is not None and now - partial > slow:
            return "request too slow"
        if slow and self.sending_since is not None and now - self.sending_since > slow:
            return "reply not taken"
        if idle and not self.busy and partial is None and now - self.last > idle:
            return "idle"
        return None

    async def send(self, reply: pravega.Event) -> None:
        async with self.lock:
            self.sending_since = asyncio.get_running_loop().time()
            try:
                with contextlib.suppress(ConnectionClosed, ConnectionError):
                    await self.conn.send(reply)
            finally:
                self.sending_since = None

    def _read_done(self, task: asyncio.Task[None]) -> None:
        self.reads.discard(task)
        if self.read_slots is not None:
            self.read_slots.release()

    def _missing(self, request_id: int, name: str, offset: int = -1) -> pravega.NoSuchSegment:
        return pravega.NoSuchSegment(request_id, name, "", offset)

    async def dispatch(self, request: pravega.Event) -> None:
        store = self.store
        if isinstance(request, pravega.Append):
            await self.append(request)
        elif isinstance(request, pravega.Hello):
            await self.send(pravega.Hello())
        elif isinstance(request, pravega.KeepAlive):
            await self.send(request)
        elif isinstance(request, pravega.CreateSegment):
            why = pravega_names.check_segment_name(request.segment)
            if why is not None:
                code = pravega.ErrorMessage.ILLEGAL_ARGUMENT
                await self.send(pravega.ErrorMessage(request.request_id, "", why, code))
            elif request.segment in store.segments:
                await self.send(pravega.SegmentAlreadyExists(request.request_id, request.segment))
            else:
                store.segments[request.segment] = Segment(request.segment)
                await self.send(pravega.SegmentCreated(request.request_id, request.segment))
        elif isinstance(request, pravega.GetStreamSegmentInfo):
            segment = store.get(request.segment)
            if segment is None:
                await self.send(self._missing(request.request_id, request.segment))
            else:
                await self.send(
                    pravega.StreamSegmentInfo(
                        request.request_id,
                        segment.name,
                        True,
                        segment.sealed,
                        False,
                        segment.modified,
                        segment.length,
                        segment.start_offset,
                    )
                )
        elif isinstance(request, pravega.SetupAppend):
            await self.setup(request)
        elif isinstance(request, pravega.ConditionalAppend | pravega.ConditionalBlockEnd):
            await self.conditional(request)
        elif isinstance(request, pravega.ReadSegment):
            if self.read_slots is not None:
                await self.read_slots.acquire()  # back-pressure: stop reading requests
            task = asyncio.create_task(self.read(request))
            self.reads.add(task)
            task.add_done_callback(self._read_done)
        elif isinstance(request, pravega.SealSegment):
            segment = store.get(request.segment)
            if segment is None:
                await self.send(self._missing(request.request_id, request.segment))
            else:
                segment.sealed = True
                segment._wake()
                await self.send(pravega.SegmentSealed(request.request_id, request.segment))
        elif isinstance(request, pravega.TruncateSegment):
            await self.truncate(request)
        elif isinstance(request, pravega.DeleteSegment):
            segment = store.segments.pop(request.segment, None)
            if segment is None:
                await self.send(self._missing(request.request_id, request.segment))
            else:
                segment.deleted = True
                segment._wake()
                await self.send(pravega.SegmentDeleted(request.request_id, request.segment))
        elif isinstance(request, pravega.Opaque) and request.type in _OPAQUE:
            head = request.payload[:8]
            request_id = int.from_bytes(head, "big", signed=True) if len(head) == 8 else -1
            try:
                await _OPAQUE[request.type](self, commands.FieldReader(request.payload))
            except commands.MalformedCommand as exc:
                await self.send(
                    pravega.ErrorMessage(
                        request_id, "", str(exc), pravega.ErrorMessage.ILLEGAL_ARGUMENT
                    )
                )
        else:
            name = request.name if isinstance(request, pravega.Opaque) else type(request).__name__
            request_id = getattr(request, "request_id", -1)
            await self.send(pravega.OperationUnsupported(request_id, name, ""))

    # --- commands the codec leaves Opaque (fields read by pravega_store_commands) ----------

    async def create_table(self, fields: commands.FieldReader) -> None:
        request_id, name = fields.i64(), fields.string()
        store = self.store
        if name in store.tables or name in store.segments:
            await self.send(pravega.SegmentAlreadyExists(request_id, name))
        else:
            store.tables[name] = commands.TableSegment(name)
            await self.send(pravega.SegmentCreated(request_id, name))

    async def delete_table(self, fields: commands.FieldReader) -> None:
        request_id, name = fields.i64(), fields.string()
        must_be_empty = fields.flag() if fields.remaining else False
        table = self.store.tables.get(name)
        if table is None:
            await self.send(self._missing(request_id, name))
        elif must_be_empty and table.entries:
            code = pravega.CommandType.TABLE_SEGMENT_NOT_EMPTY
            await self.send(commands.table_key_error(code, request_id, name))
        else:
            del self.store.tables[name]
            await self.send(pravega.SegmentDeleted(request_id, name))

    def _table(self, fields: commands.FieldReader) -> tuple[int, str, commands.TableSegment | None]:
        request_id, name = fields.i64(), fields.string()
        fields.string()  # delegation token
        return request_id, name, self.store.tables.get(name)

    async def update_table(self, fields: commands.FieldReader) -> None:
        request_id, name, table = self._table(fields)
        entries = fields.entries()
        offset = fields.i64() if fields.remaining >= 8 else -1
        if table is None:
            await self.send(self._missing(request_id, name))
            return
        error = table.check([(key, version) for key, version, _ in entries])
        if error is None and offset not in (-1, table.length):
            error = pravega.CommandType.TABLE_KEY_BAD_VERSION
        if error is not None:
            await self.send(commands.table_key_error(error, request_id, name))
            return
        await self.send(commands.table_entries_updated(request_id, table.update(entries)))

    async def remove_table_keys(self, fields: commands.FieldReader) -> None:
        request_id, name, table = self._table(fields)
        keys = fields.keys()
        if table is None:
            await self.send(self._missing(request_id, name))
            return
        # Removing an absent key unconditionally is fine; conditions are checked like updates.
        error = table.check([(k, v) for k, v in keys if v != commands.NO_VERSION])
        if error is not None:
            await self.send(commands.table_key_error(error, request_id, name))
            return
        table.remove(keys)
        await self.send(commands.table_keys_removed(request_id, name))

    async def read_table(self, fields: commands.FieldReader) -> None:
        request_id, name, table = self._table(fields)
        keys = fields.keys()
        if table is None:
            await self.send(self._missing(request_id, name))
            return
        entries = [table.get(key) for key, _ in keys]
        await self.send(commands.table_read(request_id, name, entries))

    async def read_table_entries(self, fields: commands.FieldReader) -> None:
        request_id, name, table = self._table(fields)
        count, token = fields.i32(), fields.blob()
        if table is None:
            await self.send(self._missing(request_id, name))
            return
        entries, token = table.page(token, count)
        await self.send(commands.table_entries_read(request_id, name, entries, token))

    async def read_table_keys(self, fields: commands.FieldReader) -> None:
        request_id, name, table = self._table(fields)
        count, token = fields.i32(), fields.blob()
        if table is None:
            await self.send(self._missing(request_id, name))
            return
        entries, token = table.page(token, count)
        keys = [(key, version) for key, version, _ in entries]
        await self.send(commands.table_keys_read(request_id, name, keys, token))

    async def read_table_delta(self, fields: commands.FieldReader) -> None:
        request_id, name, table = self._table(fields)
        position, count = fields.i64(), fields.i32()
        if table is None:
            await self.send(self._missing(request_id, name))
            return
        entries, last = table.since(position, count)
        reached_end = last >= table.length
        await self.send(
            commands.table_entries_delta_read(request_id, name, entries, reached_end, last)
        )

    async def merge_segments(self, fields: commands.FieldReader) -> None:
        request_id, target, source = fields.i64(), fields.string(), fields.string()
        store = self.store
        if target not in store.segments or source not in store.segments:
            missing = target if target not in store.segments else source
            await self.send(self._missing(request_id, missing))
            return
        if store.segments[target].sealed:
            segment = store.segments[target]
            await self.send(pravega.SegmentIsSealed(request_id, target, "", segment.length))
            return
        try:
            length = store.merge_segment(target, source)
        except ValueError:
            segment = store.segments[source]
            await self.send(
                pravega.SegmentIsTruncated(request_id, source, segment.start_offset, "", 0)
            )
            return
        await self.send(commands.segments_merged(request_id, target, source, length))

    async def create_transient(self, fields: commands.FieldReader) -> None:
        request_id, writer_id, parent = fields.i64(), fields.uid(), fields.string()
        if parent not in self.store.segments:
            await self.send(self._missing(request_id, parent))
            return
        name = f"{parent}#transient.{writer_id.hex}"
        self.store.create_segment(name)
        await self.send(pravega.SegmentCreated(request_id, name))

    async def get_attribute(self, fields: commands.FieldReader) -> None:
        request_id, name, attribute = fields.i64(), fields.string(), fields.uid()
        if name not in self.store.segments:
            await self.send(self._missing(request_id, name))
            return
        value = self.store.attributes.get((name, attribute), commands.NO_VERSION)
        await self.send(commands.segment_attribute(request_id, value))

    async def update_attribute(self, fields: commands.FieldReader) -> None:
        request_id, name, attribute = fields.i64(), fields.string(), fields.uid()
        new, expected = fields.i64(), fields.i64()
        if name not in self.store.segments:
            await self.send(self._missing(request_id, name))
            return
        current = self.store.attributes.get((name, attribute), commands.NO_VERSION)
        success = current == expected
        if success:
            self.store.attributes[(name, attribute)] = new
        await self.send(commands.segment_attribute_updated(request_id, success))

    async def setup(self, request: pravega.SetupAppend) -> None:
        segment = self.store.get(request.segment)
        if segment is None:
            await self.send(self._missing(request.request_id, request.segment))
            return
        if segment.sealed:
            await self.send(
                pravega.SegmentIsSealed(request.request_id, request.segment, "", segment.length)
            )
            return
        self.writers[request.writer_id] = request.segment
        last = segment.writers.get(request.writer_id, pravega.NULL_EVENT_NUMBER)
        await self.send(
            pravega.AppendSetup(request.request_id, request.segment, request.writer_id, last)
        )

    async def append(self, append: pravega.Append) -> None:
        name = self.writers.get(append.writer_id, "")
        segment = self.store.get(name)
        if segment is None:
            await self.send(self._missing(append.request_id, name))
            return
        if segment.sealed:
            await self.send(pravega.SegmentIsSealed(append.request_id, name, "", segment.length))
            return
        previous = segment.writers.get(append.writer_id, pravega.NULL_EVENT_NUMBER)
        first = append.event_number - len(append.events) + 1
        resent = min(len(append.events), max(0, previous - first + 1))
        segment.duplicates += resent
        if resent < len(append.events):
            segment.append([event_frame(data) for data in append.events[resent:]])
            segment.writers[append.writer_id] = append.event_number
        await self.send(
            pravega.DataAppended(
                append.writer_id,
                max(append.event_number, previous),
                previous if previous != pravega.NULL_EVENT_NUMBER else -1,
                append.request_id,
                segment.length,
            )
        )

    async def conditional(
        self, request: pravega.ConditionalAppend | pravega.ConditionalBlockEnd
    ) -> None:
        name = self.writers.get(request.writer_id, "")
        segment = self.store.get(name)
        if segment is None:
            await self.send(self._missing(request.request_id, name))
            return
        if segment.sealed:
            await self.send(pravega.SegmentIsSealed(request.request_id, name, "", segment.length))
            return
        if request.expected_offset != segment.length:
            await self.send(
                pravega.ConditionalCheckFailed(
                    request.writer_id, request.event_number, request.request_id
                )
            )
            return
        if isinstance(request, pravega.ConditionalAppend):
            segment.append([event_frame(request.data)])
        else:
            segment.append([request.data])
        previous = segment.writers.get(request.writer_id, -1)
        segment.writers[request.writer_id] = request.event_number
        await self.send(
            pravega.DataAppended(
                request.writer_id,
                request.event_number,
                previous,
                request.request_id,
                segment.length,
            )
        )

    async def read(self, request: pravega.ReadSegment) -> None:
        segment = self.store.get(request.segment)
        if segment is None:
            await self.send(self._missing(request.request_id, request.segment, request.offset))
            return
        if request.offset < segment.start_offset:
            await self.send(
                pravega.SegmentIsTruncated(
                    request.request_id, request.segment, segment.start_offset, "", request.offset
                )
            )
            return
        if request.offset >= segment.length and not segment.sealed:
            # A tailing read: wait for an append, a seal or a delete, at most tail_wait.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(segment.changed.wait(), self.store.tail_wait)
            if segment.deleted:
                await self.send(self._missing(request.request_id, request.segment))
                return
        size = max(0, min(request.suggested_length, MAX_READ))
        data = segment.read(request.offset, size) if request.offset < segment.length else b""
        end = request.offset + len(data)
        at_tail = end >= segment.length
        await self.send(
            pravega.SegmentRead(
                request.segment,
                request.offset,
                at_tail,
                at_tail and segment.sealed,
                data,
                request.request_id,
            )
        )

    async def truncate(self, request: pravega.TruncateSegment) -> None:
        segment = self.store.get(request.segment)
        if segment is None:
            await self.send(self._missing(request.request_id, request.segment))
        elif not 0 <= request.truncation_offset <= segment.length:
            await self.send(
                pravega.ErrorMessage(
                    request.request_id,
                    request.segment,
                    f"truncation offset {request.truncation_offset} is past the end",
                    pravega.ErrorMessage.ILLEGAL_ARGUMENT,
                )
            )
        else:
            segment.truncate(request.truncation_offset)
            await self.send(pravega.SegmentTruncated(request.request_id, request.segment))


_T = pravega.CommandType
_OPAQUE: dict[pravega.CommandType, Callable[[_Session, commands.FieldReader], Awaitable[None]]] = {
    _T.CREATE_TABLE_SEGMENT: _Session.create_table,
    _T.DELETE_TABLE_SEGMENT: _Session.delete_table,
    _T.UPDATE_TABLE_ENTRIES: _Session.update_table,
    _T.REMOVE_TABLE_KEYS: _Session.remove_table_keys,
    _T.READ_TABLE: _Session.read_table,
    _T.READ_TABLE_KEYS: _Session.read_table_keys,
    _T.READ_TABLE_ENTRIES: _Session.read_table_entries,
    _T.READ_TABLE_ENTRIES_DELTA: _Session.read_table_delta,
    _T.MERGE_SEGMENTS: _Session.merge_segments,
    _T.CREATE_TRANSIENT_SEGMENT: _Session.create_transient,
    _T.GET_SEGMENT_ATTRIBUTE: _Session.get_attribute,
    _T.UPDATE_SEGMENT_ATTRIBUTE: _Session.update_attribute,
}


async def start(
    store: Store | None = None, host: str = "127.0.0.1", port: int = 0
) -> tuple[asyncio.Server, Store]:
    """Listen; return the server (``server.sockets[0].getsockname()[1]`` is the port)."""
    store = Store() if store is None else store
    loop = asyncio.get_running_loop()

    def codec() -> _policy.WatchedCodec[Any, Any]:
        """The server-role codec, noting when a request began arriving (``partial_since``; a
        session keeps its own notion of busy: reads in flight, replies not taken)."""
        activity = _policy.Activity(loop.time)
        return _policy.WatchedCodec(pravega.Connection(Role.SERVER), activity)

    server = await serve(codec, store.handle, host, port)
    store.gatekeeper.clock = loop.time
    store.gatekeeper.start_sweeper(server)
    return server, store


async def start_controller(
    store: Store,
    host: str,
    store_port: int,
    port: int = 0,
    *,
    max_segments_per_stream: int | None = None,
) -> tuple[Any, int]:
    """Serve a controller for ``store`` on ``host:port``; return the gRPC server and its port.

    Imported here so that the store alone needs no gRPC (``pravega-controller`` extra).
    ``max_segments_per_stream`` overrides ``ControllerLimits``' default.
    """
    from examples import pravega_controller  # noqa: PLC0415 - optional gRPC dependency

    limits = pravega_controller.ControllerLimits()
    if max_segments_per_stream is not None:
        limits = pravega_controller.ControllerLimits(max_segments_per_stream)
    controller = pravega_controller.Controller(store, host, store_port, limits)
    return await pravega_controller.start(controller, host, port)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=_cli.prog("pravega_segment_store"), description=__doc__.split("\n")[0]
    )
    _cli.add_address(parser, 12345, server=True)
    _cli.add_verbose(parser)
    parser.add_argument("--tail-wait", type=float, default=1.0, help="seconds a tail read waits")
    parser.add_argument(
        "--controller-port",
        type=int,
        default=None,
        help="also serve a Pravega controller (gRPC) on this port, for the official clients "
        "(needs the pravega-controller extra)",
    )
    parser.add_argument(
        "--restart-pause",
        type=float,
        default=1.0,
        help="on SIGUSR1 the store drops every connection and stops listening for this many "
        "seconds, keeping its data: a store restart over durable storage, for client tests",
    )
    parser.add_argument(
        "--max-segments-per-stream",
        type=int,
        default=None,
        metavar="N",
        help="the controller refuses createStream asking for more segments than this "
        "(default: ControllerLimits', 1000)",
    )
    defaults = ServerLimits()
    parser.add_argument(
        "--max-reads-in-flight",
        type=int,
        default=defaults.max_reads_in_flight,
        help="ReadSegment requests one connection may have answered at once; more are not "
        "read off the socket until one finishes (0: no bound; default %(default)s)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=defaults.idle_timeout,
        help="close a connection after this many seconds without a request and with nothing "
        "in flight (0: never; default %(default)s)",
    )
    parser.add_argument(
        "--request-timeout",
        type=float,
        default=defaults.request_timeout,
        help="close a connection whose request takes longer than this to arrive once its "
        "first bytes did, or that leaves a reply untaken this long (0: never; "
        "default %(default)s)",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=defaults.max_connections,
        help="at this many connections a new one sheds the one idle the longest, or is "
        "closed if every one is busy (0: no cap; default %(default)s)",
    )
    parser.add_argument(
        "--max-connections-per-address",
        type=int,
        default=defaults.max_connections_per_address,
        help="the same cap among the connections of one client IP address (0: no cap; "
        "default %(default)s)",
    )
    args = parser.parse_args(argv)
    _cli.setup_logging(args.verbose)

    async def run() -> None:
        limits = ServerLimits(
            args.max_reads_in_flight,
            args.idle_timeout,
            args.request_timeout,
            args.max_connections,
            args.max_connections_per_address,
        )
        store = Store(args.tail_wait, limits)
        server, _ = await start(store, args.host, args.port)
        port = server.sockets[0].getsockname()[1]
        log.info("listening on %s:%d", args.host, port)
        controller = None
        if args.controller_port is not None:
            controller = await start_controller(
                store,
                args.host,
                port,
                args.controller_port,
                max_segments_per_stream=args.max_segments_per_stream,
            )
            log.info("controller listening on %s:%d", args.host, controller[1])

        async def restart() -> None:
            nonlocal server
            log.info("SIGUSR1: dropping every connection; back in %.1f s", args.restart_pause)
            server.close()
            log.info("dropped %d connections", store.drop_connections())
            await asyncio.sleep(args.restart_pause)
            server, _ = await start(store, args.host, port)
            log.info("listening again on %s:%d", args.host, port)

        restarts: set[asyncio.Task[None]] = set()

        def on_signal() -> None:
            task = asyncio.ensure_future(restart())
            restarts.add(task)
            task.add_done_callback(restarts.discard)

        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, on_signal)
        try:
            await asyncio.Event().wait()  # until interrupted or terminated
        finally:
            server.close()
            if controller is not None:
                await controller[0].stop(None)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


if __name__ == "__main__":
    from examples._cli import run as run_cli

    sys.exit(run_cli(main, "python -m examples.pravega_segment_store"))
