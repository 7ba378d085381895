"""Subscriptions (PROTOCOL.md sections 6-7) through our client, against the Node reference
server (``webhooks: true``) and against our example server, each in its own process on
127.0.0.1. Webhooks are received by ``examples.durable_client.WebhookReceiver``, which verifies
every ``Webhook-Signature`` against the server's JWK Set: a reference-signed delivery that
verifies is the signature interop both ways (the conformance suite verifies ours in Node).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Iterator

import pytest

from examples.durable_client import DurableClient, WebhookReceiver
from s3p_codec import durable
from tests.durable._servers import example_server, reference_server

pytestmark = [pytest.mark.network]

ROOT = "/v1/stream/"
_ids = itertools.count()


@pytest.fixture(scope="module", params=["reference", "example"])
def base_url(request: pytest.FixtureRequest) -> Iterator[str]:
    server = reference_server() if request.param == "reference" else example_server()
    with server as url:
        yield url


def _name(kind: str) -> str:
    return f"{kind}-{time.time_ns()}-{next(_ids)}"


async def _webhook_wake(base_url: str) -> None:
    async with await DurableClient.open(base_url) as client:
        jwks = await client.jwks(ROOT)
        assert jwks.keys
        assert all(key.crv == "Ed25519" for key in jwks.keys)
        receiver = WebhookReceiver(jwks)
        url = await receiver.start()
        ident, topic = _name("sub"), _name("t")
        path = f"events-{topic}/a"
        try:
            config = durable.SubscriptionConfig(
                type=durable.SubscriptionType.WEBHOOK,
                pattern=f"events-{topic}/*",
                webhook_url=url,
                lease_ttl_ms=5000,
            )
            created = await client.request(durable.PutSubscription(ROOT, ident, config))
            assert isinstance(created, durable.SubscriptionOk)
            assert created.created
            assert created.subscription.signing is not None
            assert created.subscription.signing.kid in {key.kid for key in jwks.keys}
            again = await client.request(durable.PutSubscription(ROOT, ident, config))
            assert isinstance(again, durable.SubscriptionOk)
            assert not again.created
            other = durable.SubscriptionConfig(
                type=durable.SubscriptionType.WEBHOOK, pattern="other/*", webhook_url=url
            )
            conflict = await client.request(durable.PutSubscription(ROOT, ident, other))
            assert isinstance(conflict, durable.SubscriptionError)
            assert conflict.code is durable.SubscriptionErrorCode.SUBSCRIPTION_ALREADY_EXISTS

            made = await client.request(
                durable.Create(ROOT + path, content_type="application/json", body=b'{"n":1}')
            )
            assert isinstance(made, durable.Created)
            wake = await asyncio.wait_for(receiver.deliveries.get(), 10)
            assert wake.subscription_id == ident
            assert receiver.refused == 0
            stream = next(s for s in wake.streams if s.path == path)
            assert stream.has_pending
            assert stream.tail_offset == made.next_offset

            callback = durable.SubscriptionCallback(
                ROOT,
                ident,
                wake.callback_token,
                wake.wake_id,
                wake.generation,
                (durable.StreamAck(path, stream.tail_offset),),
                done=True,
            )
            assert await client.request(callback) == durable.WakeAcked(next_wake=False)
            stale = await client.request(callback)
            assert isinstance(stale, durable.SubscriptionError)
            assert stale.code is durable.SubscriptionErrorCode.FENCED
            assert stale.status == 409

            got = await client.request(durable.GetSubscription(ROOT, ident))
            assert isinstance(got, durable.SubscriptionOk)
            link = next(s for s in got.subscription.streams if s.path == path)
            assert link.acked_offset == stream.tail_offset
        finally:
            await client.request(durable.DeleteSubscription(ROOT, ident))
            await receiver.aclose()
        gone = await client.request(durable.GetSubscription(ROOT, ident))
        assert isinstance(gone, durable.SubscriptionError)
        assert gone.code is durable.SubscriptionErrorCode.SUBSCRIPTION_NOT_FOUND


def test_webhook_subscription_signed_wake_callback_and_fencing(base_url: str) -> None:
    asyncio.run(_webhook_wake(base_url))


async def _pull_wake(base_url: str) -> None:
    async with await DurableClient.open(base_url) as client:
        ident, topic = _name("pull"), _name("t")
        wake_stream, path = f"wake-{topic}", f"jobs-{topic}/a"
        await client.request(
            durable.Create(ROOT + wake_stream, content_type="application/json", body=b"[]")
        )
        config = durable.SubscriptionConfig(
            type=durable.SubscriptionType.PULL_WAKE,
            pattern=f"jobs-{topic}/*",
            wake_stream=wake_stream,
            lease_ttl_ms=5000,
        )
        await client.subscribe(ROOT, ident, config)
        made = await client.request(
            durable.Create(ROOT + path, content_type="application/json", body=b'{"n":1}')
        )
        assert isinstance(made, durable.Created)

        data, _ = await client.read_all(ROOT + wake_stream)
        events = [durable.parse_wake_event(m.encode()) for m in _messages(data)]
        assert any(e.subscription_id == ident and e.stream == path for e in events)

        claimed = await client.claim_wake(ROOT, ident, "worker-1")
        assert isinstance(claimed, durable.Claimed)
        busy = await client.claim_wake(ROOT, ident, "worker-2")
        assert isinstance(busy, durable.SubscriptionError)
        assert busy.code is durable.SubscriptionErrorCode.ALREADY_CLAIMED
        assert busy.current_holder == "worker-1"

        tail = next(s for s in claimed.streams if s.path == path).tail_offset
        ack = durable.AckSubscription(
            ROOT,
            ident,
            claimed.token,
            claimed.wake_id,
            claimed.generation,
            (durable.StreamAck(path, tail),),
        )
        assert await client.request(ack) == durable.WakeAcked(next_wake=False)  # heartbeat
        done = durable.AckSubscription(
            ROOT, ident, claimed.token, claimed.wake_id, claimed.generation, done=True
        )
        assert await client.request(done) == durable.WakeAcked(next_wake=False)
        nothing = await client.claim_wake(ROOT, ident, "worker-1")
        assert isinstance(nothing, durable.SubscriptionError)
        assert nothing.code is durable.SubscriptionErrorCode.NO_PENDING_WORK

        await client.request(
            durable.Append(ROOT + path, b'{"n":2}', content_type="application/json")
        )
        second = await client.claim_wake(ROOT, ident, "worker-1")
        assert isinstance(second, durable.Claimed)
        assert second.generation > claimed.generation
        stale = durable.ReleaseSubscription(
            ROOT, ident, claimed.token, claimed.wake_id, claimed.generation
        )
        fenced = await client.request(stale)
        assert isinstance(fenced, durable.SubscriptionError)
        assert fenced.code is durable.SubscriptionErrorCode.FENCED
        release = durable.ReleaseSubscription(
            ROOT, ident, second.token, second.wake_id, second.generation
        )
        assert await client.request(release) == durable.SubscriptionUpdated()
        await client.request(durable.DeleteSubscription(ROOT, ident))


def _messages(data: bytes) -> list[str]:
    return [json.dumps(item) for item in json.loads(data)]


def test_pull_wake_claim_ack_release_and_fencing(base_url: str) -> None:
    asyncio.run(_pull_wake(base_url))


async def _membership(base_url: str) -> None:
    async with await DurableClient.open(base_url) as client:
        ident, topic = _name("links"), _name("t")
        config = durable.SubscriptionConfig(
            type=durable.SubscriptionType.PULL_WAKE,
            pattern=f"m-{topic}/*",
            streams=(f"m-{topic}/x",),
            wake_stream=f"w-{topic}",
        )
        await client.subscribe(ROOT, ident, config)
        add = durable.AddSubscriptionStreams(ROOT, ident, (f"other-{topic}/y",))
        assert await client.request(add) == durable.SubscriptionUpdated()
        for stream in (f"m-{topic}/x", f"other-{topic}/y"):
            remove = durable.RemoveSubscriptionStream(ROOT, ident, stream)
            assert await client.request(remove) == durable.SubscriptionUpdated()
        got = await client.request(durable.GetSubscription(ROOT, ident))
        assert isinstance(got, durable.SubscriptionOk)
        assert all(s.path != f"other-{topic}/y" for s in got.subscription.streams)
        missing = await client.request(
            durable.AddSubscriptionStreams(ROOT, _name("none"), (f"m-{topic}/z",))
        )
        assert isinstance(missing, durable.SubscriptionError)
        assert missing.status == 404
        unsafe = durable.SubscriptionConfig(
            type=durable.SubscriptionType.WEBHOOK,
            pattern="a/*",
            webhook_url="http://10.0.0.1/hook",
        )
        refused = await client.request(durable.PutSubscription(ROOT, _name("bad"), unsafe))
        assert isinstance(refused, durable.SubscriptionError)
        assert refused.code is durable.SubscriptionErrorCode.WEBHOOK_URL_REJECTED
        assert refused.status == 400
        await client.request(durable.DeleteSubscription(ROOT, ident))


def test_explicit_membership_and_url_safety(base_url: str) -> None:
    asyncio.run(_membership(base_url))
