"""Blocking-socket adapter: one codec ``Connection`` driven over one ``socket.socket``.

::

    from s3p_codec import s3p, Role
    from s3p_codec.io.sync import connect

    with connect(s3p.Connection(Role.CLIENT), "127.0.0.1", 7500, timeout=5.0) as conn:
        conn.send(s3p.Create(b"orders"))
        print(conn.next_event())

``serve`` runs a small threaded server (one thread per connection), enough for tests, tools and
examples; use the asyncio or trio adapter for many connections.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Generic, Self, TypeVar

from s3p_codec._core.connection import Connection
from s3p_codec._core.errors import RemoteProtocolError
from s3p_codec.io import ConnectionClosed
from s3p_codec.io._common import (
    CLOSE_TIMEOUT,
    DEFAULT_RECEIVE_SIZE,
    HOLD,
    Driver,
    Step,
    run_blocking,
)

__all__ = ["SyncConnection", "SyncServer", "connect", "serve"]

SendT = TypeVar("SendT")
EventT = TypeVar("EventT")

log = logging.getLogger(__name__)


class _Closing:
    """``with`` support for anything with a ``close()``."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _SocketDriver(Driver[SendT, EventT]):
    """The shared steps over a blocking socket: every await here is a call that blocks, so a
    step never suspends and ``run_blocking`` runs it to its end."""

    _GONE = (OSError,)

    def __init__(
        self,
        conn: Connection[SendT, EventT],
        sock: socket.socket,
        *,
        receive_size: int,
        close_timeout: float,
    ) -> None:
        super().__init__(conn, receive_size=receive_size, close_timeout=close_timeout)
        self.socket = sock

    async def _write(self, data: bytes) -> None:
        """Write all of ``data`` within the socket's time-out; keep what it did not take.

        Not ``sendall``: after its time-out nobody can tell how much went out, so a retry
        would tear the stream. Here the unsent tail is held again, first in line.
        """
        sock = self.socket
        timeout = sock.gettimeout()
        deadline = None if timeout is None else time.monotonic() + timeout
        sent = 0
        try:
            with self._writing():
                sent = sock.send(data)
                if sent == len(data):
                    return
                # Partial: go on within what is left of the time-out for the whole write.
                try:
                    with memoryview(data) as view:
                        while sent < len(data):
                            if deadline is not None:
                                left = deadline - time.monotonic()
                                if left <= 0:
                                    raise TimeoutError("timed out")
                                sock.settimeout(left)
                            sent += sock.send(view[sent:])
                finally:
                    sock.settimeout(timeout)
        except BaseException:
            self._core.unsent(data[sent:])
            raise
        finally:
            self._written += sent  # ``bytes_written``, as the async adapters count it

    async def _receive(self, size: int) -> bytes:
        return self.socket.recv(size)

    async def _shutdown(self, final: bytes) -> None:
        sock = self.socket
        try:
            if final:
                timeout = sock.gettimeout()
                if timeout is None or timeout > self.close_timeout:
                    sock.settimeout(self.close_timeout)
                await self._write(final)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # TimeoutError included: a peer that stopped reading
        finally:
            sock.close()


class SyncConnection(_Closing, Generic[SendT, EventT]):
    """A codec ``Connection`` over a connected blocking socket.

    Not thread-safe: use it from one thread (or one thread sending and one receiving, which the
    socket allows but the codec's own state may not). The socket's time-out bounds each read and
    each write; a write that timed out keeps the bytes the socket did not take, so ``flush()``
    (or the close) goes on exactly where it stopped and the peer never reads a torn stream.
    """

    def __init__(
        self,
        conn: Connection[SendT, EventT],
        sock: socket.socket,
        *,
        receive_size: int = DEFAULT_RECEIVE_SIZE,
        close_timeout: float = CLOSE_TIMEOUT,
    ) -> None:
        self._driver = _SocketDriver(
            conn, sock, receive_size=receive_size, close_timeout=close_timeout
        )

    @property
    def conn(self) -> Connection[SendT, EventT]:
        """The codec this adapter drives."""
        return self._driver.conn

    @property
    def socket(self) -> socket.socket:
        """The connected socket (for its address or options; reading or writing it directly breaks
        the codec).
        """
        return self._driver.socket

    @property
    def bytes_written(self) -> int:
        """Bytes the socket has taken so far (a server's write-progress watch, as on the async
        adapters)."""
        return self._driver.bytes_written

    @property
    def write_waiting(self) -> bool:
        """True while a write waits for the socket to take bytes."""
        return self._driver.write_waiting

    @property
    def close_timeout(self) -> float:
        """Seconds a close waits for the peer to take the last bytes before it just closes."""
        return self._driver.close_timeout

    @close_timeout.setter
    def close_timeout(self, seconds: float) -> None:
        self._driver.close_timeout = seconds

    @property
    def closed(self) -> bool:
        """True once ``close()`` ran (by the caller, or because the codec finished)."""
        return self._driver.closed

    def send(self, event: SendT, *, flush: bool = True) -> None:
        """Encode ``event`` and write all of it; close the transport if the codec finished.

        The codec raises ``LocalProtocolError`` (and nothing is written) if the protocol forbids
        the event now. With ``flush=False`` the bytes are kept and written in one go with later
        ones: before ``next_event`` waits for the peer, on ``flush()``, on close, or once
        ``FLUSH_SIZE`` bytes are pending. A server answering a pipelined burst saves a system
        call per reply that way.
        """
        # The driver's steps, run at once (run_blocking) only when there is I/O to do.
        driver = self._driver
        after = driver._core.send(event, flush)
        if after is not HOLD:
            run_blocking(driver._act(after))

    def flush(self) -> None:
        """Write every byte kept by ``send(..., flush=False)``."""
        if self._driver._core.pending:
            run_blocking(self._driver.flush())

    def next_event(self) -> EventT:
        """Wait for the next event; raise ``ConnectionClosed`` at a clean end of stream.

        A ``RemoteProtocolError`` from the codec propagates; on a server-role connection its
        ``reply`` is sent first, and a fatal error closes the transport. A read that times out
        loses nothing: the next call goes on from there.
        """
        driver = self._driver
        event = driver._core.next_event()
        if isinstance(event, Step):
            return run_blocking(driver._wait(event))
        return event

    def receive_ahead(self) -> int:
        """Read once into the codec without asking it for events: bytes read, 0 once the peer
        closed (see ``Driver.receive_ahead``)."""
        return run_blocking(self._driver.receive_ahead())

    def __iter__(self) -> Iterator[EventT]:
        """Every event until the peer closes cleanly."""
        while True:
            try:
                yield self.next_event()
            except ConnectionClosed:
                return

    def close(self) -> None:
        """Close the socket, write side first so the peer reads every byte sent, then EOF.

        Bytes still held are written first, within ``close_timeout`` seconds at most.
        """
        run_blocking(self._driver.aclose())


