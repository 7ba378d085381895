"""The three adapters behind one test-facing shape, so that each behaviour is tested once.

Test bodies are ``async`` functions over :class:`Adapter` (``send``, ``flush``, ``next_event``,
``events``, ``aclose``, ``closed``). The asyncio and trio backends run them on their event loop.
The blocking backend runs them with no loop at all: its adapter calls the blocking methods, so
the coroutine never suspends and :func:`drive` steps it to the end in one go. Peers that a test
controls byte by byte are plain blocking sockets (:func:`tcp_pair`); anything that may wait on
such a peer goes through ``Backend.blocking`` (a worker thread for the async backends).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import pytest
import trio

from s3p_codec import RemoteProtocolError, Role
from s3p_codec.io import asyncio as aio_io
from s3p_codec.io import sync as sync_io
from s3p_codec.io import trio as trio_io
from s3p_codec.io._common import CLOSE_TIMEOUT, DEFAULT_RECEIVE_SIZE
from tests.io.linecodec import Line, LineConnection

T = TypeVar("T")

Inner = (
    sync_io.SyncConnection[Line, Line]
    | aio_io.AsyncioConnection[Line, Line]
    | trio_io.TrioConnection[Line, Line]
)
Handler = Callable[["Adapter"], Coroutine[Any, Any, None]]


def drive(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (a blocking test body) to its end."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("a blocking test body tried to suspend")


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class Adapter:
    """One adapter of any backend, with ``async`` methods."""

    def __init__(self, inner: Inner) -> None:
        self.inner = inner

    @property
    def closed(self) -> bool:
        return self.inner.closed

    @property
    def close_timeout(self) -> float:
        return self.inner.close_timeout

    async def send(self, event: Line, *, flush: bool = True) -> None:
        await _maybe(self.inner.send(event, flush=flush))

    async def flush(self) -> None:
        await _maybe(self.inner.flush())

    async def next_event(self) -> Line:
        return await _maybe(self.inner.next_event())  # type: ignore[no-any-return]

    async def receive_ahead(self) -> int:
        return await _maybe(self.inner.receive_ahead())  # type: ignore[no-any-return]

    async def events(self) -> list[Line]:
        if isinstance(self.inner, sync_io.SyncConnection):
            return list(self.inner)
        return [event async for event in self.inner]

    async def aclose(self) -> None:
        if isinstance(self.inner, sync_io.SyncConnection):
            self.inner.close()
        else:
            await self.inner.aclose()


def tcp_pair(*, small: bool = False) -> tuple[socket.socket, socket.socket]:
    """Two connected blocking TCP sockets on 127.0.0.1: (for the adapter, for the peer).

    ``small``: kernel buffers of a few KiB, so that a peer that does not read blocks a writer
    after about 10 KiB instead of several MiB.
    """
    with socket.create_server(("127.0.0.1", 0)) as listener:
        if small:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        ours = socket.socket()
        if small:
            ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        ours.connect(listener.getsockname())
        theirs, _ = listener.accept()
    ours.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    theirs.settimeout(5.0)
    return ours, theirs


def read_all(sock: socket.socket) -> bytes:
    """Everything until EOF."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        assert chunk, f"EOF after {data!r}"
        data += chunk
    return data


def nothing_arrives(sock: socket.socket, seconds: float = 0.2) -> bool:
    """True if no byte arrives (nor EOF) within ``seconds``."""
    timeout = sock.gettimeout()
    sock.settimeout(seconds)
    try:
        sock.recv(1)
    except TimeoutError:
        return True
    finally:
        sock.settimeout(timeout)
    return False


class Backend:
    """How one adapter family is run, connected, served and interrupted in a test."""

    name = ""

    def run(self, main: Callable[[], Coroutine[Any, Any, None]]) -> None:
        raise NotImplementedError

    async def wrap(
        self,
        sock: socket.socket,
        role: Role = Role.CLIENT,
        *,
        close_timeout: float = CLOSE_TIMEOUT,
        receive_size: int = DEFAULT_RECEIVE_SIZE,
    ) -> Adapter:
        """An adapter over an already connected socket."""
        options = {"close_timeout": close_timeout, "receive_size": receive_size}
        return Adapter(await self._adapt(sock, LineConnection(role), options))

    async def _adapt(
        self, sock: socket.socket, codec: LineConnection, options: dict[str, Any]
    ) -> Inner:
        raise NotImplementedError

    async def connect(self, port: int) -> Adapter:
        raise NotImplementedError

    def serve(self, handler: Handler) -> contextlib.AbstractAsyncContextManager[int]:
        """A server of line codecs running ``handler`` per connection; yields its port."""
        raise NotImplementedError

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """Call ``fn``, which may block on a peer socket, without stalling the adapters."""
        raise NotImplementedError

    async def sleep(self, seconds: float) -> None:
        raise NotImplementedError

    async def cut_short(self, conn: Adapter, wait: Callable[[], Awaitable[Any]], s: float) -> None:
        """Run ``wait`` and check that the backend's own time-out cut it short after ``s``."""
        raise NotImplementedError


