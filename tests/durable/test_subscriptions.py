"""The reserved ``__ds`` subscription APIs in the codec: routing, round trips, refusals,
webhook URL safety and ``Webhook-Signature``."""

from __future__ import annotations

import contextlib
import json
from http import HTTPStatus

import attrs
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, durable
from s3p_codec.testing import durable as cases
from s3p_codec.testing._strategies import Malformed

ROOT = "/v1/stream/"


def _server_parse(wire: bytes) -> durable.Request:
    conn = durable.Connection(Role.SERVER)
    conn.receive_data(wire)
    event = conn.next_event()
    assert event is not NEED_DATA
    assert not isinstance(event, type(NEED_DATA))
    return event


def _refusal(wire: bytes) -> RemoteProtocolError:
    conn = durable.Connection(Role.SERVER)
    conn.receive_data(wire)
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    return caught.value


# -- routing: "Servers MUST route the reserved __ds prefix before normal stream operations" --


@pytest.mark.parametrize(
    ("method", "path"),
    [
        (b"PUT", b"/v1/stream/__ds/subscriptions/x"),
        (b"POST", b"/v1/stream/__ds/subscriptions/x"),
        (b"GET", b"/v1/stream/__ds"),
        (b"HEAD", b"/v1/stream/__ds/subscriptions/x"),
        (b"DELETE", b"/v1/stream/__ds/anything/else"),
        (b"GET", b"/__ds/jwks.json/extra"),
    ],
)
def test_a_reserved_path_is_never_typed_as_a_stream_request(method: bytes, path: bytes) -> None:
    body = b"{}" if method in (b"PUT", b"POST") else b""
    wire = b"%s %s HTTP/1.1\r\nhost: a\r\ncontent-length: %d\r\n\r\n%s" % (
        method,
        path,
        len(body),
        body,
    )
    conn = durable.Connection(Role.SERVER)
    conn.receive_data(wire)
    outcome: object
    try:
        outcome = conn.next_event()
    except RemoteProtocolError as exc:
        outcome = exc
    if isinstance(outcome, RemoteProtocolError):
        assert isinstance(outcome.reply, durable.SubscriptionError)
        assert outcome.reply.status in (400, 404, 405)
        assert not outcome.fatal
    else:
        assert isinstance(outcome, durable.SubscriptionRequest)


def test_routes_to_each_control_request() -> None:
    expect = {
        b"GET /v1/stream/__ds/jwks.json": durable.GetJwks(ROOT),
        b"GET /v1/stream/__ds/subscriptions/a%2Fb": durable.GetSubscription(ROOT, "a/b"),
        b"DELETE /v1/stream/__ds/subscriptions/s": durable.DeleteSubscription(ROOT, "s"),
        b"DELETE /v1/stream/__ds/subscriptions/s/streams/events%2Fx": (
            durable.RemoveSubscriptionStream(ROOT, "s", "events/x")
        ),
        b"GET /tenant/__ds/jwks.json": durable.GetJwks("/tenant/"),
    }
    for line, event in expect.items():
        assert _server_parse(line + b" HTTP/1.1\r\nhost: a\r\n\r\n") == event
        assert event.path.encode() == line.split(b" ")[1]


def test_a_stream_request_on_a_reserved_path_is_refused_before_sending() -> None:
    client = durable.Connection(Role.CLIENT)
    for event in (
        durable.Create("/v1/stream/__ds/x"),
        durable.Append("/v1/stream/__ds", b"x", "text/plain"),
        durable.Read("/v1/stream/__ds/subscriptions/s"),
    ):
        with pytest.raises(LocalProtocolError) as caught:
            client.send(event)
        assert caught.value.code == 400


# -- round trips ------------------------------------------------------------------------------


@given(cases.subscription_requests())
def test_every_control_request_round_trips_through_both_roles(
    request: durable.SubscriptionRequest,
) -> None:
    wire = durable.Connection(Role.CLIENT, host="a").send(request)
    assert _server_parse(wire) == request


@given(cases.subscription_exchanges())
def test_every_control_answer_round_trips_through_both_roles(
    pair: tuple[durable.SubscriptionRequest, durable.SubscriptionResponse],
) -> None:
    request, response = pair
    client = durable.Connection(Role.CLIENT, host="a")
    server = durable.Connection(Role.SERVER)
    server.receive_data(client.send(request))
    assert server.next_event() == request
    client.receive_data(server.send(response))
    assert client.next_event() == response


