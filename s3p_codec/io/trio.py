"""trio adapter: one codec ``Connection`` driven over a ``trio.abc.Stream``.

::

    from s3p_codec import s3p, Role
    from s3p_codec.io.trio import connect, serve

    async with await connect(s3p.Connection(Role.CLIENT), "127.0.0.1", 7500) as conn:
        await conn.send(s3p.Create(b"orders"))
        reply = await conn.next_event()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(serve, lambda: s3p.Connection(Role.SERVER), handler)
        port = listeners[0].socket.getsockname()[1]

``send`` returns once the stream accepted every byte (``send_all``), which is trio's own
back-pressure. Needs the ``trio`` extra.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Generic, NoReturn, TypeVar

import trio

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

__all__ = ["TrioConnection", "connect", "serve"]

SendT = TypeVar("SendT")
EventT = TypeVar("EventT")

log = logging.getLogger(__name__)

_GONE = (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError)


class TrioConnection(Generic[SendT, EventT]):
    """A codec ``Connection`` over a trio stream (usually a ``trio.SocketStream``).

    One task may wait in ``next_event`` while another sends; trio itself refuses two concurrent
    senders or receivers on one stream (``BusyResourceError``).
    """

    def __init__(
        self,
        conn: Connection[SendT, EventT],
        stream: trio.abc.Stream,
        *,
        receive_size: int = DEFAULT_RECEIVE_SIZE,
        close_timeout: float = CLOSE_TIMEOUT,
    ) -> None:
        self.conn = conn
        self.close_timeout = close_timeout
        """Seconds a close waits for the peer to take the last bytes before it just closes."""
        self.stream = stream
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
        """Encode ``event`` and send all of it; close the stream if the codec finished.

        With ``flush=False`` the bytes are kept and sent in one go with later ones: before
        ``next_event`` waits for the peer, on ``flush()``, on close, or once ``FLUSH_SIZE``
        bytes are pending. A server answering a pipelined burst saves a system call per reply
        that way.
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
        """Send every byte kept by ``send(..., flush=False)``."""
        pending = self._pending
        if pending:
            data = b"".join(pending) if len(pending) > 1 else pending[0]
            pending.clear()
            self._pending_size = 0
            await self.stream.send_all(data)

    async def next_event(self) -> EventT:
        """Wait for the next event; raise ``ConnectionClosed`` at a clean end of stream.

        A ``RemoteProtocolError`` from the codec propagates; on a server-role connection its
        ``reply`` is sent first, and a fatal error closes the stream.
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
            data = await self.stream.receive_some(self._receive_size)
            if not data:
                self._eof = True
            self.conn.receive_data(bytes(data))

    async def _answer(self, error: RemoteProtocolError) -> None:
        reply = b"" if self._closed else error_reply_bytes(self.conn, error)
        if reply:
            self._pending.append(reply)  # after every reply still kept: order is the protocol's
        if self._pending:
            with contextlib.suppress(*_GONE):  # the peer may be gone already
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
        """Close the write side first (the peer reads every byte, then EOF), then the stream."""
        if self._closed:
            return
        self._closed = True
        try:
            # A peer that stopped reading gets close_timeout seconds to take the last bytes.
            with trio.move_on_after(self.close_timeout), contextlib.suppress(*_GONE):
                if self._pending:
                    await self.flush()
                if isinstance(self.stream, trio.abc.HalfCloseableStream):
                    await self.stream.send_eof()
        finally:
            await self.stream.aclose()  # closes even when cancelled (trio's rule for aclose)

    async def __aenter__(self) -> TrioConnection[SendT, EventT]:
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
) -> TrioConnection[SendT, EventT]:
    """Open a TCP stream (``trio.open_tcp_stream``, which disables Nagle) for ``conn``.

    Wrap the call in ``trio.fail_after`` to bound it.
    """
    stream = await trio.open_tcp_stream(host, port)
    return TrioConnection(conn, stream, receive_size=receive_size)


async def serve(
    factory: Callable[[], Connection[SendT, EventT]],
    handler: Callable[[TrioConnection[SendT, EventT]], Awaitable[None]],
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    handler_nursery: trio.Nursery | None = None,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> NoReturn:
    """Listen on ``host:port`` and run ``handler`` in a task per connection, until cancelled.

    Start it with ``listeners = await nursery.start(serve, factory, handler)``; then
    ``listeners[0].socket.getsockname()[1]`` is the port the OS chose for ``port=0``.
    ``factory`` makes a fresh server-role codec per connection. When ``handler`` returns or
    raises, the connection is closed. ``ConnectionClosed``, ``RemoteProtocolError`` (already
    answered by the adapter) and broken streams end a handler quietly; other exceptions
    propagate (trio's ``serve_tcp`` then cancels the server).
    """

    async def on_connect(stream: trio.SocketStream) -> None:
        conn = TrioConnection(factory(), stream)
        try:
            await handler(conn)
        except ConnectionClosed:
            pass
        except (RemoteProtocolError, trio.BrokenResourceError) as error:
            log.debug("connection ended: %r", error)
        finally:
            await conn.aclose()

    await trio.serve_tcp(
        on_connect, port, host=host, handler_nursery=handler_nursery, task_status=task_status
    )
    raise AssertionError("trio.serve_tcp returned")  # it runs until cancelled
