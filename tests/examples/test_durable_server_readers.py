"""Durable Streams readers that never read (issue 29 item 5): a GET or SSE response the
client does not take closes its connection after the write-progress time-out (the request
time-out), and counts as idle for shedding meanwhile, instead of holding the whole response
for ever. Real sockets on 127.0.0.1; every wait is bounded."""

from __future__ import annotations

import asyncio
import socket

import pytest

from examples import _policy, durable_server

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
        policy = _policy.ConnectionPolicy(request_timeout=1.0, max_connections=12)
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
                while app.gatekeeper.shed["response not taken"] + app.gatekeeper.shed[
                    "idlest"
                ] < len(readers):
                    await asyncio.sleep(0.1)
            assert len(app.gatekeeper) == 0
            for sock in readers:
                sock.close()
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(main())
