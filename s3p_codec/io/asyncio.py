"""asyncio adapter: one codec ``Connection`` driven over an asyncio stream pair.

::

    from s3p_codec import s3p, Role
    from s3p_codec.io.asyncio import connect, serve

    async with await connect(s3p.Connection(Role.CLIENT), "127.0.0.1", 7500) as conn:
        await conn.send(s3p.Create(b"orders"))
        reply = await conn.next_event()

    async def handler(conn):                 # one task per accepted connection
        async for request in conn:
            await conn.send(answer(request))

    server = await serve(lambda: s3p.Connection(Role.SERVER), handler, port=0)

``send`` writes and then awaits ``drain()``, so a peer that stops reading slows the writer down
instead of growing its buffer without bound (back-pressure).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from s3p_codec._core.connection import Connection
from s3p_codec.io._common import CLOSE_TIMEOUT, DEFAULT_RECEIVE_SIZE, WRITE_PIECE, Driver

__all__ = ["AsyncioConnection", "connect", "serve"]

SendT = TypeVar("SendT")
EventT = TypeVar("EventT")


class AsyncioConnection(Driver[SendT, EventT]):
    """A codec ``Connection`` over an asyncio ``StreamReader``/``StreamWriter`` pair.

    One task may wait in ``next_event`` while another sends; two concurrent senders (or two
    concurrent receivers) would interleave codec state and are not supported.
    """

    _GONE = (OSError,)

    def __init__(
        self,
        conn: Connection[SendT, EventT],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        receive_size: int = DEFAULT_RECEIVE_SIZE,
        close_timeout: float = CLOSE_TIMEOUT,
    ) -> None:
        super().__init__(conn, receive_size=receive_size, close_timeout=close_timeout)
        self.reader = reader
        self.writer = writer

    async def _write(self, data: bytes) -> None:
        # write() takes every byte it is given at once, so a large write is handed over in
        # WRITE_PIECE pieces, each after drain() let the one before go (back-pressure): the
        # transport holds at most its high-water mark plus a piece. A cancel loses nothing
        # already handed over; the pieces not yet handed over are held again.
        writer = self.writer
        if len(data) <= WRITE_PIECE:
            writer.write(data)
            with self._writing():
                await writer.drain()
            self._written += len(data)
            return
        view = memoryview(data)
        done = 0
        try:
            with self._writing():
                while done < len(data):
                    start, done = done, min(done + WRITE_PIECE, len(data))
                    writer.write(view[start:done])
                    await writer.drain()
                    self._written += done - start
        except BaseException:
            self._core.unsent(data[done:])
            raise

    async def _receive(self, size: int) -> bytes:
        return await self.reader.read(size)

    async def _shutdown(self, final: bytes) -> None:
        writer = self.writer
        try:
            if not writer.is_closing():
                if final:
                    writer.write(final)  # the transport still writes it out before closing
                if writer.can_write_eof():
                    writer.write_eof()  # sent once the buffer is empty
        except (OSError, RuntimeError):
            pass  # the peer is gone already
        writer.close()
        try:
            async with asyncio.timeout(self.close_timeout):
                await writer.wait_closed()
        except TimeoutError:
            writer.transport.abort()  # the peer stopped reading: drop what it did not take
        except OSError:
            pass
        except BaseException:
            # Cancelled while the peer takes its time: the transport must not stay open behind
            # the caller's back, holding the socket until the peer reads.
            writer.transport.abort()
            raise


async def connect(
    conn: Connection[SendT, EventT],
    host: str,
    port: int,
    *,
    receive_size: int = DEFAULT_RECEIVE_SIZE,
    **kwargs: Any,
) -> AsyncioConnection[SendT, EventT]:
    """Open a TCP connection (``asyncio.open_connection``, which disables Nagle) for ``conn``.

    Extra keyword arguments (``ssl``, ``limit``, ...) go to ``asyncio.open_connection``; wrap
    the call in ``asyncio.timeout`` to bound it.
    """
    reader, writer = await asyncio.open_connection(host, port, **kwargs)
    return AsyncioConnection(conn, reader, writer, receive_size=receive_size)


async def serve(
    factory: Callable[[], Connection[SendT, EventT]],
    handler: Callable[[AsyncioConnection[SendT, EventT]], Awaitable[None]],
    host: str = "127.0.0.1",
    port: int = 0,
    **kwargs: Any,
) -> asyncio.Server:
    """Listen on ``host:port``; run ``handler`` in a task for each accepted connection.

    ``factory`` makes a fresh server-role codec per connection. When ``handler`` returns or
    raises, the connection is closed. ``ConnectionClosed``, ``RemoteProtocolError`` (already
    answered by the adapter) and connection resets end a handler quietly; other exceptions reach
    the event loop's exception handler. Extra keyword arguments go to ``asyncio.start_server``.
    ``server.sockets[0].getsockname()[1]`` gives the port the OS chose for ``port=0``.
    """

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await AsyncioConnection(factory(), reader, writer)._serve(handler, (ConnectionError,))

    return await asyncio.start_server(on_connect, host, port, **kwargs)
