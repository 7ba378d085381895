"""The exact request head and body a client builds for each request, and webhook deliveries.

Method names are case-sensitive ("The method token is case-sensitive", RFC 9110 9.1): ``POST``,
never ``post``. A request without a body carries ``b""``. A signed webhook notification is a
``POST`` of ``application/json`` with its ``Webhook-Signature``; its body must be a notification,
within the configured number of streams.
"""

from __future__ import annotations

from typing import Any

import h11
import pytest

from s3p_codec import LocalProtocolError, RemoteProtocolError
from s3p_codec.durable import (
    Append,
    Create,
    Delete,
    ErrorResponse,
    Head,
    LiveMode,
    Options,
    Producer,
    Read,
    WebhookDelivery,
)
from s3p_codec.durable._limits import Limits
from s3p_codec.durable._requests import build_request, parse_request
from s3p_codec.durable._subscription_events import LinkType, WakeStream
from s3p_codec.durable._subscriptions import WebhookNotification, encode_notification
from s3p_codec.durable._webhooks import WebhookSignature

OFFSET = "0000000000000000_0000000000000005"
LIMITS = Limits()
SIGNATURE = WebhookSignature(1000, "k1", bytes(range(64)))


def head(
    event: Any, limits: Limits = LIMITS
) -> tuple[bytes, bytes, list[tuple[bytes, bytes]], Any]:
    request, body = build_request(event, "example", limits)
    assert isinstance(request, h11.Request)
    return request.method, request.target, list(request.headers), body


def notification(streams: int) -> bytes:
    return encode_notification(
        WebhookNotification(
            subscription_id="sub",
            wake_id="w1",
            generation=3,
            streams=[
                WakeStream(f"/s{i}", LinkType.EXPLICIT, "-1", OFFSET, has_pending=True)
                for i in range(streams)
            ],
            callback_url="https://example/cb",
            callback_token="tok",
        )
    )


def test_a_create_carries_each_of_its_headers() -> None:
    event = Create(
        "/a",
        content_type="a/b",
        ttl_seconds=60,
        closed=True,
        body=b"xy",
        forked_from="/src",
        fork_offset=OFFSET,
        fork_sub_offset=7,
    )
    assert head(event) == (
        b"PUT",
        b"/a",
        [
            (b"host", b"example"),
            (b"content-type", b"a/b"),
            (b"stream-ttl", b"60"),
            (b"stream-closed", b"true"),
            (b"stream-forked-from", b"/src"),
            (b"stream-fork-offset", OFFSET.encode()),
            (b"stream-fork-sub-offset", b"7"),
            (b"content-length", b"2"),
        ],
        b"xy",
    )
    expires = Create("/a", expires_at="2030-01-01T00:00:00Z")
    assert head(expires)[2] == [
        (b"host", b"example"),
        (b"stream-expires-at", b"2030-01-01T00:00:00Z"),
        (b"content-length", b"0"),
    ]


def test_an_append_carries_each_of_its_headers() -> None:
    event = Append("/a", b"xyz", "a/b", seq="s1", producer=Producer("p", 2, 9), close=True)
    assert head(event) == (
        b"POST",
        b"/a",
        [
            (b"host", b"example"),
            (b"content-type", b"a/b"),
            (b"stream-seq", b"s1"),
            (b"producer-id", b"p"),
            (b"producer-epoch", b"2"),
            (b"producer-seq", b"9"),
            (b"stream-closed", b"true"),
            (b"content-length", b"3"),
        ],
        b"xyz",
    )


@pytest.mark.parametrize(
    ("event", "method", "target", "extra"),
    [
        (Read("/a"), b"GET", b"/a", []),
        (Read("/a", OFFSET, LiveMode.SSE, "c/1", '"e"'), b"GET",
         b"/a?cursor=c%2F1&live=sse&offset=" + OFFSET.encode(),
         [(b"accept", b"text/event-stream"), (b"if-none-match", b'"e"')]),
        (Read("/a", "-1", LiveMode.LONG_POLL), b"GET", b"/a?live=long-poll&offset=-1", []),
        (Head("/a"), b"HEAD", b"/a", []),
        (Delete("/a"), b"DELETE", b"/a", []),
        (Options("/a"), b"OPTIONS", b"/a", []),
    ],
)  # fmt: skip
def test_a_request_without_a_body_carries_an_empty_one(
    event: Any, method: bytes, target: bytes, extra: list[tuple[bytes, bytes]]
) -> None:
    assert head(event) == (method, target, [(b"host", b"example"), *extra], b"")


def test_a_webhook_delivery_is_a_signed_json_post() -> None:
    body = notification(2)
    assert head(WebhookDelivery("/hook", body, SIGNATURE)) == (
        b"POST",
        b"/hook",
        [
            (b"host", b"example"),
            (b"content-type", b"application/json"),
            (b"webhook-signature", SIGNATURE.format().encode()),
            (b"content-length", str(len(body)).encode()),
        ],
        body,
    )


def test_a_webhook_delivery_without_a_signature_is_refused_in_words() -> None:
    event = WebhookDelivery("/hook", notification(1), SIGNATURE.format())  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError) as caught:
        build_request(event, "example", LIMITS)
    assert caught.value.message == "a webhook delivery carries a WebhookSignature"
    assert caught.value.fatal is False


def test_a_webhook_body_that_is_no_notification_is_refused_on_both_sides() -> None:
    event = WebhookDelivery("/hook", b"[]", SIGNATURE)
    with pytest.raises(LocalProtocolError) as caught:
        build_request(event, "example", LIMITS)
    assert caught.value.message.startswith("not a webhook notification: ")
    assert len(caught.value.message) > len("not a webhook notification: ")
    request, body = build_request(WebhookDelivery("/hook", notification(1), SIGNATURE), "x", LIMITS)
    with pytest.raises(RemoteProtocolError) as remote:
        parse_request(b"POST", b"/hook", list(request.headers), b"[]", LIMITS)
    assert remote.value.message == caught.value.message
    assert remote.value.reply == ErrorResponse(400, caught.value.message)
    assert parse_request(b"POST", b"/hook", list(request.headers), body, LIMITS) == (
        WebhookDelivery("/hook", body, SIGNATURE)
    )


def test_the_configured_number_of_streams_bounds_a_webhook_notification() -> None:
    limits = Limits(max_subscription_streams=2)
    build_request(WebhookDelivery("/hook", notification(2), SIGNATURE), "example", limits)
    with pytest.raises(LocalProtocolError) as caught:
        build_request(WebhookDelivery("/hook", notification(3), SIGNATURE), "example", limits)
    assert caught.value.message.startswith("not a webhook notification: ")
