"""Rules of the client-role connection that mutation testing of ``durable/_client.py`` found
unheld: the words, codes and fatality of each error it raises, the state each leaves, the
edges of ``max_header_size`` and ``max_body_size`` (exactly at the limit is taken, one byte over
is refused, with or without ``Content-Length``), informational heads before the final one, what
makes a response an SSE stream, the SSE and subscription limits taken from ``Limits``, and
``request`` being None whenever no response is awaited.
"""

from __future__ import annotations

import pytest

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, durable
from s3p_codec.durable import ConnectionErrorCode, ConnectionState, LiveMode

OFFSET = "0000000000000000_0000000000000005"
SSE_READ = durable.Read("/s", "-1", LiveMode.SSE)


def client(limits: durable.Limits | None = None) -> durable.Connection:
    return durable.Connection(Role.CLIENT, limits, host="127.0.0.1:4437")


def fatal_http(conn: durable.Connection) -> RemoteProtocolError:
    """The fatal HTTP error ``next_event`` raises; the connection is then in ERROR for good."""
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.code is ConnectionErrorCode.HTTP
    assert caught.value.fatal is True
    assert conn.state is ConnectionState.ERROR
    assert conn.finished
    with pytest.raises(LocalProtocolError) as again:
        conn.next_event()
    assert again.value.code is ConnectionErrorCode.ERROR
    assert again.value.message == "connection is in ERROR"
    return caught.value


def padded_head(status: bytes, size: int, *headers: bytes) -> bytes:
    """A response head of exactly ``size`` bytes (an ``x-pad`` header fills it)."""
    start = b"HTTP/1.1 " + status + b"\r\n" + b"".join(h + b"\r\n" for h in headers)
    pad = size - len(start) - len(b"x-pad: \r\n\r\n")
    assert pad >= 1
    head = start + b"x-pad: " + b"p" * pad + b"\r\n\r\n"
    assert len(head) == size
    return head


DELETED = (b"204 No Content",)


# -- requests out of turn -------------------------------------------------------------------------


def test_a_request_while_one_is_outstanding_is_a_non_fatal_state_error() -> None:
    conn = client()
    conn.send(durable.Head("/s"))
    with pytest.raises(LocalProtocolError) as caught:
        conn.send(durable.Head("/s"))
    assert caught.value.code is ConnectionErrorCode.STATE
    assert caught.value.fatal is False
    assert caught.value.message == "cannot send a request in state BUSY"
    assert conn.state is ConnectionState.BUSY


def test_expecting_a_response_while_one_is_outstanding_is_a_non_fatal_state_error() -> None:
    conn = client()
    conn.expect_response(durable.Head("/s"), b"HEAD", b"/s")
    with pytest.raises(LocalProtocolError) as caught:
        conn.expect_response(durable.Head("/s"), b"HEAD", b"/s")
    assert caught.value.code is ConnectionErrorCode.STATE
    assert caught.value.fatal is False
    assert caught.value.message == "cannot expect a response in state BUSY"
    assert conn.state is ConnectionState.BUSY


@pytest.mark.parametrize("host", ["bad\r\nhost", "nul\x00", " lead", "trail ", "a b", "h\u00e9"])
def test_a_host_no_request_could_carry_is_refused_when_the_connection_is_made(host: str) -> None:
    # Found by mutation testing: such a host made every ``send`` raise h11's own error (or
    # UnicodeEncodeError) instead of one of ours.
    with pytest.raises(ValueError, match="host must be printable ASCII without spaces"):
        durable.Connection(Role.CLIENT, host=host)


@pytest.mark.parametrize("host", ["[::1]:80", "!", "~"])
def test_any_printable_ascii_host_is_the_host_header(host: str) -> None:
    # "!" and "~" are the edges of printable ASCII without the space.
    wire = durable.Connection(Role.CLIENT, host=host).send(durable.Head("/s"))
    assert wire == b"HEAD /s HTTP/1.1\r\nhost: " + host.encode() + b"\r\n\r\n"


def awaited(conn: durable.Connection) -> durable.Request | None:
    return conn.request