class SyncBackend(Backend):
    name = "sync"

    def run(self, main: Callable[[], Coroutine[Any, Any, None]]) -> None:
        drive(main())

    async def _adapt(
        self, sock: socket.socket, codec: LineConnection, options: dict[str, Any]
    ) -> Inner:
        # A served socket has no time-out: what bounds a close must not depend on one.
        sock.settimeout(5.0 if codec.role is Role.CLIENT else None)
        return sync_io.SyncConnection(codec, sock, **options)

    async def connect(self, port: int) -> Adapter:
        return Adapter(sync_io.connect(LineConnection(Role.CLIENT), "127.0.0.1", port, timeout=5))

    @contextlib.asynccontextmanager
    async def serve(self, handler: Handler) -> AsyncIterator[int]:
        server = sync_io.serve(
            lambda: LineConnection(Role.SERVER), lambda conn: drive(handler(Adapter(conn)))
        )
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield server.address[1]
        finally:
            server.close()
            thread.join(5)

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        return fn(*args)

    async def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    async def cut_short(self, conn: Adapter, wait: Callable[[], Awaitable[Any]], s: float) -> None:
        assert isinstance(conn.inner, sync_io.SyncConnection)
        sock = conn.inner.socket
        timeout = sock.gettimeout()
        sock.settimeout(s)
        try:
            with pytest.raises(TimeoutError):
                await wait()
        finally:
            sock.settimeout(timeout)


class AsyncioBackend(Backend):
    name = "asyncio"

    def run(self, main: Callable[[], Coroutine[Any, Any, None]]) -> None:
        async def bounded() -> None:
            async with asyncio.timeout(15):
                await main()

        asyncio.run(bounded())

    async def _adapt(
        self, sock: socket.socket, codec: LineConnection, options: dict[str, Any]
    ) -> Inner:
        reader, writer = await asyncio.open_connection(sock=sock)
        return aio_io.AsyncioConnection(codec, reader, writer, **options)

    async def connect(self, port: int) -> Adapter:
        return Adapter(await aio_io.connect(LineConnection(Role.CLIENT), "127.0.0.1", port))

    @contextlib.asynccontextmanager
    async def serve(self, handler: Handler) -> AsyncIterator[int]:
        server = await aio_io.serve(
            lambda: LineConnection(Role.SERVER), lambda conn: handler(Adapter(conn))
        )
        try:
            yield server.sockets[0].getsockname()[1]
        finally:
            server.close()

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.to_thread(fn, *args)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def cut_short(self, conn: Adapter, wait: Callable[[], Awaitable[Any]], s: float) -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(s):
                await wait()


class TrioBackend(Backend):
    name = "trio"

    def run(self, main: Callable[[], Coroutine[Any, Any, None]]) -> None:
        async def bounded() -> None:
            with trio.fail_after(15):
                await main()

        trio.run(bounded)

    async def _adapt(
        self, sock: socket.socket, codec: LineConnection, options: dict[str, Any]
    ) -> Inner:
        stream = trio.SocketStream(trio.socket.from_stdlib_socket(sock))
        return trio_io.TrioConnection(codec, stream, **options)

    async def connect(self, port: int) -> Adapter:
        return Adapter(await trio_io.connect(LineConnection(Role.CLIENT), "127.0.0.1", port))

    @contextlib.asynccontextmanager
    async def serve(self, handler: Handler) -> AsyncIterator[int]:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(
                trio_io.serve,
                lambda: LineConnection(Role.SERVER),
                lambda conn: handler(Adapter(conn)),
            )
            try:
                yield listeners[0].socket.getsockname()[1]
            finally:
                nursery.cancel_scope.cancel()

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        return await trio.to_thread.run_sync(fn, *args)

    async def sleep(self, seconds: float) -> None:
        await trio.sleep(seconds)

    async def cut_short(self, conn: Adapter, wait: Callable[[], Awaitable[Any]], s: float) -> None:
        with trio.move_on_after(s) as scope:
            await wait()
        assert scope.cancelled_caught


BACKENDS = [SyncBackend(), AsyncioBackend(), TrioBackend()]


class Echo:
    """A server handler: echoes each line as ``echo:<line>``; ``QUIT`` gets ``BYE`` (finishes).

    Replies are kept, not written: ``next_event`` writes them before it waits for more input.
    """

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.errors: list[RemoteProtocolError] = []
        self.finished = 0

    async def run(self, conn: Adapter) -> None:
        try:
            while True:
                try:
                    line = await conn.next_event()
                except RemoteProtocolError as error:
                    self.errors.append(error)
                    if error.fatal:
                        raise
                    continue
                reply = Line(b"BYE") if line.data == b"QUIT" else Line(b"echo:" + line.data)
                await conn.send(reply, flush=False)
        finally:
            self.finished += 1

    async def wait_finished(self, count: int) -> None:
        deadline = time.monotonic() + 5
        while self.finished < count:
            assert time.monotonic() < deadline, "the handler did not end"
            await self.backend.sleep(0.01)
