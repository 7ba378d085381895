"""The trio adapter in both roles, over real sockets on 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable

import pytest
import trio

from s3p_codec import RemoteProtocolError, Role
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.trio import TrioConnection, connect, serve
from tests.io.linecodec import Line, LineConnection

pytestmark = [pytest.mark.network, pytest.mark.timeout(30)]

LineTrio = TrioConnection[Line, Line]


class EchoServer:
    """Echoes each line as ``echo:<line>``; ``QUIT`` is answered with ``BYE``, which finishes."""

    def __init__(self) -> None:
        self.errors: list[RemoteProtocolError] = []
        self.finished = 0
        self.port = 0

    async def run(self, conn: LineTrio) -> None:
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

    async def client(self) -> LineTrio:
        return await connect(LineConnection(Role.CLIENT), "127.0.0.1", self.port)

    async def raw(self) -> trio.SocketStream:
        return await trio.open_tcp_stream("127.0.0.1", self.port)

    async def wait_finished(self, count: int) -> None:
        while self.finished < count:
            await trio.sleep(0.01)


async def read_all(stream: trio.abc.ReceiveStream) -> bytes:
    chunks = []
    while chunk := await stream.receive_some(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def run(test: Callable[[EchoServer], Awaitable[None]]) -> None:
    async def main() -> None:
        echo = EchoServer()
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                factory = lambda: LineConnection(Role.SERVER)  # noqa: E731
                listeners = await nursery.start(serve, factory, echo.run)
                echo.port = listeners[0].socket.getsockname()[1]
                await test(echo)
                nursery.cancel_scope.cancel()

    trio.run(main)


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
        async with await echo.raw() as stream:
            await stream.send_all(b"QUIT\nnever answered\n")
            assert await read_all(stream) == b"BYE\n"
        await echo.wait_finished(1)

    run(test)


def test_fatal_remote_error_on_server_sends_the_reply_closes_and_reraises() -> None:
    async def test(echo: EchoServer) -> None:
        async with await echo.raw() as stream:
            await stream.send_all(b"a\n!x\nb\n")
            assert await read_all(stream) == b"echo:a\nERR bang\n"  # nothing after the error
        await echo.wait_finished(1)
        assert [e.fatal for e in echo.errors] == [True]

    run(test)


def test_recoverable_remote_error_sends_the_reply_and_keeps_the_connection() -> None:
    async def test(echo: EchoServer) -> None:
        async with await echo.client() as conn:
            await conn.stream.send_all(b"?q\nc\n")
            assert await conn.next_event() == Line(b"WARN question")
            assert await conn.next_event() == Line(b"echo:c")
        assert [e.fatal for e in echo.errors] == [False]

    run(test)


def test_peer_closing_mid_event_is_a_remote_error_and_the_server_keeps_serving() -> None:
    async def test(echo: EchoServer) -> None:
        async with await echo.raw() as stream:
            await stream.send_all(b"partial")
        await echo.wait_finished(1)
        assert echo.errors
        assert echo.errors[0].fatal
        async with await echo.client() as conn:
            await conn.send(Line(b"still here"))
            assert await conn.next_event() == Line(b"echo:still here")

    run(test)


def test_client_role_raises_without_sending_the_reply_and_closes() -> None:
    async def main() -> None:
        received: list[bytes] = []

        async def peer(stream: trio.SocketStream) -> None:
            await stream.send_all(b"!boom\n")
            received.append(await read_all(stream))

        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                listeners = await nursery.start(trio.serve_tcp, peer, 0)
                port = listeners[0].socket.getsockname()[1]
                conn = await connect(LineConnection(Role.CLIENT), "127.0.0.1", port)
                with pytest.raises(RemoteProtocolError):
                    await conn.next_event()
                assert conn.closed
                while not received:
                    await trio.sleep(0.01)
                nursery.cancel_scope.cancel()
        assert received == [b""]  # the client wrote no reply, just closed

    trio.run(main)


def test_send_waits_while_the_peer_does_not_read() -> None:
    """Back-pressure: ``send`` blocks in ``send_all`` instead of buffering without bound."""

    async def main() -> None:
        sent = 0

        async def sluggish(stream: trio.SocketStream) -> None:
            await trio.sleep_forever()

        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(trio.serve_tcp, sluggish, 0)
            port = listeners[0].socket.getsockname()[1]
            conn = await connect(LineConnection(Role.CLIENT), "127.0.0.1", port)
            with trio.move_on_after(0.5) as scope:
                while True:
                    await conn.send(Line(b"x" * 65536))
                    sent += 1
            assert scope.cancelled_caught
            nursery.cancel_scope.cancel()
        assert sent * 65536 < 64 << 20

    trio.run(main)


def test_send_without_flush_keeps_bytes_until_flush_next_event_or_close() -> None:
    async def main() -> None:
        peers: list[trio.SocketStream] = []

        async def accept(stream: trio.SocketStream) -> None:
            peers.append(stream)
            await trio.sleep_forever()

        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                listeners = await nursery.start(trio.serve_tcp, accept, 0)
                port = listeners[0].socket.getsockname()[1]
                conn = await connect(LineConnection(Role.CLIENT), "127.0.0.1", port)
                while not peers:
                    await trio.sleep(0.01)
                peer = peers[0]
                await conn.send(Line(b"one"), flush=False)
                await conn.send(Line(b"two"), flush=False)
                with trio.move_on_after(0.2) as scope:
                    await peer.receive_some(100)  # nothing written yet
                assert scope.cancelled_caught
                await conn.flush()
                assert await peer.receive_some(100) == b"one\ntwo\n"
                await conn.send(Line(b"three"), flush=False)
                got: list[Line] = []

                async def wait_reply() -> None:
                    got.append(await conn.next_event())  # must write "three" first

                nursery.start_soon(wait_reply)
                assert await peer.receive_some(100) == b"three\n"
                await peer.send_all(b"reply\n")
                while not got:
                    await trio.sleep(0.01)
                assert got == [Line(b"reply")]
                await conn.send(Line(b"four"), flush=False)
                await conn.aclose()
                assert await read_all(peer) == b"four\n"
                nursery.cancel_scope.cancel()

    trio.run(main)


def test_aclose_gives_up_on_a_peer_that_stopped_reading() -> None:
    async def main() -> None:
        async def deaf(stream: trio.SocketStream) -> None:
            await trio.sleep_forever()

        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(trio.serve_tcp, deaf, 0)
            port = listeners[0].socket.getsockname()[1]
            conn = await connect(LineConnection(Role.CLIENT), "127.0.0.1", port)
            conn.close_timeout = 0.2
            assert isinstance(conn.stream, trio.SocketStream)
            conn.stream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            with trio.move_on_after(0.3):
                while True:  # fill both kernel buffers: the peer reads nothing
                    await conn.send(Line(b"x" * 60000))
            await conn.send(Line(b"y" * 60000), flush=False)  # cannot fit in the send buffer
            started = trio.current_time()
            with trio.fail_after(5):
                await conn.aclose()
            assert trio.current_time() - started < 3
            assert conn.closed
            nursery.cancel_scope.cancel()

    trio.run(main)