def test_request_is_none_until_sent_and_again_once_answered() -> None:
    conn = client()
    assert awaited(conn) is None
    conn.send(durable.Delete("/s"))
    assert awaited(conn) == durable.Delete("/s")
    conn.receive_data(b"HTTP/1.1 204 No Content\r\n\r\n")
    assert conn.next_event() == durable.Deleted()
    assert awaited(conn) is None
    assert conn.state is ConnectionState.IDLE


# -- broken HTTP and bytes answering nothing ------------------------------------------------------


def test_malformed_http_is_fatal_in_h11s_words() -> None:
    conn = client()
    conn.send(durable.Head("/s"))
    conn.receive_data(b"garbage\r\n\r\n")
    error = fatal_http(conn)
    assert error.message.startswith("illegal status line")


def test_bytes_while_idle_answer_no_request_and_are_fatal() -> None:
    conn = client()
    conn.receive_data(b"HTTP/1.1 204 No Content\r\n\r\n")
    error = fatal_http(conn)
    assert error.message == "the server sent bytes that answer no request"


# -- max_header_size ------------------------------------------------------------------------------


def test_a_head_exactly_at_max_header_size_is_taken_one_byte_more_is_fatal() -> None:
    limits = durable.Limits(max_header_size=300)
    conn = client(limits)
    conn.send(durable.Delete("/s"))
    conn.receive_data(padded_head(*DELETED, 300))
    assert conn.next_event() == durable.Deleted()
    conn.send(durable.Delete("/s"))
    conn.receive_data(padded_head(*DELETED, 301))
    error = fatal_http(conn)
    assert error.message == "response head of 301 bytes is over the limit of 300"


def test_the_header_bound_given_to_h11_is_max_header_size() -> None:
    # The default max_header_size (64 KiB) is above h11's own default (16 KiB).
    conn = client()
    conn.send(durable.Delete("/s"))
    for piece in (padded_head(*DELETED, 40_000)[i : i + 1000] for i in range(0, 40_000, 1000)):
        conn.receive_data(piece)
    assert list(conn.events()) == [durable.Deleted()]


def test_informational_heads_come_before_the_final_one_and_count_on_their_own() -> None:
    # A second exchange, so that the heads do not begin at stream offset 0.
    limits = durable.Limits(max_header_size=300)
    conn = client(limits)
    conn.send(durable.Delete("/s"))
    conn.receive_data(padded_head(*DELETED, 200))
    assert conn.next_event() == durable.Deleted()
    conn.send(durable.Delete("/s"))
    conn.receive_data(padded_head(b"100 Continue", 250) + padded_head(*DELETED, 300))
    assert list(conn.events()) == [durable.Deleted()]
    assert conn.state is ConnectionState.IDLE


# -- max_body_size --------------------------------------------------------------------------------


def read_head(*framing: bytes) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nStream-Next-Offset: " + OFFSET.encode() + b"\r\n"
        + b"".join(f + b"\r\n" for f in framing) + b"\r\n"
    )  # fmt: skip


def test_a_content_length_exactly_at_max_body_size_is_taken() -> None:
    conn = client(durable.Limits(max_body_size=4))
    conn.send(durable.Read("/s"))
    conn.receive_data(read_head(b"Content-Length: 4") + b"abcd")
    assert conn.next_event() == durable.Chunk(b"abcd", OFFSET, cache_control=None)


def test_a_content_length_over_max_body_size_is_fatal_in_words() -> None:
    conn = client(durable.Limits(max_body_size=4))
    conn.send(durable.Read("/s"))
    conn.receive_data(read_head(b"Content-Length: 5"))
    error = fatal_http(conn)
    assert error.message == "response body larger than 4 bytes"


def test_a_body_in_pieces_is_kept_whole() -> None:
    conn = client()
    conn.send(durable.Read("/s"))
    conn.receive_data(read_head(b"Content-Length: 6") + b"ab")
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"cd")
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"ef")
    assert conn.next_event() == durable.Chunk(b"abcdef", OFFSET, cache_control=None)


def test_a_chunked_body_exactly_at_max_body_size_is_taken() -> None:
    conn = client(durable.Limits(max_body_size=4))
    conn.send(durable.Read("/s"))
    conn.receive_data(read_head(b"Transfer-Encoding: chunked") + b"2\r\nab\r\n2\r\ncd\r\n0\r\n\r\n")
    assert list(conn.events()) == [durable.Chunk(b"abcd", OFFSET, cache_control=None)]


