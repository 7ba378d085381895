"""Durable Streams readers that never read (issue 29 item 5): a GET or SSE response the
client does not take closes its connection after the write-progress time-out (the request
time-out), and counts as idle for shedding meanwhile, instead of holding the whole response
for ever. Real sockets on 127.0.0.1; every wait is bounded."""

from __future__ import annotations

import asyncio
import socket
import tracemalloc

import pytest

from examples import _policy, durable_server
from s3p_codec import durable

pytestmark = [pytest.mark.network, pytest.mark.timeout(60)]


async def _request(port: int, head: bytes, body: bytes = b"") -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    answer = await asyncio.wait_for(reader.read(1000), 5)
    writer.close()
    return answer


def _never_reading(port: int, path: bytes) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    return sock


@pytest.mark.slow
def test_readers_that_never_read_are_closed_after_the_write_timeout() -> None:
    async def main() -> None:
        policy = _policy.ConnectionPolicy(idle_timeout=1.0, request_timeout=1.0, max_connections=12)
        server, app = await durable_server.start("127.0.0.1", 0, policy=policy)
        port = server.sockets[0].getsockname()[1]
        try:
            head = b"PUT /s HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
            assert (await _request(port, head)).startswith(b"HTTP/1.1 201")
            post = b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
            assert (await _request(port, post, bytes(8 << 20))).startswith(b"HTTP/1.1 204")
            readers = [_never_reading(port, b"/s?offset=-1") for _ in range(5)]
            readers += [_never_reading(port, b"/s?offset=-1&live=sse") for _ in range(5)]
            await asyncio.sleep(0.3)
            # Stalled on their peer: idle for shedding, so newcomers get in at the cap.
            get = b"GET /s?offset=now HTTP/1.1\r\nHost: x\r\n"
            for _ in range(4):
                assert (await _request(port, get)).startswith(b"HTTP/1.1 200")
            async with asyncio.timeout(10):
                # A GET's response (at most max_chunk) may fit in the socket buffers: then its
                # reader is idle, not stalled.
                shed = app.gatekeeper.shed
                while shed["response not taken"] + shed["idlest"] + shed["idle"] < len(readers):
                    await asyncio.sleep(0.1)
            assert len(app.gatekeeper) == 0
            for sock in readers:
                sock.close()
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(main())


def _read_all(app: durable_server.App, path: str) -> list[durable.Chunk]:
    chunks: list[durable.Chunk] = []
    offset = "-1"
    while not (chunks and chunks[-1].up_to_date):
        chunk = asyncio.run(app.read(durable.Read(path, offset)))
        assert isinstance(chunk, durable.Chunk)
        chunks.append(chunk)
        offset = chunk.next_offset
    return chunks


def test_an_entry_over_max_chunk_is_read_in_parts() -> None:
    """Each response stays within max_chunk; following next_offset gives every byte back."""
    app = durable_server.App(durable_server.Settings(max_chunk=1000))
    binary = bytes(range(256)) * 40
    text = "añb€c😀".encode() * 500
    messages = [b'{"n":%d}' % n for n in range(600)]
    for path, kind, body in (
        ("/b", "application/octet-stream", binary),
        ("/t", "text/plain", text),
        ("/j", "application/json", b"[" + b",".join(messages) + b"]"),
    ):
        app.respond(durable.Create(path, content_type=kind))
        app.respond(durable.Append(path, body=body, content_type=kind))
    chunks = _read_all(app, "/b")
    assert all(len(c.data) <= 1000 for c in chunks)
    assert b"".join(c.data for c in chunks) == binary
    chunks = _read_all(app, "/t")
    assert all(len(c.data) <= 1000 for c in chunks)
    assert "".join(c.data.decode() for c in chunks) == text.decode()  # never mid-character
    chunks = _read_all(app, "/j")
    assert all(len(c.data) <= 1000 + 2 for c in chunks)
    got = [m for c in chunks for m in durable.jsonmode.flatten(c.data)]
    assert got == messages


@pytest.mark.slow
def test_what_readers_that_never_read_queue_is_bounded() -> None:
    """20 readers (10 GET, 10 SSE) of a 16 MiB entry that never read: each queues at most one
    max_chunk response and a transport piece (before: 29-42 MB each)."""

    async def main() -> None:
        server, app = await durable_server.start("127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            kind = "application/octet-stream"
            app.respond(durable.Create("/s", content_type=kind))
            app.respond(durable.Append("/s", body=bytes(16 << 20), content_type=kind))
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            readers = [_never_reading(port, b"/s?offset=-1") for _ in range(10)]
            readers += [_never_reading(port, b"/s?offset=-1&live=sse") for _ in range(10)]
            await asyncio.sleep(1.5)
            grown = tracemalloc.get_traced_memory()[0] - before
            tracemalloc.stop()
            assert grown < 20 * (4 << 20), grown
            assert app.gatekeeper is not None
            for client in app.gatekeeper.clients.values():
                writer = client.activity.writer  # type: ignore[attr-defined]
                assert writer.writer.transport.get_write_buffer_size() <= 256 << 10
            for sock in readers:
                sock.close()
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(main())
