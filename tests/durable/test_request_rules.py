"""Every request rule, in the words it is refused with, on both sides, and its exact edge.

A client refuses to build a request that breaks a rule (``LocalProtocolError``, not fatal, its
code the status a server would answer); a server refuses to type one (``RemoteProtocolError``,
not fatal, carrying the ``ErrorResponse`` to send, whose message is the same words). The words
name the header or parameter at fault, so a client's user or a server's log can tell which one.
"""

from __future__ import annotations

from typing import Any

import pytest

from s3p_codec import LocalProtocolError, RemoteProtocolError
from s3p_codec.durable import (
    Append,
    Create,
    ErrorCode,
    ErrorResponse,
    LiveMode,
    Options,
    Producer,
    Read,
)
from s3p_codec.durable._limits import Limits
from s3p_codec.durable._requests import build_request, parse_request, validate_request
from s3p_codec.durable.producer import MAX_PRODUCER_INT

OFFSET = "0000000000000000_0000000000000005"
LIMITS = Limits()


def _local(event: Any, limits: Limits = LIMITS) -> LocalProtocolError:
    with pytest.raises(LocalProtocolError) as caught:
        validate_request(event, limits)
    assert caught.value.fatal is False
    return caught.value


def _remote(
    method: bytes,
    target: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
    body: bytes = b"",
    limits: Limits = LIMITS,
) -> RemoteProtocolError:
    with pytest.raises(RemoteProtocolError) as caught:
        parse_request(method, target, headers or [], body, limits)
    error = caught.value
    assert error.fatal is False
    assert error.reply == ErrorResponse(error.code.value, error.message)
    return error


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (Create("s"), "stream path must start with '/'"),
        (Create("/a b"), "stream path must be printable ASCII without '?', '#' or spaces"),
        (Create("/a#b"), "stream path must be printable ASCII without '?', '#' or spaces"),
        (Create("/a", ttl_seconds=1, expires_at="2030-01-01T00:00:00Z"),
         "Stream-TTL and Stream-Expires-At are exclusive"),
        (Create("/a", ttl_seconds=-1), "Stream-TTL must be a non-negative integer"),
        (Create("/a", expires_at="tomorrow"), "Stream-Expires-At must be an RFC 3339 timestamp"),
        (Create("/a", content_type="a/b\r\nX: y"), "Content-Type must be printable ASCII"),
        (Create("/a", fork_offset=OFFSET),
         "Stream-Fork-Offset and Stream-Fork-Sub-Offset require Stream-Forked-From"),
        (Create("/a", fork_sub_offset=0),
         "Stream-Fork-Offset and Stream-Fork-Sub-Offset require Stream-Forked-From"),
        (Create("/a", forked_from="src"), "stream path must start with '/'"),
        (Create("/a", forked_from="/s", fork_offset=""),
         "invalid Stream-Fork-Offset: empty offset"),
        (Create("/a", forked_from="/s", fork_offset="-1"),
         "Stream-Fork-Offset cannot be the sentinel '-1'"),
        (Create("/a", forked_from="/s", fork_offset="now"),
         "Stream-Fork-Offset cannot be the sentinel 'now'"),
        (Create("/a", forked_from="/s", fork_sub_offset=-1),
         "Stream-Fork-Sub-Offset must be a non-negative integer"),
        (Create("/a", forked_from="/s", fork_sub_offset=1),
         "a non-zero Stream-Fork-Sub-Offset requires Stream-Fork-Offset"),
        (Append("/a"), "empty append body without Stream-Closed: true"),
        (Append("/a", b"x"), "Content-Type is required on an append with a body"),
        (Append("/a", b"x", ""), "Content-Type is required on an append with a body"),
        (Append("/a", b"x", "a\x7f"), "Content-Type must be printable ASCII"),
        (Append("/a", b"x", "a/b", seq=""), "Stream-Seq must not be empty"),
        (Append("/a", b"x", "a/b", seq="1\n"), "Stream-Seq must be printable ASCII"),
        (Append("/a", b"x", "a/b", producer=Producer("", 0, 0)),
         "Producer-Id MUST be a non-empty string"),
        (Append("/a", b"x", "a/b", producer=Producer("é", 0, 0)),
         "Producer-Id must be printable ASCII"),
        (Append("/a", b"x", "a/b", producer=Producer("p", -1, 0)),
         "Producer-Epoch MUST be a non-negative integer <= 2^53-1"),
        (Append("/a", b"x", "a/b", producer=Producer("p", MAX_PRODUCER_INT + 1, 0)),
         "Producer-Epoch MUST be a non-negative integer <= 2^53-1"),
        (Append("/a", b"x", "a/b", producer=Producer("p", 0, -1)),
         "Producer-Seq MUST be a non-negative integer <= 2^53-1"),
        (Append("/a", b"x", "a/b", producer=Producer("p", 0, MAX_PRODUCER_INT + 1)),
         "Producer-Seq MUST be a non-negative integer <= 2^53-1"),
        (Read("/a", ""), "invalid offset: empty offset"),
        (Read("/a", "a" * 257), "invalid offset: offset longer than 256 characters"),
        (Read("/a", live=LiveMode.LONG_POLL), "live=long-poll requires an offset"),
        (Read("/a", live=LiveMode.SSE), "live=sse requires an offset"),
        (Read("/a", "-1", cursor=""), "cursor must not be empty"),
        (Read("/a", "-1", cursor="c\x00"), "cursor must be printable ASCII"),
        (Read("/a", "-1", if_none_match='"e"\r'), "If-None-Match must be printable ASCII"),
    ],
)  # fmt: skip
def test_a_client_refuses_to_build_a_request_that_breaks_a_rule(event: Any, message: str) -> None:
    error = _local(event)
    assert error.code is ErrorCode.BAD_REQUEST
    assert error.message == message
    with pytest.raises(LocalProtocolError):
        build_request(event, "example", LIMITS)


