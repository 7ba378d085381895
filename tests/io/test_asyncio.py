"""What only the asyncio adapter does: drain back-pressure, and the transport's own buffer."""

from __future__ import annotations

import asyncio

import pytest

from s3p_codec import Role
from s3p_codec.io.asyncio import AsyncioConnection, connect
from tests.io.backends import tcp_pair
from tests.io.linecodec import Line, LineConnection

pytestmark = [pytest.mark.network, pytest.mark.timeout(30)]


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
        assert not conn.closed  # a cancelled drain() loses nothing: the connection goes on
        release.set()
        await conn.aclose()
        server.close()
        await server.wait_closed()

    asyncio.run(main())


def test_aclose_gives_up_on_bytes_the_transport_holds_for_a_peer_that_stopped_reading() -> None:
    async def main() -> None:
        ours, peer = tcp_pair(small=True)
        with peer:
            reader, writer = await asyncio.open_connection(sock=ours)
            conn = AsyncioConnection(LineConnection(Role.CLIENT), reader, writer)
            conn.close_timeout = 0.2
            writer.write(b"x" * (1 << 20))  # the transport holds what the peer won't take
            loop = asyncio.get_running_loop()
            started = loop.time()
            async with asyncio.timeout(5):
                await conn.aclose()
            assert loop.time() - started < 3
            assert writer.transport.is_closing()
            assert writer.transport.get_write_buffer_size() == 0  # dropped: aborted

    asyncio.run(main())


def test_a_cancelled_aclose_aborts_the_transport() -> None:
    """A close cancelled while it waits for the peer must not leave the socket open behind
    the caller's back, holding its bytes until the peer reads."""

    async def main() -> None:
        ours, peer = tcp_pair(small=True)
        with peer:
            reader, writer = await asyncio.open_connection(sock=ours)
            conn = AsyncioConnection(LineConnection(Role.CLIENT), reader, writer)
            conn.close_timeout = 30
            await conn.send(Line(b"x" * 60_000), flush=False)
            closing = asyncio.create_task(conn.aclose())
            await asyncio.sleep(0.2)
            closing.cancel()
            with pytest.raises(asyncio.CancelledError):
                await closing
            assert writer.transport.get_write_buffer_size() == 0
            await asyncio.sleep(0.05)  # the aborted transport lets go of its socket
            assert ours.fileno() == -1

    asyncio.run(main())
