"""A Durable Streams client on the asyncio adapter: the codec's events behind a few methods.

    python -m examples.durable_client http://127.0.0.1:4437     # against a running server

The demo creates a JSON stream, appends with an idempotent producer, reads it back, follows it
live (long-poll or SSE) while a second connection appends and closes it, and stops at EOF.
``DurableClient`` keeps one HTTP/1.1 connection; ``follow`` drives the spec's read state
machine (``durable.StreamReader``): catch up, then go live, resuming from the last offset.

Subscriptions (PROTOCOL.md sections 6-7): ``DurableClient.subscribe`` and the other
``__ds`` requests go through ``request`` like any other; ``WebhookReceiver`` is a webhook
endpoint on 127.0.0.1 that verifies each delivery's ``Webhook-Signature`` against the server's
JWK Set before it trusts the notification; ``claim_wake`` is one pull-wake worker step.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

from examples import _cli
from s3p_codec import RemoteProtocolError, Role, durable
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.asyncio import AsyncioConnection, connect, serve

Conn = AsyncioConnection[durable.Request, durable.ClientEvent]
_READ_RESPONSES = (
    durable.Chunk,
    durable.NotModified,
    durable.LongPollTimeout,
    durable.SSEStart,
    durable.ErrorResponse,
)


class DurableClient:
    """One connection to a Durable Streams server; one request at a time."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    @classmethod
    async def open(cls, base_url: str, limits: durable.Limits | None = None) -> DurableClient:
        parts = urlsplit(base_url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        codec = durable.Connection(Role.CLIENT, limits, host=f"{host}:{port}")
        return cls(await connect(codec, host, port))

    async def aclose(self) -> None:
        await self.conn.aclose()

    async def __aenter__(self) -> DurableClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def request(self, request: durable.Request) -> durable.Response:
        """Send one request and return its response (``SSEStart`` for SSE reads)."""
        await self.conn.send(request)
        event = await self.conn.next_event()
        if isinstance(event, (durable.SSEData, durable.SSEControl, durable.SSEEnd)):
            raise RuntimeError(f"unexpected {event!r} before a response")
        return event

    async def sse_events(self) -> AsyncIterator[durable.SSEData | durable.SSEControl]:
        """The events of the SSE response that ``request`` started, until the body ends."""
        while True:
            event = await self.conn.next_event()
            if isinstance(event, durable.SSEEnd):
                return
            if not isinstance(event, (durable.SSEData, durable.SSEControl)):
                raise RuntimeError(f"unexpected {event!r} inside an SSE response")
            yield event

    async def read_all(self, path: str, offset: str = "-1") -> tuple[bytes, durable.Chunk]:
        """Catch-up reads until ``Stream-Up-To-Date``: the bytes and the last chunk."""
        parts: list[bytes] = []
        while True:
            response = await self.request(durable.Read(path, offset=offset))
            if not isinstance(response, durable.Chunk):
                raise RuntimeError(f"read failed: {response!r}")
            parts.append(response.data)
            offset = response.next_offset
            if response.up_to_date:
                return b"".join(parts), response

    async def follow(
        self, path: str, *, offset: str = "-1", live: durable.LiveMode = durable.LiveMode.SSE
    ) -> AsyncIterator[bytes]:
        """Every payload from ``offset`` on, live, until the stream is closed (EOF)."""
        reader = durable.StreamReader(path, offset=offset, live=live)
        while (read := reader.next_request()) is not None:
            response = await self.request(read)
            if not isinstance(response, _READ_RESPONSES):
                raise RuntimeError(f"unexpected answer to a read: {response!r}")
            reader.on_event(response)
            if isinstance(response, durable.SSEStart):
                async for event in self.sse_events():
                    reader.on_event(event)
                    data = reader.take()
                    if data:
                        yield data
            elif isinstance(response, durable.ErrorResponse):
                raise RuntimeError(f"read failed: {response!r}")
            data = reader.take()
            if data:
                yield data

    # -- subscriptions (sections 6-7) ------------------------------------------------------

    async def control(self, request: durable.Request) -> durable.Response:
        """A ``__ds`` request whose refusal raises (``SubscriptionError`` or HTTP error)."""
        response = await self.request(request)
        if isinstance(response, (durable.SubscriptionError, durable.ErrorResponse)):
            raise RuntimeError(f"{type(request).__name__} refused: {response!r}")
        return response

    async def subscribe(
        self, root: str, ident: str, config: durable.SubscriptionConfig
    ) -> durable.Subscription:
        """Create or re-confirm subscription ``ident`` (201 or 200; 409 raises)."""
        response = await self.control(durable.PutSubscription(root, ident, config))
        assert isinstance(response, durable.SubscriptionOk)
        return response.subscription

    async def jwks(self, root: str) -> durable.Jwks:
        """The server's webhook signing keys (``{root}__ds/jwks.json``)."""
        response = await self.control(durable.GetJwks(root))
        assert isinstance(response, durable.Jwks)
        return response

    async def claim_wake(
        self, root: str, ident: str, worker: str
    ) -> durable.Claimed | durable.SubscriptionError:
        """One pull-wake worker step: the claimed wake, or why not (``ALREADY_CLAIMED``,
        ``NO_PENDING_WORK``)."""
        response = await self.request(durable.ClaimSubscription(root, ident, worker))
        if not isinstance(response, (durable.Claimed, durable.SubscriptionError)):
            raise RuntimeError(f"claim refused: {response!r}")
        return response


class WebhookReceiver:
    """A webhook endpoint on 127.0.0.1 that verifies every delivery before trusting it.

    ``jwks`` are the server's keys (``DurableClient.jwks``); a delivery whose signature does
    not verify (unknown ``kid``, outside the replay window, wrong bytes) is answered 401 and
    never queued. Verified notifications land in ``deliveries``; each is answered
    ``{"done": true}`` when ``done`` is set (the server acks the wake snapshot itself), else
    ``{}`` (the worker calls back).
    """

    def __init__(self, jwks: durable.Jwks, *, done: bool = False) -> None:
        self.jwks = jwks
        self.done = done
        self.deliveries: asyncio.Queue[durable.WebhookNotification] = asyncio.Queue()
        self.refused = 0
        self._server: asyncio.Server | None = None
        self.url = ""

    async def start(self, path: str = "/webhook") -> str:
        """Listen on an OS-chosen port; the URL to subscribe with."""
        self._server = await serve(lambda: durable.Connection(Role.SERVER), self._handle)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}{path}"
        return self.url

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, conn: AsyncioConnection[durable.Response, durable.Request]) -> None:
        while True:
            try:
                request = await conn.next_event()
            except (ConnectionClosed, RemoteProtocolError):
                return  # the adapter answered a refused request already
            if not isinstance(request, durable.WebhookDelivery):
                await conn.send(durable.ErrorResponse(404, "webhook deliveries only"))
                continue
            try:
                # Verify the raw bytes first; only then parse them.
                durable.verify_webhook(
                    request.signature.format(), request.body, self.jwks, time.time()
                )
                notification = request.notification
            except RemoteProtocolError as exc:
                self.refused += 1
                await conn.send(durable.ErrorResponse(401, exc.message))
                continue
            self.deliveries.put_nowait(notification)
            await conn.send(durable.WebhookReply(done=self.done))


