"""A Pravega writer and a tailing reader on the asyncio adapter.

::

    python -m examples.pravega_client --port 12345 write orders --count 1000
    python -m examples.pravega_client --port 12345 read orders --count 1000

``Writer`` appends through the codec's block writer (``Append`` events, ``FlushAppends`` to close
the open block), keeps every event until a ``DataAppended`` acknowledges it, and on
``reconnect()`` sets up again and resends only the events numbered above the store's
``AppendSetup.last_event_number``: no event is lost or stored twice.

``TailReader`` reads a segment from an offset with ``ReadSegment``, splits the bytes back into
the stored Event frames (a ``SegmentRead`` may end inside one), and keeps reading at the tail
until it has what it wants or the segment ends (``end_of_segment``).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import struct
import sys
import uuid
from collections.abc import AsyncIterator, Sequence

from examples import _cli
from s3p_codec import Role, pravega
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.asyncio import AsyncioConnection, connect

__all__ = ["ReplyError", "TailReader", "Writer", "main"]

Conn = AsyncioConnection[pravega.Event, pravega.Event]
_HEADER = struct.Struct(">ii")
_request_ids = itertools.count(1)


class ReplyError(Exception):
    """The store answered with an error reply (kept as ``reply``)."""

    def __init__(self, reply: object) -> None:
        super().__init__(repr(reply))
        self.reply = reply


async def _open(host: str, port: int, block_size: int = pravega.DEFAULT_BLOCK_SIZE) -> Conn:
    conn: Conn = await connect(pravega.Connection(Role.CLIENT, block_size=block_size), host, port)
    await conn.send(pravega.Hello())
    reply = await conn.next_event()
    if not isinstance(reply, pravega.Hello):
        raise ReplyError(reply)
    return conn


async def request(conn: Conn, command: pravega.Event) -> pravega.Event:
    """Send one request and wait for its reply (for connections with nothing else in flight)."""
    await conn.send(command)
    return await conn.next_event()


async def create_segment(host: str, port: int, name: str) -> None:
    """Create ``name`` (no error if it exists)."""
    conn = await _open(host, port)
    async with conn:
        reply = await request(conn, pravega.CreateSegment(next(_request_ids), name))
        if not isinstance(reply, pravega.SegmentCreated | pravega.SegmentAlreadyExists):
            raise ReplyError(reply)


class Writer:
    """Appends events to one segment, exactly once across reconnects."""

    def __init__(
        self,
        host: str,
        port: int,
        segment: str,
        writer_id: uuid.UUID | None = None,
        *,
        block_size: int = pravega.DEFAULT_BLOCK_SIZE,
    ) -> None:
        self.host, self.port, self.segment = host, port, segment
        self.writer_id = uuid.uuid4() if writer_id is None else writer_id
        self.block_size = block_size
        self.next_number = 0
        self.acked = -1
        self.unacked: collections.deque[tuple[int, bytes]] = collections.deque()
        self.error: ReplyError | None = None
        self._conn: Conn | None = None
        self._acks: asyncio.Task[None] | None = None
        self._progress = asyncio.Event()

    async def open(self) -> int:
        """Connect and set up; return the store's last event number for this writer."""
        conn = await _open(self.host, self.port, self.block_size)
        reply = await request(
            conn, pravega.SetupAppend(next(_request_ids), self.writer_id, self.segment)
        )
        if not isinstance(reply, pravega.AppendSetup):
            await conn.aclose()
            raise ReplyError(reply)
        last = reply.last_event_number
        if last != pravega.NULL_EVENT_NUMBER:
            self._ack(last)
            self.next_number = max(self.next_number, last + 1)
        self._conn = conn
        self._acks = asyncio.create_task(self._read_acks(conn))
        return last

    async def write(self, events: Sequence[bytes]) -> None:
        """Queue ``events`` (sent as soon as a block fills, or at ``flush``)."""
        if self.error is not None:
            raise self.error
        assert self._conn is not None, "open() first"
        first = self.next_number
        for offset, data in enumerate(events):
            self.unacked.append((first + offset, data))
        self.next_number += len(events)
        await self._conn.send(pravega.Append(self.writer_id, self.next_number - 1, tuple(events)))

    async def flush(self, timeout: float = 30.0) -> None:
        """Close the open block and wait until the store acknowledged every event."""
        assert self._conn is not None, "open() first"
        await self._conn.send(pravega.FlushAppends())
        async with asyncio.timeout(timeout):
            while self.acked < self.next_number - 1:
                if self.error is not None:
                    raise self.error
                self._progress.clear()
                await self._progress.wait()

    async def reconnect(self) -> None:
        """Drop the connection (acknowledged or not) and resend what the store lacks."""
        await self.close()
        last = await self.open()
        resend = [(n, d) for n, d in self.unacked if n > last]
        assert self._conn is not None
        for number, data in resend:
            await self._conn.send(pravega.Append(self.writer_id, number, (data,)))

    async def close(self) -> None:
        if self._acks is not None:
            self._acks.cancel()
            self._acks = None
        if self._conn is not None:
            await self._conn.aclose()
            self._conn = None

    def _ack(self, number: int) -> None:
        self.acked = max(self.acked, number)
        unacked = self.unacked
        while unacked and unacked[0][0] <= number:
            unacked.popleft()
        self._progress.set()

    async def _read_acks(self, conn: Conn) -> None:
        try:
            async for reply in conn:
                if isinstance(reply, pravega.DataAppended) and reply.writer_id == self.writer_id:
                    self._ack(reply.event_number)
                elif not isinstance(reply, pravega.KeepAlive):
                    self.error = ReplyError(reply)
                    self._progress.set()
        except (ConnectionClosed, ConnectionError):
            pass


