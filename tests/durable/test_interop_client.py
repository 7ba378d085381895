"""Our client (codec + asyncio adapter, through ``examples.durable_client``) against real servers.

Each scenario runs against the Node reference server (npm ``@durable-streams/server``) and
against our example server, both started on 127.0.0.1 on OS-chosen ports: create, append,
catch-up, ETag/304, long-poll, SSE (text and base64), idempotent producers, closure, JSON mode
and forks. Every scenario is bounded by a timeout.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Awaitable, Callable, Iterator

import pytest

from examples.durable_client import DurableClient
from s3p_codec import durable
from tests.durable._servers import example_server, reference_server

pytestmark = [pytest.mark.network]

_ids = itertools.count()


@pytest.fixture(scope="module", params=["reference", "example"])
def base_url(request: pytest.FixtureRequest) -> Iterator[str]:
    start = reference_server if request.param == "reference" else example_server
    with start() as url:
        yield url


def run(url: str, scenario: Callable[[DurableClient, str], Awaitable[None]]) -> None:
    async def main() -> None:
        async with asyncio.timeout(15):
            client = await DurableClient.open(url)
            async with client:
                await scenario(client, f"/v1/stream/interop-{next(_ids)}-{id(scenario)}")

    asyncio.run(main())


def test_create_is_idempotent_with_the_same_config_and_409_otherwise(base_url: str) -> None:
    async def scenario(client: DurableClient, path: str) -> None:
        first = await client.request(durable.Create(path, content_type="text/plain", body=b"hi"))
        assert isinstance(first, durable.Created)
        assert not first.existed
        assert first.content_type.startswith("text/plain")
        again = await client.request(durable.Create(path, content_type="text/plain"))
        assert isinstance(again, durable.Created)
        assert again.existed
        other = await client.request(durable.Create(path, content_type="application/json"))
        assert isinstance(other, durable.ErrorResponse)
        assert other.code is durable.ErrorCode.CONFLICT
        info = await client.request(durable.Head(path))
        assert isinstance(info, durable.StreamInfo)
        assert info.next_offset == first.next_offset
        assert not info.closed

    run(base_url, scenario)


def test_append_then_catch_up_read_is_byte_exact_with_etag_304(base_url: str) -> None:
    async def scenario(client: DurableClient, path: str) -> None:
        await client.request(durable.Create(path, content_type="application/octet-stream"))
        payloads = [bytes(range(256)), b"\r\n\r\nevent: x\n", b"\x00" * 1000]
        offsets = []
        for payload in payloads:
            appended = await client.request(
                durable.Append(path, payload, content_type="application/octet-stream")
            )
            assert isinstance(appended, durable.Appended)
            assert appended.next_offset is not None
            offsets.append(appended.next_offset)
        assert offsets == sorted(offsets)
        assert len(set(offsets)) == 3
        data, chunk = await client.read_all(path)
        assert data == b"".join(payloads)
        assert chunk.next_offset == offsets[-1]
        assert chunk.etag is not None
        cached = await client.request(durable.Read(path, offset="-1", if_none_match=chunk.etag))
        assert isinstance(cached, durable.NotModified)
        tail, _ = await client.read_all(path, offsets[0])
        assert tail == b"".join(payloads[1:])

    run(base_url, scenario)


def test_long_poll_times_out_with_a_cursor_then_wakes_on_append(base_url: str) -> None:
    async def scenario(client: DurableClient, path: str) -> None:
        created = await client.request(durable.Create(path, content_type="text/plain"))
        assert isinstance(created, durable.Created)
        live = durable.LiveMode.LONG_POLL
        timeout = await client.request(durable.Read(path, offset=created.next_offset, live=live))
        assert isinstance(timeout, durable.LongPollTimeout)
        assert timeout.cursor is not None
        assert timeout.cursor.isdigit()
        assert not timeout.closed

        async def append_later() -> None:
            async with await DurableClient.open(base_url) as other:
                await asyncio.sleep(0.1)
                await other.request(durable.Append(path, b"wake", content_type="text/plain"))

        task = asyncio.create_task(append_later())
        read = durable.Read(path, offset=created.next_offset, live=live, cursor=timeout.cursor)
        chunk = await client.request(read)
        await task
        assert isinstance(chunk, durable.Chunk)
        assert chunk.data == b"wake"
        assert chunk.cursor is not None

    run(base_url, scenario)


def test_sse_text_stream_delivers_data_then_control(base_url: str) -> None:
    async def scenario(client: DurableClient, path: str) -> None:
        payload = b"line1\nline2\r\n\r\nevent: control\ndata: {}"
        await client.request(durable.Create(path, content_type="text/plain", body=payload))
        start = await client.request(durable.Read(path, offset="-1", live=durable.LiveMode.SSE))
        assert start == durable.SSEStart(base64=False)
        data = b""
        async for event in client.sse_events():
            if isinstance(event, durable.SSEData):
                data += event.data
            else:
                assert event.up_to_date
                assert event.cursor is not None
                break
        await client.aclose()
        # SSE turns every line break into "\n"; the rest is preserved, injection included.
        assert data == payload.replace(b"\r\n", b"\n")

    run(base_url, scenario)


def test_sse_binary_stream_is_base64_and_exact(base_url: str) -> None:
    async def scenario(client: DurableClient, path: str) -> None:
        payload = bytes(range(256)) * 4
        await client.request(durable.Create(path, content_type="image/png", body=payload))
        start = await client.request(durable.Read(path, offset="-1", live=durable.LiveMode.SSE))
        assert start == durable.SSEStart(base64=True)
        data = b""
        async for event in client.sse_events():
            if isinstance(event, durable.SSEData):
                data += event.data
            elif event.up_to_date:
                break
        await client.aclose()
        assert data == payload

    run(base_url, scenario)


def test_idempotent_producer_outcomes(base_url: str) -> None:
    async def scenario(client: DurableClient, path: str) -> None:
        await client.request(durable.Create(path, content_type="text/plain"))

        async def append(epoch: int, seq: int, body: bytes = b"x") -> durable.Response:
            producer = durable.Producer("writer-1", epoch, seq)
            return await client.request(
                durable.Append(path, body, content_type="text/plain", producer=producer)
            )

        first = await append(0, 0, b"a")
        assert isinstance(first, durable.Appended)
        assert (first.producer_epoch, first.producer_seq, first.duplicate) == (0, 0, False)
        second = await append(0, 1, b"b")
        assert isinstance(second, durable.Appended)
        assert second.producer_seq == 1
        duplicate = await append(0, 0, b"a")
        assert isinstance(duplicate, durable.Appended)
        assert duplicate.duplicate
        assert duplicate.producer_seq == 1  # the highest accepted, not the request's
        gap = await append(0, 5)
        assert isinstance(gap, durable.ErrorResponse)
        assert gap.code is durable.ErrorCode.CONFLICT
        assert gap.sequence_gap
        assert (gap.expected_seq, gap.received_seq) == (2, 5)
        bumped = await append(1, 0, b"c")
        assert isinstance(bumped, durable.Appended)
        stale = await append(0, 2)
        assert isinstance(stale, durable.ErrorResponse)
        assert stale.code is durable.ErrorCode.FORBIDDEN
        assert stale.stale_epoch
        assert not stale.sequence_gap
        assert stale.producer_epoch == 1
        data, _ = await client.read_all(path)
        assert data == b"abc"

    run(base_url, scenario)


def test_closure_is_seen_by_every_read_mode(base_url: str) -> None:
    async def scenario(client: DurableClient, path: str) -> None:
        await client.request(durable.Create(path, content_type="text/plain", body=b"all"))
        closed = await client.request(durable.Append(path, close=True))
        assert isinstance(closed, durable.Appended)
        assert closed.closed
        assert closed.next_offset is not None
        tail = closed.next_offset
        again = await client.request(durable.Append(path, close=True))
        assert isinstance(again, durable.Appended)  # close-only is idempotent
        refused = await client.request(durable.Append(path, b"more", content_type="text/plain"))
        assert isinstance(refused, durable.ErrorResponse)
        assert refused.code is durable.ErrorCode.CONFLICT
        assert refused.stream_closed
        assert refused.next_offset == tail
        eof = await client.request(durable.Read(path, offset=tail))
        assert isinstance(eof, durable.Chunk)
        assert (eof.data, eof.closed, eof.up_to_date) == (b"", True, True)
        live = durable.LiveMode.LONG_POLL
        poll = await client.request(durable.Read(path, offset=tail, live=live))
        assert isinstance(poll, durable.LongPollTimeout)
        assert poll.closed
        start = await client.request(durable.Read(path, offset=tail, live=durable.LiveMode.SSE))
        assert isinstance(start, durable.SSEStart)
        controls = [e async for e in client.sse_events() if isinstance(e, durable.SSEControl)]
        assert controls[-1].closed
        assert controls[-1].next_offset == tail
        info = await client.request(durable.Head(path))
        assert isinstance(info, durable.StreamInfo)
        assert info.closed

    run(base_url, scenario)


def test_follow_reads_to_eof_by_long_poll_and_by_sse(base_url: str) -> None:
    for live in (durable.LiveMode.LONG_POLL, durable.LiveMode.SSE):

        async def scenario(client: DurableClient, path: str, live: durable.LiveMode = live) -> None:
            await client.request(durable.Create(path, content_type="text/plain", body=b"old "))

            async def writer() -> None:
                async with await DurableClient.open(base_url) as other:
                    for word in (b"new ", b"words "):
                        await asyncio.sleep(0.05)
                        await other.request(durable.Append(path, word, content_type="text/plain"))
                    final = durable.Append(path, b"end", content_type="text/plain", close=True)
                    await other.request(final)

            task = asyncio.create_task(writer())
            received = b"".join([data async for data in client.follow(path, live=live)])
            await task
            assert received == b"old new words end"

        run(base_url, scenario)


def test_json_mode_flattens_one_level(base_url: str) -> None:
    async def scenario(client: DurableClient, path: str) -> None:
        kind = "application/json"
        await client.request(durable.Create(path, content_type=kind, body=b"[]"))
        for body in (b'{"a":1}', b'[{"b":2},[3,4]]', b"[[[5]]]"):
            await client.request(durable.Append(path, body, content_type=kind))
        empty = await client.request(durable.Append(path, b"[]", content_type=kind))
        assert isinstance(empty, durable.ErrorResponse)
        assert empty.code is durable.ErrorCode.BAD_REQUEST
        bad = await client.request(durable.Append(path, b"{nope", content_type=kind))
        assert isinstance(bad, durable.ErrorResponse)
        assert bad.code is durable.ErrorCode.BAD_REQUEST
        data, _ = await client.read_all(path)
        assert json.loads(data) == [{"a": 1}, {"b": 2}, [3, 4], [[5]]]

    run(base_url, scenario)


def test_fork_reads_inherited_then_own_data(base_url: str) -> None:
    async def scenario(client: DurableClient, path: str) -> None:
        created = await client.request(durable.Create(path, content_type="text/plain", body=b"A"))
        assert isinstance(created, durable.Created)
        await client.request(durable.Append(path, b"B", content_type="text/plain"))
        fork = path + "-fork"
        made = await client.request(
            durable.Create(fork, forked_from=path, fork_offset=created.next_offset)
        )
        assert isinstance(made, durable.Created)
        assert made.content_type.startswith("text/plain")
        await client.request(durable.Append(fork, b"C", content_type="text/plain"))
        data, _ = await client.read_all(fork)
        assert data == b"AC"
        source, _ = await client.read_all(path)
        assert source == b"AB"
        gone = await client.request(durable.Delete(path))
        assert isinstance(gone, durable.Deleted)
        soft = await client.request(durable.Read(path))
        assert isinstance(soft, durable.ErrorResponse)
        assert soft.code is durable.ErrorCode.GONE
        still, _ = await client.read_all(fork)
        assert still == b"AC"

    run(base_url, scenario)
