"""The connection policy of the RustLog broker, the Durable Streams server and the S2 server
(``examples/_policy.py``): idle and slow connections are closed, the caps shed the idlest
connection, and waiting for the server is never idleness.

Each server runs in the test's own event loop on 127.0.0.1, with time-outs of a fraction of a
second; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import pytest

from examples import _policy, durable_server, rustlog_broker, s2_server
from s3p_codec import Role, rustlog

pytestmark = [pytest.mark.network, pytest.mark.timeout(60)]

ROOT = Path(__file__).resolve().parents[2]
Policy = _policy.ConnectionPolicy
QUIET = Policy(idle_timeout=None, request_timeout=None, max_connections=None)


@attrs.frozen
class Kind:
    """One example server: how to start it, and one complete request it answers."""

    name: str
    start: Callable[[Policy], Awaitable[tuple[asyncio.Server, _policy.Gatekeeper]]]
    request: bytes


async def _rustlog(policy: Policy) -> tuple[asyncio.Server, _policy.Gatekeeper]:
    broker = rustlog_broker.Broker()
    server = await rustlog_broker.start(broker, "127.0.0.1", 0, policy)
    assert broker.gatekeeper is not None
    return server, broker.gatekeeper


async def _durable(policy: Policy) -> tuple[asyncio.Server, _policy.Gatekeeper]:
    server, app = await durable_server.start("127.0.0.1", 0, long_poll_timeout=1.0, policy=policy)
    assert app.gatekeeper is not None
    return server, app.gatekeeper


async def _s2(policy: Policy) -> tuple[asyncio.Server, _policy.Gatekeeper]:
    store = s2_server.Store()
    store.create("b", "s")
    gatekeeper = _policy.Gatekeeper(policy)
    server = await s2_server.serve("127.0.0.1", 0, heartbeat=(0.2, 0.2), store=store,
                                   gatekeeper=gatekeeper)  # fmt: skip
    return server, gatekeeper


RUSTLOG = Kind("rustlog", _rustlog, rustlog.Connection(Role.CLIENT).send(rustlog.Ping()))
DURABLE = Kind("durable", _durable, b"GET /missing HTTP/1.1\r\nhost: h\r\n\r\n")
S2 = Kind(
    "s2",
    _s2,
    b"GET /v1/streams/s/records/tail HTTP/1.1\r\nhost: h\r\n"
    b"authorization: Bearer t\r\ns2-basin: b\r\n\r\n",
)
KINDS = [pytest.param(kind, id=kind.name) for kind in (RUSTLOG, DURABLE, S2)]


@attrs.define
class Running:
    port: int
    gatekeeper: _policy.Gatekeeper


@asynccontextmanager
async def running(kind: Kind, policy: Policy) -> AsyncIterator[Running]:
    server, gatekeeper = await kind.start(policy)
    try:
        yield Running(server.sockets[0].getsockname()[1], gatekeeper)
    finally:
        server.close()


Stream = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def connect(port: int) -> Stream:
    return await asyncio.open_connection("127.0.0.1", port)


async def answered(stream: Stream, request: bytes) -> bool:
    """Send ``request``; True when an answer came, False when the server closed instead."""
    reader, writer = stream
    writer.write(request)
    await writer.drain()
    return await asyncio.wait_for(reader.read(65536), 5) != b""


async def closed_within(stream: Stream, seconds: float) -> float:
    """Seconds until the server closed ``stream`` (anything it sends first is dropped)."""
    reader, _ = stream
    started = time.monotonic()
    async with asyncio.timeout(seconds):
        try:
            while await reader.read(65536):
                pass
        except ConnectionResetError:
            pass  # closed with bytes of ours unread: the kernel resets instead
    return time.monotonic() - started


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 30))


@pytest.mark.parametrize("kind", KINDS)
def test_a_connection_waiting_for_its_client_longer_than_the_idle_timeout_is_closed(
    kind: Kind,
) -> None:
    async def scenario() -> None:
        async with running(kind, attrs.evolve(QUIET, idle_timeout=0.4)) as server:
            silent = await connect(server.port)
            served = await connect(server.port)
            assert await answered(served, kind.request)
            assert 0.3 <= await closed_within(silent, 5) < 3
            assert await closed_within(served, 5) < 3
            assert server.gatekeeper.shed["idle"] == 2
            assert len(server.gatekeeper) == 0

    run(scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_a_request_trickled_slower_than_the_request_timeout_is_cut_off(kind: Kind) -> None:
    """Slowloris: a byte every 0.1 s never lets the connection look idle; the request-progress
    time-out closes it once its request has been arriving for ``request_timeout``."""

    async def scenario() -> None:
        policy = attrs.evolve(QUIET, request_timeout=0.5)
        async with running(kind, policy) as server:
            reader, writer = await connect(server.port)
            started = time.monotonic()
            for byte in kind.request[:-1]:
                try:
                    writer.write(bytes([byte]))
                    if await asyncio.wait_for(reader.read(1), 0.1) == b"":
                        break  # closed
                except TimeoutError:
                    continue  # still open: the next byte
                except ConnectionResetError:
                    break
            assert 0.4 <= time.monotonic() - started < 4
            assert server.gatekeeper.shed["request too slow"] == 1
            quick = await connect(server.port)  # whole requests are still served
            assert await answered(quick, kind.request)

    run(scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_at_the_cap_a_newcomer_sheds_the_connection_idle_the_longest(kind: Kind) -> None:
    async def scenario() -> None:
        async with running(kind, attrs.evolve(QUIET, max_connections=2)) as server:
            first, second = await connect(server.port), await connect(server.port)
            assert await answered(first, kind.request)
            await asyncio.sleep(0.05)
            assert await answered(second, kind.request)
            third = await connect(server.port)
            assert await answered(third, kind.request)
            await closed_within(first, 5)  # idle since its answer, the longest
            assert await answered(second, kind.request)
            assert server.gatekeeper.shed["idlest"] == 1
            assert len(server.gatekeeper) == 2

    run(scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_the_per_address_cap_sheds_that_address_s_idlest(kind: Kind) -> None:
    async def scenario() -> None:
        policy = attrs.evolve(QUIET, max_connections_per_address=1)
        async with running(kind, policy) as server:
            first = await connect(server.port)
            assert await answered(first, kind.request)
            second = await connect(server.port)
            assert await answered(second, kind.request)
            await closed_within(first, 5)

    run(scenario)


def test_a_long_poll_longer_than_the_idle_timeout_is_answered_not_cut() -> None:
    """Durable Streams: the client waits for the server during a long poll; that is the
    server's turn, not idleness. At the cap, with the only connection busy, a newcomer is
    closed instead."""

    async def scenario() -> None:
        policy = attrs.evolve(QUIET, idle_timeout=0.3, max_connections=1)
        async with running(DURABLE, policy) as server:
            poller = await connect(server.port)
            create = b"PUT /s HTTP/1.1\r\nhost: h\r\ncontent-type: text/plain\r\n"
            assert await answered(poller, create + b"content-length: 0\r\n\r\n")
            reader, writer = poller
            writer.write(b"GET /s?offset=-1&live=long-poll HTTP/1.1\r\nhost: h\r\n\r\n")
            await writer.drain()
            await asyncio.sleep(0.2)
            newcomer = await connect(server.port)
            assert await closed_within(newcomer, 5) < 1
            started = time.monotonic()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            assert head.startswith(b"HTTP/1.1 204 ")  # the poll timed out (1 s), answered
            assert time.monotonic() - started > 0.4
            assert server.gatekeeper.shed == {"refused": 1}

    run(scenario)


@pytest.mark.parametrize("http2", [False, True], ids=["http1", "http2"])
def test_an_s2s_read_session_outlives_the_idle_timeout(http2: bool) -> None:
    """S2: an open read session is a request in progress (HTTP/1.1) or an open stream
    (HTTP/2); its heartbeats keep coming past the idle time-out."""

    async def scenario() -> None:
        async with running(S2, attrs.evolve(QUIET, idle_timeout=0.3)) as server:
            reader, writer = await connect(server.port)
            if http2:
                import h2.config
                import h2.connection
                import h2.events

                client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
                client.initiate_connection()
                headers = [(":method", "GET"), (":scheme", "http"), (":authority", "h"),
                           (":path", "/v1/streams/s/records"), ("authorization", "Bearer t"),
                           ("s2-basin", "b"), ("accept", "s2s/proto")]  # fmt: skip
                client.send_headers(1, headers, end_stream=True)
                writer.write(client.data_to_send())
            else:
                writer.write(
                    b"GET /v1/streams/s/records HTTP/1.1\r\nhost: h\r\n"
                    b"authorization: Bearer t\r\ns2-basin: b\r\naccept: s2s/proto\r\n\r\n"
                )
            await writer.drain()
            started = time.monotonic()
            received = 0
            while time.monotonic() - started < 1.2:  # four idle time-outs
                chunk = await asyncio.wait_for(reader.read(65536), 2)
                assert chunk, "the session was closed while the server streamed it"
                received += len(chunk)
            assert received > 0
            assert server.gatekeeper.shed["idle"] == 0
            writer.close()

    run(scenario)


def test_an_http2_connection_with_no_open_stream_is_idle() -> None:
    async def scenario() -> None:
        async with running(S2, attrs.evolve(QUIET, idle_timeout=0.3)) as server:
            import h2.config
            import h2.connection

            client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
            client.initiate_connection()
            reader, writer = await connect(server.port)
            writer.write(client.data_to_send())
            assert 0.2 <= await closed_within((reader, writer), 5) < 3
            assert server.gatekeeper.shed["idle"] == 1

    run(scenario)


@pytest.mark.parametrize("module", ["rustlog_broker", "durable_server", "s2_server"])
def test_every_server_has_the_policy_flags_with_their_defaults(module: str) -> None:
    shown = subprocess.run(
        [sys.executable, "-m", f"examples.{module}", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    for flag, default in [
        ("--idle-timeout", "300.0"),
        ("--request-timeout", "30.0"),
        ("--max-connections", "1024"),
        ("--max-connections-per-address", "0"),
    ]:
        entry = re.search(rf"\n\s+{flag} [A-Z]+\s+(.*?)(?=\n\s+-|\Z)", shown, re.S)
        assert entry is not None, flag
        assert f"({default})" in " ".join(entry.group(1).split()), (flag, default)
