"""The asyncio adapter in both roles, over real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from s3p_codec import RemoteProtocolError, Role
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.asyncio import AsyncioConnection, connect, serve
from tests.io.linecodec import Line, LineConnection

pytestmark = [pytest.mark.network, pytest.mark.timeout(30)]

LineAsyncio = AsyncioConnection[Line, Line]


class EchoServer:
    """Echoes each line as ``echo:<line>``; ``QUIT`` is answered with ``BYE``, which finishes."""

    def __init__(self) -> None:
        self.errors: list[RemoteProtocolError] = []
        self.finished = 0
        self.port = 0

    async def run(self, conn: LineAsyncio) -> None:
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
                # Kept, not written: next_event writes them before it waits for more input.
                await conn.send(reply, flush=False)
        finally:
            self.finished += 1

    async def client(self) -> LineAsyncio:
        return await connect(LineConnection(Role.CLIENT), "127.0.0.1", self.port)

    async def raw(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection("127.0.0.1", self.port)

    async def wait_finished(self, count: int) -> None:
        while self.finished < count:
            await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def echo_server() -> AsyncIterator[EchoServer]:
    echo = EchoServer()
    server = await serve(lambda: LineConnection(Role.SERVER), echo.run)
    echo.port = server.sockets[0].getsockname()[1]
    try:
        yield echo
    finally:
        server.close()
        await server.wait_closed()


def run(test: Callable[[EchoServer], Awaitable[None]]) -> None:
    async def main() -> None:
        async with echo_server() as echo:
            async with asyncio.timeout(10):
                await test(echo)

    asyncio.run(main())


def test_client_and_server_roles_exchange_events() -> None:
    async def test(echo: EchoServer) -> None:
        async with await echo.client() as conn:
            for word in (b"a", b"bb", b"ccc"):
                await conn.send(Line(word))
            got = [await conn.next_event() for _ in range(3)]
            assert got == [Line(b"echo:a"), Line(b"echo:bb"), Line(b"echo:ccc")]

    run(test)


def test_async_iteration_ends_at_clean_eof_and_next_event_raises_connection_closed() -> None:
    async def test(echo: EchoServer) -> None:
        conn = await echo.client()
        await conn.send(Line(b"x"))
        await conn.send(Line(b"QUIT"))
        assert [line async for line in conn] == [Line(b"echo:x"), Line(b"BYE")]
        with pytest.raises(ConnectionClosed):
            await conn.next_event()
        assert conn.closed

    run(test)


def test_send_on_a_closed_connection_raises_connection_closed() -> None:
    async def test(echo: EchoServer) -> None:
        conn = await echo.client()
        await conn.aclose()
        with pytest.raises(ConnectionClosed):
            await conn.send(Line(b"late"))

    run(test)


def test_a_finished_codec_closes_the_transport_after_sending() -> None:
    async def test(echo: EchoServer) -> None:
        reader, writer = await echo.raw()
        writer.write(b"QUIT\nnever answered\n")
        assert await reader.read() == b"BYE\n"
        writer.close()
        await echo.wait_finished(1)

    run(test)


def test_fatal_remote_error_on_server_sends_the_reply_closes_and_reraises() -> None:
    async def test(echo: EchoServer) -> None:
        reader, writer = await echo.raw()
        writer.write(b"a\n!x\nb\n")
        assert await reader.read() == b"echo:a\nERR bang\n"  # nothing after the error reply
        writer.close()
        await echo.wait_finished(1)
        assert [e.fatal for e in echo.errors] == [True]

    run(test)


def test_recoverable_remote_error_sends_the_reply_and_keeps_the_connection() -> None:
    async def test(echo: EchoServer) -> None:
        async with await echo.client() as conn:
            conn.writer.write(b"?q\nc\n")
            assert await conn.next_event() == Line(b"WARN question")
            assert await conn.next_event() == Line(b"echo:c")
        assert [e.fatal for e in echo.errors] == [False]

    run(test)


def test_peer_closing_mid_event_is_a_remote_error_and_the_server_keeps_serving() -> None:
    async def test(echo: EchoServer) -> None:
        _, writer = await echo.raw()
        writer.write(b"partial")
        writer.close()
        await echo.wait_finished(1)
        assert echo.errors
        assert echo.errors[0].fatal
        async with await echo.client() as conn:
            await conn.send(Line(b"still here"))
            assert await conn.next_event() == Line(b"echo:still here")

    run(test)


def test_client_role_raises_without_sending_the_reply_and_closes() -> None:
    async def main() -> None:
        received: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

        async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"!boom\n")
            received.set_result(await reader.read())
            writer.close()

        server = await asyncio.start_server(peer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with asyncio.timeout(10):
            conn = await connect(LineConnection(Role.CLIENT), "127.0.0.1", port)
            with pytest.raises(RemoteProtocolError):
                await conn.next_event()
            assert conn.closed
            assert await received == b""  # the client wrote no reply, just closed
        server.close()
        await server.wait_closed()

    asyncio.run(main())


def test_send_waits_for_drain_when_the_peer_does_not_read() -> None:
    """Back-pressure: ``send`` must block instead of buffering without bound."""

    async def main() -> None:
        release = asyncio.Event()

        async def sluggish(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await release.wait()  # reads nothing until told
            while await reader.read(1 << 20):
                pass
            writer.close()

        server = await asyncio.start_server(sluggish, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        conn = await connect(LineConnection(Role.CLIENT), "127.0.0.1", port)
        chunk = Line(b"x" * 65536)
        sent = 0

        async def flood() -> None:
            nonlocal sent
            while True:
                await conn.send(chunk)
                sent += 1

        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.5):
                await flood()
        # Kernel buffers on both ends hold a few MiB at most; without drain() the loop would
        # have queued hundreds of MiB in user space by then.
        assert sent * len(chunk.data) < 64 << 20
        assert conn.writer.transport.get_write_buffer_size() <= 2 * 65536 + 65536
        release.set()
        await conn.aclose()
        server.close()
        await server.wait_closed()

    asyncio.run(main())


def test_send_without_flush_keeps_bytes_until_flush_next_event_or_close() -> None:
    async def main() -> None:
        peers: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await peers.put((reader, writer))

        server = await asyncio.start_server(accept, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with asyncio.timeout(10):
            conn = await connect(LineConnection(Role.CLIENT), "127.0.0.1", port)
            reader, writer = await peers.get()
            await conn.send(Line(b"one"), flush=False)
            await conn.send(Line(b"two"), flush=False)
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2):
                    await reader.read(100)  # nothing written yet
            await conn.flush()
            assert await reader.readexactly(8) == b"one\ntwo\n"
            await conn.send(Line(b"three"), flush=False)
            waiting = asyncio.create_task(conn.next_event())  # must write "three" first
            assert await reader.readexactly(6) == b"three\n"
            writer.write(b"reply\n")
            assert await waiting == Line(b"reply")
            await conn.send(Line(b"four"), flush=False)
            await conn.aclose()
            assert await reader.read() == b"four\n"
            writer.close()
        server.close()
        await server.wait_closed()

    asyncio.run(main())


def test_aclose_gives_up_on_a_peer_that_stopped_reading() -> None:
    async def main() -> None:
        async def deaf(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await asyncio.sleep(30)

        server = await asyncio.start_server(deaf, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        conn = await connect(LineConnection(Role.CLIENT), "127.0.0.1", port)
        conn.close_timeout = 0.2

        async def flood() -> None:
            while True:  # until drain() blocks: the transport holds what the peer won't take
                await conn.send(Line(b"x" * 65536))

        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                await flood()
        loop = asyncio.get_running_loop()
        started = loop.time()
        async with asyncio.timeout(5):
            await conn.aclose()
        assert loop.time() - started < 3
        assert conn.writer.transport.is_closing()
        server.close()

    asyncio.run(main())
