"""The example server's subscriptions (PROTOCOL.md sections 6-7), one MUST per test, over real
sockets on 127.0.0.1: the server runs in this process (``start(port=0)``) so that a test can
set small ``SubscriptionLimits``; requests go through our client codec, webhooks reach
``examples.durable_client.WebhookReceiver`` (which verifies every signature) or a receiver
written here when a test needs to act between a delivery and its reply.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import attrs

from examples._durable_subscriptions import SubscriptionLimits, glob_match
from examples.durable_client import DurableClient, WebhookReceiver
from examples.durable_server import App, start
from s3p_codec import Role, durable
from s3p_codec.io.asyncio import AsyncioConnection, serve

ROOT = "/v1/stream/"
Code = durable.SubscriptionErrorCode


@asynccontextmanager
async def running(limits: SubscriptionLimits | None = None) -> AsyncIterator[tuple[App, str]]:
    server, app = await start("127.0.0.1", 0, long_poll_timeout=0.5)
    if limits is not None:
        app.subscriptions.limits = limits
    async with server:
        yield app, app.settings.base_url


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 30))


def webhook(url: str, pattern: str = "events/*", **kwargs: Any) -> durable.SubscriptionConfig:
    return durable.SubscriptionConfig(
        durable.SubscriptionType.WEBHOOK, pattern=pattern, webhook_url=url, **kwargs
    )


def pull(wake: str, pattern: str = "jobs/*", **kwargs: Any) -> durable.SubscriptionConfig:
    return durable.SubscriptionConfig(
        durable.SubscriptionType.PULL_WAKE, pattern=pattern, wake_stream=wake, **kwargs
    )


async def put_json(client: DurableClient, rel: str, body: bytes = b"[]") -> durable.Response:
    return await client.request(
        durable.Create(ROOT + rel, content_type="application/json", body=body)
    )


async def append(client: DurableClient, rel: str, body: bytes = b'{"n":1}') -> None:
    done = await client.request(durable.Append(ROOT + rel, body, content_type="application/json"))
    assert isinstance(done, durable.Appended), done


async def get(client: DurableClient, ident: str) -> durable.Subscription:
    got = await client.request(durable.GetSubscription(ROOT, ident))
    assert isinstance(got, durable.SubscriptionOk), got
    return got.subscription


async def error(client: DurableClient, request: durable.Request) -> durable.SubscriptionError:
    answer = await client.request(request)
    assert isinstance(answer, durable.SubscriptionError), answer
    return answer


async def wake_events(client: DurableClient, rel: str) -> list[durable.WakeEvent]:
    data, _ = await client.read_all(ROOT + rel)
    return [durable.parse_wake_event(json.dumps(item).encode()) for item in json.loads(data)]


# -- 6: the reserved prefix ------------------------------------------------------------------


def test_the_reserved_prefix_is_routed_first_and_never_names_a_stream() -> None:
    async def test() -> None:
        async with running() as (app, url), await DurableClient.open(url) as client:
            raw = (
                b"PUT /v1/stream/__ds/subscriptions/x HTTP/1.1\r\nhost: a\r\n"
                b"content-type: text/plain\r\ncontent-length: 5\r\n\r\nhello"
            )
            reader, writer = await asyncio.open_connection("127.0.0.1", int(url.rsplit(":", 1)[1]))
            writer.write(raw)
            head = await reader.readuntil(b"\r\n\r\n")
            writer.close()
            assert head.startswith(b"HTTP/1.1 400 ")
            assert not [path for path in app.store.streams if "__ds" in path]
            found = await error(client, durable.GetSubscription(ROOT, "x"))
            assert found.code is Code.SUBSCRIPTION_NOT_FOUND
            unknown = await client.request(durable.Read("/v1/stream/orders"))
            assert isinstance(unknown, durable.ErrorResponse)

    run(test)


# -- 6.2: create or re-confirm ---------------------------------------------------------------


def test_reconfirm_compares_the_normalized_configuration() -> None:
    async def test() -> None:
        async with running() as (_, url), await DurableClient.open(url) as client:
            first = webhook("http://127.0.0.1:9/h", streams=("b", "a", "a"), description="d")
            made = await client.request(durable.PutSubscription(ROOT, "s", first))
            assert isinstance(made, durable.SubscriptionOk)
            assert made.created
            # the same streams in another order, duplicates dropped: the same configuration
            same = attrs.evolve(first, streams=("a", "b"))
            again = await client.request(durable.PutSubscription(ROOT, "s", same))
            assert isinstance(again, durable.SubscriptionOk)
            assert not again.created
            for other in (
                attrs.evolve(first, description="e"),
                attrs.evolve(first, lease_ttl_ms=2000),
                attrs.evolve(first, webhook_url="http://127.0.0.1:9/other"),
            ):
                refused = await error(client, durable.PutSubscription(ROOT, "s", other))
                assert refused.code is Code.SUBSCRIPTION_ALREADY_EXISTS
                assert refused.status == 409

    run(test)


def test_no_shared_secret_and_the_signing_key_is_published() -> None:
    async def test() -> None:
        async with running() as (_, url), await DurableClient.open(url) as client:
            sub = await client.subscribe(ROOT, "s", webhook("http://localhost:9/h"))
            assert sub.signing is not None
            assert sub.signing.jwks_url == url + ROOT + "__ds/jwks.json"
            jwks = await client.jwks(ROOT)
            assert [key.kid for key in jwks.keys] == [sub.signing.kid]
            assert (await client.jwks(ROOT)) == jwks  # "kid MUST be stable"
            # "Webhook subscription responses MUST NOT include shared webhook signing secrets"
            fields = json.dumps(attrs.asdict(sub)).lower()
            assert "secret" not in fields
            assert "private" not in fields

    run(test)


def test_unsafe_webhook_urls_are_refused_and_nothing_is_created() -> None:
    async def test() -> None:
        async with running() as (app, url), await DurableClient.open(url) as client:
            for target in ("http://10.0.0.1/h", "https://169.254.169.254/x", "http://a.example/h"):
                refused = await error(client, durable.PutSubscription(ROOT, "s", webhook(target)))
                assert refused.code is Code.WEBHOOK_URL_REJECTED
            assert not app.subscriptions.records

    run(test)


def test_pattern_backfill_links_existing_streams_at_their_tail() -> None:
    async def test() -> None:
        async with running() as (_, url), await DurableClient.open(url) as client:
            made = await put_json(client, "events/old", b'{"n":1}')
            assert isinstance(made, durable.Created)
            receiver = WebhookReceiver(await client.jwks(ROOT))
            await receiver.start()
            await client.subscribe(ROOT, "s", webhook(receiver.url))
            sub = await get(client, "s")
            assert [(s.path, s.link_type, s.acked_offset) for s in sub.streams] == [
                ("events/old", durable.LinkType.GLOB, made.next_offset)
            ]
            await asyncio.sleep(0.2)
            assert receiver.deliveries.empty()  # no historical replay
            await append(client, "events/old")
            wake = await asyncio.wait_for(receiver.deliveries.get(), 5)
            assert wake.streams[0].acked_offset == made.next_offset
            await receiver.aclose()

    run(test)


def test_subscriptions_are_bounded() -> None:
    async def test() -> None:
        limits = SubscriptionLimits(max_subscriptions=2, max_links=3)
        async with running(limits) as (_, url), await DurableClient.open(url) as client:
            for ident in ("a", "b"):
                await client.subscribe(ROOT, ident, pull("w", streams=("x/1",)))
            over = await error(client, durable.PutSubscription(ROOT, "c", pull("w")))
            assert over.code is Code.LIMIT_EXCEEDED
            assert over.status == 429
            add = durable.AddSubscriptionStreams(ROOT, "a", ("x/2", "x/3", "x/4", "x/5"))
            assert await client.request(add) == durable.SubscriptionUpdated()
            assert len((await get(client, "a")).streams) == 3

    run(test)


# -- 6.3 / 6.4: delete, membership -----------------------------------------------------------


def test_requests_for_a_deleted_subscription_fail_and_move_no_cursor() -> None:
    async def test() -> None:
        async with running() as (_, url), await DurableClient.open(url) as client:
            await put_json(client, "w")
            await client.subscribe(ROOT, "s", pull("w"))
            await put_json(client, "jobs/a", b'{"n":1}')
            claimed = await client.claim_wake(ROOT, "s", "one")
            assert isinstance(claimed, durable.Claimed)
            tail = claimed.streams[0].tail_offset
            assert await client.request(durable.DeleteSubscription(ROOT, "s")) == (
                durable.SubscriptionUpdated()
            )
            ack = durable.AckSubscription(
                ROOT, "s", claimed.token, claimed.wake_id, claimed.generation,
                (durable.StreamAck("jobs/a", tail),), done=True,
            )  # fmt: skip
            assert (await error(client, ack)).code is Code.SUBSCRIPTION_NOT_FOUND
            # The same id again: the old token belongs to the deleted one and never works.
            await client.subscribe(ROOT, "s", pull("w", streams=("jobs/a",)))
            await append(client, "jobs/a")
            fresh = await client.claim_wake(ROOT, "s", "one")
            assert isinstance(fresh, durable.Claimed)
            replay = attrs.evolve(ack, wake_id=fresh.wake_id, generation=fresh.generation)
            assert (await error(client, replay)).code is Code.TOKEN_INVALID
            link = (await get(client, "s")).streams[0]
            assert link.acked_offset != fresh.streams[0].tail_offset

    run(test)


def test_removing_an_explicit_link_keeps_the_glob_link() -> None:
    async def test() -> None:
        async with running() as (_, url), await DurableClient.open(url) as client:
            await put_json(client, "jobs/a")
            config = pull("w", streams=("jobs/a", "other/b"))
            await client.subscribe(ROOT, "s", config)
            kinds = {s.path: s.link_type for s in (await get(client, "s")).streams}
            assert kinds == {
                "jobs/a": durable.LinkType.EXPLICIT,
                "other/b": durable.LinkType.EXPLICIT,
            }
            for rel in ("jobs/a", "other/b", "never/linked"):
                remove = durable.RemoveSubscriptionStream(ROOT, "s", rel)
                assert await client.request(remove) == durable.SubscriptionUpdated()
            kinds = {s.path: s.link_type for s in (await get(client, "s")).streams}
            assert kinds == {"jobs/a": durable.LinkType.GLOB}

    run(test)


# -- 7.1: webhook delivery -------------------------------------------------------------------


@asynccontextmanager
async def scripted_receiver(
    answer: Callable[[durable.WebhookDelivery], Awaitable[durable.Response]],
) -> AsyncIterator[str]:
    """A webhook endpoint whose every answer ``answer`` decides (after it ran)."""

    async def handle(conn: AsyncioConnection[durable.Response, durable.Request]) -> None:
        async for request in conn:
            assert isinstance(request, durable.WebhookDelivery)
            await conn.send(await answer(request))

    server = await serve(lambda: durable.Connection(Role.SERVER), handle)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/hook"


def test_done_with_new_events_after_the_snapshot_wakes_again() -> None:
    async def test() -> None:
        async with running() as (_, url), await DurableClient.open(url) as client:
            seen: list[durable.WebhookNotification] = []
            jwks = await client.jwks(ROOT)

            async def answer(delivery: durable.WebhookDelivery) -> durable.Response:
                durable.verify_webhook(
                    delivery.signature.format(), delivery.body, jwks, time.time()
                )
                seen.append(delivery.notification)
                if len(seen) == 1:
                    async with await DurableClient.open(url) as other:
                        await append(other, "events/a", b'{"n":2}')  # after the snapshot
                return durable.WebhookReply(done=True)

            async with scripted_receiver(answer) as hook:
                await client.subscribe(ROOT, "s", webhook(hook))
                await put_json(client, "events/a", b'{"n":1}')
                for _ in range(100):
                    if len(seen) >= 2:
                        break
                    await asyncio.sleep(0.05)
                first, second = seen[:2]
                assert second.generation == first.generation + 1
                assert second.wake_id != first.wake_id
                assert second.streams[0].acked_offset == first.streams[0].tail_offset
                await asyncio.sleep(0.1)
                link = (await get(client, "s")).streams[0]
                assert link.acked_offset == second.streams[0].tail_offset

    run(test)


def test_failed_deliveries_are_retried_and_status_says_so() -> None:
    async def test() -> None:
        async with running() as (app, url), await DurableClient.open(url) as client:
            app.subscriptions.limits = SubscriptionLimits(retry_base_delay=0.2)
            attempts: list[float] = []

            async def answer(delivery: durable.WebhookDelivery) -> durable.Response:
                attempts.append(time.monotonic())
                if len(attempts) == 1:
                    return durable.ErrorResponse(503, "busy")
                return durable.WebhookReply(done=True)

            async with scripted_receiver(answer) as hook:
                await client.subscribe(ROOT, "s", webhook(hook, lease_ttl_ms=5000))
                await put_json(client, "events/a", b'{"n":1}')
                for _ in range(40):
                    if attempts:
                        break
                    await asyncio.sleep(0.02)
                await asyncio.sleep(0.05)
                assert (await get(client, "s")).status is durable.SubscriptionStatus.FAILED
                for _ in range(100):
                    if len(attempts) >= 2:
                        break
                    await asyncio.sleep(0.02)
                assert 0.15 <= attempts[1] - attempts[0] <= 1.0  # 0.2 s +- 20%, and the loop
                await asyncio.sleep(0.1)
                sub = await get(client, "s")
                assert sub.status is durable.SubscriptionStatus.ACTIVE
                assert not any(
                    s.acked_offset == "0000000000000000_0000000000000000" for s in sub.streams
                )

    run(test)


# -- 7.2 / 7.3: pull-wake, fencing, leases ---------------------------------------------------


def test_release_with_pending_work_writes_another_wake_event() -> None:
    async def test() -> None:
        async with running() as (_, url), await DurableClient.open(url) as client:
            await put_json(client, "w")
            await client.subscribe(ROOT, "s", pull("w"))
            await put_json(client, "jobs/a", b'{"n":1}')
            assert [e.generation for e in await wake_events(client, "w")] == [1]
            claimed = await client.claim_wake(ROOT, "s", "one")
            assert isinstance(claimed, durable.Claimed)
            release = durable.ReleaseSubscription(
                ROOT, "s", claimed.token, claimed.wake_id, claimed.generation
            )
            assert await client.request(release) == durable.SubscriptionUpdated()
            events = await wake_events(client, "w")
            assert [e.generation for e in events] == [1, 2]
            assert events[1].stream == "jobs/a"
            stale_ack = durable.AckSubscription(
                ROOT, "s", claimed.token, claimed.wake_id, claimed.generation, done=True
            )
            assert (await error(client, stale_ack)).code is Code.FENCED

    run(test)


def test_fencing_needs_token_generation_and_wake_id_to_match() -> None:
    async def test() -> None:
        async with running() as (_, url), await DurableClient.open(url) as client:
            await put_json(client, "w")
            await client.subscribe(ROOT, "s", pull("w"))
            await client.subscribe(ROOT, "t", pull("w", pattern="jobs/**"))
            await put_json(client, "jobs/a", b'{"n":1}')
            claimed = await client.claim_wake(ROOT, "s", "one")
            other = await client.claim_wake(ROOT, "t", "one")
            assert isinstance(claimed, durable.Claimed)
            assert isinstance(other, durable.Claimed)
            good = durable.AckSubscription(
                ROOT, "s", claimed.token, claimed.wake_id, claimed.generation
            )
            wrong = [
                (attrs.evolve(good, token=other.token), Code.TOKEN_INVALID),  # another subscription
                (attrs.evolve(good, token=claimed.token + "x"), Code.TOKEN_INVALID),
                (attrs.evolve(good, generation=claimed.generation + 1), Code.FENCED),
                (attrs.evolve(good, wake_id="w_other"), Code.FENCED),
            ]
            for request, code in wrong:
                assert (await error(client, request)).code is code
            beyond = attrs.evolve(
                good, acks=(durable.StreamAck("jobs/a", "0000000000000009_0000000000000000"),)
            )
            assert (await error(client, beyond)).code is Code.INVALID_OFFSET
            unlinked = attrs.evolve(
                good, acks=(durable.StreamAck("nope/x", claimed.streams[0].tail_offset),)
            )
            assert (await error(client, unlinked)).code is Code.INVALID_OFFSET
            assert (await get(client, "s")).streams[0].acked_offset != claimed.streams[
                0
            ].tail_offset
            assert await client.request(good) == durable.WakeAcked(next_wake=False)

    run(test)


def test_an_expired_lease_clears_the_holder_and_wakes_again() -> None:
    async def test() -> None:
        async with running() as (_, url), await DurableClient.open(url) as client:
            await put_json(client, "w")
            await client.subscribe(ROOT, "s", pull("w", lease_ttl_ms=1000))
            await put_json(client, "jobs/a", b'{"n":1}')
            claimed = await client.claim_wake(ROOT, "s", "one")
            assert isinstance(claimed, durable.Claimed)
            heartbeat = durable.AckSubscription(
                ROOT, "s", claimed.token, claimed.wake_id, claimed.generation
            )
            await asyncio.sleep(0.6)
            assert await client.request(heartbeat) == durable.WakeAcked()  # extends the lease
            await asyncio.sleep(0.6)
            busy = await client.claim_wake(ROOT, "s", "two")
            assert isinstance(busy, durable.SubscriptionError)
            assert busy.code is Code.ALREADY_CLAIMED
            await asyncio.sleep(0.7)  # no heartbeat: the lease ends
            events = await wake_events(client, "w")
            assert [e.generation for e in events] == [1, 2]
            taken = await client.claim_wake(ROOT, "s", "two")
            assert isinstance(taken, durable.Claimed)
            assert taken.generation == claimed.generation + 1
            assert (await error(client, heartbeat)).code is Code.FENCED

    run(test)


def test_glob_rules() -> None:
    assert glob_match("events/*", "events/a")
    assert not glob_match("events/*", "events/a/b")
    assert not glob_match("events/*", "events")
    assert glob_match("events/**", "events")
    assert glob_match("events/**", "events/a/b/c")
    assert glob_match("**/x", "a/b/x")
    assert glob_match("e*s/a", "events/a")
    assert not glob_match("e*z/a", "events/a")
    assert not glob_match("/".join(["**"] * 50) + "/z", "/".join(["a"] * 50))


def test_delivery_gives_up_after_its_attempts_until_the_next_write() -> None:
    async def test() -> None:
        async with running() as (app, url), await DurableClient.open(url) as client:
            app.subscriptions.limits = SubscriptionLimits(
                retry_base_delay=0.05, max_delivery_attempts=2
            )
            attempts: list[int] = []

            async def answer(delivery: durable.WebhookDelivery) -> durable.Response:
                attempts.append(delivery.notification.generation)
                return durable.ErrorResponse(503, "down")

            async with scripted_receiver(answer) as hook:
                await client.subscribe(ROOT, "s", webhook(hook, lease_ttl_ms=1000))
                await put_json(client, "events/a", b'{"n":1}')
                await asyncio.sleep(1.5)  # past a lease: no new wake once given up
                assert len(attempts) == 2
                assert (await get(client, "s")).status is durable.SubscriptionStatus.FAILED
                await append(client, "events/a")
                await asyncio.sleep(0.3)
                assert len(attempts) == 4

    run(test)


def test_the_wake_stream_is_never_created_by_the_server() -> None:
    async def test() -> None:
        async with running() as (app, url), await DurableClient.open(url) as client:
            # "The wake stream is an ordinary durable stream and MUST be created explicitly"
            await client.subscribe(ROOT, "s", pull("missing-wake"))
            await put_json(client, "jobs/a", b'{"n":1}')
            assert ROOT + "missing-wake" not in app.store.streams
            claimed = await client.claim_wake(ROOT, "s", "one")
            assert isinstance(claimed, durable.Claimed)  # claiming works without it

    run(test)
