"""What every adapter does alike (sync, asyncio, trio), each test run once per backend.

Real sockets on 127.0.0.1 throughout; see ``tests/io/backends.py`` for how one test body drives
all three adapters.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Awaitable, Callable

import pytest

from s3p_codec import RemoteProtocolError, Role
from s3p_codec.io import ConnectionClosed
from tests.io.backends import (
    BACKENDS,
    Backend,
    Echo,
    nothing_arrives,
    read_all,
    read_exactly,
    tcp_pair,
)
from tests.io.linecodec import Line

pytestmark = [pytest.mark.network, pytest.mark.timeout(30)]


@pytest.fixture(params=BACKENDS, ids=lambda backend: backend.name)
def backend(request: pytest.FixtureRequest) -> Backend:
    chosen: Backend = request.param
    return chosen


def with_echo(backend: Backend, test: Callable[[Echo, int], Awaitable[None]]) -> None:
    """Run ``test(echo, port)`` against an echo server of ``backend``."""

    async def main() -> None:
        echo = Echo(backend)
        async with backend.serve(echo.run) as port:
            await test(echo, port)

    backend.run(main)


def raw(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5.0)


def test_client_and_server_roles_exchange_events(backend: Backend) -> None:
    async def test(echo: Echo, port: int) -> None:
        conn = await backend.connect(port)
        for word in (b"a", b"bb", b"ccc"):
            await conn.send(Line(word))
        got = [await conn.next_event() for _ in range(3)]
        assert got == [Line(b"echo:a"), Line(b"echo:bb"), Line(b"echo:ccc")]
        await conn.aclose()

    with_echo(backend, test)


def test_iteration_ends_at_clean_eof_and_next_event_raises_connection_closed(
    backend: Backend,
) -> None:
    async def test(echo: Echo, port: int) -> None:
        conn = await backend.connect(port)
        await conn.send(Line(b"x"))
        await conn.send(Line(b"QUIT"))  # the server answers BYE, which finishes it: it closes
        assert await conn.events() == [Line(b"echo:x"), Line(b"BYE")]
        with pytest.raises(ConnectionClosed):
            await conn.next_event()
        assert conn.closed

    with_echo(backend, test)


def test_send_on_a_closed_connection_raises_connection_closed(backend: Backend) -> None:
    async def test(echo: Echo, port: int) -> None:
        conn = await backend.connect(port)
        await conn.aclose()
        with pytest.raises(ConnectionClosed):
            await conn.send(Line(b"late"))

    with_echo(backend, test)


def test_a_finished_codec_closes_the_transport_after_sending(backend: Backend) -> None:
    async def test(echo: Echo, port: int) -> None:
        with raw(port) as sock:
            sock.sendall(b"QUIT\nnever answered\n")
            assert await backend.blocking(read_all, sock) == b"BYE\n"
        await echo.wait_finished(1)

    with_echo(backend, test)


def test_fatal_remote_error_on_server_sends_the_reply_closes_and_reraises(
    backend: Backend,
) -> None:
    async def test(echo: Echo, port: int) -> None:
        with raw(port) as sock:
            sock.sendall(b"a\n!x\nb\n")
            # Held replies first, then the error's reply, then nothing.
            assert await backend.blocking(read_all, sock) == b"echo:a\nERR bang\n"
        await echo.wait_finished(1)
        assert [e.fatal for e in echo.errors] == [True]

    with_echo(backend, test)


def test_recoverable_remote_error_sends_the_reply_and_keeps_the_connection(
    backend: Backend,
) -> None:
    async def test(echo: Echo, port: int) -> None:
        with raw(port) as sock:
            sock.sendall(b"?q\nc\n")
            expected = b"WARN question\necho:c\n"
            assert await backend.blocking(read_exactly, sock, len(expected)) == expected
        await echo.wait_finished(1)
        assert [e.fatal for e in echo.errors] == [False]

    with_echo(backend, test)


def test_peer_closing_mid_event_is_a_remote_error_and_the_server_keeps_serving(
    backend: Backend,
) -> None:
    async def test(echo: Echo, port: int) -> None:
        with raw(port) as sock:
            sock.sendall(b"partial")
        await echo.wait_finished(1)
        assert [e.fatal for e in echo.errors] == [True]
        conn = await backend.connect(port)
        await conn.send(Line(b"still here"))
        assert await conn.next_event() == Line(b"echo:still here")
        await conn.aclose()

    with_echo(backend, test)


def test_client_role_raises_without_sending_the_reply_and_closes(backend: Backend) -> None:
    async def main() -> None:
        ours, peer = tcp_pair()
        with peer:
            conn = await backend.wrap(ours, Role.CLIENT)
            peer.sendall(b"!boom\n")
            with pytest.raises(RemoteProtocolError):
                await conn.next_event()
            assert conn.closed
            assert await backend.blocking(read_all, peer) == b""  # no reply, just EOF

    backend.run(main)


def test_events_split_across_many_reads_come_out_whole(backend: Backend) -> None:
    async def main() -> None:
        ours, peer = tcp_pair()
        with peer:
            conn = await backend.wrap(ours, receive_size=1)
            peer.sendall(b"one byte at a time\n")
            assert await conn.next_event() == Line(b"one byte at a time")
            await conn.aclose()

    backend.run(main)


def test_send_without_flush_keeps_bytes_until_flush_next_event_or_close(
    backend: Backend,
) -> None:
    async def main() -> None:
        ours, peer = tcp_pair()
        with peer:
            conn = await backend.wrap(ours)
            await conn.send(Line(b"one"), flush=False)
            await conn.send(Line(b"two"), flush=False)
            assert await backend.blocking(nothing_arrives, peer)
            await conn.flush()
            assert await backend.blocking(read_exactly, peer, 8) == b"one\ntwo\n"
            await conn.send(Line(b"three"), flush=False)
            # next_event has to wait for the peer: it writes what is held first.
            await backend.cut_short(conn, conn.next_event, 0.2)
            assert await backend.blocking(read_exactly, peer, 6) == b"three\n"
            peer.sendall(b"reply\n")
            assert await conn.next_event() == Line(b"reply")
            await conn.send(Line(b"four"), flush=False)
            await conn.aclose()
            assert await backend.blocking(read_all, peer) == b"four\n"

    backend.run(main)


def test_a_wait_for_an_event_cut_short_loses_no_bytes(backend: Backend) -> None:
    """Cancellation (asyncio, trio) or a socket time-out (sync) in ``next_event``: the bytes
    already read stay with the codec, and the next call completes the event."""

    async def main() -> None:
        ours, peer = tcp_pair()
        with peer:
            conn = await backend.wrap(ours)
            await backend.cut_short(conn, conn.next_event, 0.1)
            peer.sendall(b"first half")
            await backend.cut_short(conn, conn.next_event, 0.2)
            peer.sendall(b", second half\nnext\n")
            assert await conn.next_event() == Line(b"first half, second half")
            assert await conn.next_event() == Line(b"next")
            assert not conn.closed
            await conn.aclose()

    backend.run(main)


def test_receive_ahead_reads_without_parsing_and_loses_nothing(backend: Backend) -> None:
    """What a server waiting on something else uses to notice a peer leaving: bytes read
    ahead come out later, in order, as events; 0 means the peer closed."""

    async def main() -> None:
        ours, peer = tcp_pair()
        with peer:
            conn = await backend.wrap(ours)
            await backend.cut_short(conn, conn.receive_ahead, 0.1)  # nothing sent: loses nothing
            peer.sendall(b"one\ntw")
            got = 0
            while got < 6:
                got += await conn.receive_ahead()
            assert got == 6
            peer.sendall(b"o\n")
            peer.shutdown(socket.SHUT_WR)
            while await conn.receive_ahead():
                pass
            assert await conn.receive_ahead() == 0  # and stays 0 after the end of stream
            assert await conn.events() == [Line(b"one"), Line(b"two")]
            assert conn.closed  # the clean end of stream closed it

    backend.run(main)


async def timed(wait: Awaitable[object]) -> float:
    started = time.monotonic()
    await wait
    return time.monotonic() - started


def test_close_gives_up_on_a_peer_that_stopped_reading(backend: Backend) -> None:
    async def main() -> None:
        ours, peer = tcp_pair(small=True)
        with peer:
            conn = await backend.wrap(ours, close_timeout=0.2)
            await conn.send(Line(b"x" * 60_000), flush=False)  # more than the buffers take
            assert await timed(conn.aclose()) < 3
            assert conn.closed

    backend.run(main)


def test_the_last_reply_of_a_finished_codec_to_a_peer_that_stopped_reading_is_bounded(
    backend: Backend,
) -> None:
    """A codec that finished is closed, and the close (bounded) writes its last bytes; no
    unbounded write may come first."""

    async def main() -> None:
        ours, peer = tcp_pair(small=True)
        with peer:
            conn = await backend.wrap(ours, Role.SERVER, close_timeout=0.2)
            await conn.send(Line(b"x" * 60_000), flush=False)
            assert await timed(conn.send(Line(b"BYE"))) < 3
            assert conn.closed

    backend.run(main)


def test_a_fatal_error_reply_to_a_peer_that_stopped_reading_is_bounded(backend: Backend) -> None:
    """The reply owed for a fatal error goes out through the close: a peer that sends a bad
    request and reads nothing gets ``close_timeout`` seconds, not a handler stuck for ever."""

    async def main() -> None:
        ours, peer = tcp_pair(small=True)
        with peer:
            conn = await backend.wrap(ours, Role.SERVER, close_timeout=0.2)
            bad = b"%" + b"x" * 200_000 + b"\n"  # its reply is as large: more than buffers take
            sender = threading.Thread(target=peer.sendall, args=(bad,), daemon=True)
            sender.start()
            started = time.monotonic()
            with pytest.raises(RemoteProtocolError) as caught:
                await conn.next_event()
            assert time.monotonic() - started < 3
            assert caught.value.fatal
            assert conn.closed
            sender.join(5)
            # What reached the peer is a prefix of the reply, never anything else.
            peer.settimeout(1.0)
            received = b""
            try:
                while chunk := peer.recv(1 << 20):
                    received += chunk
            except OSError:
                pass  # the close gave up: a reset is allowed
            assert (b"ERR " + bad).startswith(received)

    backend.run(main)
