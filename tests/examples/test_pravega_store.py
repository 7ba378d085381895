"""The example segment store and client, end to end over loopback (asyncio adapter)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from examples import pravega_client as client
from examples import pravega_segment_store as store_module
from s3p_codec import Role, pravega
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.asyncio import connect

pytestmark = pytest.mark.network

Scenario = Callable[[int, store_module.Store], Awaitable[None]]


def run(scenario: Scenario, *, tail_wait: float = 0.2, timeout: float = 50.0) -> None:
    async def main() -> None:
        server, store = await store_module.start(store_module.Store(tail_wait))
        port = server.sockets[0].getsockname()[1]
        try:
            async with asyncio.timeout(timeout):
                await scenario(port, store)
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(main())


async def raw(port: int) -> Any:
    conn = await connect(pravega.Connection(Role.CLIENT, block_size=256), "127.0.0.1", port)
    await conn.send(pravega.Hello())
    assert await conn.next_event() == pravega.Hello(17, 5)
    return conn


def test_100000_events_from_4_writers_are_read_back_exactly_once_and_in_order() -> None:
    per_writer = 25_000

    async def scenario(port: int, store: store_module.Store) -> None:
        await client.create_segment("127.0.0.1", port, "orders")

        async def write(w: int) -> None:
            writer = client.Writer("127.0.0.1", port, "orders", uuid.UUID(int=w + 1))
            await writer.open()
            for start in range(0, per_writer, 500):
                batch = [b"%d:%d" % (w, i) for i in range(start, start + 500)]
                for i in range(0, 500, 5):  # several Appends per block, 5 events each
                    await writer.write(batch[i : i + 5])
            await writer.flush()
            assert writer.acked == per_writer - 1
            assert not writer.unacked
            await writer.close()

        reader = client.TailReader("127.0.0.1", port, "orders")
        reading = asyncio.create_task(_collect(reader.events(4 * per_writer)))
        await asyncio.gather(*(write(w) for w in range(4)))
        events = await reading
        assert len(events) == 4 * per_writer
        for w in range(4):
            mine = [e for e in events if e.startswith(b"%d:" % w)]
            assert mine == [b"%d:%d" % (w, i) for i in range(per_writer)]

    run(scenario)


async def _collect(events: Any) -> list[bytes]:
    return [data async for data in events]


def test_reconnect_resends_only_what_the_store_lacks() -> None:
    async def scenario(port: int, store: store_module.Store) -> None:
        await client.create_segment("127.0.0.1", port, "s")
        writer = client.Writer("127.0.0.1", port, "s", block_size=100_000)
        await writer.open()
        await writer.write([b"a%d" % i for i in range(300)])
        await writer.flush()
        assert writer._acks is not None
        writer._acks.cancel()  # from here on the acknowledgements are lost
        await writer.write([b"b%d" % i for i in range(200)])
        await writer._conn.send(pravega.FlushAppends())  # type: ignore[union-attr]
        await writer.write([b"d%d" % i for i in range(50)])  # left in the open block: never sent
        for _ in range(100):
            await asyncio.sleep(0.01)
            if store.segments["s"].writers.get(writer.writer_id) == 499:
                break
        assert len(writer.unacked) == 250
        await writer.reconnect()  # the store has up to 499: only the d events go again
        await writer.write([b"c"])
        await writer.flush()
        await writer.close()
        got = await _collect(client.TailReader("127.0.0.1", port, "s").events(idle_reads=1))
        expected = [b"a%d" % i for i in range(300)] + [b"b%d" % i for i in range(200)]
        assert got == [*expected, *(b"d%d" % i for i in range(50)), b"c"]
        assert store.segments["s"].duplicates == 0  # the writer resent nothing the store had

    run(scenario)


def test_the_store_does_not_store_a_resent_append_twice() -> None:
    async def scenario(port: int, store: store_module.Store) -> None:
        w = uuid.UUID(int=5)
        await client.create_segment("127.0.0.1", port, "s")
        conn = await raw(port)
        await conn.send(pravega.SetupAppend(1, w, "s"))
        setup = await conn.next_event()
        assert setup == pravega.AppendSetup(1, "s", w, pravega.NULL_EVENT_NUMBER)
        await conn.send(pravega.Append(w, 9, tuple(b"%d" % i for i in range(10))))
        await conn.send(pravega.FlushAppends())
        ack = await conn.next_event()
        assert isinstance(ack, pravega.DataAppended)
        assert ack.event_number == 9
        length = store.segments["s"].length
        await conn.aclose()
        again = await raw(port)
        await again.send(pravega.SetupAppend(2, w, "s"))
        assert await again.next_event() == pravega.AppendSetup(2, "s", w, 9)
        await again.send(pravega.Append(w, 7, (b"dup",)))
        await again.send(pravega.FlushAppends())
        ack = await again.next_event()
        assert isinstance(ack, pravega.DataAppended)
        assert ack.event_number == 9
        assert store.segments["s"].length == length
        assert store.segments["s"].duplicates == 1
        # A block that mixes resent and new events stores only the new ones.
        await again.send(pravega.Append(w, 11, (b"8", b"9", b"10", b"11")))
        await again.send(pravega.FlushAppends())
        ack = await again.next_event()
        assert isinstance(ack, pravega.DataAppended)
        assert ack.event_number == 11
        assert store.segments["s"].duplicates == 3
        assert store.segments["s"].length == length + 2 * (8 + 2)  # "10" and "11" framed
        await again.aclose()

    run(scenario)


def test_segment_lifecycle_and_error_replies() -> None:
    async def scenario(port: int, store: store_module.Store) -> None:
        conn = await raw(port)
        w = uuid.UUID(int=9)

        async def ask(command: Any) -> Any:
            await conn.send(command)
            return await conn.next_event()

        assert await ask(pravega.CreateSegment(1, "s")) == pravega.SegmentCreated(1, "s")
        assert await ask(pravega.CreateSegment(2, "s")) == pravega.SegmentAlreadyExists(2, "s")
        assert await ask(pravega.SetupAppend(3, w, "nope")) == pravega.NoSuchSegment(3, "nope")
        assert isinstance(await ask(pravega.SetupAppend(4, w, "s")), pravega.AppendSetup)
        # conditional appends
        ok = await ask(pravega.ConditionalAppend(w, 0, 0, b"first", 5))
        assert isinstance(ok, pravega.DataAppended)
        assert ok.current_segment_write_offset == 13
        failed = await ask(pravega.ConditionalAppend(w, 1, 0, b"late", 6))
        assert failed == pravega.ConditionalCheckFailed(w, 1, 6)
        # reads: at the tail, waiting at the tail
        read = await ask(pravega.ReadSegment("s", 0, 100, "", 7))
        assert read == pravega.SegmentRead("s", 0, True, False, b"\0\0\0\0\0\0\0\x05first", 7)
        partial = await ask(pravega.ReadSegment("s", 0, 4, "", 8))
        assert partial.at_tail is False
        assert len(partial.data) == 4
        waited = await ask(pravega.ReadSegment("s", 13, 100, "", 9))
        assert waited == pravega.SegmentRead("s", 13, True, False, b"", 9)
        info = await ask(pravega.GetStreamSegmentInfo(10, "s"))
        assert isinstance(info, pravega.StreamSegmentInfo)
        assert (info.write_offset, info.start_offset, info.is_sealed) == (13, 0, False)
        # truncate
        past = await ask(pravega.TruncateSegment(11, "s", 99))
        assert isinstance(past, pravega.ErrorMessage)
        assert await ask(pravega.TruncateSegment(12, "s", 8)) == pravega.SegmentTruncated(12, "s")
        truncated = await ask(pravega.ReadSegment("s", 0, 100, "", 13))
        assert truncated == pravega.SegmentIsTruncated(13, "s", 8, "", 0)
        tail = await ask(pravega.ReadSegment("s", 8, 100, "", 14))
        assert tail.data == b"first"
        # seal
        assert await ask(pravega.SealSegment(15, "s")) == pravega.SegmentSealed(15, "s")
        end = await ask(pravega.ReadSegment("s", 13, 100, "", 16))
        assert end == pravega.SegmentRead("s", 13, True, True, b"", 16)
        sealed = await ask(pravega.ConditionalAppend(w, 2, 13, b"x", 17))
        assert isinstance(sealed, pravega.SegmentIsSealed)
        # delete
        assert await ask(pravega.DeleteSegment(18, "s")) == pravega.SegmentDeleted(18, "s")
        assert await ask(pravega.DeleteSegment(19, "s")) == pravega.NoSuchSegment(19, "s")
        gone = await ask(pravega.ReadSegment("s", 0, 10, "", 20))
        assert isinstance(gone, pravega.NoSuchSegment)
        # keep-alive and unsupported commands
        assert await ask(pravega.KeepAlive()) == pravega.KeepAlive()
        unsupported = await ask(pravega.Opaque(pravega.CommandType.UPDATE_SEGMENT_POLICY, b""))
        assert unsupported == pravega.OperationUnsupported(-1, "UPDATE_SEGMENT_POLICY", "")
        short = await ask(pravega.Opaque(pravega.CommandType.MERGE_SEGMENTS, b"\0" * 7 + b"\5"))
        assert isinstance(short, pravega.ErrorMessage)
        assert (short.request_id, short.error_code) == (5, pravega.ErrorMessage.ILLEGAL_ARGUMENT)
        await conn.aclose()

    run(scenario)


def test_appends_after_seal_get_segment_is_sealed() -> None:
    async def scenario(port: int, store: store_module.Store) -> None:
        w = uuid.UUID(int=4)
        await client.create_segment("127.0.0.1", port, "s")
        conn = await raw(port)
        await conn.send(pravega.SetupAppend(1, w, "s"))
        await conn.next_event()
        store.segments["s"].sealed = True
        await conn.send(pravega.Append(w, 0, (b"x",)))
        await conn.send(pravega.FlushAppends())
        reply = await conn.next_event()
        assert isinstance(reply, pravega.SegmentIsSealed)
        await conn.send(pravega.SetupAppend(2, uuid.UUID(int=5), "s"))
        assert isinstance(await conn.next_event(), pravega.SegmentIsSealed)
        await conn.aclose()

    run(scenario)


def test_a_tailing_reader_sees_events_written_after_it_started() -> None:
    async def scenario(port: int, store: store_module.Store) -> None:
        await client.create_segment("127.0.0.1", port, "live")
        reader = client.TailReader("127.0.0.1", port, "live")
        reading = asyncio.create_task(_collect(reader.events(30)))
        await asyncio.sleep(0.05)
        writer = client.Writer("127.0.0.1", port, "live", block_size=64)
        await writer.open()
        for i in range(30):
            await writer.write([b"e%d" % i])
            if i % 10 == 9:
                await writer.flush()
        assert await reading == [b"e%d" % i for i in range(30)]
        await writer.close()

    run(scenario, tail_wait=2.0)


def test_incompatible_hello_gets_the_stores_hello_then_close() -> None:
    async def scenario(port: int, store: store_module.Store) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(pravega.encode(pravega.Hello(4, 1)))
        await writer.drain()
        data = await reader.read()  # to EOF: the store closes after its Hello
        assert data == pravega.encode(pravega.Hello(17, 5))
        writer.close()

    run(scenario)


def test_a_broken_block_closes_the_connection_without_a_reply() -> None:
    async def scenario(port: int, store: store_module.Store) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(pravega.encode(pravega.AppendBlock(uuid.UUID(int=1), b"")))
        await writer.drain()
        assert await reader.read() == b""
        writer.close()
        # The store keeps serving others.
        conn = await raw(port)
        await conn.send(pravega.KeepAlive())
        assert await conn.next_event() == pravega.KeepAlive()
        await conn.aclose()
        with pytest.raises(ConnectionClosed):
            await conn.next_event()

    run(scenario)


def test_the_scripts_run_as_a_user_runs_them() -> None:
    import re
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    server = subprocess.Popen(
        [sys.executable, "-m", "examples.pravega_segment_store", "--port", "0"],
        cwd=root,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        deadline = time.monotonic() + 20
        port = None
        while port is None and time.monotonic() < deadline:
            found = re.search(r"listening on 127\.0\.0\.1:(\d+)", server.stderr.readline())
            port = int(found.group(1)) if found else None
        assert port is not None, "the store did not report its port"
        base = [sys.executable, "-m", "examples.pravega_client", "--port", str(port)]
        wrote = subprocess.run(
            [*base, "write", "demo", "--count", "3"],
            cwd=root, capture_output=True, text=True, timeout=20, check=True,
        )  # fmt: skip
        assert "wrote 3 events, last event number 2" in wrote.stdout
        read = subprocess.run(
            [*base, "read", "demo", "--count", "3"],
            cwd=root, capture_output=True, text=True, timeout=20, check=True,
        )  # fmt: skip
        assert read.stdout.splitlines() == ["event 0", "event 1", "event 2"]
    finally:
        server.kill()
        server.wait(timeout=10)


def test_segment_names_that_could_be_shared_by_two_streams_are_refused() -> None:
    """``a/b/c/0.#epoch.0`` is both scope ``a`` + stream ``b/c`` and scope ``a/b`` + stream
    ``c``: the store refuses to create a stream segment whose scope or stream Pravega would
    refuse, and any name with an empty or over-long part."""

    async def scenario(port: int, store: store_module.Store) -> None:
        conn = await raw(port)
        refused = (
            "a/b/c/0.#epoch.0",
            "a/b c/0.#epoch.0",
            "sc/" + "s" * 256 + "/0.#epoch.0",
            "x" * 256,
            "a//b",
            "/lead",
        )
        for request_id, name in enumerate(refused, 1):
            await conn.send(pravega.CreateSegment(request_id, name))
            reply = await conn.next_event()
            assert isinstance(reply, pravega.ErrorMessage), name
            assert reply.error_code == pravega.ErrorMessage.ILLEGAL_ARGUMENT
            assert name not in store.segments
        accepted = ("sc/st/0.#epoch.0", "sc/st/0.#epoch.0#transaction." + "ab" * 16, "plain")
        for request_id, name in enumerate(accepted, 100):
            await conn.send(pravega.CreateSegment(request_id, name))
            assert await conn.next_event() == pravega.SegmentCreated(request_id, name)
        await conn.aclose()

    run(scenario)