@given(cases.notifications(), st.integers(0, 2**40))
def test_webhook_deliveries_round_trip_and_verify(
    notification: durable.WebhookNotification, now: int
) -> None:
    key = Ed25519PrivateKey.generate()
    body = durable.encode_notification(notification)
    signature = durable.sign_webhook(key, body, now)
    client = durable.Connection(Role.CLIENT, host="a")
    server = durable.Connection(Role.SERVER)
    server.receive_data(client.send(durable.WebhookDelivery("/hook", body, signature)))
    delivery = server.next_event()
    assert isinstance(delivery, durable.WebhookDelivery)
    assert delivery.notification == notification
    jwks = durable.Jwks((durable.public_jwk(key),))
    assert (
        durable.verify_webhook(delivery.signature.format(), delivery.body, jwks, now) == signature
    )
    client.receive_data(server.send(durable.WebhookReply(done=True)))
    assert client.next_event() == durable.WebhookReply(done=True)


@given(cases.wake_events())
def test_wake_events_round_trip(event: durable.WakeEvent) -> None:
    assert durable.parse_wake_event(durable.encode_wake_event(event)) == event


# -- refusals ---------------------------------------------------------------------------------


@given(cases.subscription_malformed())
def test_each_malformed_control_request_gets_its_typed_json_error(case: Malformed) -> None:
    error = _refusal(case.data)
    assert isinstance(error.reply, durable.SubscriptionError)
    assert error.reply.status == case.code
    assert error.code == case.code
    assert not error.fatal


def test_a_control_request_refused_is_answered_with_the_json_error_body() -> None:
    server = durable.Connection(Role.SERVER)
    server.receive_data(
        b"PUT /v1/stream/__ds/subscriptions/x HTTP/1.1\r\nhost: a\r\ncontent-length: 6\r\n\r\n"
        b"[1, 2]"
    )
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    reply = caught.value.reply
    assert isinstance(reply, durable.SubscriptionError)
    wire = server.send(reply)
    assert wire.startswith(b"HTTP/1.1 400 ")
    assert b"content-type: application/json" in wire
    assert wire.endswith(
        b'{"error":{"code":"INVALID_REQUEST","message":"the body must be a JSON object"}}'
    )


def test_a_deeply_nested_body_is_a_typed_refusal() -> None:
    body = b"[" * 100_000
    error = _refusal(
        b"PUT /v1/stream/__ds/subscriptions/x HTTP/1.1\r\nhost: a\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(body), body)
    )
    assert error.code == 400


def test_too_many_streams_in_one_request_is_refused_before_typing_them() -> None:
    limits = durable.Limits(max_subscription_streams=2)
    body = b'{"streams":["a","b","c"]}'
    conn = durable.Connection(Role.SERVER, limits)
    conn.receive_data(
        b"POST /v1/stream/__ds/subscriptions/x/streams HTTP/1.1\r\nhost: a\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(body), body)
    )
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.code == 429


def test_user_events_breaking_a_rule_are_refused_before_any_byte() -> None:
    client = durable.Connection(Role.CLIENT)
    bad: list[durable.Request] = [
        durable.PutSubscription(
            ROOT, "s", durable.SubscriptionConfig(durable.SubscriptionType.WEBHOOK, pattern="a/*")
        ),
        durable.PutSubscription(
            ROOT,
            "s",
            durable.SubscriptionConfig(durable.SubscriptionType.PULL_WAKE, streams=("a",)),
        ),
        durable.PutSubscription(
            ROOT,
            "s",
            durable.SubscriptionConfig(durable.SubscriptionType.PULL_WAKE, wake_stream="w"),
        ),
        durable.PutSubscription(
            ROOT,
            "s",
            durable.SubscriptionConfig(
                durable.SubscriptionType.PULL_WAKE, pattern="a", wake_stream="w", lease_ttl_ms=10
            ),
        ),
        durable.AddSubscriptionStreams(ROOT, "s", ("__ds/x",)),
        durable.AckSubscription(ROOT, "s", "t", "w", -1),
        durable.AckSubscription(
            ROOT, "s", "t", "w", 1, (durable.StreamAck("a", "not an offset?"),)
        ),
        durable.GetJwks("/v1/stream"),
        durable.GetSubscription(ROOT, ""),
    ]
    for event in bad:
        with pytest.raises(LocalProtocolError):
            client.send(event)
    assert client.state is durable.ConnectionState.IDLE


def test_a_success_answer_that_breaks_the_shape_is_a_typed_error() -> None:
    client = durable.Connection(Role.CLIENT, host="a")
    client.send(durable.ClaimSubscription(ROOT, "s", "w"))
    body = b'{"wake_id":"w","generation":"seven"}'
    client.receive_data(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
        % (len(body), body)
    )
    with pytest.raises(RemoteProtocolError) as caught:
        client.next_event()
    assert caught.value.code == "invalid_response"