def connect(
    conn: Connection[SendT, EventT],
    host: str,
    port: int,
    *,
    timeout: float | None = None,
    receive_size: int = DEFAULT_RECEIVE_SIZE,
) -> SyncConnection[SendT, EventT]:
    """Open a TCP connection to ``host:port`` and drive ``conn`` over it.

    ``timeout`` (seconds) bounds the connect and every later read or write (``TimeoutError``).
    Nagle's algorithm is disabled: request/reply protocols want small writes sent at once.
    """
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return SyncConnection(conn, sock, receive_size=receive_size)


class SyncServer(_Closing, Generic[SendT, EventT]):
    """A listening socket that hands each accepted connection to ``handler`` in a thread.

    ``timeout`` (seconds, or None for none) bounds every read and write on an accepted
    connection: a peer that goes silent, or stops reading, ends its handler with
    ``TimeoutError`` and its connection is closed, instead of holding a thread for ever.
    """

    def __init__(
        self,
        listener: socket.socket,
        factory: Callable[[], Connection[SendT, EventT]],
        handler: Callable[[SyncConnection[SendT, EventT]], None],
        *,
        timeout: float | None = None,
    ) -> None:
        self.socket = listener
        # accept() wakes up this often to notice close(), which may come from another thread.
        listener.settimeout(0.1)
        self.timeout = timeout
        self._factory = factory
        self._handler = handler
        self._stopping = threading.Event()
        self._threads: dict[threading.Thread, socket.socket] = {}
        self._lock = threading.Lock()

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) actually bound: with ``port=0`` the OS chose the port."""
        host, port = self.socket.getsockname()[:2]
        return str(host), int(port)

    def serve_forever(self) -> None:
        """Accept connections until ``close()``; each runs ``handler`` in its own thread."""
        while not self._stopping.is_set():
            try:
                sock, _ = self.socket.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stopping.is_set():
                    return
                raise
            sock.settimeout(self.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            thread = threading.Thread(target=self._run, args=(sock,), daemon=True)
            with self._lock:  # close() must never see a thread that is not started yet
                self._threads[thread] = sock
                thread.start()

    def _run(self, sock: socket.socket) -> None:
        conn = SyncConnection(self._factory(), sock)
        try:
            self._handler(conn)
        except ConnectionClosed:
            pass
        except (RemoteProtocolError, ConnectionError, TimeoutError) as error:
            log.debug("connection ended: %r", error)
        except OSError as error:
            if not self._stopping.is_set():
                raise
            log.debug("connection cut by close(): %r", error)
        finally:
            conn.close()
            with self._lock:
                self._threads.pop(threading.current_thread(), None)

    def close(self, timeout: float | None = 5.0) -> None:
        """Stop accepting, wait up to ``timeout`` seconds (in all) for running handlers, then
        cut the connections of those still running, so that none outlives the server.

        A handler blocked on a silent peer wakes up to an end of stream and returns.
        """
        self._stopping.set()
        self.socket.close()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        with self._lock:
            left = dict(self._threads)
        for sock in left.values():
            with contextlib.suppress(OSError):  # already closed by its handler
                sock.shutdown(socket.SHUT_RDWR)
        for thread in left:
            thread.join(CLOSE_TIMEOUT)


def serve(
    factory: Callable[[], Connection[SendT, EventT]],
    handler: Callable[[SyncConnection[SendT, EventT]], None],
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    backlog: int = 128,
    timeout: float | None = None,
) -> SyncServer[SendT, EventT]:
    """Bind and listen on ``host:port``; call ``serve_forever()`` on the result to accept.

    ``factory`` makes a fresh server-role codec per connection. ``handler`` gets the
    ``SyncConnection``; when it returns (or raises) the connection is closed. ``timeout``
    bounds each read and write on a connection (see ``SyncServer``).
    ``ConnectionClosed``, ``RemoteProtocolError`` (already answered), connection resets and
    time-outs end a handler quietly; anything else propagates out of its thread.
    """
    listener = socket.create_server((host, port), backlog=backlog)
    return SyncServer(listener, factory, handler, timeout=timeout)
