"""Durable Streams reads cost what they return (issue 29 item 8): a fork's history is resolved
once (offsets into its parents), the fork depth is bounded with a 400, and a long poll woken by
an append reads only what is new. Before: a GET 900 forks deep froze the server for seconds,
1,200 deep raised RecursionError, and one append woke 200 long polls in 12-28 s. Real sockets
on 127.0.0.1; every wait is bounded."""

from __future__ import annotations

import asyncio
import time

import pytest

from examples import _policy, durable_server
from examples.durable_server import App, Settings
from s3p_codec import durable

pytestmark = [pytest.mark.network, pytest.mark.timeout(120)]

OCTETS = "application/octet-stream"


def _head(method: str, path: str, extra: str = "", body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\n{extra}Content-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


async def _exchange(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return head + await asyncio.wait_for(reader.readexactly(length), 10)
    finally:
        writer.close()


def test_history_resolved_once_matches_the_fork_points() -> None:
    """Forks at earlier and earlier offsets of a chain see exactly the bytes before them."""
    app = App(Settings(max_chunk=1 << 30))
    app.respond(durable.Create("/f0", content_type=OCTETS))
    expected = b""
    for level in range(1, 30):
        source = f"/f{level - 1}"
        for piece in range(3):
            body = b"%d.%d;" % (level, piece)
            app.respond(durable.Append(source, body=body, content_type=OCTETS))
        expected += b"".join(b"%d.%d;" % (level, piece) for piece in range(3))
        stream = app.store.streams[source]
        # Every third fork cuts its source one entry short of the tail.
        cut = stream.tail if level % 3 else app.store.streams[source].entries[-2].offset
        if level % 3 == 0:
            expected = expected[: -len(b"%d.2;" % level)]
        created = app.respond(durable.Create(f"/f{level}", forked_from=source, fork_offset=cut))
        assert isinstance(created, durable.Created)
        got = asyncio.run(app.read(durable.Read(f"/f{level}", offset="-1")))
        assert isinstance(got, durable.Chunk)
        assert got.data == expected
    # A read from the middle of the history starts after its offset, across ancestors: "6.1;"
    # is /f5's second entry, and /f6 was cut before "6.2;".
    middle = app.store.streams["/f5"].entries[1].offset
    got = asyncio.run(app.read(durable.Read("/f29", offset=middle)))
    assert isinstance(got, durable.Chunk)
    assert expected.endswith(got.data)
    assert got.data.startswith(b"7.0;")


def test_fork_depth_is_bounded_with_a_400() -> None:
    assert Settings().max_fork_depth == 100

    async def main() -> None:
        server, app = await durable_server.start("127.0.0.1", 0)
        app.settings = durable_server.Settings(max_fork_depth=3)
        port = server.sockets[0].getsockname()[1]
        try:
            answer = await _exchange(port, _head("PUT", "/c0", f"Content-Type: {OCTETS}\r\n"))
            assert answer.startswith(b"HTTP/1.1 201")
            for level in range(1, 4):
                fork = f"Stream-Forked-From: /c{level - 1}\r\n"
                assert (await _exchange(port, _head("PUT", f"/c{level}", fork))).startswith(
                    b"HTTP/1.1 201"
                )
            answer = await _exchange(port, _head("PUT", "/c4", "Stream-Forked-From: /c3\r\n"))
            assert answer.startswith(b"HTTP/1.1 400")
            assert b"fork chain too deep (at most 3 forks)" in answer
            assert "/c4" not in app.store.streams
            assert app.store.streams["/c3"].refs == 0  # the refused fork holds no reference
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(main())


def test_a_deep_chain_reads_in_time_proportional_to_what_it_returns() -> None:
    app = App(Settings(max_fork_depth=1200, max_chunk=1 << 30))
    app.respond(durable.Create("/c0", content_type=OCTETS))
    for level in range(1201):
        if level:
            app.respond(durable.Create(f"/c{level}", forked_from=f"/c{level - 1}"))
        app.respond(durable.Append(f"/c{level}", body=b"%05d" % level, content_type=OCTETS))
    began = time.perf_counter()
    got = asyncio.run(app.read(durable.Read("/c1200", offset="-1")))
    took = time.perf_counter() - began
    assert isinstance(got, durable.Chunk)
    assert got.data == b"".join(b"%05d" % level for level in range(1201))
    assert took < 1.0, took  # was RecursionError


@pytest.mark.slow
def test_one_append_wakes_200_long_polls_without_rereading_history() -> None:
    async def main() -> None:
        policy = _policy.ConnectionPolicy(max_connections=0)
        server, app = await durable_server.start("127.0.0.1", 0, policy=policy)
        port = server.sockets[0].getsockname()[1]
        try:
            app.respond(durable.Create("/s", content_type=OCTETS))
            for _ in range(100_000):
                app.respond(durable.Append("/s", body=b"y", content_type=OCTETS))
            stream = app.store.streams["/s"]
            poll = _head("GET", f"/s?offset={stream.tail}&live=long-poll")
            polls = [asyncio.create_task(_exchange(port, poll)) for _ in range(200)]
            async with asyncio.timeout(20):
                while len(stream.waiters) < 200:
                    await asyncio.sleep(0.05)
            began = time.perf_counter()
            post = _head("POST", "/s", f"Content-Type: {OCTETS}\r\n", b"z")
            assert (await _exchange(port, post)).startswith(b"HTTP/1.1 204")
            answers = await asyncio.gather(*polls)
            took = time.perf_counter() - began
            assert all(a.startswith(b"HTTP/1.1 200") and a.endswith(b"\r\n\r\nz") for a in answers)
            assert took < 3.0, took  # was 12-28 s
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(main())