def test_an_error_without_the_json_body_is_an_error_response() -> None:
    client = durable.Connection(Role.CLIENT, host="a")
    client.send(durable.GetSubscription(ROOT, "s"))
    client.receive_data(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 3\r\n\r\nno!")
    event = client.next_event()
    assert isinstance(event, durable.ErrorResponse)
    assert event.status == 405


# -- webhook URL safety (6.2, 12.8) -----------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://worker.example/hook",
        "http://localhost:8080/h",
        "http://127.0.0.5/h",
        "https://93.184.216.34/h",
    ],
)
def test_acceptable_webhook_urls(url: str) -> None:
    assert durable.webhook_url_error(url) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://worker.example/hook",  # "Production webhook URLs MUST use https://"
        "ftp://worker.example/hook",
        "http://10.0.0.1/hook",  # RFC 1918
        "https://10.0.0.1/hook",
        "https://172.16.3.4/hook",
        "https://192.168.1.1/hook",
        "https://169.254.169.254/latest",  # link-local, cloud metadata
        "https://127.0.0.1/hook",  # loopback outside the http development exception
        "https://localhost/hook",
        "https://[::1]/hook",
        "https://[fe80::1]/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://0.0.0.0/hook",
        "https://user:pw@worker.example/hook",
        "https://worker.example:99999/hook",
        "not a url",
    ],
)
def test_unsafe_webhook_urls_are_refused(url: str) -> None:
    assert durable.webhook_url_error(url) is not None


# -- Webhook-Signature (7.1, 12.10) -----------------------------------------------------------


def test_signature_header_parses_and_formats() -> None:
    key = Ed25519PrivateKey.generate()
    signature = durable.sign_webhook(key, b"{}", 1_700_000_000)
    text = signature.format()
    assert text.startswith(f"t=1700000000,kid={durable.public_jwk(key).kid},ed25519=")
    assert "=" not in text.rsplit("ed25519=", 1)[1]  # unpadded base64url
    assert durable.WebhookSignature.parse(text) == signature


@pytest.mark.parametrize(
    "header",
    [
        "",
        "t=1,kid=k",
        "t=01,kid=k,ed25519=" + "A" * 86,
        "t=1,kid=k,ed25519=" + "A" * 10,
        "t=1,kid=k,ed25519=" + "A" * 86 + "==",
        "kid=k,t=1,ed25519=" + "A" * 86,
    ],
)
def test_malformed_signature_headers_are_typed_errors(header: str) -> None:
    with pytest.raises(RemoteProtocolError):
        durable.WebhookSignature.parse(header)


@pytest.mark.parametrize("length", [1, 5, 85, 149])
def test_a_signature_of_4n_plus_1_characters_is_refused_in_words(length: int) -> None:
    """No base64 text is 4n + 1 characters long: the decoder's own ``binascii.Error`` escaped
    ``parse`` and ``verify_webhook`` (found by the Durable Streams fuzz harness)."""
    header = "t=1,kid=k,ed25519=" + "A" * length
    with pytest.raises(RemoteProtocolError, match="64 bytes, unpadded base64url") as caught:
        durable.WebhookSignature.parse(header)
    assert caught.value.code == HTTPStatus.BAD_REQUEST
    assert not caught.value.fatal
    jwks = durable.Jwks((durable.public_jwk(Ed25519PrivateKey.generate()),))
    with pytest.raises(RemoteProtocolError, match="64 bytes, unpadded base64url") as caught:
        durable.verify_webhook(header, b"{}", jwks, now=1)
    assert caught.value.code == HTTPStatus.BAD_REQUEST  # malformed, not unauthorized


@given(
    st.from_regex(
        r"t=[0-9]{1,17},kid=[A-Za-z0-9_]{1,9},ed25519=[A-Za-z0-9_=-]{0,100}", fullmatch=True
    )
    | st.text(max_size=120)
)
def test_any_signature_header_is_a_signature_or_a_typed_refusal(header: str) -> None:
    try:
        signature = durable.WebhookSignature.parse(header)
    except RemoteProtocolError as exc:
        refusal = exc
    else:
        assert durable.WebhookSignature.parse(signature.format()) == signature
        assert len(signature.signature) == 64
        return
    assert (refusal.code, refusal.fatal) == (HTTPStatus.BAD_REQUEST, False)


