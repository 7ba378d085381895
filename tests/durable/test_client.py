"""The client-role connection: request bytes, response typing, SSE, limits, end of stream.

Round trips go through both roles: a server-role connection builds each response, the
client-role connection must type it back to the same event, whatever the chunking.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, durable
from s3p_codec.durable import ConnectionState, ErrorCode, LiveMode

OFFSET = "0000000000000000_0000000000000005"
OFFSETS = st.builds(durable.offsets.format_offset, st.integers(0, 99), st.integers(0, 10**9))
TOKENS = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=12)


def client() -> durable.Connection:
    return durable.Connection(Role.CLIENT, host="127.0.0.1:4437")


def exchange(
    request: durable.Request, *responses: object, cuts: list[int] | None = None
) -> list[object]:
    """Send ``request`` through both roles; return what the client types from the answer."""
    cli, srv = client(), durable.Connection(Role.SERVER)
    srv.receive_data(cli.send(request))
    assert srv.next_event() == request
    wire = b"".join(srv.send(r) for r in responses)  # type: ignore[arg-type]
    pieces = [
        wire[a:b] for a, b in zip([0, *(cuts or [])], [*(cuts or []), len(wire)], strict=True)
    ]
    events: list[object] = []
    for piece in pieces:
        if piece:
            cli.receive_data(piece)
        events.extend(cli.events())
    assert cli.state is ConnectionState.IDLE
    return events


# -- requests on the wire -------------------------------------------------------------------------


def test_query_parameters_are_ordered_lexicographically_by_key() -> None:
    # The summary's example: "?cursor=xyz&live=long-poll&offset=abc".
    wire = client().send(
        durable.Read("/stream/test", offset="abc", live=LiveMode.LONG_POLL, cursor="xyz")
    )
    assert wire == (
        b"GET /stream/test?cursor=xyz&live=long-poll&offset=abc HTTP/1.1\r\n"
        b"host: 127.0.0.1:4437\r\n\r\n"
    )


def test_offsets_are_url_encoded_and_sse_asks_for_an_event_stream() -> None:
    wire = client().send(durable.Read("/s", offset="a:b~c", live=LiveMode.SSE))
    assert wire.startswith(b"GET /s?live=sse&offset=a%3Ab~c HTTP/1.1\r\n")
    assert b"accept: text/event-stream\r\n" in wire


def test_create_and_append_send_their_headers_and_body() -> None:
    wire = client().send(
        durable.Create("/s", content_type="text/plain", ttl_seconds=5, closed=True, body=b"hi")
    )
    assert b"stream-ttl: 5\r\n" in wire
    assert b"stream-closed: true\r\n" in wire
    assert wire.endswith(b"content-length: 2\r\n\r\nhi")
    wire = client().send(
        durable.Append("/s", b"x", "text/plain", seq="7", producer=durable.Producer("p", 1, 2))
    )
    for header in (b"stream-seq: 7", b"producer-id: p", b"producer-epoch: 1", b"producer-seq: 2"):
        assert header + b"\r\n" in wire


@pytest.mark.parametrize(
    "bad",
    [
        durable.Create("relative"),
        durable.Create("/s", ttl_seconds=1, expires_at="2030-01-01T00:00:00Z"),
        durable.Create("/s", ttl_seconds=-1),
        durable.Create("/s", expires_at="tomorrow"),
        durable.Create("/s", fork_offset=OFFSET),
        durable.Create("/s", forked_from="/a", fork_sub_offset=1),
        durable.Create("/s", content_type="text/plain\r\nx: y"),
        durable.Append("/s"),
        durable.Append("/s", b"x"),
        durable.Append("/s", b"x", "a/b", producer=durable.Producer("", 0, 0)),
        durable.Append("/s", b"x", "a/b", producer=durable.Producer("p", 2**53, 0)),
        durable.Append("/s", b"x", "a/b", seq=""),
        durable.Read("/s", offset="a,b"),
        durable.Read("/s", live=LiveMode.SSE),
        durable.Read("/s", offset="-1", cursor=""),
        durable.Read("/s?x=1"),
        durable.Head("/s p"),
    ],
)
def test_invalid_requests_are_refused_before_any_byte(bad: durable.Request) -> None:
    conn = client()
    with pytest.raises(LocalProtocolError) as caught:
        conn.send(bad)
    assert caught.value.code == ErrorCode.BAD_REQUEST
    assert conn.state is ConnectionState.IDLE


def test_one_request_at_a_time() -> None:
    conn = client()
    conn.send(durable.Head("/s"))
    with pytest.raises(LocalProtocolError):
        conn.send(durable.Head("/s"))


# -- responses -----------------------------------------------------------------------------

APPEND = durable.Append("/s", b"x", "a/b")
ROUND_TRIPS = [
    (durable.Create("/s"), durable.Created(OFFSET, "text/plain", location="http://x/s")),
    (durable.Create("/s"), durable.Created(OFFSET, "text/plain", closed=True, existed=True)),
    (durable.Append("/s", b"x", "a/b"), durable.Appended(OFFSET, closed=True)),
    (
        durable.Append("/s", b"x", "a/b", producer=durable.Producer("p", 1, 2)),
        durable.Appended(OFFSET, producer_epoch=1, producer_seq=2),
    ),
    (
        durable.Append("/s", b"x", "a/b", producer=durable.Producer("p", 1, 2)),
        durable.Appended(OFFSET, producer_epoch=1, producer_seq=7, duplicate=True),
    ),
    (durable.Head("/s"), durable.StreamInfo(OFFSET, "a/b", True, 60, None, '"e"')),
    (durable.Head("/s"), durable.StreamInfo(OFFSET, expires_at="2030-01-01T00:00:00Z")),
    (durable.Delete("/s"), durable.Deleted()),
    (durable.Options("/s"), durable.OptionsOk()),
    (durable.Read("/s"), durable.Chunk(b"\x00\xff", OFFSET, "a/b", True, True, None, '"e"')),
    (durable.Read("/s", "now"), durable.Chunk(b"", OFFSET, "a/b", True, cache_control="no-store")),
    (durable.Read("/s", if_none_match='"e"'), durable.NotModified('"e"')),
    (
        durable.Read("/s", OFFSET, LiveMode.LONG_POLL),
        durable.Chunk(b"new", OFFSET, cursor="9", up_to_date=True),
    ),
    (durable.Read("/s", OFFSET, LiveMode.LONG_POLL), durable.LongPollTimeout(OFFSET, "9")),
    (durable.Read("/s", OFFSET, LiveMode.LONG_POLL), durable.LongPollTimeout(OFFSET, closed=True)),
    (
        durable.Append("/s", b"x", "a/b"),
        durable.ErrorResponse(ErrorCode.CONFLICT, "closed", closed=True, next_offset=OFFSET),
    ),
    (APPEND, durable.ErrorResponse(ErrorCode.FORBIDDEN, producer_epoch=4)),
    (APPEND, durable.ErrorResponse(ErrorCode.CONFLICT, "", expected_seq=1, received_seq=3)),
    (durable.Head("/s"), durable.ErrorResponse(ErrorCode.GONE)),
    (durable.Read("/s"), durable.ErrorResponse(503, "busy")),
]  # fmt: skip


@pytest.mark.parametrize(("request_event", "response"), ROUND_TRIPS)
def test_every_response_types_back_to_the_event_the_server_sent(
    request_event: durable.Request, response: durable.Response
) -> None:
    (event,) = exchange(request_event, response)
    assert event == response


@given(st.sampled_from(ROUND_TRIPS), st.lists(st.integers(1, 600), max_size=6))
def test_any_chunking_of_a_response_gives_the_same_event(
    pair: tuple[durable.Request, durable.Response], cuts: list[int]
) -> None:
    request_event, response = pair
    cli, srv = client(), durable.Connection(Role.SERVER)
    srv.receive_data(cli.send(request_event))
    srv.next_event()
    wire = srv.send(response)
    points = sorted({c for c in cuts if c < len(wire)})
    events: list[object] = []
    for start, end in zip([0, *points], [*points, len(wire)], strict=True):
        cli.receive_data(wire[start:end])
        events.extend(cli.events())
    assert events == [response]


@given(
    st.builds(
        durable.Chunk,
        data=st.binary(max_size=50),
        next_offset=OFFSETS,
        content_type=st.none() | st.just("application/json"),
        up_to_date=st.booleans(),
        closed=st.booleans(),
        cursor=st.none() | st.integers(0, 10**9).map(str),
        etag=st.none() | TOKENS.map(lambda t: f'"{t}"'),
    )
)
def test_chunks_round_trip(chunk: durable.Chunk) -> None:
    assert exchange(durable.Read("/s"), chunk) == [chunk]


def test_a_success_without_stream_next_offset_is_a_non_fatal_invalid_response() -> None:
    conn = client()
    conn.send(durable.Head("/s"))
    conn.receive_data(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.code == "invalid_response"
    assert not caught.value.fatal
    assert conn.state is ConnectionState.IDLE
    conn.send(durable.Delete("/s"))  # still usable


def test_a_response_body_over_the_limit_is_refused_from_content_length() -> None:
    conn = durable.Connection(Role.CLIENT, durable.Limits(max_body_size=4))
    conn.send(durable.Read("/s"))
    conn.receive_data(b"HTTP/1.1 200 OK\r\nStream-Next-Offset: 1_1\r\nContent-Length: 5\r\n\r\n")
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.fatal
    assert conn.state is ConnectionState.ERROR
    with pytest.raises(LocalProtocolError):
        conn.next_event()


def test_eof_inside_a_response_is_fatal_and_eof_when_idle_closes() -> None:
    conn = client()
    conn.send(durable.Read("/s"))
    conn.receive_data(b"HTTP/1.1 200 OK\r\nStream-Next-Offset: 1_1\r\nContent-Length: 5\r\n\r\nab")
    conn.receive_data(b"")
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
    idle = client()
    idle.receive_data(b"")
    assert idle.next_event() is NEED_DATA
    assert idle.state is ConnectionState.CLOSED
    assert idle.finished


# -- SSE -----------------------------------------------------------------------------------


def sse_exchange(
    base64: bool, *events: durable.SSEEvent, cuts: list[int] | None = None
) -> list[object]:
    request = durable.Read("/s", "-1", LiveMode.SSE)
    return exchange(request, durable.SSEStart(base64=base64), *events, cuts=cuts)


def test_sse_events_come_out_typed_then_the_end() -> None:
    events = sse_exchange(
        False,
        durable.SSEData(b'[{"k":"v"}]'),
        durable.SSEControl(OFFSET, cursor="1", up_to_date=True),
        durable.SSEData(b"x"),
        durable.SSEControl(OFFSET, closed=True),
        durable.SSEEnd(),
    )
    assert events == [
        durable.SSEStart(False),
        durable.SSEData(b'[{"k":"v"}]'),
        durable.SSEControl(OFFSET, cursor="1", up_to_date=True),
        durable.SSEData(b"x"),
        durable.SSEControl(OFFSET, closed=True),
        durable.SSEEnd(),
    ]


@given(st.lists(st.binary(max_size=40), max_size=4), st.lists(st.integers(1, 400), max_size=8))
def test_base64_sse_round_trips_any_bytes_in_any_chunking(
    payloads: list[bytes], cuts: list[int]
) -> None:
    sent: list[durable.SSEEvent] = []
    for payload in payloads:
        sent += [durable.SSEData(payload), durable.SSEControl(OFFSET, cursor="3")]
    whole = sse_exchange(True, *sent, durable.SSEEnd())
    events = sse_exchange(True, *sent, durable.SSEEnd(), cuts=sorted(set(cuts)))
    assert events == whole == [durable.SSEStart(True), *sent, durable.SSEEnd()]


def test_unknown_sse_event_types_are_ignored() -> None:
    conn = client()
    conn.send(durable.Read("/s", "-1", LiveMode.SSE))
    conn.receive_data(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 46\r\n\r\n"
        b"event: ping\ndata: 1\n\nevent: data\ndata: hello\n\n"
    )
    assert list(conn.events()) == [durable.SSEStart(), durable.SSEData(b"hello"), durable.SSEEnd()]


def test_an_sse_body_ending_inside_an_event_is_reported_after_the_end() -> None:
    conn = client()
    conn.send(durable.Read("/s", "-1", LiveMode.SSE))
    conn.receive_data(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 12\r\n\r\n"
        b"data: partia"
    )
    assert conn.next_event() == durable.SSEStart()
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert not caught.value.fatal
    assert conn.next_event() == durable.SSEEnd()
    assert conn.state is ConnectionState.IDLE


def test_an_sse_answer_that_is_not_an_event_stream_is_an_ordinary_response() -> None:
    (event,) = exchange(
        durable.Read("/s", "-1", LiveMode.SSE), durable.ErrorResponse(ErrorCode.NOT_FOUND)
    )
    assert event == durable.ErrorResponse(ErrorCode.NOT_FOUND)


@given(st.binary(max_size=300))
def test_random_response_bytes_give_events_or_our_errors_only(data: bytes) -> None:
    for request in (durable.Read("/s", "-1", LiveMode.SSE), durable.Head("/s")):
        conn = client()
        conn.send(request)
        conn.receive_data(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" + data)
        conn.receive_data(b"")
        for _ in range(50):
            try:
                if conn.next_event() is NEED_DATA:
                    break
            except RemoteProtocolError as exc:
                if exc.fatal:
                    break
            except LocalProtocolError:
                break
