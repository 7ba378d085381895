"""The reserved ``__ds`` subscription APIs (sections 6-7): valid messages and refused requests.

``subscription_requests()`` and ``subscription_exchanges()`` draw every control request and
every answer (with the request it answers) for round trips through both roles;
``subscription_malformed()`` are control requests a strict server refuses from their bytes
alone, each with the status it must send (the Node reference server agrees on each), and
``subscription_decisions()`` the ones its own rules refuse (webhook URL safety, a missing
subscription).
"""

from __future__ import annotations

from hypothesis import strategies as st

from s3p_codec import durable
from s3p_codec.testing._strategies import Malformed
from s3p_codec.testing.durable._wire import C

__all__ = [
    "ROOT",
    "notifications",
    "subscription_exchanges",
    "subscription_decisions",
    "subscription_malformed",
    "subscription_requests",
    "wake_events",
]

#: The stream root the cases use (the reference server's and ours).
ROOT = "/v1/stream/"
_SEGMENT = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=12).filter(
    lambda s: s != "__ds"
)
_PATHS = st.lists(_SEGMENT, min_size=1, max_size=3).map("/".join)
_IDS = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=24)
_TOKENS = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.", min_size=1)
_OFFSETS = st.tuples(st.integers(0, 10**6), st.integers(0, 10**9)).map(
    lambda t: durable.offsets.format_offset(*t)
)
_GENERATION = st.integers(0, (1 << 53) - 1)
_TEXT = st.text(max_size=40)
_ACKS = st.lists(st.builds(durable.StreamAck, _PATHS, _OFFSETS), max_size=4).map(tuple)


def _configs() -> st.SearchStrategy[durable.SubscriptionConfig]:
    patterns = st.lists(st.sampled_from(["*", "**", "events", "a*b"]) | _SEGMENT, min_size=1)
    common = {
        "pattern": st.none() | patterns.map("/".join),
        "lease_ttl_ms": st.integers(durable.MIN_LEASE_TTL_MS, durable.MAX_LEASE_TTL_MS),
        "description": st.none() | _TEXT,
    }
    webhook = st.builds(
        durable.SubscriptionConfig,
        type=st.just(durable.SubscriptionType.WEBHOOK),
        streams=st.lists(_PATHS, min_size=1, max_size=4).map(tuple),
        webhook_url=st.sampled_from(["https://worker.example/hook", "http://127.0.0.1:9/h"]),
        **common,
    )
    pull = st.builds(
        durable.SubscriptionConfig,
        type=st.just(durable.SubscriptionType.PULL_WAKE),
        streams=st.lists(_PATHS, min_size=1, max_size=4).map(tuple),
        wake_stream=_PATHS,
        **common,
    )
    return webhook | pull


def subscription_requests() -> st.SearchStrategy[durable.SubscriptionRequest]:
    """Every control request, valid (a client-role codec sends each)."""
    root = st.just(ROOT)
    return st.one_of(
        st.builds(durable.PutSubscription, root, _IDS, _configs()),
        st.builds(durable.GetSubscription, root, _IDS),
        st.builds(durable.DeleteSubscription, root, _IDS),
        st.builds(
            durable.AddSubscriptionStreams,
            root,
            _IDS,
            st.lists(_PATHS, min_size=1, max_size=4).map(tuple),
        ),
        st.builds(durable.RemoveSubscriptionStream, root, _IDS, _PATHS),
        st.builds(durable.GetJwks, root),
        st.builds(
            durable.SubscriptionCallback,
            root,
            _IDS,
            _TOKENS,
            _TOKENS,
            _GENERATION,
            _ACKS,
            st.booleans(),
        ),
        st.builds(durable.ClaimSubscription, root, _IDS, _IDS, st.none() | _TOKENS),
        st.builds(
            durable.AckSubscription, root, _IDS, _TOKENS, _TOKENS, _GENERATION, _ACKS, st.booleans()
        ),
        st.builds(durable.ReleaseSubscription, root, _IDS, _TOKENS, _TOKENS, _GENERATION),
    )


