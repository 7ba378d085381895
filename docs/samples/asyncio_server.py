"""Tutorial: embed the S3P codec in an asyncio server (and talk to it with an asyncio client).

The server keeps streams in a dict; the codec does every protocol rule (framing, limits, error
replies and the close after them), the adapter moves bytes.
Run: ``python docs/samples/asyncio_server.py``.
"""

from __future__ import annotations

import asyncio

from s3p_codec import Role, s3p
from s3p_codec.io.asyncio import AsyncioConnection, connect, serve

STREAMS: dict[bytes, list[tuple[s3p.Timestamp, bytes]]] = {}


def answer(request: s3p.Event, clock: list[int]) -> s3p.Reply:
    """The reply to one request; a store with no persistence and server-side timestamps."""
    if isinstance(request, s3p.Create):
        if request.stream in STREAMS:
            return s3p.ErrorReply(s3p.ErrorCode.STREAM_EXISTS, "stream exists")
        STREAMS[request.stream] = []
        return s3p.Ok()
    records = STREAMS.get(getattr(request, "stream", b""))
    if records is None:
        return s3p.ErrorReply(s3p.ErrorCode.UNKNOWN_STREAM, "no such stream")
    if isinstance(request, s3p.Append):
        for record in request.records:
            clock[0] += 1
            records.append((s3p.Timestamp(clock[0], 0), record))
        return s3p.AppendReply(records[-1][0])
    if isinstance(request, s3p.Read):
        return s3p.ReadReply(tuple(records[: request.count or 100]))
    return s3p.Ok()


HANDLERS_DONE = asyncio.Event()


async def handle(conn: AsyncioConnection[s3p.Event, s3p.Event]) -> None:
    """One task per accepted connection: read requests in order, answer each in order.

    Iteration ends when the client closes cleanly; a malformed request is answered by the
    adapter with the codec's ``ErrorReply`` and ends the handler quietly.
    """
    clock = [1_700_000_000_000]
    try:
        async for request in conn:
            await conn.send(answer(request, clock))
    finally:
        HANDLERS_DONE.set()


async def main() -> None:
    server = await serve(lambda: s3p.Connection(Role.SERVER), handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        async with await connect(s3p.Connection(Role.CLIENT), "127.0.0.1", port) as client:
            await client.send(s3p.Create(b"orders"))
            print(await client.next_event())  # Ok()
            await client.send(s3p.Append(b"orders", (b"hello", b"world")))
            print(await client.next_event())  # AppendReply(timestamp=...)
            await client.send(s3p.Read(b"orders", count=10))
            reply = await client.next_event()
            assert isinstance(reply, s3p.ReadReply)
            assert [record for _, record in reply.records] == [b"hello", b"world"]
            print(reply)
        # The client closed: its handler sees the end of stream and returns. Wait for it, so
        # that closing the server cancels nothing.
        await asyncio.wait_for(HANDLERS_DONE.wait(), 5)


if __name__ == "__main__":
    asyncio.run(main())
