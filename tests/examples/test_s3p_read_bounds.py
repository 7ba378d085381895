"""S3P READ replies under a byte bound, and replies the client never takes (issue 29 item 6).
Real sockets on 127.0.0.1; every wait is bounded."""

from __future__ import annotations

import asyncio
import socket

import pytest
import trio

from examples.s3p_server import Server, Store, serve_asyncio, serve_trio
from s3p_codec import Role, s3p

pytestmark = [pytest.mark.network, pytest.mark.timeout(60)]

MIB = 1 << 20


def filled(limits: s3p.Limits, megabytes: int) -> Store:
    store = Store(limits)
    store.execute(s3p.Create(b"big"))
    for _ in range(megabytes):
        assert isinstance(store.execute(s3p.Append(b"big", (bytes(MIB),))), s3p.AppendReply)
    return store


def test_a_read_reply_is_cut_at_a_record_boundary_at_the_byte_bound() -> None:
    limits = s3p.Limits(max_read_reply_bytes=3 * MIB + 10)
    reply = filled(limits, 8).execute(s3p.Read(b"big", count=1000))
    assert isinstance(reply, s3p.ReadReply)
    assert len(reply.records) == 3  # as COUNT 3 would: the client reads on from the last ID
    with pytest.raises(ValueError, match="max_read_reply_bytes"):
        s3p.Limits(max_read_reply_bytes=10)


@pytest.mark.slow
def test_a_reply_the_client_never_reads_closes_its_connection_after_the_timeout() -> None:
    """With 64 MiB stored, one READ from a client that never reads pinned ~125 MB until the
    300 s idle time-out. Now the reply holds at most ``max_read_reply_bytes`` (8 MiB) and the
    connection closes once the reply has not moved for the request time-out."""

    async def main() -> None:
        server = Server(filled(s3p.Limits(), 24), request_timeout=1.0, idle_timeout=300.0)
        listener = await serve_asyncio(server, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        try:
            client = s3p.Connection(Role.CLIENT)
            sock.sendall(client.send(s3p.Read(b"big", count=1000)))
            async with asyncio.timeout(10):
                while server.shed["response not taken"] < 1:
                    await asyncio.sleep(0.1)
            assert server.connections == 0
        finally:
            sock.close()
            listener.close()
            await listener.wait_closed()

    asyncio.run(main())


@pytest.mark.slow
def test_on_trio_too_a_reply_the_client_never_reads_closes_its_connection() -> None:
    async def main() -> None:
        server = Server(filled(s3p.Limits(), 24), request_timeout=1.0, idle_timeout=300.0)
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(serve_trio, server, "127.0.0.1", 0)
            port = listeners[0].socket.getsockname()[1]
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", port))
            try:
                sock.sendall(s3p.Connection(Role.CLIENT).send(s3p.Read(b"big", count=1000)))
                with trio.fail_after(10):
                    while server.shed["response not taken"] < 1:
                        await trio.sleep(0.1)
                assert server.connections == 0
            finally:
                sock.close()
                nursery.cancel_scope.cancel()

    trio.run(main)
