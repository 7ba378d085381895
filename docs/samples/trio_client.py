"""Tutorial: a RustLog client written with trio (against a small trio broker in the same nursery).

``s3p_codec.io.trio`` needs the ``trio`` extra. The client sends a request and awaits the
response; the codec pairs responses with requests by order and types each one.
Run: ``python docs/samples/trio_client.py``.
"""

from __future__ import annotations

import trio

from s3p_codec import Role, rustlog
from s3p_codec.io.trio import TrioConnection, connect, serve


async def broker(conn: TrioConnection[rustlog.Event, rustlog.Event]) -> None:
    """A one-partition, in-memory broker: just enough to answer the client below."""
    log: list[bytes] = []
    async for request in conn:
        if isinstance(request, rustlog.CreateTopic):
            await conn.send(rustlog.CreateTopicResponse(True, request.partition_count))
        elif isinstance(request, rustlog.Produce):
            base = len(log)
            log.extend(request.records)
            await conn.send(rustlog.ProduceResponse(base, len(request.records)))
        elif isinstance(request, rustlog.Fetch):
            records = tuple(
                rustlog.Record(offset, 0, payload)
                for offset, payload in enumerate(log)
                if offset >= request.offset
            )
            await conn.send(rustlog.FetchResponse(records, len(log)))
        elif isinstance(request, rustlog.Ping):
            await conn.send(rustlog.Pong())


async def client(port: int) -> list[bytes]:
    """Create a topic, produce two records, fetch them back."""
    with trio.fail_after(5):  # bound every network step of this client
        conn = await connect(rustlog.Connection(Role.CLIENT), "127.0.0.1", port)
        async with conn:
            await conn.send(rustlog.CreateTopic("logs", 1))
            print(await conn.next_event())
            await conn.send(rustlog.Produce("logs", 0, (b"Hello", b"World")))
            produced = await conn.next_event()
            assert isinstance(produced, rustlog.ProduceResponse), produced
            await conn.send(rustlog.Fetch("readers", "logs", 0, 0, 1 << 20))
            fetched = await conn.next_event()
            assert isinstance(fetched, rustlog.FetchResponse), fetched
            return [record.payload for record in fetched.records]


async def main() -> None:
    async with trio.open_nursery() as nursery:
        factory = lambda: rustlog.Connection(Role.SERVER)  # noqa: E731 - one codec per connection
        listeners = await nursery.start(serve, factory, broker)
        port = listeners[0].socket.getsockname()[1]
        payloads = await client(port)
        print(payloads)  # [b'Hello', b'World']
        assert payloads == [b"Hello", b"World"]
        nursery.cancel_scope.cancel()  # stop the broker


if __name__ == "__main__":
    trio.run(main)