@pytest.mark.parametrize(
    "event",
    [
        Create("/a", forked_from="/s", fork_sub_offset=0),
        Create("/a", forked_from="/s", fork_offset=OFFSET, fork_sub_offset=3),
        Create("/a", content_type="a/b; q=\t1", ttl_seconds=0),
        Append("/a", b"", close=True),
        Append("/a", b"x", "a/b", producer=Producer("p", MAX_PRODUCER_INT, MAX_PRODUCER_INT)),
        Append("/a", b"x", "a/b", producer=Producer("p", 0, 0)),
        Read("/a", "-1"),
        Read("/a", "now", LiveMode.SSE),
        Read("/a", "a" * 256, LiveMode.LONG_POLL, "c"),
    ],
)
def test_requests_at_the_edge_of_each_rule_are_built(event: Any) -> None:
    validate_request(event, LIMITS)
    build_request(event, "example", LIMITS)


def test_a_configured_offset_length_is_the_edge() -> None:
    limits = Limits(max_offset_length=4)
    validate_request(Read("/a", "abcd"), limits)
    assert _local(Read("/a", "abcde"), limits).message == (
        "invalid offset: offset longer than 4 characters"
    )


@pytest.mark.parametrize(
    ("method", "target", "headers", "code", "message"),
    [
        (b"GET", "/a\u00e9".encode(), [], ErrorCode.BAD_REQUEST, "request target must be ASCII"),
        (b"PATCH", b"/a", [], ErrorCode.METHOD_NOT_ALLOWED, "method PATCH not allowed"),
        (b"GET", b"a", [], ErrorCode.BAD_REQUEST, "stream path must start with '/'"),
        (b"PUT", b"/a", [(b"Stream-TTL", b"1"), (b"stream-ttl", b"2")],
         ErrorCode.BAD_REQUEST, "stream-ttl given more than once"),
        (b"PUT", b"/a", [(b"Stream-TTL", b"\xff")],
         ErrorCode.BAD_REQUEST, "stream-ttl must be ASCII"),
        (b"PUT", b"/a", [(b"Stream-TTL", b"1"), (b"Stream-Expires-At", b"2030-01-01T00:00:00Z")],
         ErrorCode.BAD_REQUEST, "Stream-TTL and Stream-Expires-At are exclusive"),
        (b"PUT", b"/a", [(b"Stream-TTL", b"01")], ErrorCode.BAD_REQUEST,
         "Stream-TTL must be a non-negative integer without leading zeros"),
        (b"PUT", b"/a", [(b"Stream-Expires-At", b"soon")], ErrorCode.BAD_REQUEST,
         "Stream-Expires-At must be an RFC 3339 timestamp"),
        (b"PUT", b"/a", [(b"Stream-Forked-From", b"/s"), (b"Stream-Fork-Sub-Offset", b"-1")],
         ErrorCode.BAD_REQUEST, "Stream-Fork-Sub-Offset must be a non-negative integer"),
        (b"PUT", b"/a", [(b"Stream-Fork-Offset", OFFSET.encode())], ErrorCode.BAD_REQUEST,
         "Stream-Fork-Offset and Stream-Fork-Sub-Offset require Stream-Forked-From"),
        (b"POST", b"/a", [(b"Producer-Id", b"p"), (b"Producer-Epoch", b"0")],
         ErrorCode.BAD_REQUEST,
         "Producer-Id, Producer-Epoch and Producer-Seq must be given together"),
        (b"POST", b"/a",
         [(b"Producer-Id", b"p"), (b"Producer-Epoch", b"9007199254740992"),
          (b"Producer-Seq", b"0")],
         ErrorCode.BAD_REQUEST,
         "Producer-Epoch and Producer-Seq MUST be non-negative integers <= 2^53-1"),
        (b"POST", b"/a",
         [(b"Producer-Id", b"p"), (b"Producer-Epoch", b"0"), (b"Producer-Seq", b"+1")],
         ErrorCode.BAD_REQUEST,
         "Producer-Epoch and Producer-Seq MUST be non-negative integers <= 2^53-1"),
        (b"POST", b"/a", [], ErrorCode.BAD_REQUEST,
         "empty append body without Stream-Closed: true"),
        (b"GET", b"/a?offset=-1&offset=now", [], ErrorCode.BAD_REQUEST,
         "more than one offset parameter"),
        (b"GET", b"/a?offset=-1&live=sse&live=sse", [], ErrorCode.BAD_REQUEST,
         "live and cursor may be given once"),
        (b"GET", b"/a?offset=-1&cursor=a&cursor=b", [], ErrorCode.BAD_REQUEST,
         "live and cursor may be given once"),
        (b"GET", b"/a?offset=-1&live=poll", [], ErrorCode.BAD_REQUEST,
         "live must be long-poll or sse"),
        (b"GET", b"/a?live=sse", [], ErrorCode.BAD_REQUEST, "live=sse requires an offset"),
        (b"GET", b"/a?offset=", [], ErrorCode.BAD_REQUEST, "invalid offset: empty offset"),
    ],
)  # fmt: skip
def test_a_server_refuses_a_request_that_breaks_a_rule_in_the_same_words(
    method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], code: Any, message: str
) -> None:
    error = _remote(method, target, headers)
    assert error.code is code
    assert error.message == message


