"""The server's response builder: the headers the protocol requires, per kind of response."""

from __future__ import annotations

import pytest

from s3p_codec import LocalProtocolError, Role, durable
from s3p_codec.durable import ErrorCode

OFFSET = "0000000000000000_0000000000000005"


def respond(request: bytes, response: durable.Response) -> tuple[int, dict[bytes, bytes], bytes]:
    server = durable.Connection(Role.SERVER)
    server.receive_data(request)
    server.next_event()
    wire = server.send(response)
    head, _, body = wire.partition(b"\r\n\r\n")
    status_line, *lines = head.split(b"\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, body


GET = b"GET /s?offset=-1 HTTP/1.1\r\nHost: x\r\n\r\n"
LONG_POLL = b"GET /s?offset=-1&live=long-poll HTTP/1.1\r\nHost: x\r\n\r\n"
SSE = b"GET /s?offset=-1&live=sse HTTP/1.1\r\nHost: x\r\n\r\n"
PUT = b"PUT /s HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
POST = b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Type: a/b\r\nContent-Length: 1\r\n\r\nx"
CLOSE = b"POST /s HTTP/1.1\r\nHost: x\r\nStream-Closed: true\r\nContent-Length: 0\r\n\r\n"
HEAD = b"HEAD /s HTTP/1.1\r\nHost: x\r\n\r\n"
DELETE = b"DELETE /s HTTP/1.1\r\nHost: x\r\n\r\n"
OPTIONS = b"OPTIONS /s HTTP/1.1\r\nHost: x\r\n\r\n"

EVERY_KIND = [
    (PUT, durable.Created(OFFSET, "text/plain", location="http://x/s")),
    (POST, durable.Appended(OFFSET)),
    (HEAD, durable.StreamInfo(OFFSET)),
    (DELETE, durable.Deleted()),
    (GET, durable.Chunk(b"data", OFFSET)),
    (GET, durable.NotModified('"e"')),
    (LONG_POLL, durable.LongPollTimeout(OFFSET, cursor="1")),
    (SSE, durable.SSEStart()),
    (OPTIONS, durable.OptionsOk()),
    (GET, durable.ErrorResponse(ErrorCode.NOT_FOUND, "no")),
]


@pytest.mark.parametrize(("request_bytes", "response"), EVERY_KIND)
def test_security_headers_are_on_every_response(
    request_bytes: bytes, response: durable.Response
) -> None:
    _, headers, _ = respond(request_bytes, response)
    assert headers[b"x-content-type-options"] == b"nosniff"
    assert headers[b"cross-origin-resource-policy"] == b"cross-origin"
    assert headers[b"access-control-allow-origin"] == b"*"
    assert b"Stream-Next-Offset" in headers[b"access-control-expose-headers"]


def test_created_is_201_with_location_and_200_without_when_it_existed() -> None:
    status, headers, _ = respond(PUT, durable.Created(OFFSET, "text/plain", location="http://x/s"))
    assert status == 201
    assert headers[b"location"] == b"http://x/s"
    assert headers[b"stream-next-offset"] == OFFSET.encode()
    assert headers[b"content-type"] == b"text/plain"
    status, headers, _ = respond(PUT, durable.Created(OFFSET, "text/plain", existed=True))
    assert status == 200
    assert b"location" not in headers


def test_plain_append_is_204_and_producer_append_200_duplicate_204() -> None:
    assert respond(POST, durable.Appended(OFFSET))[0] == 204
    status, headers, _ = respond(POST, durable.Appended(OFFSET, producer_epoch=1, producer_seq=4))
    assert status == 200
    assert (headers[b"producer-epoch"], headers[b"producer-seq"]) == (b"1", b"4")
    duplicate = durable.Appended(OFFSET, producer_epoch=1, producer_seq=4, duplicate=True)
    assert respond(POST, duplicate)[0] == 204


def test_close_only_with_a_producer_is_204_with_stream_closed() -> None:
    closed = durable.Appended(OFFSET, closed=True, producer_epoch=0, producer_seq=0)
    status, headers, _ = respond(CLOSE, closed)
    assert status == 204
    assert headers[b"stream-closed"] == b"true"


def test_head_responses_are_no_store_with_metadata_and_no_body() -> None:
    info = durable.StreamInfo(OFFSET, "text/plain", closed=True, ttl_seconds=60, etag='"e"')
    status, headers, body = respond(HEAD, info)
    assert status == 200
    assert headers[b"cache-control"] == b"no-store"
    assert headers[b"stream-ttl"] == b"60"
    assert headers[b"stream-closed"] == b"true"
    assert body == b""


def test_catch_up_chunks_are_cacheable_with_etag_and_up_to_date() -> None:
    chunk = durable.Chunk(b"data", OFFSET, "text/plain", up_to_date=True, etag='"e"')
    status, headers, body = respond(GET, chunk)
    assert status == 200
    assert headers[b"cache-control"] == b"public, max-age=60, stale-while-revalidate=300"
    assert headers[b"stream-up-to-date"] == b"true"
    assert headers[b"etag"] == b'"e"'
    assert headers[b"content-length"] == b"4"
    assert body == b"data"
    assert b"stream-closed" not in headers


def test_offset_now_reads_can_be_no_store() -> None:
    _, headers, _ = respond(GET, durable.Chunk(b"", OFFSET, cache_control="no-store"))
    assert headers[b"cache-control"] == b"no-store"


def test_long_poll_timeout_is_204_with_up_to_date_offset_and_cursor() -> None:
    status, headers, body = respond(LONG_POLL, durable.LongPollTimeout(OFFSET, cursor="42"))
    assert status == 204
    assert headers[b"stream-up-to-date"] == b"true"
    assert headers[b"stream-next-offset"] == OFFSET.encode()
    assert headers[b"stream-cursor"] == b"42"
    assert b"content-length" not in headers
    assert body == b""


def test_long_poll_on_an_open_stream_must_carry_a_cursor() -> None:
    with pytest.raises(LocalProtocolError):
        respond(LONG_POLL, durable.LongPollTimeout(OFFSET))
    with pytest.raises(LocalProtocolError):
        respond(LONG_POLL, durable.Chunk(b"x", OFFSET))
    status, headers, _ = respond(LONG_POLL, durable.LongPollTimeout(OFFSET, closed=True))
    assert status == 204
    assert headers[b"stream-closed"] == b"true"
    assert b"stream-cursor" not in headers


def test_sse_is_exactly_text_event_stream_without_content_length() -> None:
    status, headers, _ = respond(SSE, durable.SSEStart())
    assert status == 200
    assert headers[b"content-type"] == b"text/event-stream"
    assert b"content-length" not in headers
    assert b"no-cache" in headers[b"cache-control"]
    assert b"stream-sse-data-encoding" not in headers


def test_binary_sse_sends_the_base64_encoding_header() -> None:
    _, headers, _ = respond(SSE, durable.SSEStart(base64=True))
    assert headers[b"stream-sse-data-encoding"] == b"base64"


def test_not_modified_is_304_without_body() -> None:
    status, headers, body = respond(GET, durable.NotModified('"e"'))
    assert status == 304
    assert headers[b"etag"] == b'"e"'
    assert body == b""


def test_options_allows_if_none_match_in_preflights() -> None:
    status, headers, _ = respond(OPTIONS, durable.OptionsOk())
    assert status == 204
    assert b"If-None-Match" in headers[b"access-control-allow-headers"]
    assert b"GET" in headers[b"access-control-allow-methods"]


def test_closed_append_conflict_carries_stream_closed_and_the_final_offset() -> None:
    error = durable.ErrorResponse(ErrorCode.CONFLICT, "closed", closed=True, next_offset=OFFSET)
    status, headers, body = respond(POST, error)
    assert status == 409
    assert headers[b"stream-closed"] == b"true"
    assert headers[b"stream-next-offset"] == OFFSET.encode()
    assert body == b"closed"


def test_producer_errors_carry_their_headers() -> None:
    stale = durable.ErrorResponse(ErrorCode.FORBIDDEN, producer_epoch=3)
    assert respond(POST, stale)[1][b"producer-epoch"] == b"3"
    gap = durable.ErrorResponse(ErrorCode.CONFLICT, expected_seq=2, received_seq=5)
    headers = respond(POST, gap)[1]
    assert (headers[b"producer-expected-seq"], headers[b"producer-received-seq"]) == (b"2", b"5")


@pytest.mark.parametrize(
    "bad",
    [
        durable.ErrorResponse(200),
        durable.ErrorResponse(ErrorCode.CONFLICT, next_offset="a,b"),
        durable.ErrorResponse(ErrorCode.FORBIDDEN, producer_epoch=-1),
    ],
)
def test_invalid_error_responses_are_refused(bad: durable.ErrorResponse) -> None:
    with pytest.raises(LocalProtocolError):
        respond(POST, bad)
