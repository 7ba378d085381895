"""What only the trio adapter does: ``send_all`` back-pressure, and cancelled writes."""

from __future__ import annotations

import pytest
import trio

from s3p_codec import Role
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.trio import TrioConnection, connect
from tests.io.backends import read_all, tcp_pair
from tests.io.linecodec import Line, LineConnection

pytestmark = [pytest.mark.network, pytest.mark.timeout(30)]


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


def test_a_write_cancelled_part_way_closes_the_connection() -> None:
    """trio cannot say how much of a cancelled ``send_all`` went out: going on would hand the
    peer a torn stream (half a frame, then the next one). The adapter closes instead."""

    async def main() -> None:
        ours, peer = tcp_pair(small=True)
        with peer:
            stream = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
            conn = TrioConnection(LineConnection(Role.CLIENT), stream)
            with trio.move_on_after(0.2) as scope:
                await conn.send(Line(b"x" * (1 << 20)))
            assert scope.cancelled_caught
            assert conn.closed
            with pytest.raises(ConnectionClosed):
                await conn.send(Line(b"y"))
            received = await trio.to_thread.run_sync(read_all, peer)
            assert 0 < len(received) < (1 << 20)
            assert received == b"x" * len(received)  # a prefix, then EOF: nothing after it

    trio.run(main)