def test_a_query_that_is_not_utf8_is_a_malformed_request() -> None:
    error = _remote(b"GET", b"/a?offset=%ff")
    assert error.code is ErrorCode.BAD_REQUEST
    assert error.message.startswith("malformed request: 'utf-8' codec can't decode byte 0xff")


@pytest.mark.parametrize("value", [b"", b" ", b"\t "])
def test_a_blank_content_type_is_absent(value: bytes) -> None:
    create = parse_request(b"PUT", b"/a", [(b"Content-Type", value)], b"", LIMITS)
    assert create == Create("/a")
    append = parse_request(
        b"POST", b"/a", [(b"Content-Type", value), (b"Stream-Closed", b"true")], b"", LIMITS
    )
    assert append == Append("/a", close=True)


def test_producer_numbers_up_to_2_53_minus_1_are_typed() -> None:
    top = str(MAX_PRODUCER_INT).encode()
    headers = [
        (b"Content-Type", b"a/b"),
        (b"Producer-Id", b"p"),
        (b"Producer-Epoch", top),
        (b"Producer-Seq", top),
    ]
    got = parse_request(b"POST", b"/a", headers, b"x", LIMITS)
    assert got == Append(
        "/a", b"x", "a/b", producer=Producer("p", MAX_PRODUCER_INT, MAX_PRODUCER_INT)
    )


@pytest.mark.parametrize("path", ["/!", "/~", "/a!b~c/d"])
def test_every_printable_ascii_character_but_query_and_fragment_marks_is_a_path(path: str) -> None:
    validate_request(Create(path), LIMITS)
    assert parse_request(b"PUT", path.encode(), [], b"", LIMITS) == Create(path)


def test_a_reserved_control_path_is_never_a_stream() -> None:
    error = _local(Create("/v1/__ds/x"))
    assert error.code is ErrorCode.BAD_REQUEST
    assert error.message == "a path segment '__ds' is reserved, never a stream"


def test_a_preflight_of_a_control_path_stays_a_preflight() -> None:
    got = parse_request(b"OPTIONS", b"/v1/__ds/subscriptions/s", [], b"", LIMITS)
    assert got == Options("/v1/__ds/subscriptions/s")


def test_a_fragment_is_not_part_of_the_path() -> None:
    assert parse_request(b"GET", b"/a#frag?x", [], b"", LIMITS) == Read("/a")
    assert parse_request(b"GET", b"/a?offset=-1", [], b"", LIMITS) == Read("/a", "-1")


def test_a_method_that_is_not_ascii_is_not_allowed() -> None:
    error = _remote("GÉT".encode(), b"/a")
    assert error.code is ErrorCode.METHOD_NOT_ALLOWED
    assert error.message == "method G\ufffd\ufffdT not allowed"


def test_a_malformed_webhook_signature_is_refused_in_its_words() -> None:
    error = _remote(b"POST", b"/hook", [(b"Webhook-Signature", b"t=1")], b"{}")
    assert error.code is ErrorCode.BAD_REQUEST
    assert error.message == "Webhook-Signature must be t=<seconds>,kid=<id>,ed25519=<base64url>"
