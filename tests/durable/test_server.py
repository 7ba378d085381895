"""The server-role connection: request typing and validation, framing, limits, responses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, durable
from s3p_codec.durable import ConnectionState, ErrorCode, ErrorResponse

OFFSET = "0000000000000000_0000000000000005"


def http(
    method: str, target: str, headers: dict[str, str] | None = None, body: bytes = b""
) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: example"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if body or method in ("PUT", "POST"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def producer(pid: str, epoch: str, seq: str) -> dict[str, str]:
    return {"Content-Type": "a/b", "Producer-Id": pid, "Producer-Epoch": epoch, "Producer-Seq": seq}


def parse(data: bytes) -> durable.Request:
    server = durable.Connection(Role.SERVER)
    server.receive_data(data)
    event = server.next_event()
    assert event is not NEED_DATA
    return event


def rejected(data: bytes) -> RemoteProtocolError:
    server = durable.Connection(Role.SERVER)
    server.receive_data(data)
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    return caught.value


def status_of(error: RemoteProtocolError) -> int:
    assert isinstance(error.reply, ErrorResponse)
    assert error.code == error.reply.status
    return error.reply.status


# -- typing -------------------------------------------------------------------------------------


def test_put_is_create_with_every_header() -> None:
    event = parse(
        http(
            "PUT",
            "/v1/stream/a",
            {"Content-Type": "application/json", "Stream-TTL": "60", "Stream-Closed": "TRUE"},
            b"[1]",
        )
    )
    assert event == durable.Create(
        "/v1/stream/a", content_type="application/json", ttl_seconds=60, closed=True, body=b"[1]"
    )


def test_put_with_fork_headers_is_a_fork() -> None:
    headers = {
        "Stream-Forked-From": "/v1/stream/src",
        "Stream-Fork-Offset": OFFSET,
        "Stream-Fork-Sub-Offset": "3",
    }
    event = parse(http("PUT", "/v1/stream/f", headers))
    assert event == durable.Create(
        "/v1/stream/f", forked_from="/v1/stream/src", fork_offset=OFFSET, fork_sub_offset=3
    )


def test_post_is_append_with_seq_producer_and_close() -> None:
    headers = {
        "content-type": "text/plain",
        "stream-seq": "001",
        "PRODUCER-ID": "p",
        "Producer-Epoch": "2",
        "Producer-Seq": "9",
        "Stream-Closed": "true",
    }
    event = parse(http("POST", "/s", headers, b"x"))
    assert event == durable.Append(
        "/s", b"x", "text/plain", seq="001", producer=durable.Producer("p", 2, 9), close=True
    )


def test_get_is_read_and_unknown_query_parameters_are_ignored() -> None:
    event = parse(http("GET", f"/s?foo=bar&offset={OFFSET}&live=sse&cursor=12&baz"))
    assert event == durable.Read("/s", offset=OFFSET, live=durable.LiveMode.SSE, cursor="12")


def test_get_without_offset_reads_from_the_start() -> None:
    assert parse(http("GET", "/s")) == durable.Read("/s")


def test_offsets_in_the_query_are_percent_decoded() -> None:
    assert parse(http("GET", "/s?offset=%2D1")) == durable.Read("/s", offset="-1")


def test_if_none_match_is_carried() -> None:
    event = parse(http("GET", "/s?offset=now", {"If-None-Match": '"abc"'}))
    assert event == durable.Read("/s", offset="now", if_none_match='"abc"')


@pytest.mark.parametrize(
    ("method", "event"),
    [
        ("HEAD", durable.Head("/s")),
        ("DELETE", durable.Delete("/s")),
        ("OPTIONS", durable.Options("/s")),
    ],
)
def test_head_delete_and_options(method: str, event: durable.Request) -> None:
    assert parse(http(method, "/s")) == event


def test_stream_closed_other_than_true_is_treated_as_absent() -> None:
    for value in ("false", "yes", "1", ""):
        event = parse(http("PUT", "/s", {"Stream-Closed": value}))
        assert isinstance(event, durable.Create)
        assert not event.closed


# -- validation: every rule answers with its status, and the connection carries on -----------------


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        # "If both Stream-TTL and Stream-Expires-At are supplied, servers SHOULD reject ... 400"
        (http("PUT", "/s", {"Stream-TTL": "1", "Stream-Expires-At": "2030-01-01T00:00:00Z"}), 400),
        (http("PUT", "/s", {"Stream-TTL": "03600"}), 400),
        (http("PUT", "/s", {"Stream-TTL": "+1"}), 400),
        (http("PUT", "/s", {"Stream-TTL": "1.5"}), 400),
        (http("PUT", "/s", {"Stream-TTL": "1e3"}), 400),
        (http("PUT", "/s", {"Stream-TTL": "-1"}), 400),
        (http("PUT", "/s", {"Stream-Expires-At": "not-a-timestamp"}), 400),
        (http("PUT", "/s", {"Stream-Fork-Sub-Offset": "0"}), 400),
        (http("PUT", "/s", {"Stream-Fork-Offset": OFFSET}), 400),
        (http("PUT", "/s", {"Stream-Forked-From": "/a", "Stream-Fork-Sub-Offset": "1"}), 400),
        (http("PUT", "/s", {"Stream-Forked-From": "/a", "Stream-Fork-Offset": "now"}), 400),
        (http("PUT", "/s", {"Stream-Forked-From": "/a", "Stream-Fork-Offset": "a,b"}), 400),
        (http("PUT", "/s", {"Stream-Forked-From": "/a", "Stream-Fork-Sub-Offset": "05"}), 400),
        (http("PUT", "/s", {"Stream-Forked-From": "/a", "Stream-Fork-Sub-Offset": "-1"}), 400),
        (http("PUT", "/s", {"Stream-Forked-From": "relative"}), 400),
        # "Servers MUST reject POST requests with an empty body ... with 400"
        (http("POST", "/s", {"Content-Type": "text/plain"}), 400),
        (http("POST", "/s", {}, b"x"), 400),  # missing Content-Type
        # "All three producer headers MUST be provided together or none at all"
        (http("POST", "/s", {"Content-Type": "a/b", "Producer-Id": "p"}, b"x"), 400),
        (http("POST", "/s", {"Content-Type": "a/b", "Producer-Seq": "0"}, b"x"), 400),
        (http("POST", "/s", producer("", "0", "0"), b"x"), 400),  # "MUST be a non-empty string"
        (http("POST", "/s", producer("p", "1e3", "0"), b"x"), 400),
        (http("POST", "/s", producer("p", "-1", "0"), b"x"), 400),
        (http("POST", "/s", producer("p", "0", "1abc"), b"x"), 400),
        (http("POST", "/s", producer("p", "0", str(2**53)), b"x"), 400),  # "<= 2^53-1"
        (http("GET", "/s?offset="), 400),
        (http("GET", "/s?offset=1&offset=2"), 400),
        (http("GET", "/s?offset=a%2Cb"), 400),
        (http("GET", "/s?offset=a%20b"), 400),
        (http("GET", "/s?offset=..%2F"), 400),
        (http("GET", "/s?offset=" + "1" * 300), 400),
        (http("GET", "/s?live=long-poll"), 400),  # long-poll: "offset (required)"
        (http("GET", "/s?live=sse"), 400),
        (http("GET", "/s?offset=-1&live=forever"), 400),
        (http("GET", "/s?offset=%FF"), 400),
        (http("PATCH", "/s"), 405),
    ],
)  # fmt: skip
def test_each_broken_rule_is_a_non_fatal_error_with_its_status(
    request_bytes: bytes, status: int
) -> None:
    server = durable.Connection(Role.SERVER)
    server.receive_data(request_bytes + http("HEAD", "/next"))
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    assert not caught.value.fatal
    assert status_of(caught.value) == status
    reply = server.send(caught.value.reply)  # type: ignore[arg-type]
    assert reply.startswith(f"HTTP/1.1 {status} ".encode())
    assert server.next_event() == durable.Head("/next")  # the connection carries on


def test_a_request_waits_for_its_response_before_the_next_is_parsed() -> None:
    server = durable.Connection(Role.SERVER)
    server.receive_data(http("HEAD", "/a") + http("HEAD", "/b"))
    assert server.next_event() == durable.Head("/a")
    assert server.next_event() is NEED_DATA
    assert server.state is ConnectionState.BUSY
    server.send(durable.StreamInfo(OFFSET))
    assert server.next_event() == durable.Head("/b")


def test_chunked_request_bodies_are_joined() -> None:
    data = (
        b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
    )
    assert parse(data) == durable.Append("/s", b"abcde", "text/plain")


def test_a_body_over_the_limit_is_refused_from_content_length_before_the_body() -> None:
    server = durable.Connection(Role.SERVER, durable.Limits(max_body_size=10))
    server.receive_data(
        b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Type: a/b\r\nContent-Length: 11\r\n\r\n"
    )
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    assert caught.value.fatal
    assert status_of(caught.value) == 413
    reply = server.send(caught.value.reply)  # type: ignore[arg-type]
    assert reply.startswith(b"HTTP/1.1 413 ")
    assert b"connection: close" in reply.lower()
    assert server.finished


def test_a_chunked_body_over_the_limit_is_refused_as_it_grows() -> None:
    server = durable.Connection(Role.SERVER, durable.Limits(max_body_size=4))
    server.receive_data(
        b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Type: a/b\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5\r\nabcde\r\n"
    )
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    assert status_of(caught.value) == 413


def test_broken_http_framing_is_fatal_with_a_400_reply_then_finished() -> None:
    server = durable.Connection(Role.SERVER)
    server.receive_data(b"GARBAGE\r\n\r\n")
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    assert caught.value.fatal
    assert status_of(caught.value) == 400
    assert not server.finished  # the reply may still be sent once
    assert server.send(caught.value.reply).startswith(b"HTTP/1.1 400 ")  # type: ignore[arg-type]
    assert server.finished
    assert server.state is ConnectionState.ERROR


def test_clean_eof_between_requests_closes() -> None:
    server = durable.Connection(Role.SERVER)
    server.receive_data(http("HEAD", "/a"))
    assert server.next_event() == durable.Head("/a")
    server.send(durable.ErrorResponse(ErrorCode.NOT_FOUND))
    server.receive_data(b"")
    assert server.next_event() is NEED_DATA
    assert server.state is ConnectionState.CLOSED
    assert server.finished
    assert server.next_event() is NEED_DATA


def test_eof_inside_a_request_is_a_remote_error() -> None:
    server = durable.Connection(Role.SERVER)
    server.receive_data(b"PUT /s HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab")
    server.receive_data(b"")
    with pytest.raises(RemoteProtocolError):
        server.next_event()


# -- responses -------------------------------------------------------------------------------------


def answer(request: bytes, response: durable.Response) -> bytes:
    server = durable.Connection(Role.SERVER)
    server.receive_data(request)
    server.next_event()
    return server.send(response)


def test_sending_without_a_request_or_the_wrong_kind_is_a_local_error() -> None:
    server = durable.Connection(Role.SERVER)
    with pytest.raises(LocalProtocolError):
        server.send(durable.Deleted())
    server.receive_data(http("HEAD", "/s"))
    server.next_event()
    with pytest.raises(LocalProtocolError):
        server.send(durable.Deleted())
    with pytest.raises(LocalProtocolError):
        server.send(durable.SSEData(b"x"))
    assert server.send(durable.StreamInfo(OFFSET)).startswith(b"HTTP/1.1 200 ")


def test_long_poll_timeout_only_answers_long_poll_and_sse_start_only_sse() -> None:
    server = durable.Connection(Role.SERVER)
    server.receive_data(http("GET", "/s?offset=-1"))
    server.next_event()
    with pytest.raises(LocalProtocolError):
        server.send(durable.LongPollTimeout(OFFSET, cursor="1"))
    with pytest.raises(LocalProtocolError):
        server.send(durable.SSEStart())


def test_sentinels_are_never_sent_as_offsets() -> None:
    for sentinel in ("-1", "now"):
        server = durable.Connection(Role.SERVER)
        server.receive_data(http("HEAD", "/s"))
        server.next_event()
        with pytest.raises(LocalProtocolError, match="sentinel"):
            server.send(durable.StreamInfo(sentinel))


def test_sse_events_stream_after_sse_start_and_end_the_response() -> None:
    server = durable.Connection(Role.SERVER)
    server.receive_data(http("GET", "/s?offset=-1&live=sse") + http("HEAD", "/s"))
    server.next_event()
    head = server.send(durable.SSEStart(base64=True))
    assert server.state is ConnectionState.STREAMING
    with pytest.raises(LocalProtocolError):
        server.send(durable.Deleted())
    body = server.send(durable.SSEData(b"\x00\x01"))
    assert b"data:AAE=" in body
    with pytest.raises(LocalProtocolError, match="cursor"):
        server.send(durable.SSEControl(OFFSET))  # open stream: a cursor is required
    body += server.send(durable.SSEControl(OFFSET, closed=True))
    body += server.send(durable.SSEEnd())
    assert b"stream-sse-data-encoding: base64" in head
    assert body.endswith(b"0\r\n\r\n")  # the chunked body ends
    assert server.state is ConnectionState.IDLE
    assert server.next_event() == durable.Head("/s")


@given(st.lists(st.integers(0, 400), max_size=10))
def test_any_chunking_of_pipelined_requests_gives_the_same_events(cuts: list[int]) -> None:
    wire = (
        http("PUT", "/a", {"Content-Type": "text/plain"}, b"hello")
        + http("POST", "/a", {"Content-Type": "text/plain", "Stream-Seq": "1"}, b"more")
        + http("GET", "/a?offset=-1&live=long-poll")
    )
    server = durable.Connection(Role.SERVER)
    events = []
    start = 0
    for cut in [*sorted(c for c in cuts if 0 < c < len(wire)), len(wire)]:
        if cut == start:
            continue
        server.receive_data(wire[start:cut])
        start = cut
        while (event := server.next_event()) is not NEED_DATA:
            events.append(event)
            server.send(durable.ErrorResponse(ErrorCode.NOT_FOUND))
    assert [type(e) for e in events] == [durable.Create, durable.Append, durable.Read]


@given(st.binary(max_size=300))
def test_random_bytes_give_requests_or_our_errors_only(data: bytes) -> None:
    server = durable.Connection(Role.SERVER)
    server.receive_data(b"PUT /s HTTP/1.1\r\n" + data)
    server.receive_data(b"")
    for _ in range(5):
        try:
            event = server.next_event()
        except RemoteProtocolError as exc:
            assert exc.reply is not None  # noqa: PT017
            if exc.fatal:
                return
            server.send(exc.reply)  # type: ignore[arg-type]
            continue
        if event is NEED_DATA:
            return
        server.send(durable.ErrorResponse(ErrorCode.NOT_FOUND))


def test_the_reply_to_a_rejected_head_request_has_no_body() -> None:
    # Found by the fuzzer: h11 refuses a body on a HEAD response, even for a 400.
    server = durable.Connection(Role.SERVER)
    server.receive_data(b"HEAD (/s HTTP/1.1\r\nHost: x\r\n\r\n" + http("HEAD", "/s"))
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    reply = server.send(caught.value.reply)  # type: ignore[arg-type]
    assert reply.startswith(b"HTTP/1.1 400 ")
    assert reply.endswith(b"\r\n\r\n")
    assert server.next_event() == durable.Head("/s")


def test_a_request_head_over_the_limit_is_refused_whatever_the_chunking() -> None:
    # h11 bounds only incomplete heads; the codec measures whole ones, so chunking never matters.
    limits = durable.Limits(max_header_size=1024)
    head = b"GET /v1/stream/x HTTP/1.1\r\nhost: a\r\nx-big: " + b"a" * 1000 + b"\r\n\r\n"

    def feed_in_pieces(size: int) -> None:
        conn = durable.Connection(Role.SERVER, limits)
        for at in range(0, len(head), size):
            conn.receive_data(head[at : at + size])
            conn.next_event()

    for size in (1, 7, 100, len(head)):
        with pytest.raises(RemoteProtocolError) as caught:
            feed_in_pieces(size)
        assert caught.value.code == durable.ErrorCode.REQUEST_HEADER_FIELDS_TOO_LARGE


def test_pipelined_heads_each_within_the_limit_are_accepted_together() -> None:
    limits = durable.Limits(max_header_size=200)
    one = b"HEAD /v1/stream/x HTTP/1.1\r\nhost: a\r\nx-pad: " + b"p" * 120 + b"\r\n\r\n"
    assert len(one) <= 200
    conn = durable.Connection(Role.SERVER, limits)
    conn.receive_data(one * 3)
    for _ in range(3):
        request = conn.next_event()
        assert isinstance(request, durable.Head)
        conn.send(durable.ErrorResponse(durable.ErrorCode.NOT_FOUND, "no such stream"))