def test_a_delivery_whose_signature_is_4n_plus_1_characters_is_a_400_in_words() -> None:
    error = _refusal(
        b"POST /hook HTTP/1.1\r\nhost: x\r\nwebhook-signature: t=1,kid=a,ed25519=AAAAA\r\n"
        b"content-length: 2\r\n\r\n{}"
    )
    assert "64 bytes, unpadded base64url" in error.message
    assert (error.code, error.fatal) == (HTTPStatus.BAD_REQUEST, False)


def test_verification_refuses_tampering_unknown_keys_and_replays() -> None:
    key, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    jwks = durable.Jwks((durable.public_jwk(key),))
    body = b'{"subscription_id":"s"}'
    header = durable.sign_webhook(key, body, 1000).format()
    assert durable.verify_webhook(header, body, jwks, 1000).timestamp == 1000
    refusals = [
        (header, body + b" ", 1000),  # the body changed
        (durable.sign_webhook(other, body, 1000).format(), body, 1000),  # unknown kid
        (header, body, 1000 + durable.REPLAY_WINDOW_SECONDS + 1),  # outside the window
        (header, body, 1000 - durable.REPLAY_WINDOW_SECONDS - 1),
    ]
    for value, raw, now in refusals:
        with pytest.raises(RemoteProtocolError) as caught:
            durable.verify_webhook(value, raw, jwks, now)
        assert caught.value.code == 401
    forged = header.replace("kid=", "kid=x")  # a kid the set does not hold
    with pytest.raises(RemoteProtocolError):
        durable.verify_webhook(forged, body, jwks, 1000)


def test_a_post_with_a_webhook_signature_is_a_delivery_never_an_append() -> None:
    body = b'{"n":1}'
    wire = (
        b"POST /v1/stream/orders HTTP/1.1\r\nhost: a\r\ncontent-type: application/json\r\n"
        b"webhook-signature: t=1,kid=k,ed25519=" + b"A" * 86 + b"\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(body), body)
    )
    error = _refusal(wire)  # not a notification: refused, not appended
    assert error.code == 400


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_KEYS = ["type", "pattern", "streams", "webhook", "wake_stream", "lease_ttl_ms", "description",
         "wake_id", "generation", "acks", "done", "worker"]  # fmt: skip


@given(
    st.sampled_from(
        [
            b"PUT /v1/stream/__ds/subscriptions/s",
            b"POST /v1/stream/__ds/subscriptions/s/streams",
            b"POST /v1/stream/__ds/subscriptions/s/callback",
            b"POST /v1/stream/__ds/subscriptions/s/claim",
            b"POST /v1/stream/__ds/subscriptions/s/ack",
            b"POST /v1/stream/__ds/subscriptions/s/release",
            b"POST /hook",
        ]
    ),
    st.one_of(
        st.binary(max_size=64),
        st.dictionaries(st.sampled_from(_KEYS), _JSON, max_size=6).map(
            lambda d: json.dumps(d).encode()
        ),
    ),
    st.booleans(),
)
def test_any_body_on_a_control_route_is_typed_or_a_typed_refusal(
    line: bytes, body: bytes, signed: bool
) -> None:
    extra = b"authorization: Bearer t\r\n"
    if signed:
        extra += b"webhook-signature: t=1,kid=k,ed25519=" + b"A" * 86 + b"\r\n"
    conn = durable.Connection(Role.SERVER)
    conn.receive_data(
        line + b" HTTP/1.1\r\nhost: a\r\ncontent-type: application/json\r\n" + extra
        + b"content-length: %d\r\n\r\n%s" % (len(body), body)
    )  # fmt: skip
    outcome: object
    try:
        outcome = conn.next_event()
    except RemoteProtocolError as exc:
        outcome = exc
    if isinstance(outcome, RemoteProtocolError):
        assert not outcome.fatal
        reply = outcome.reply
        assert isinstance(reply, durable.SubscriptionError | durable.ErrorResponse)
        conn.send(reply)
    else:
        assert isinstance(
            outcome, durable.SubscriptionRequest | durable.WebhookDelivery | durable.Append
        )


@given(cases.subscription_requests(), st.sampled_from(["root", "id", "token", "worker"]), _JSON)
def test_a_user_event_with_fields_of_the_wrong_type_is_a_local_error(
    request: durable.SubscriptionRequest, field: str, value: object
) -> None:
    if not hasattr(request, field):
        return
    broken = attrs.evolve(request, **{field: value})  # type: ignore[misc]
    client = durable.Connection(Role.CLIENT, host="a")
    with contextlib.suppress(LocalProtocolError):  # anything else escaping fails the test
        client.send(broken)
