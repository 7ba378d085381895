"""The blocking adapter in the server role with the real S3P codec, and every adapter as client.

The example server runs on asyncio or trio; this serves the same ``Store`` through
``s3p_codec.io.sync.serve`` (one thread per connection, the store behind a lock), so that each
adapter is exercised in both roles with S3P.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
import trio

from examples.s3p_server import Store
from s3p_codec import Role, s3p
from s3p_codec.io import ConnectionClosed
from s3p_codec.io import asyncio as aio_io
from s3p_codec.io import sync as sync_io
from s3p_codec.io import trio as trio_io

pytestmark = [pytest.mark.network, pytest.mark.timeout(30)]

Conn = sync_io.SyncConnection[s3p.Event, s3p.Event]


@pytest.fixture
def port() -> Iterator[int]:
    store = Store(s3p.Limits())
    lock = threading.Lock()

    def handle(conn: Conn) -> None:
        for request in conn:
            assert isinstance(request, s3p.Request)
            with lock:
                reply = store.execute(request)
            conn.send(reply)

    server = sync_io.serve(lambda: s3p.Connection(Role.SERVER), handle)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.address[1]
    server.close()
    thread.join(5)


REQUESTS: list[s3p.Request] = [
    s3p.Create(b"orders"),
    s3p.Append(b"orders", (b"a", b"b")),
    s3p.Read(b"orders", count=1),
    s3p.Create(b"orders"),  # ERR_STREAM_EXISTS: the server replies, then closes
]


def check(replies: list[s3p.Event]) -> None:
    ok, appended, read, exists = replies
    assert ok == s3p.Ok()
    assert isinstance(appended, s3p.AppendReply)
    assert isinstance(read, s3p.ReadReply)
    assert [p for _, p in read.records] == [b"a"]
    assert isinstance(exists, s3p.ErrorReply)
    assert exists.code is s3p.ErrorCode.STREAM_EXISTS


def test_sync_client_against_sync_server(port: int) -> None:
    with sync_io.connect(s3p.Connection(Role.CLIENT), "127.0.0.1", port, timeout=5) as conn:
        for request in REQUESTS:
            conn.send(request)
        check([conn.next_event() for _ in REQUESTS])
        with pytest.raises(ConnectionClosed):
            conn.next_event()


def test_asyncio_client_against_sync_server(port: int) -> None:
    async def main() -> list[s3p.Event]:
        async with asyncio.timeout(10):
            conn = await aio_io.connect(s3p.Connection(Role.CLIENT), "127.0.0.1", port)
            async with conn:
                for request in REQUESTS:
                    await conn.send(request)
                return [event async for event in conn]

    check(asyncio.run(main()))


def test_trio_client_against_sync_server(port: int) -> None:
    async def main() -> list[s3p.Event]:
        with trio.fail_after(10):
            conn = await trio_io.connect(s3p.Connection(Role.CLIENT), "127.0.0.1", port)
            async with conn:
                for request in REQUESTS:
                    await conn.send(request)
                return [event async for event in conn]

    check(trio.run(main))


def test_sync_server_answers_a_malformed_request_and_closes(port: int) -> None:
    with sync_io.connect(s3p.Connection(Role.CLIENT), "127.0.0.1", port, timeout=5) as conn:
        conn.socket.sendall(b"*1\r\n$4\r\nNOPE\r\n*0\r\n")
        reply = conn.socket.recv(1024)
        assert reply.startswith(b"-ERR_BAD_FORMAT ")
        assert conn.socket.recv(1024) == b""
