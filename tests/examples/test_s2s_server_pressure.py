"""The example S2 server holds back clients that send without reading (HTTP/1.1 and HTTP/2)."""

from __future__ import annotations

import asyncio

import h2.config
import h2.connection
import h2.errors
import h2.events
import h11
import pytest

from examples.s2_server import BODY_QUEUE_CHUNKS, Store, _H1Connection, serve

pytestmark = [pytest.mark.network, pytest.mark.timeout(60)]


def test_http1_request_bodies_stop_being_read_while_the_handler_does_not_take_them() -> None:
    """The body pump used an unbounded queue: a client that never reads its responses kept
    being read (RSS grew about 10 MB/s). Now it waits once ``BODY_QUEUE_CHUNKS`` are queued."""

    async def main() -> None:
        reader = asyncio.StreamReader()
        head = (
            b"POST /v1/streams/s/records HTTP/1.1\r\nHost: x\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"%x\r\n" % 1000 + b"x" * 1000 + b"\r\n"
        reader.feed_data(head + chunk * 10_000)  # 10 MB the client keeps sending
        conn = _H1Connection(None, reader, None)  # type: ignore[arg-type]
        assert isinstance(await conn.next_event(), h11.Request)
        queue = conn.new_body_queue()
        pump = asyncio.get_running_loop().create_task(conn.pump(queue))
        await asyncio.sleep(0.2)
        assert not pump.done()
        assert queue.qsize() == BODY_QUEUE_CHUNKS
        assert len(reader._buffer) > 9_000_000  # what the client sent stays unread
        pump.cancel()

    asyncio.run(main())


def test_http2_data_for_an_answered_stream_is_reset_and_not_credited() -> None:
    """DATA for a stream already answered was queued and acknowledged for ever (1 GB sent gave
    1 GB of RSS). Now the stream is reset with NO_ERROR (RFC 9113 8.1) and its window is never
    credited again, while the connection window is, so other streams keep flowing."""

    async def scenario(port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        client.initiate_connection()
        sid = client.get_next_available_stream_id()
        client.send_headers(
            sid,
            [
                (":method", "POST"),
                (":path", "/v1/streams/missing/records"),
                (":scheme", "http"),
                (":authority", "127.0.0.1"),
                ("content-type", "s2s/proto"),
                ("authorization", "Bearer t"),
                ("s2-basin", "b"),
            ],
        )
        writer.write(client.data_to_send())
        events: list[h2.events.Event] = []

        async def pump_events(until: type) -> None:
            while not any(isinstance(e, until) for e in events):
                data = await asyncio.wait_for(reader.read(65536), 10)
                assert data, "the server closed the connection"
                events.extend(client.receive_data(data))
                writer.write(client.data_to_send())

        await pump_events(h2.events.StreamEnded)  # the 404 came back, the body never ended
        for _ in range(3):
            window = client.local_flow_control_window(sid)
            if window <= 0:
                break
            client.send_data(sid, b"x" * min(window, 16_384))
            writer.write(client.data_to_send())
            await writer.drain()
        await pump_events(h2.events.StreamReset)
        reset = next(e for e in events if isinstance(e, h2.events.StreamReset))
        assert reset.stream_id == sid
        assert reset.error_code == h2.errors.ErrorCodes.NO_ERROR
        credited = [
            e for e in events if isinstance(e, h2.events.WindowUpdated) and e.stream_id == sid
        ]
        assert credited == []
        writer.close()

    async def main() -> None:
        server = await serve("127.0.0.1", 0, store=Store())
        try:
            await asyncio.wait_for(scenario(server.sockets[0].getsockname()[1]), 30)
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(main())
