"""The example S2 server, byte for byte over raw HTTP/1.1, and started from its command line."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from examples.s2_server import Store, serve
from s3p_codec import Role, s2s

pytestmark = [pytest.mark.network, pytest.mark.timeout(60)]

ROOT = Path(__file__).resolve().parents[2]
AUTH = b"authorization: Bearer t\r\ns2-basin: raw-basin\r\n"


async def _exchange(port: int, request: bytes, *, until: bytes = b"0\r\n\r\n") -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    data = b""
    try:
        while until not in data:
            chunk = await asyncio.wait_for(reader.read(65536), 10)
            if not chunk:
                break
            data += chunk
    finally:
        writer.close()
    return data


def _with_server(scenario: Callable[[int], Awaitable[None]]) -> None:
    async def main() -> None:
        store = Store()
        store.create("raw-basin", "s")
        server = await serve("127.0.0.1", 0, heartbeat=(0.1, 0.1), store=store)
        port = server.sockets[0].getsockname()[1]
        try:
            await asyncio.wait_for(scenario(port), 30)
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(main())


def _decode_body(response: bytes) -> list[object]:
    client = s2s.Http1Connection(Role.CLIENT)
    client.send(s2s.SessionRequest(s2s.Session.APPEND, "s"))
    client.receive_data(response)
    events: list[object] = []
    try:
        events.extend(client.events())
    except s2s.SessionTerminated as ended:
        events.append(ended.terminal)
    return events


def test_bad_frame_in_an_append_session_gets_a_400_terminal_frame() -> None:
    async def scenario(port: int) -> None:
        head = b"POST /v1/streams/s/records HTTP/1.1\r\nhost: h\r\n" + AUTH
        head += b"content-type: s2s/proto\r\ntransfer-encoding: chunked\r\n\r\n"
        response = await _exchange(port, head + b"4\r\n\x00\x00\x00\x00\r\n")
        assert response.startswith(b"HTTP/1.1 200 ")
        events = _decode_body(response)
        assert events[0] == s2s.SessionResponse()
        terminal = events[1]
        assert isinstance(terminal, s2s.Terminal)
        assert (terminal.status, terminal.code) == (400, "bad_frame")

    _with_server(scenario)


def test_unknown_stream_is_a_plain_json_404_before_any_session() -> None:
    async def scenario(port: int) -> None:
        request = b"GET /v1/streams/nope/records HTTP/1.1\r\nhost: h\r\n" + AUTH
        response = await _exchange(port, request + b"accept: s2s/proto\r\n\r\n", until=b"}")
        head, _, body = response.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 404 ")
        assert b"content-type: application/json" in head.lower()
        assert json.loads(body)["code"] == "stream_not_found"

    _with_server(scenario)


def test_missing_token_is_401() -> None:
    async def scenario(port: int) -> None:
        request = b"GET /v1/streams/s/records HTTP/1.1\r\nhost: h\r\naccept: s2s/proto\r\n\r\n"
        response = await _exchange(port, request, until=b"}")
        assert response.startswith(b"HTTP/1.1 401 ")

    _with_server(scenario)


def test_bounded_read_session_ends_at_the_tail_with_a_heartbeat() -> None:
    async def scenario(port: int) -> None:
        request = b"GET /v1/streams/s/records?seq_num=0&count=5 HTTP/1.1\r\nhost: h\r\n" + AUTH
        response = await _exchange(port, request + b"accept: s2s/proto\r\n\r\n")
        client = s2s.Http1Connection(Role.CLIENT)
        client.send(s2s.SessionRequest(s2s.Session.READ, "s"))
        client.receive_data(response)
        assert list(client.events()) == [
            s2s.SessionResponse(),
            s2s.Heartbeat(s2s.StreamPosition(0, 0)),
        ]
        assert client.finished

    _with_server(scenario)


def test_the_command_line_starts_a_server_on_an_os_chosen_port(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "examples.s2_server", "--port", "0", "--heartbeat", "0.2"],
            cwd=ROOT,
            stdout=sink,
            stderr=sink,
        )
    try:
        deadline = time.monotonic() + 20
        found = None
        while time.monotonic() < deadline and found is None:
            found = re.search(rb"listening on 127\.0\.0\.1:(\d+)", log.read_bytes())
            time.sleep(0.05)
        assert found is not None, log.read_text()
        port = int(found.group(1))
        request = b"GET /v1/streams/s/records HTTP/1.1\r\nhost: h\r\n" + AUTH
        response = asyncio.run(_exchange(port, request + b"accept: s2s/proto\r\n\r\n", until=b"}"))
        assert response.startswith(b"HTTP/1.1 404 ")
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
