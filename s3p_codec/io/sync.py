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
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Generic, TypeVar

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

__all__ = ["SyncConnection", "SyncServer", "connect", "serve"]

SendT = TypeVar("SendT")
EventT = TypeVar("EventT")

log = logging.getLogger(__name__)


class SyncConnection(Generic[SendT, EventT]):
    """A codec ``Connection`` over a connected blocking socket.

    Not thread-safe: use it from one thread (or one thread sending and one receiving, which the
    socket allows but the codec's own state may not).
    """

    def __init__(
        self,
        conn: Connection[SendT, EventT],
        sock: socket.socket,
        *,
        receive_size: int = DEFAULT_RECEIVE_SIZE,
        close_timeout: float = CLOSE_TIMEOUT,
    ) -> None:
        self.conn = conn
        self.close_timeout = close_timeout
        """Seconds a close waits for the peer to take the last bytes before it just closes."""
        self.socket = sock
        self._receive_size = receive_size
        self._eof = False
        self._closed = False
        self._pending: list[bytes] = []  # encoded by send(..., flush=False), not yet written
        self._pending_size = 0

    @property
    def closed(self) -> bool:
        """True once ``close()`` ran (by the caller, or because the codec finished)."""
        return self._closed

    def send(self, event: SendT, *, flush: bool = True) -> None:
        """Encode ``event`` and write all of it; close the transport if the codec finished.

        The codec raises ``LocalProtocolError`` (and nothing is written) if the protocol forbids
        the event now. With ``flush=False`` the bytes are kept and written in one go with later
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
            self.flush()
        if self.conn.finished:
            self.close()

    def flush(self) -> None:
        """Write every byte kept by ``send(..., flush=False)``."""
        if self._pending:
            data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
            self._pending.clear()
            self._pending_size = 0
            self.socket.sendall(data)

    def next_event(self) -> EventT:
        """Wait for the next event; raise ``ConnectionClosed`` at a clean end of stream.

        A ``RemoteProtocolError`` from the codec propagates; on a server-role connection its
        ``reply`` is sent first, and a fatal error closes the transport.
        """
        while True:
            try:
                event = self.conn.next_event()
            except RemoteProtocolError as error:
                self._answer(error)
                raise
            if event is not NEED_DATA:
                return event
            if self._eof or self._closed or self.conn.finished:
                self.close()
                raise ConnectionClosed("the peer closed the connection")
            if self._pending:
                self.flush()  # the peer may be waiting for these before it sends more
            data = self.socket.recv(self._receive_size)
            if not data:
                self._eof = True
            self.conn.receive_data(data)

    def _answer(self, error: RemoteProtocolError) -> None:
        reply = b"" if self._closed else error_reply_bytes(self.conn, error)
        if reply:
            self._pending.append(reply)  # after every reply still kept: order is the protocol's
        if self._pending:
            with contextlib.suppress(OSError):  # the peer may be gone already
                self.flush()
        if error.fatal or self.conn.finished:
            self.close()

    def __iter__(self) -> Iterator[EventT]:
        """Every event until the peer closes cleanly."""
        while True:
            try:
                yield self.next_event()
            except ConnectionClosed:
                return

    def close(self) -> None:
        """Close the socket, write side first so the peer reads every byte sent, then EOF."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):  # TimeoutError included: a peer that stopped reading
            if self._pending:
                timeout = self.socket.gettimeout()
                if timeout is None or timeout > self.close_timeout:
                    self.socket.settimeout(self.close_timeout)
                self.flush()
            self.socket.shutdown(socket.SHUT_WR)
        self.socket.close()

    def __enter__(self) -> SyncConnection[SendT, EventT]:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


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


class SyncServer(Generic[SendT, EventT]):
    """A listening socket that hands each accepted connection to ``handler`` in a thread."""

    def __init__(
        self,
        listener: socket.socket,
        factory: Callable[[], Connection[SendT, EventT]],
        handler: Callable[[SyncConnection[SendT, EventT]], None],
    ) -> None:
        self.socket = listener
        # accept() wakes up this often to notice close(), which may come from another thread.
        listener.settimeout(0.1)
        self._factory = factory
        self._handler = handler
        self._stopping = threading.Event()
        self._threads: set[threading.Thread] = set()
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
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            thread = threading.Thread(target=self._run, args=(sock,), daemon=True)
            with self._lock:  # close() must never see a thread that is not started yet
                self._threads.add(thread)
                thread.start()

    def _run(self, sock: socket.socket) -> None:
        conn = SyncConnection(self._factory(), sock)
        try:
            self._handler(conn)
        except ConnectionClosed:
            pass
        except (RemoteProtocolError, ConnectionError) as error:
            log.debug("connection ended: %r", error)
        finally:
            conn.close()
            with self._lock:
                self._threads.discard(threading.current_thread())

    def close(self, timeout: float | None = 5.0) -> None:
        """Stop accepting, then wait up to ``timeout`` seconds for running handlers."""
        self._stopping.set()
        self.socket.close()
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)

    def __enter__(self) -> SyncServer[SendT, EventT]:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def serve(
    factory: Callable[[], Connection[SendT, EventT]],
    handler: Callable[[SyncConnection[SendT, EventT]], None],
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    backlog: int = 128,
) -> SyncServer[SendT, EventT]:
    """Bind and listen on ``host:port``; call ``serve_forever()`` on the result to accept.

    ``factory`` makes a fresh server-role codec per connection. ``handler`` gets the
    ``SyncConnection``; when it returns (or raises) the connection is closed.
    ``ConnectionClosed``, ``RemoteProtocolError`` (already answered) and connection resets
    end a handler quietly; anything else propagates out of its thread.
    """
    listener = socket.create_server((host, port), backlog=backlog)
    return SyncServer(listener, factory, handler)