def test_a_chunked_body_growing_over_max_body_size_is_fatal_in_words() -> None:
    conn = client(durable.Limits(max_body_size=4))
    conn.send(durable.Read("/s"))
    conn.receive_data(read_head(b"Transfer-Encoding: chunked") + b"3\r\nabc\r\n2\r\nde\r\n")
    error = fatal_http(conn)
    assert error.message == "response body larger than 4 bytes"


# -- SSE ------------------------------------------------------------------------------------------


def sse_head(content_type: bytes = b"text/event-stream") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: " + content_type + b"\r\n\r\n"


def test_an_event_stream_content_type_with_parameters_starts_sse() -> None:
    conn = client()
    conn.send(SSE_READ)
    conn.receive_data(sse_head(b"Text/Event-Stream ; charset=utf-8") + b"event: data\ndata: x\n\n")
    assert list(conn.events()) == [durable.SSEStart(), durable.SSEData(b"x")]
    assert conn.state is ConnectionState.STREAMING


def test_an_event_stream_answering_a_catch_up_read_is_its_data() -> None:
    # Only a live=sse read is answered by SSE; a stream whose content type is
    # text/event-stream read in catch-up mode gives its bytes as a Chunk.
    conn = client()
    conn.send(durable.Read("/s"))
    conn.receive_data(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nStream-Next-Offset: "
        + OFFSET.encode() + b"\r\nContent-Length: 9\r\n\r\ndata: x\n\n"
    )  # fmt: skip
    assert list(conn.events()) == [
        durable.Chunk(b"data: x\n\n", OFFSET, "text/event-stream", cache_control=None)
    ]


def test_max_sse_line_bounds_an_sse_line_and_the_error_is_fatal() -> None:
    conn = client(durable.Limits(max_sse_line=8))
    conn.send(SSE_READ)
    conn.receive_data(sse_head() + b"data: 0123456789\n\n")
    assert conn.next_event() == durable.SSEStart()
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.code is ConnectionErrorCode.SSE
    assert caught.value.fatal is True
    assert conn.state is ConnectionState.ERROR
    with pytest.raises(LocalProtocolError) as again:
        conn.next_event()
    assert again.value.code is ConnectionErrorCode.ERROR


def test_max_sse_event_bounds_an_sse_event() -> None:
    conn = client(durable.Limits(max_sse_event=12))
    conn.send(SSE_READ)
    conn.receive_data(sse_head() + b"data: 0123\ndata: 4567\ndata: 89ab\n\n")
    assert conn.next_event() == durable.SSEStart()
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.code is ConnectionErrorCode.SSE
    assert conn.state is ConnectionState.ERROR


def test_an_sse_body_ending_inside_an_event_is_a_non_fatal_sse_error_in_words() -> None:
    conn = client()
    conn.send(SSE_READ)
    conn.receive_data(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 12\r\n\r\n"
        b"data: partia"
    )
    assert conn.next_event() == durable.SSEStart()
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.code is ConnectionErrorCode.SSE
    assert caught.value.fatal is False
    assert caught.value.message == "the SSE body ended inside an event"
    assert conn.next_event() == durable.SSEEnd()


# -- subscriptions --------------------------------------------------------------------------------


def test_max_subscription_streams_bounds_the_arrays_of_an_answer() -> None:
    request = durable.GetJwks("/v1/stream/")
    keys = durable.Jwks((durable.Jwk("a", "x1"), durable.Jwk("b", "x2")))
    srv = durable.Connection(Role.SERVER)
    wide = client()
    srv.receive_data(wide.send(request))
    assert srv.next_event() == request
    wire = srv.send(keys)
    wide.receive_data(wire)
    assert wide.next_event() == keys
    narrow = client(durable.Limits(max_subscription_streams=1))
    narrow.send(request)
    narrow.receive_data(wire)
    with pytest.raises(RemoteProtocolError) as caught:
        narrow.next_event()
    assert caught.value.code is ConnectionErrorCode.INVALID_RESPONSE
    assert caught.value.fatal is False
    assert narrow.state is ConnectionState.IDLE
