"""Load: 50 concurrent clients each pipeline 2,000 APPENDs, then everything is read back.

Nothing may be lost or duplicated, every stream's timestamps must be strictly increasing, and
each APPEND's reply must name the timestamp its record was stored under. The clients run on the
asyncio adapter in this process; the server runs in its own process (both backends). The whole
test is bounded by ``asyncio.timeout`` and pytest's own time-out: it stops by itself.
"""

from __future__ import annotations

import asyncio
import itertools

import pytest

from s3p_codec import Role, s3p
from s3p_codec.io.asyncio import connect
from tests.examples.conftest import RunningServer

pytestmark = [pytest.mark.network, pytest.mark.slow, pytest.mark.timeout(120)]

CLIENTS = 50
APPENDS = 2_000
STREAMS = 5  # ten writers share each stream: concurrency inside a stream, not only across
_runs = itertools.count()


async def writer(server: RunningServer, stream: bytes, client: int) -> dict[bytes, s3p.Timestamp]:
    """Pipeline every APPEND first, then read every reply; returns payload -> timestamp."""
    conn = await connect(s3p.Connection(Role.CLIENT), *server.address)
    async with conn:
        payloads = [b"client-%02d-record-%04d" % (client, n) for n in range(APPENDS)]
        for payload in payloads:  # kept and written in large chunks, as a pipelining client does
            await conn.send(s3p.Append(stream, (payload,)), flush=False)
        await conn.flush()
        stamps = {}
        for payload in payloads:
            reply = await conn.next_event()
            assert isinstance(reply, s3p.AppendReply), reply
            stamps[payload] = reply.timestamp
    return stamps


async def read_back(server: RunningServer, stream: bytes) -> list[tuple[s3p.Timestamp, bytes]]:
    conn = await connect(s3p.Connection(Role.CLIENT), *server.address)
    records: list[tuple[s3p.Timestamp, bytes]] = []
    after = None
    async with conn:
        while True:
            await conn.send(s3p.Read(stream, count=5000, min_timestamp=after))
            reply = await conn.next_event()
            assert isinstance(reply, s3p.ReadReply), reply
            if not reply.records:
                return records
            records.extend(reply.records)
            after = reply.records[-1][0]


def test_fifty_clients_pipelining_two_thousand_appends_lose_and_duplicate_nothing(
    server: RunningServer,
) -> None:
    run = next(_runs)
    streams = [b"load-%d-%d" % (run, i) for i in range(STREAMS)]

    async def main() -> None:
        async with asyncio.timeout(90):
            setup = await connect(s3p.Connection(Role.CLIENT), *server.address)
            async with setup:
                for stream in streams:
                    await setup.send(s3p.Create(stream))
                    assert await setup.next_event() == s3p.Ok()
            results = await asyncio.gather(
                *(writer(server, streams[c % STREAMS], c) for c in range(CLIENTS))
            )
            for index, stream in enumerate(streams):
                stored = await read_back(server, stream)
                timestamps = [ts for ts, _ in stored]
                assert all(a < b for a, b in itertools.pairwise(timestamps)), "not increasing"
                expected: dict[bytes, s3p.Timestamp] = {}
                for client in range(index, CLIENTS, STREAMS):
                    expected.update(results[client])
                assert len(stored) == len(expected) == APPENDS * CLIENTS // STREAMS
                assert {payload: ts for ts, payload in stored} == expected
                # Each client's own replies are increasing too (its appends are in order).
                for client in range(index, CLIENTS, STREAMS):
                    own = list(results[client].values())
                    assert own == sorted(own)

    asyncio.run(main())
