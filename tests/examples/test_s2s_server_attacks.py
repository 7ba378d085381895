"""The example S2 server under the second red-team round (issue 29): bodies broken off,
clients that never open their HTTP/2 window, Rapid Reset, unread bodies that must give their
flow-control window back, and connections stalled on their peer counting as idle.

Every client is a plain socket on 127.0.0.1 speaking h11 or h2 by hand; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import resource
from collections.abc import Awaitable, Callable

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings
import pytest

from examples import _policy
from examples.s2_server import ServerLimits, Store, serve
from s3p_codec import s2s

pytestmark = [pytest.mark.network, pytest.mark.timeout(120)]

HEADERS = [(":scheme", "http"), (":authority", "127.0.0.1"), ("s2-basin", "b")]
AUTH = [("authorization", "Bearer t")]


def run(
    scenario: Callable[[int, Store, _policy.Gatekeeper], Awaitable[None]],
    *,
    policy: _policy.ConnectionPolicy | None = None,
    limits: ServerLimits | None = None,
    timeout: float = 60,
) -> None:
    async def main() -> None:
        store = Store()
        gatekeeper = _policy.Gatekeeper(policy or _policy.ConnectionPolicy())
        server = await serve(
            "127.0.0.1", 0, heartbeat=(0.2, 0.2), store=store, gatekeeper=gatekeeper,
            limits=limits,
        )  # fmt: skip
        try:
            port = server.sockets[0].getsockname()[1]
            await asyncio.wait_for(scenario(port, store, gatekeeper), timeout)
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(main())


async def fill(store: Store, name: str, megabytes: int) -> None:
    stream = store.create("b", name)
    assert stream is not None
    record = s2s.AppendRecord(body=bytes(1000 * 1000))
    for _ in range(megabytes):
        await store.append(stream, s2s.AppendInput(records=(record,)))


class H2Client:
    """An HTTP/2 client over one socket, pumped by hand."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.events: list[h2.events.Event] = []
        self.closed = False

    @classmethod
    async def open(cls, port: int, window: int | None = None) -> H2Client:
        client = cls(*await asyncio.open_connection("127.0.0.1", port))
        client.h2.initiate_connection()
        if window is not None:
            client.h2.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window})
        await client.flush()
        return client

    async def flush(self) -> None:
        self.writer.write(self.h2.data_to_send())
        await self.writer.drain()

    async def pump(self, until: Callable[[], bool], seconds: float = 10) -> None:
        async with asyncio.timeout(seconds):
            while not until() and not self.closed:
                data = await self.reader.read(65536)
                if not data:
                    self.closed = True
                    return
                self.events.extend(self.h2.receive_data(data))
                await self.flush()

    def request(self, method: str, path: str, extra: list[tuple[str, str]], end: bool) -> int:
        sid = self.h2.get_next_available_stream_id()
        head = [(":method", method), (":path", path), *HEADERS, *extra]
        self.h2.send_headers(sid, head, end_stream=end)
        return sid

    def ended(self, sid: int) -> bool:
        return any(
            isinstance(e, h2.events.StreamEnded | h2.events.StreamReset) and e.stream_id == sid
            for e in self.events
        )

    def close(self) -> None:
        self.writer.close()