async def demo(base_url: str) -> int:
    path = "/v1/stream/demo-orders"
    async with await DurableClient.open(base_url) as client:
        await client.request(durable.Delete(path))
        created = await client.request(durable.Create(path, content_type="application/json"))
        print("create:", created)
        producer = durable.Producer("demo-writer", epoch=0, seq=0)
        body = json.dumps([{"order": 1}, {"order": 2}]).encode()
        appended = await client.request(
            durable.Append(path, body, content_type="application/json", producer=producer)
        )
        print("append:", appended)
        data, chunk = await client.read_all(path)
        print("catch-up:", data.decode(), "next offset", chunk.next_offset)

        async def writer() -> None:
            async with await DurableClient.open(base_url) as other:
                await asyncio.sleep(0.2)
                last = durable.Append(
                    path, b'{"order": 3}', content_type="application/json", close=True
                )
                print("append and close:", await other.request(last))

        task = asyncio.create_task(writer())
        async for payload in client.follow(path, offset=chunk.next_offset):
            if payload != b"[]":  # an empty JSON-mode read is an empty array
                print("live:", payload.decode())
        await task
        print("EOF: the stream is closed")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser("durable_client", __doc__)
    parser.add_argument("url", nargs="?", default="http://127.0.0.1:4437")
    args = parser.parse_args(argv)
    return asyncio.run(demo(args.url))


if __name__ == "__main__":
    from examples._cli import run as run_cli

    sys.exit(run_cli(main, "python -m examples.durable_client"))
