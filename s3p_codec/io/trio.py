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
from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

try:
    import trio
except ModuleNotFoundError as exc:  # one clear line naming the extra, not a bare traceback
    from s3p_codec._extras import MissingExtra

    raise MissingExtra("trio", "s3p_codec.io.trio", exc.name or "trio") from None

from s3p_codec._core.connection import Connection
from s3p_codec.io._common import CLOSE_TIMEOUT, DEFAULT_RECEIVE_SIZE, WRITE_PIECE, Driver

__all__ = ["TrioConnection", "connect", "serve"]

SendT = TypeVar("SendT")
EventT = TypeVar("EventT")

_GONE = (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError)


class TrioConnection(Driver[SendT, EventT]):
    """A codec ``Connection`` over a trio stream (usually a ``trio.SocketStream``).

    One task may wait in ``next_event`` while another sends; trio itself refuses two concurrent
    senders or receivers on one stream (``BusyResourceError``). A write cancelled part-way
    closes the connection: trio cannot say how much of it went out, so the byte stream the peer
    reads is no longer whole, and later calls raise ``ConnectionClosed``.
    """

    _GONE = _GONE

    def __init__(
        self,
        conn: Connection[SendT, EventT],
        stream: trio.abc.Stream,
        *,
        receive_size: int = DEFAULT_RECEIVE_SIZE,
        close_timeout: float = CLOSE_TIMEOUT,
    ) -> None:
        super().__init__(conn, receive_size=receive_size, close_timeout=close_timeout)
        self.stream = stream

    async def _write(self, data: bytes) -> None:
        # In WRITE_PIECE pieces, so that ``bytes_written`` moves as the peer reads.
        start = done = 0
        try:
            with self._writing():
                view = memoryview(data)
                while done < len(data):
                    start, done = done, min(done + WRITE_PIECE, len(data))
                    await self.stream.send_all(view[start:done])
                    self._written += done - start
        except trio.BusyResourceError:
            if start == 0:
                self._core.unsent(data)  # refused before a byte went out: another task sends
                raise
            self._core.abandon()
            await trio.aclose_forcefully(self.stream)
            raise
        except BaseException:
            # Cancelled or broken part-way: some unknown prefix of data went out.
            self._core.abandon()
            await trio.aclose_forcefully(self.stream)
            raise

    async def _receive(self, size: int) -> bytes:
        # A cancelled receive_some received nothing (trio's rule): nothing is lost.
        return bytes(await self.stream.receive_some(size))

    async def _shutdown(self, final: bytes) -> None:
        stream = self.stream
        try:
            # A peer that stopped reading gets close_timeout seconds to take the last bytes.
            with trio.move_on_after(self.close_timeout), contextlib.suppress(*_GONE):
                if final:
                    await stream.send_all(final)
                if isinstance(stream, trio.abc.HalfCloseableStream):
                    await stream.send_eof()
        finally:
            await stream.aclose()  # closes even when cancelled (trio's rule for aclose)


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
        await TrioConnection(factory(), stream)._serve(handler, (trio.BrokenResourceError,))

    await trio.serve_tcp(
        on_connect, port, host=host, handler_nursery=handler_nursery, task_status=task_status
    )
    raise AssertionError("trio.serve_tcp returned")  # it runs until cancelled