def rss() -> int:
    """This process's resident set now, in bytes (the server runs in it)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


@pytest.mark.slow
def test_http2_read_sessions_with_a_zero_window_hold_nothing_and_time_out() -> None:
    """100 read sessions on a connection that set ``INITIAL_WINDOW_SIZE=0`` made the server
    hold a ready ~1 MiB batch each (40 connections: 3.4 GB). Now a session produces only what
    the window lets through (nothing), and is reset once ``stream_progress_timeout`` passes."""

    async def scenario(port: int, store: Store, gatekeeper: _policy.Gatekeeper) -> None:
        await fill(store, "big", 4)
        before = rss()
        clients = [await H2Client.open(port, window=0) for _ in range(4)]
        sids: list[list[int]] = []
        for client in clients:
            ids = [
                client.request(
                    "GET",
                    "/v1/streams/big/records?seq_num=0",
                    [*AUTH, ("accept", "s2s/proto")],
                    True,
                )
                for _ in range(100)
            ]
            await client.flush()
            sids.append(ids)
        await asyncio.sleep(1.0)
        grown = rss() - before
        assert grown < 40 << 20, f"the server grew by {grown >> 20} MiB"
        for client, ids in zip(clients, sids, strict=True):
            await client.pump(lambda c=client, i=ids: all(c.ended(s) for s in i), seconds=20)
            resets = [e for e in client.events if isinstance(e, h2.events.StreamReset)]
            assert {e.stream_id for e in resets} == set(ids)
            assert {e.error_code for e in resets} == {h2.errors.ErrorCodes.CANCEL}
            client.close()

    run(scenario, limits=ServerLimits(stream_progress_timeout=2.0))


def test_http2_rapid_reset_ends_the_connection_with_enhance_your_calm() -> None:
    """Opening and resetting streams at once (CVE-2023-44487) pegged the CPU: 608k streams on
    4 connections, 8 of 9 probes timed out. Past ``max_resets`` the server sends GOAWAY
    ENHANCE_YOUR_CALM and closes, and a probe on another connection is answered."""

    async def scenario(port: int, store: Store, gatekeeper: _policy.Gatekeeper) -> None:
        store.create("b", "s")
        attacker = await H2Client.open(port)
        for _ in range(20):  # 20 bursts of 50: far more than the bound
            for _ in range(50):
                sid = attacker.request("GET", "/v1/streams/s/records/tail", AUTH, True)
                attacker.h2.reset_stream(sid, h2.errors.ErrorCodes.CANCEL)
            try:
                await attacker.flush()
            except ConnectionError:
                break
        await attacker.pump(
            lambda: any(isinstance(e, h2.events.ConnectionTerminated) for e in attacker.events)
        )
        goaway = [e for e in attacker.events if isinstance(e, h2.events.ConnectionTerminated)]
        assert goaway
        assert goaway[0].error_code == h2.errors.ErrorCodes.ENHANCE_YOUR_CALM
        probe = await H2Client.open(port)
        sid = probe.request("GET", "/v1/streams/s/records/tail", AUTH, True)
        await probe.flush()
        await probe.pump(lambda: probe.ended(sid))
        assert any(isinstance(e, h2.events.ResponseReceived) for e in probe.events)
        probe.close()
        attacker.close()

    run(scenario, limits=ServerLimits(max_resets=200, reset_window=10.0))


def test_http2_unread_request_bodies_give_the_connection_window_back() -> None:
    """A PUT answered 401 before its body was read kept its bytes off the connection window:
    after 80 of them the window was 0 and the next upload stalled for ever."""

    async def scenario(port: int, store: Store, gatekeeper: _policy.Gatekeeper) -> None:
        client = await H2Client.open(port)
        for _ in range(100):
            sid = client.request("PUT", "/v1/streams/s", [], False)  # no token: 401
            client.h2.send_data(sid, b"x" * 4000, end_stream=True)
            await client.flush()
            await client.pump(lambda s=sid: client.ended(s))
        await client.pump(lambda: client.h2.outbound_flow_control_window > 60_000, seconds=5)
        assert client.h2.outbound_flow_control_window > 60_000
        sid = client.request(
            "POST", "/v1/streams", [*AUTH, ("content-type", "application/json")], False
        )
        client.h2.send_data(sid, b'{"stream": "after"}', end_stream=True)
        await client.flush()
        await client.pump(lambda: client.ended(sid))
        assert store.get("b", "after") is not None
        client.close()

    run(scenario)


async def broken_off_post(port: int, close: bool) -> asyncio.StreamWriter:
    """A POST whose body never completes; the client closes (``close``) or stays."""
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"POST /v1/streams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n"
        b'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"stream":'
    )
    await writer.drain()
    await asyncio.sleep(0.01)
    if close:
        writer.close()
    return writer


async def answered(port: int) -> bool:
    """Whether a new HTTP/1.1 client gets an answer (within 5 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"GET /v1/streams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n")
        async with asyncio.timeout(5):
            return (await reader.read(100)).startswith(b"HTTP/1.1 200")
    except (ConnectionError, TimeoutError):
        return False
    finally:
        writer.close()


def test_http1_bodies_broken_off_by_a_closing_client_free_their_connection() -> None:
    """The task reading the body died on h11's error and the handler waited for ever: 1,030
    such connections and every later client was reset. Now the handler sees the break."""

    async def scenario(port: int, store: Store, gatekeeper: _policy.Gatekeeper) -> None:
        for _ in range(60):
            await broken_off_post(port, close=True)
        async with asyncio.timeout(5):
            while len(gatekeeper):
                await asyncio.sleep(0.05)
        assert await answered(port)

    run(scenario, policy=_policy.ConnectionPolicy(max_connections=20))


def test_connections_stalled_on_their_peer_count_as_idle_at_the_cap() -> None:
    """With ``--max-connections 50``, 50 connections holding a request the server could not
    finish (a POST body that never came, a read session never read) refused 5 of 5 new
    clients. Busy now means making progress: the longest stalled is shed for a newcomer."""

    async def scenario(port: int, store: Store, gatekeeper: _policy.Gatekeeper) -> None:
        await fill(store, "big", 2)
        held = [await broken_off_post(port, close=False) for _ in range(5)]
        sessions = []
        for _ in range(5):
            client = await H2Client.open(port, window=0)
            client.request(
                "GET", "/v1/streams/big/records?seq_num=0",
                [*AUTH, ("accept", "s2s/proto")], True,
            )  # fmt: skip
            await client.flush()
            sessions.append(client)
        await asyncio.sleep(0.3)
        assert len(gatekeeper) == 10
        results = [await answered(port) for _ in range(5)]
        assert results == [True] * 5
        assert gatekeeper.shed["refused"] == 0
        assert gatekeeper.shed["idlest"] >= 1
        for writer in held:
            writer.close()
        for client in sessions:
            client.close()

    run(scenario, policy=_policy.ConnectionPolicy(max_connections=10))


def test_the_http2_bounds_are_flags_and_a_negative_one_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from examples.s2_server import main

    with pytest.raises(SystemExit) as exit_:
        main(["--max-resets", "-1"])
    assert exit_.value.code == 2
    assert "max_resets must not be negative" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out
    for flag in ("--max-unsent-per-connection", "--stream-progress-timeout", "--max-resets",
                 "--reset-window"):  # fmt: skip
        assert flag in shown
