"""An in-memory Pravega segment store on the asyncio adapter (127.0.0.1 by default).

::

    python -m examples.pravega_segment_store --port 12345

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
- ``Hello`` is answered with ``Hello(17, 5)``, ``KeepAlive`` echoed; every other request
  (``Opaque`` or typed) gets ``OperationUnsupported``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Sequence

from s3p_codec import Role, pravega
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.asyncio import AsyncioConnection, serve

__all__ = ["Segment", "Store", "main", "start"]

log = logging.getLogger("pravega_segment_store")

MAX_READ = 1 << 20
_FRAME = pravega.encode(pravega.Event(b""))[:4]  # i32 EVENT code, then i32 length, then data

Conn = AsyncioConnection[pravega.PravegaEvent, pravega.PravegaEvent]


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


class Store:
    """Segments by name, shared by every connection."""

    def __init__(self, tail_wait: float = 1.0) -> None:
        self.segments: dict[str, Segment] = {}
        self.tail_wait = tail_wait

    def get(self, name: str) -> Segment | None:
        return self.segments.get(name)

    async def handle(self, conn: Conn) -> None:
        """Serve one connection until it closes."""
        session = _Session(self, conn)
        try:
            async for request in conn:
                await session.dispatch(request)
        finally:
            for task in session.reads:
                task.cancel()


class _Session:
    """Per-connection state: which segment each writer appends to, reads in flight."""

    def __init__(self, store: Store, conn: Conn) -> None:
        self.store = store
        self.conn = conn
        self.writers: dict[uuid.UUID, str] = {}
        self.reads: set[asyncio.Task[None]] = set()
        self.lock = asyncio.Lock()  # reads answer from their own tasks: one sender at a time

    async def send(self, reply: pravega.PravegaEvent) -> None:
        async with self.lock:
            with contextlib.suppress(ConnectionClosed, ConnectionError):
                await self.conn.send(reply)

    def _missing(self, request_id: int, name: str, offset: int = -1) -> pravega.NoSuchSegment:
        return pravega.NoSuchSegment(request_id, name, "", offset)

    async def dispatch(self, request: pravega.PravegaEvent) -> None:
        store = self.store
        if isinstance(request, pravega.Append):
            await self.append(request)
        elif isinstance(request, pravega.Hello):
            await self.send(pravega.Hello())
        elif isinstance(request, pravega.KeepAlive):
            await self.send(request)
        elif isinstance(request, pravega.CreateSegment):
            if request.segment in store.segments:
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
            task = asyncio.create_task(self.read(request))
            self.reads.add(task)
            task.add_done_callback(self.reads.discard)
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
        else:
            name = request.name if isinstance(request, pravega.Opaque) else type(request).__name__
            request_id = getattr(request, "request_id", -1)
            await self.send(pravega.OperationUnsupported(request_id, name, ""))

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


async def start(
    store: Store | None = None, host: str = "127.0.0.1", port: int = 0
) -> tuple[asyncio.Server, Store]:
    """Listen; return the server (``server.sockets[0].getsockname()[1]`` is the port)."""
    store = Store() if store is None else store
    server = await serve(lambda: pravega.Connection(Role.SERVER), store.handle, host, port)
    return server, store


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=12345)
    parser.add_argument("--tail-wait", type=float, default=1.0, help="seconds a tail read waits")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)

    async def run() -> None:
        server, _ = await start(Store(args.tail_wait), args.host, args.port)
        log.info("listening on %s:%d", args.host, server.sockets[0].getsockname()[1])
        async with server:
            await server.serve_forever()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


if __name__ == "__main__":
    main()
