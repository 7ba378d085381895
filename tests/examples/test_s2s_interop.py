"""Interop through the example S2 server: the official SDK (PyPI ``s2-sdk``) and our codec.

The SDK talks HTTP/2 with prior knowledge to an ``http://`` endpoint (its documented
``Endpoints`` configuration; direct basin endpoints put the basin in the ``s2-basin`` header), so
it reaches the example server on 127.0.0.1 without TLS. Our client uses ``s2s.Http1Connection``
through the asyncio adapter, over HTTP/1.1, on the same port. Every test starts its own server on
a port the OS chooses and stops it, and is bounded by a timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from examples.s2_server import Store, serve
from s3p_codec import Role, s2s
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.asyncio import AsyncioConnection, connect

s2_sdk = pytest.importorskip(
    "s2_sdk", reason="the official S2 SDK (PyPI s2-sdk) is not installed, so interop is skipped"
)

pytestmark = [pytest.mark.network, pytest.mark.timeout(60)]

BASIN = "interop-basin"
TOKEN = "test-token"
COMPRESSIONS = {
    "none": (s2_sdk.Compression.NONE, s2s.Compression.NONE),
    "zstd": (s2_sdk.Compression.ZSTD, s2s.Compression.ZSTD),
    "gzip": (s2_sdk.Compression.GZIP, s2s.Compression.GZIP),
}

Scenario = Callable[[int, Store], Awaitable[None]]


def run(scenario: Scenario, heartbeat: float = 0.2) -> Store:
    """Start the example server, run ``scenario(port, store)`` against it, stop the server."""
    store = Store()

    async def main() -> None:
        server = await serve("127.0.0.1", 0, heartbeat=(heartbeat, heartbeat), store=store)
        port = server.sockets[0].getsockname()[1]
        try:
            await asyncio.wait_for(scenario(port, store), 30)
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(main())
    return store


def sdk(port: int, compression: Any = None, attempts: int = 1) -> Any:
    url = f"http://127.0.0.1:{port}"
    return s2_sdk.S2(
        TOKEN,
        endpoints=s2_sdk.Endpoints(account=url, basin=url),
        compression=compression if compression is not None else s2_sdk.Compression.NONE,
        retry=s2_sdk.Retry(max_attempts=attempts),
    )


def record(body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> Any:
    return s2_sdk.Record(body=body, headers=headers or [])


async def our_client(port: int) -> AsyncioConnection[Any, Any]:
    return await connect(
        s2s.Http1Connection(Role.CLIENT, host=f"127.0.0.1:{port}"), "127.0.0.1", port
    )


async def our_read(
    port: int,
    stream: str,
    query: s2s.ReadQuery,
    accept: s2s.Compression = s2s.Compression.NONE,
    until: Callable[[list[object]], bool] | None = None,
) -> list[object]:
    """Events of one read session through our codec, until the body ends or ``until`` holds."""
    conn = await our_client(port)
    events: list[object] = []
    async with conn:
        request = s2s.SessionRequest(
            s2s.Session.READ, stream, basin=BASIN, token=TOKEN, accept=accept, query=query
        )
        await conn.send(request)
        try:
            while until is None or not until(events):
                events.append(await conn.next_event())
        except ConnectionClosed:
            pass
    return events


async def append_in_session(stream: Any, batch: Any) -> Any:
    """One batch through an SDK append session; its ack."""
    async with stream.append_session() as session:
        return await (await session.submit(batch))


async def read_session_to_end(stream: Any, start: int) -> None:
    async with stream.read_session(start=s2_sdk.SeqNum(start)) as reader:
        async for _ in reader:
            pass


def bodies(events: list[object]) -> list[bytes]:
    return [r.body for e in events if isinstance(e, s2s.ReadBatch) for r in e.records]


# -- the official SDK through the example server ----------------------------------------------


@pytest.mark.parametrize("name", list(COMPRESSIONS))
def test_sdk_appends_and_reads_back_one_shot_and_live(name: str) -> None:
    sdk_compression, ours = COMPRESSIONS[name]
    big = b"0123456789abcdef" * 200  # 3.2 KiB: above the 1 KiB compression threshold
    seen: dict[str, Any] = {}

    async def scenario(port: int, store: Store) -> None:
        async with sdk(port, sdk_compression) as client:
            basin = client.basin(BASIN)
            await basin.create_stream("events")
            stream = basin.stream("events")
            async with stream.append_session() as session:
                first = await session.submit(s2_sdk.AppendInput(records=[record(big)]))
                second = await session.submit(
                    s2_sdk.AppendInput(
                        records=[record(b"r%d" % i, [(b"k", b"v")]) for i in range(4)]
                    )
                )
                seen["acks"] = [await first, await second]
            batch = await stream.read(start=s2_sdk.SeqNum(0))
            seen["one_shot"] = [r.body for r in batch.records]
            seen["headers"] = batch.records[1].headers
            live: list[bytes] = []
            async with stream.read_session(start=s2_sdk.SeqNum(0)) as reader:

                async def append_later() -> None:
                    await asyncio.sleep(0.3)
                    await stream.append(s2_sdk.AppendInput(records=[record(b"later")]))

                task = asyncio.get_running_loop().create_task(append_later())
                async for read_batch in reader:
                    live += [r.body for r in read_batch.records]
                    if b"later" in live:
                        break
                await task
            seen["live"] = live

    store = run(scenario)
    first, second = seen["acks"]
    assert (first.start.seq_num, first.end.seq_num) == (0, 1)
    assert (second.start.seq_num, second.end.seq_num) == (1, 5)
    expected = [big, b"r0", b"r1", b"r2", b"r3"]
    assert seen["one_shot"] == expected
    assert seen["headers"] == [(b"k", b"v")]
    assert seen["live"] == [*expected, b"later"]
    # The SDK's frames really used the negotiated compression (small ones are never compressed).
    if ours is s2s.Compression.NONE:
        assert set(store.frames) == {s2s.Compression.NONE}
    else:
        assert store.frames[ours] >= 1
        assert store.frames[s2s.Compression.NONE] >= 1


def test_sdk_match_seq_num_mismatch_is_a_412_terminal_frame() -> None:
    caught: dict[str, Any] = {}

    async def scenario(port: int, store: Store) -> None:
        async with sdk(port) as client:
            basin = client.basin(BASIN)
            await basin.create_stream("cond")
            stream = basin.stream("cond")
            async with stream.append_session() as session:
                await (await session.submit(s2_sdk.AppendInput(records=[record(b"a")])))
            stale = s2_sdk.AppendInput(records=[record(b"b")], match_seq_num=0)
            with pytest.raises(s2_sdk.SeqNumMismatchError) as error:
                await append_in_session(stream, stale)
            caught["error"] = error.value
            # match_seq_num 0 on an empty stream is written on the wire and accepted.
            await basin.create_stream("cond-empty")
            empty = basin.stream("cond-empty")
            async with empty.append_session() as session:
                ticket = await session.submit(
                    s2_sdk.AppendInput(records=[record(b"z")], match_seq_num=0)
                )
                caught["ack"] = await ticket

    run(scenario)
    assert caught["error"].status_code == 412
    assert caught["error"].expected_seq_num == 1
    assert caught["ack"].start.seq_num == 0


def test_sdk_fencing_token_mismatch_is_a_412_terminal_frame() -> None:
    caught: dict[str, Any] = {}

    async def scenario(port: int, store: Store) -> None:
        async with sdk(port) as client:
            basin = client.basin(BASIN)
            await basin.create_stream("fenced")
            stream = basin.stream("fenced")
            async with stream.append_session() as session:
                fence = s2_sdk.AppendInput(records=[s2_sdk.CommandRecord.fence("owner-1")])
                await (await session.submit(fence))
                ok = s2_sdk.AppendInput(records=[record(b"mine")], fencing_token="owner-1")
                await (await session.submit(ok))
            bad = s2_sdk.AppendInput(records=[record(b"x")], fencing_token="intruder")
            with pytest.raises(s2_sdk.FencingTokenMismatchError) as error:
                await append_in_session(stream, bad)
            caught["error"] = error.value
            caught["tail"] = await stream.check_tail()

    run(scenario)
    assert caught["error"].expected_fencing_token == "owner-1"
    assert caught["tail"].seq_num == 2


def test_sdk_read_past_the_tail_is_416_with_the_tail() -> None:
    caught: dict[str, Any] = {}

    async def scenario(port: int, store: Store) -> None:
        async with sdk(port) as client:
            basin = client.basin(BASIN)
            await basin.create_stream("short")
            stream = basin.stream("short")
            await stream.append(s2_sdk.AppendInput(records=[record(b"only")]))
            with pytest.raises(s2_sdk.ReadUnwrittenError) as one_shot:
                await stream.read(start=s2_sdk.SeqNum(5))
            caught["one_shot"] = one_shot.value
            with pytest.raises(s2_sdk.ReadUnwrittenError) as session:
                await read_session_to_end(stream, 5)
            caught["session"] = session.value

    run(scenario)
    for error in caught.values():
        assert error.status_code == 416
        assert error.tail.seq_num == 1


def test_sdk_unknown_stream_is_404() -> None:
    caught: dict[str, Any] = {}

    async def scenario(port: int, store: Store) -> None:
        async with sdk(port) as client:
            stream = client.basin(BASIN).stream("missing")
            with pytest.raises(s2_sdk.S2ServerError) as error:
                await append_in_session(stream, s2_sdk.AppendInput(records=[record(b"x")]))
            caught["error"] = error.value

    run(scenario)
    assert caught["error"].status_code == 404
    assert caught["error"].code == "stream_not_found"


# -- our codec (asyncio adapter, HTTP/1.1) and the SDK on one server --------------------------


@pytest.mark.parametrize("name", list(COMPRESSIONS))
def test_our_client_reads_what_the_sdk_wrote(name: str) -> None:
    sdk_compression, ours = COMPRESSIONS[name]
    written = [b"alpha" * 400, b"beta", b"gamma"]
    seen: dict[str, Any] = {}

    async def scenario(port: int, store: Store) -> None:
        async with sdk(port, sdk_compression) as client:
            basin = client.basin(BASIN)
            await basin.create_stream("shared")
            async with basin.stream("shared").append_session() as session:
                for body in written:
                    await (await session.submit(s2_sdk.AppendInput(records=[record(body)])))
        query = s2s.ReadQuery(seq_num=0, count=3)
        seen["events"] = await our_read(port, "shared", query, accept=ours)

    run(scenario)
    events = seen["events"]
    assert events[0] == s2s.SessionResponse(ours)
    assert bodies(events) == written
    positions = [r.seq_num for e in events if isinstance(e, s2s.ReadBatch) for r in e.records]
    assert positions == [0, 1, 2]


def test_our_live_read_gets_heartbeats_and_a_later_sdk_append() -> None:
    seen: dict[str, Any] = {}

    async def scenario(port: int, store: Store) -> None:
        async with sdk(port) as client:
            basin = client.basin(BASIN)
            await basin.create_stream("live")
            stream = basin.stream("live")

            async def append_later() -> None:
                await asyncio.sleep(0.5)
                await stream.append(s2_sdk.AppendInput(records=[record(b"late")]))

            task = asyncio.get_running_loop().create_task(append_later())
            seen["events"] = await our_read(
                port, "live", s2s.ReadQuery(seq_num=0), until=lambda ev: b"late" in bodies(ev)
            )
            await task

    run(scenario, heartbeat=0.1)
    events = seen["events"]
    heartbeats = [e for e in events if isinstance(e, s2s.Heartbeat)]
    assert len(heartbeats) >= 2  # caught up at once, then at least one timed beat
    assert heartbeats[0].tail == s2s.StreamPosition(0, 0)
    assert bodies(events) == [b"late"]


def test_the_sdk_reads_what_our_client_appended() -> None:
    seen: dict[str, Any] = {}
    inputs = [
        s2s.AppendInput((s2s.AppendRecord(b"ours-%d" % i * 300),), match_seq_num=i)
        for i in range(3)
    ]

    async def scenario(port: int, store: Store) -> None:
        async with sdk(port) as client:
            await client.basin(BASIN).create_stream("mixed")
            conn = await our_client(port)
            async with conn:
                await conn.send(
                    s2s.SessionRequest(
                        s2s.Session.APPEND, "mixed", basin=BASIN, token=TOKEN,
                        accept=s2s.Compression.ZSTD,
                    )
                )  # fmt: skip
                for event in inputs:
                    await conn.send(event)
                await conn.send(s2s.EndOfBody())
                seen["events"] = [event async for event in conn]
            batch = await client.basin(BASIN).stream("mixed").read(start=s2_sdk.SeqNum(0))
            seen["bodies"] = [r.body for r in batch.records]

    store = run(scenario)
    events = seen["events"]
    assert events[0] == s2s.SessionResponse(s2s.Compression.ZSTD)
    acks = events[1:]
    assert [(a.start.seq_num, a.end.seq_num) for a in acks] == [(0, 1), (1, 2), (2, 3)]
    assert seen["bodies"] == [r.body for i in inputs for r in i.records]
    assert store.frames[s2s.Compression.ZSTD] == 3


def test_our_client_gets_the_412_terminal_frame_as_a_typed_error() -> None:
    caught: dict[str, Any] = {}

    async def scenario(port: int, store: Store) -> None:
        async with sdk(port) as client:
            await client.basin(BASIN).create_stream("strict")
        conn = await our_client(port)
        async with conn:
            await conn.send(
                s2s.SessionRequest(s2s.Session.APPEND, "strict", basin=BASIN, token=TOKEN)
            )
            await conn.send(s2s.AppendInput((s2s.AppendRecord(b"x"),), match_seq_num=7))
            assert await conn.next_event() == s2s.SessionResponse()
            with pytest.raises(s2s.AppendConditionFailed) as error:
                await conn.next_event()
            caught["error"] = error.value

    run(scenario)
    assert caught["error"].code == 412
    assert caught["error"].expected_seq_num == 0


def test_our_client_gets_pre_session_errors_as_typed_errors() -> None:
    caught: dict[str, Any] = {}

    async def scenario(port: int, store: Store) -> None:
        conn = await our_client(port)
        async with conn:
            await conn.send(s2s.SessionRequest(s2s.Session.READ, "nope", basin=BASIN, token=TOKEN))
            with pytest.raises(s2s.SessionTerminated) as error:
                await conn.next_event()
            caught["error"] = error.value

    run(scenario)
    assert caught["error"].code == 404
    assert caught["error"].terminal.code == "stream_not_found"


def test_sdk_rest_calls_around_sessions() -> None:
    seen: dict[str, Any] = {}

    async def scenario(port: int, store: Store) -> None:
        async with sdk(port, s2_sdk.Compression.GZIP) as client:
            basin = client.basin(BASIN)
            await basin.create_stream("a/1")
            with pytest.raises(s2_sdk.S2ServerError) as exists:
                await basin.create_stream("a/1")
            seen["exists"] = exists.value.status_code
            seen["ensured"] = (await basin.ensure_stream("a/2")).status
            seen["again"] = (await basin.ensure_stream("a/2")).status
            seen["listed"] = [s.name for s in (await basin.list_streams(prefix="a/")).items]
            seen["config"] = await basin.get_stream_config("a/1")
            seen["tail"] = await basin.stream("a/1").check_tail()
            await basin.delete_stream("a/1")
            seen["after"] = [s.name for s in (await basin.list_streams()).items]

    run(scenario)
    assert seen["exists"] == 409
    assert seen["ensured"] is s2_sdk.EnsureStatus.CREATED
    assert seen["again"] is s2_sdk.EnsureStatus.CONFIG_UNCHANGED
    assert seen["listed"] == ["a/1", "a/2"]
    assert seen["config"].storage_class == "express"
    assert (seen["tail"].seq_num, seen["tail"].timestamp) == (0, 0)
    assert seen["after"] == ["a/2"]


def test_reconnect_advice_from_a_draining_server() -> None:
    seen: dict[str, Any] = {}

    async def scenario(port: int, store: Store) -> None:
        async with sdk(port) as client:
            basin = client.basin(BASIN)
            await basin.create_stream("drain")
            stream = basin.stream("drain")
            await stream.append(s2_sdk.AppendInput(records=[record(b"before")]))
            got: list[bytes] = []
            async with stream.read_session(start=s2_sdk.SeqNum(0)) as reader:
                async for batch in reader:
                    got += [r.body for r in batch.records]
                    if got == [b"before"]:
                        store.draining = True  # the next frame advises reconnection
                        await stream.append(s2_sdk.AppendInput(records=[record(b"during")]))
                    elif got == [b"before", b"during"]:
                        # The SDK reconnects after this batch: the new session reads on.
                        store.draining = False
                        await stream.append(s2_sdk.AppendInput(records=[record(b"after")]))
                    if b"after" in got:
                        break
            seen["sdk"] = got
            seen["sdk_sessions"] = store.sessions[s2s.Session.READ]
            store.draining = True
            seen["ours"] = await our_read(
                port,
                "drain",
                s2s.ReadQuery(seq_num=0),
                until=lambda ev: s2s.ReconnectAdvised() in ev,
            )
            store.draining = False

    run(scenario)
    # The SDK saw the flag, reconnected on its own, and lost or repeated nothing.
    assert seen["sdk"] == [b"before", b"during", b"after"]
    assert seen["sdk_sessions"] >= 2
    ours = seen["ours"]
    assert ours[-1] == s2s.ReconnectAdvised()
    assert isinstance(ours[-2], s2s.ReadBatch)