def _wake_streams() -> st.SearchStrategy[tuple[durable.WakeStream, ...]]:
    item = st.builds(
        durable.WakeStream,
        _PATHS,
        st.sampled_from(durable.LinkType),
        _OFFSETS,
        _OFFSETS,
        st.booleans(),
    )
    return st.lists(item, max_size=4).map(tuple)


def _subscriptions() -> st.SearchStrategy[durable.Subscription]:
    links = st.lists(
        st.builds(durable.StreamLink, _PATHS, st.sampled_from(durable.LinkType), _OFFSETS),
        max_size=4,
    ).map(tuple)
    return st.builds(
        durable.Subscription,
        id=_IDS,
        type=st.sampled_from(durable.SubscriptionType),
        streams=links,
        pattern=st.none() | _PATHS,
        webhook_url=st.none() | st.just("https://worker.example/hook"),
        signing=st.none() | st.builds(durable.WebhookSigning, _TOKENS, st.just("http://h/j")),
        wake_stream=st.none() | _PATHS,
        lease_ttl_ms=st.integers(durable.MIN_LEASE_TTL_MS, durable.MAX_LEASE_TTL_MS),
        created_at=st.just("2026-05-09T00:00:00.000Z"),
        status=st.sampled_from(durable.SubscriptionStatus),
        description=st.none() | _TEXT,
    ).filter(lambda s: s.signing is None or s.webhook_url is not None)


def _errors() -> st.SearchStrategy[durable.SubscriptionError]:
    return st.builds(
        durable.SubscriptionError,
        st.sampled_from(durable.SubscriptionErrorCode),
        _TEXT,
        st.none() | _IDS,
        st.none() | _GENERATION,
    )


def subscription_exchanges() -> st.SearchStrategy[
    tuple[durable.SubscriptionRequest, durable.SubscriptionResponse]
]:
    """``(request, an answer to it)``: every response kind, errors included."""
    root = st.just(ROOT)
    jwk = st.builds(durable.Jwk, _TOKENS, _TOKENS)
    return st.one_of(
        st.tuples(
            st.builds(durable.PutSubscription, root, _IDS, _configs()),
            st.builds(durable.SubscriptionOk, _subscriptions(), st.booleans()),
        ),
        st.tuples(
            st.builds(durable.GetSubscription, root, _IDS),
            st.builds(durable.SubscriptionOk, _subscriptions()),
        ),
        st.tuples(
            st.builds(durable.DeleteSubscription, root, _IDS),
            st.just(durable.SubscriptionUpdated()),
        ),
        st.tuples(
            st.builds(durable.GetJwks, root),
            st.lists(jwk, max_size=3).map(lambda keys: durable.Jwks(tuple(keys))),
        ),
        st.tuples(
            st.builds(durable.AckSubscription, root, _IDS, _TOKENS, _TOKENS, _GENERATION),
            st.builds(durable.WakeAcked, st.booleans()),
        ),
        st.tuples(
            st.builds(durable.ClaimSubscription, root, _IDS, _IDS),
            st.builds(
                durable.Claimed,
                _TOKENS,
                _GENERATION,
                _TOKENS,
                _wake_streams(),
                st.integers(durable.MIN_LEASE_TTL_MS, durable.MAX_LEASE_TTL_MS),
            ),
        ),
        st.tuples(subscription_requests(), _errors()),
    )


def notifications() -> st.SearchStrategy[durable.WebhookNotification]:
    """Webhook notification bodies."""
    return st.builds(
        durable.WebhookNotification,
        _IDS,
        _TOKENS,
        _GENERATION,
        _wake_streams(),
        st.just("http://127.0.0.1:1/v1/stream/__ds/subscriptions/s/callback"),
        _TOKENS,
    )


def wake_events() -> st.SearchStrategy[durable.WakeEvent]:
    """Pull-wake wake events."""
    return st.builds(durable.WakeEvent, _IDS, _PATHS, _GENERATION, st.integers(0, 1 << 50))


