"""Session requests and responses: paths, headers, negotiation, pre-session JSON errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import LocalProtocolError, RemoteProtocolError, s2s
from s3p_codec.s2s import http
from s3p_codec.s2s._compression import Compression


def test_append_request_is_post_records_with_s2s_proto() -> None:
    request = s2s.SessionRequest(
        s2s.Session.APPEND, "my/stream", basin="b1", token="tok", accept=Compression.ZSTD
    )
    method, target, headers = http.build_request(request)
    assert method == b"POST"
    assert target == b"/v1/streams/my%2Fstream/records"
    assert headers == [
        (b"content-type", b"s2s/proto"),
        (b"accept", b"s2s/proto"),
        (b"accept-encoding", b"zstd"),
        (b"authorization", b"Bearer tok"),
        (b"s2-basin", b"b1"),
    ]
    assert http.parse_request(method, target, headers) == request


def test_read_request_is_get_records_with_query() -> None:
    query = s2s.ReadQuery(seq_num=5, count=10, wait=30, clamp=True)
    request = s2s.SessionRequest(s2s.Session.READ, "s", query=query, accept=Compression.GZIP)
    method, target, headers = http.build_request(request)
    assert (method, target) == (
        b"GET",
        b"/v1/streams/s/records?seq_num=5&count=10&wait=30&clamp=true",
    )
    assert (b"content-type", b"s2s/proto") in headers
    assert http.parse_request(method, target, headers) == request


def test_spec_text_paths_are_accepted() -> None:
    headers = [(b"accept", b"s2s/proto"), (b"accept-encoding", b"zstd, gzip")]
    parsed = http.parse_request(b"GET", b"/v1/basins/b/streams/s/read?wait=300", headers)
    assert (parsed.session, parsed.basin, parsed.stream) == (s2s.Session.READ, "b", "s")
    assert parsed.query.wait == 300
    assert parsed.accept is Compression.ZSTD
    append = http.parse_request(
        b"POST", b"/v1/basins/b/streams/s/append", [(b"content-type", b"s2s/proto")]
    )
    assert append.session is s2s.Session.APPEND


@pytest.mark.parametrize(
    ("method", "target", "headers", "code"),
    [
        (b"GET", b"/v1/streams/s/nope", [(b"accept", b"s2s/proto")], "bad_path"),
        (b"PUT", b"/v1/streams/s/records", [(b"content-type", b"s2s/proto")], "bad_path"),
        (b"GET", b"/v1/streams//records", [(b"accept", b"s2s/proto")], "bad_path"),
        (b"GET", b"/v1/streams/%ff/records", [(b"accept", b"s2s/proto")], "bad_path"),
        (b"POST", b"/v1/streams/s/records", [(b"accept", b"s2s/proto")], "bad_header"),
        (b"GET", b"/v1/streams/s/records", [(b"accept", b"application/json")], "bad_header"),
        (b"GET", b"/v1/streams/s/records?seq_num=x", [(b"accept", b"s2s/proto")], "bad_query"),
        (b"GET", b"/v1/streams/s/records?seq_num=1&timestamp=2", [(b"accept", b"s2s/proto")],
         "bad_query"),
        (b"GET", b"/v1/streams/s/records?count=99999999999999999999", [(b"accept", b"s2s/proto")],
         "bad_query"),
        (b"GET", b"/v1/streams/s/records?clamp=yes", [(b"accept", b"s2s/proto")], "bad_query"),
        (b"GET", b"/v1/streams/s/records", [(b"accept", b"s2s/proto"),
                                            (b"authorization", b"Basic x")], "unauthorized"),
    ],
)  # fmt: skip
def test_bad_session_requests_get_a_json_error_reply(
    method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], code: str
) -> None:
    with pytest.raises(RemoteProtocolError) as caught:
        http.parse_request(method, target, headers)
    reply = caught.value.reply
    assert isinstance(reply, s2s.ErrorResponse)
    assert reply.code == code
    status, response_headers, body = http.error_response(reply)
    assert status == reply.status
    assert (b"content-type", b"application/json") in response_headers
    assert json.loads(body) == {"code": code, "message": reply.message}


def test_200_with_s2s_proto_opens_the_session() -> None:
    status, headers = http.build_response(s2s.SessionResponse(Compression.ZSTD))
    assert (status, headers) == (
        200,
        [(b"content-type", b"s2s/proto"), (b"content-encoding", b"zstd")],
    )
    assert http.check_response(status, headers) == s2s.SessionResponse(Compression.ZSTD)


def test_200_with_another_content_type_is_refused() -> None:
    with pytest.raises(RemoteProtocolError) as caught:
        http.check_response(200, [(b"content-type", b"application/json")])
    assert caught.value.code is s2s.ErrorCode.BAD_HEADER


def test_errors_before_the_session_are_plain_json_responses() -> None:
    status, _, body = http.error_response(s2s.ErrorResponse(404, "stream_not_found", "no s"))
    with pytest.raises(s2s.SessionTerminated) as caught:
        http.check_response(status, [(b"content-type", b"application/json")], body)
    assert caught.value.code == 404
    assert caught.value.terminal.code == "stream_not_found"


def test_pre_session_416_and_412_bodies_raise_their_typed_errors() -> None:
    tail = s2s.Terminal(status=416, tail=s2s.StreamPosition(3, 4))
    status, _, body = http.error_response(tail)
    with pytest.raises(s2s.ReadUnwritten) as unwritten:
        http.check_response(status, [], body)
    assert unwritten.value.tail == s2s.StreamPosition(3, 4)
    with pytest.raises(s2s.AppendConditionFailed):
        http.check_response(412, [], b'{"fencing_token_mismatch":"a"}')


def test_error_response_needs_an_error_status() -> None:
    with pytest.raises(LocalProtocolError):
        http.error_response(s2s.ErrorResponse(200, "x"))


@given(
    stream=st.text(min_size=1, max_size=20).filter(lambda s: "\x00" not in s),
    seq=st.none() | st.integers(min_value=0, max_value=(1 << 64) - 1),
    wait=st.none() | st.integers(min_value=0, max_value=3600),
)
def test_read_request_round_trip(stream: str, seq: int | None, wait: int | None) -> None:
    request = s2s.SessionRequest(
        s2s.Session.READ, stream, token="t", query=s2s.ReadQuery(seq_num=seq, wait=wait)
    )
    assert http.parse_request(*http.build_request(request)) == request


@given(target=st.binary(max_size=60), method=st.sampled_from([b"GET", b"POST", b"X"]))
def test_random_targets_give_requests_or_error_replies(target: bytes, method: bytes) -> None:
    try:
        http.parse_request(method, target, [(b"content-type", b"s2s/proto")])
    except RemoteProtocolError as exc:
        reply = exc.reply
    else:
        reply = s2s.ErrorResponse(400, "none")
    assert isinstance(reply, s2s.ErrorResponse)
