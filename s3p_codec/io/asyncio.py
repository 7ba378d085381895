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
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Any, Generic, TypeVar

from s3p_codec._core.connection import Connection
from s3p_codec._core.errors import RemoteProtocolError
from s3p_codec._core.types import NEED_DATA
from s3p_codec.io import ConnectionClosed
from s3p_codec.io._common import (
    CLOSE_TIMEOUT,
    DEFAULT_RECEIVE_SIZE,
    FLUSH_SIZE,
    error_reply_bytes,
)

__all__ = ["AsyncioConnection", "connect", "serve"]

SendT = TypeVar("SendT")
EventT = TypeVar("EventT")

log = logging.getLogger(__name__)


class AsyncioConnection(Generic[SendT, EventT]):
    """A codec ``Connection`` over an asyncio ``StreamReader``/``StreamWriter`` pair.

    One task may wait in ``next_event`` while another sends; two concurrent senders (or two
    concurrent receivers) would interleave codec state and are not supported.
    """

    def __init__(
        self,
        conn: Connection[SendT, EventT],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        receive_size: int = DEFAULT_RECEIVE_SIZE,
        close_timeout: float = CLOSE_TIMEOUT,
    ) -> None:
        self.conn = conn
        self.close_timeout = close_timeout
        """Seconds a close waits for the peer to take the last bytes before it just closes."""
        self.reader = reader
        self.writer = writer
        self._receive_size = receive_size
        self._eof = False
        self._closed = False
        self._pending: list[bytes] = []  # encoded by send(..., flush=False), not yet written
        self._pending_size = 0

    @property
    def closed(self) -> bool:
        """True once ``aclose()`` ran (by the caller, or because the codec finished)."""
        return self._closed

    async def send(self, event: SendT, *, flush: bool = True) -> None:
        """Encode ``event``, write it and drain; close the transport if the codec finished.

        With ``flush=False`` the bytes are kept and written (and drained) in one go with later
        ones: before ``next_event`` waits for the peer, on ``flush()``, on close, or once
        ``FLUSH_SIZE`` bytes are pending. A server answering a pipelined burst saves a system
        call per reply that way.
        """
        if self._closed:
            raise ConnectionClosed("send on a closed connection")
        data = self.conn.send(event)
        if data:
            self._pending.append(data)
            self._pending_size += len(data)
        if flush or self._pending_size >= FLUSH_SIZE or self.conn.finished:
            await self.flush()
        if self.conn.finished:
            await self.aclose()

    async def flush(self) -> None:
        """Write every byte kept by ``send(..., flush=False)``, then drain (back-pressure)."""
        if self._pending:
            self._write_pending()
            await self.writer.drain()

    def _write_pending(self) -> None:
        pending = self._pending
        self.writer.write(b"".join(pending) if len(pending) > 1 else pending[0])
        pending.clear()
        self._pending_size = 0

    async def next_event(self) -> EventT:
        """Wait for the next event; raise ``ConnectionClosed`` at a clean end of stream.

        A ``RemoteProtocolError`` from the codec propagates; on a server-role connection its
        ``reply`` is sent first, and a fatal error closes the transport.
        """
        while True:
            try:
                event = self.conn.next_event()
            except RemoteProtocolError as error:
                await self._answer(error)
                raise
            if event is not NEED_DATA:
                return event
            if self._eof or self._closed or self.conn.finished:
                await self.aclose()
                raise ConnectionClosed("the peer closed the connection")
            if self._pending:
                await self.flush()  # the peer may be waiting for these before it sends more
            data = await self.reader.read(self._receive_size)
            if not data:
                self._eof = True
            self.conn.receive_data(data)

    async def _answer(self, error: RemoteProtocolError) -> None:
        reply = b"" if self._closed else error_reply_bytes(self.conn, error)
        if reply:
            self._pending.append(reply)  # after every reply still kept: order is the protocol's
        if self._pending:
            with contextlib.suppress(OSError):  # the peer may be gone already
                await self.flush()
        if error.fatal or self.conn.finished:
            await self.aclose()

    def __aiter__(self) -> AsyncIterator[EventT]:
        return self._events()

    async def _events(self) -> AsyncIterator[EventT]:
        while True:
            try:
                event = await self.next_event()
            except ConnectionClosed:
                return
            yield event

    async def aclose(self) -> None:
        """Flush, close the write side (the peer reads every byte, then EOF), then the socket."""
        if self._closed:
            return
        self._closed = True
        writer = self.writer
        with contextlib.suppress(OSError, RuntimeError):
            if self._pending and not writer.is_closing():
                self._write_pending()  # the transport still writes it out before closing
            if writer.can_write_eof() and not writer.is_closing():
                writer.write_eof()
        writer.close()
        try:
            async with asyncio.timeout(self.close_timeout):
                await writer.wait_closed()
        except TimeoutError:
            writer.transport.abort()  # the peer stopped reading: drop what it did not take
        except OSError:
            pass

    async def __aenter__(self) -> AsyncioConnection[SendT, EventT]:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


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
        conn = AsyncioConnection(factory(), reader, writer)
        try:
            await handler(conn)
        except ConnectionClosed:
            pass
        except (RemoteProtocolError, ConnectionError) as error:
            log.debug("connection ended: %r", error)
        finally:
            await conn.aclose()

    return await asyncio.start_server(on_connect, host, port, **kwargs)