def _put(body: bytes, headers: bytes = b"") -> bytes:
    return (
        b"PUT " + ROOT.encode() + b"__ds/subscriptions/fuzz-sub HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        b"content-type: application/json\r\n" + headers
        + b"content-length: %d\r\n\r\n" % len(body) + body
    )  # fmt: skip


def _post(action: bytes, body: bytes, headers: bytes = b"") -> bytes:
    return (
        b"POST " + ROOT.encode() + b"__ds/subscriptions/fuzz-sub/" + action + b" HTTP/1.1\r\n"
        b"host: 127.0.0.1\r\ncontent-type: application/json\r\n" + headers
        + b"content-length: %d\r\n\r\n" % len(body) + body
    )  # fmt: skip


def subscription_malformed() -> st.SearchStrategy[Malformed]:
    """Control requests a strict server refuses from their bytes alone, with their status."""
    hook = b'"webhook":{"url":"https://worker.example/h"}'
    cases = [
        ("subscription body not JSON", _put(b"{type"), C.BAD_REQUEST),
        ("subscription type missing", _put(b'{"pattern":"a/*",' + hook + b"}"), C.BAD_REQUEST),
        (
            "subscription type unknown",
            _put(b'{"type":"email","pattern":"a/*",' + hook + b"}"),
            C.BAD_REQUEST,
        ),
        (
            "neither pattern nor streams",
            _put(b'{"type":"webhook",' + hook + b"}"),
            C.BAD_REQUEST,
        ),
        ("webhook without webhook.url", _put(b'{"type":"webhook","pattern":"a/*"}'), C.BAD_REQUEST),
        (
            "pull-wake without wake_stream",
            _put(b'{"type":"pull-wake","pattern":"a/*"}'),
            C.BAD_REQUEST,
        ),
        (
            "lease_ttl_ms under 1 second",
            _put(b'{"type":"webhook","pattern":"a/*","lease_ttl_ms":999,' + hook + b"}"),
            C.BAD_REQUEST,
        ),
        (
            "lease_ttl_ms over 10 minutes",
            _put(b'{"type":"webhook","pattern":"a/*","lease_ttl_ms":600001,' + hook + b"}"),
            C.BAD_REQUEST,
        ),
        (
            "unknown reserved control path",
            b"GET " + ROOT.encode() + b"__ds/nothing HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
            C.NOT_FOUND,
        ),
        (
            "PATCH on a subscription",
            b"PATCH " + ROOT.encode() + b"__ds/subscriptions/fuzz-sub HTTP/1.1\r\n"
            b"host: 127.0.0.1\r\ncontent-length: 0\r\n\r\n",
            C.METHOD_NOT_ALLOWED,
        ),
        (
            "callback without a Bearer token",
            _post(b"callback", b'{"wake_id":"w","generation":1}'),
            401,
        ),
        ("ack without a Bearer token", _post(b"ack", b'{"wake_id":"w","generation":1}'), 401),
        ("claim without a worker", _post(b"claim", b"{}"), C.BAD_REQUEST),
    ]
    return st.sampled_from([Malformed(label, data, code) for label, data, code in cases])


def subscription_decisions() -> st.SearchStrategy[Malformed]:
    """Well-formed control requests a server refuses by its own rules (URL safety, state)."""
    private = b'{"type":"webhook","pattern":"a/*","webhook":{"url":"http://10.0.0.1/h"}}'
    cases = [
        ("webhook URL to a private address", _put(private), C.BAD_REQUEST),
        (
            "read of a missing subscription",
            b"GET " + ROOT.encode() + b"__ds/subscriptions/fuzz-missing HTTP/1.1\r\n"
            b"host: 127.0.0.1\r\n\r\n",
            C.NOT_FOUND,
        ),
    ]
    return st.sampled_from([Malformed(label, data, code) for label, data, code in cases])