class TailReader:
    """Reads the events of one segment from an offset, waiting at the tail for more."""

    def __init__(self, host: str, port: int, segment: str, offset: int = 0) -> None:
        self.host, self.port, self.segment = host, port, segment
        self.offset = offset  # next byte to ask for
        self._pending = b""  # the start of an event whose end has not arrived yet

    async def events(self, count: int | None = None, idle_reads: int = 3) -> AsyncIterator[bytes]:
        """Yield events until ``count`` are read, the segment ends, or ``idle_reads`` empty
        tail reads in a row (each waits up to the store's ``--tail-wait``)."""
        conn = await _open(self.host, self.port)
        seen = 0
        idle = 0
        async with conn:
            while count is None or seen < count:
                reply = await request(
                    conn,
                    pravega.ReadSegment(self.segment, self.offset, 1 << 20, "", next(_request_ids)),
                )
                if not isinstance(reply, pravega.SegmentRead):
                    raise ReplyError(reply)
                self.offset += len(reply.data)
                idle = 0 if reply.data else idle + 1
                for data in self._split(reply.data):
                    yield data
                    seen += 1
                    if count is not None and seen >= count:
                        return
                if reply.end_of_segment or idle >= idle_reads:
                    return

    def _split(self, data: bytes) -> list[bytes]:
        buffer = self._pending + data
        out = []
        pos = 0
        while pos + 8 <= len(buffer):
            _, size = _HEADER.unpack_from(buffer, pos)
            if pos + 8 + size > len(buffer):
                break
            out.append(buffer[pos + 8 : pos + 8 + size])
            pos += 8 + size
        self._pending = buffer[pos:]
        return out


async def _main(args: argparse.Namespace) -> None:
    if args.command == "write":
        await create_segment(args.host, args.port, args.segment)
        writer = Writer(args.host, args.port, args.segment)
        await writer.open()
        for i in range(args.count):
            await writer.write([f"event {i}".encode()])
        await writer.flush()
        await writer.close()
        print(f"wrote {args.count} events, last event number {writer.acked}")
    else:
        reader = TailReader(args.host, args.port, args.segment)
        async for data in reader.events(args.count):
            print(data.decode(errors="replace"))


def main(argv: list[str] | None = None) -> None:
    parser = _cli.parser("pravega_client", __doc__)
    _cli.add_address(parser, 12345, server=False)
    parser.add_argument("command", choices=["write", "read"])
    parser.add_argument("segment")
    parser.add_argument("--count", type=int, default=10)
    asyncio.run(_main(parser.parse_args(argv)))


if __name__ == "__main__":
    from examples._cli import run as run_cli

    sys.exit(run_cli(main, "python -m examples.pravega_client"))
