"""The server role's rules that other tests did not read: the exact words, codes and statuses
of its refusals (fatal and local), its bounds at the byte (head size, ``Content-Length`` and a
chunked body at ``Limits.max_body_size``), the state after a fatal reply, and an SSE response
to an HTTP/1.0 client (close-delimited: the end is the close).

Found by mutation testing of ``durable/_server.py``; each test fails with at least one mutant.
"""

from __future__ import annotations

import pytest

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, durable
from s3p_codec.durable import ConnectionErrorCode, ConnectionState, ErrorCode, ErrorResponse

OFFSET = "0000000000000000_0000000000000005"


def server(limits: durable.Limits | None = None) -> durable.Connection:
    return durable.Connection(Role.SERVER, limits=limits)


def refused(conn: durable.Connection, data: bytes) -> RemoteProtocolError:
    conn.receive_data(data)
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    return caught.value


def read(conn: durable.Connection, data: bytes) -> durable.Request:
    conn.receive_data(data)
    event = conn.next_event()
    assert isinstance(event, durable.Request)
    return event


def head_of(size: int) -> bytes:
    """A GET request whose head is exactly ``size`` bytes."""
    start = b"GET /s HTTP/1.1\r\nHost: a\r\nX-Pad: "
    return start + b"y" * (size - len(start) - 4) + b"\r\n\r\n"


def sse_server() -> durable.Connection:
    conn = server()
    read(conn, f"GET /s?offset={OFFSET}&live=sse HTTP/1.1\r\nHost: a\r\n\r\n".encode())
    conn.send(durable.SSEStart())
    return conn


# -- fatal refusals: their words, status and reply -------------------------------------------


def test_a_malformed_request_line_is_refused_in_h11s_words_with_400() -> None:
    conn = server()
    error = refused(conn, b"GARBAGE\r\n\r\n")
    words = "illegal request line: bytearray(b'GARBAGE')"
    assert error.message == str(error) == words
    assert error.fatal is True
    assert error.code is ErrorCode.BAD_REQUEST
    assert error.reply == ErrorResponse(ErrorCode.BAD_REQUEST, words)
    assert conn.state is ConnectionState.ERROR


def test_an_unsupported_transfer_coding_is_refused_with_501() -> None:
    error = refused(server(), b"POST /s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n")
    words = "Only Transfer-Encoding: chunked is supported"
    assert error.message == words
    assert error.code is ErrorCode.NOT_IMPLEMENTED
    assert error.reply == ErrorResponse(ErrorCode.NOT_IMPLEMENTED, words)


def test_both_content_length_and_transfer_encoding_is_refused_in_its_words() -> None:
    conn = server()
    data = (
        b"POST /s HTTP/1.1\r\nHost: a\r\nContent-Type: a/b\r\nContent-Length: 5\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    error = refused(conn, data)
    words = "a request with both Content-Length and Transfer-Encoding"
    assert error.message == str(error) == words
    assert error.fatal is True
    assert error.code is ErrorCode.BAD_REQUEST
    assert error.reply == ErrorResponse(ErrorCode.BAD_REQUEST, words)
    assert conn.state is ConnectionState.ERROR


def test_after_the_fatal_reply_next_event_says_the_connection_is_in_error() -> None:
    conn = server()
    error = refused(conn, b"GARBAGE\r\n\r\n")
    assert conn.next_event() is NEED_DATA  # the reply is still owed
    assert isinstance(error.reply, ErrorResponse)
    out = conn.send(error.reply)
    assert out.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert b"connection: close\r\n" in out.lower()
    assert conn.state is ConnectionState.ERROR
    assert conn.finished
    with pytest.raises(LocalProtocolError) as caught:
        conn.next_event()
    assert caught.value.message == "connection is in ERROR"
    assert caught.value.code is ConnectionErrorCode.ERROR


# -- the head bound, at the byte -------------------------------------------------------------


def test_a_head_of_exactly_max_header_size_is_read() -> None:
    conn = server(durable.Limits(max_header_size=100))
    assert read(conn, head_of(100)) == durable.Read("/s")


def test_a_head_one_byte_over_max_header_size_is_refused_with_431_in_its_words() -> None:
    conn = server(durable.Limits(max_header_size=100))
    error = refused(conn, head_of(101))
    words = "request head of 101 bytes is over the limit of 100"
    assert error.message == words
    assert error.fatal is True
    assert error.code is ErrorCode.REQUEST_HEADER_FIELDS_TOO_LARGE
    assert error.reply == ErrorResponse(ErrorCode.REQUEST_HEADER_FIELDS_TOO_LARGE, words)
    assert conn.state is ConnectionState.ERROR


# -- the body bound, at the byte -------------------------------------------------------------


def test_a_content_length_of_exactly_max_body_size_is_read() -> None:
    conn = server(durable.Limits(max_body_size=4))
    data = b"POST /s HTTP/1.1\r\nHost: a\r\nContent-Type: a/b\r\nContent-Length: 4\r\n\r\nabcd"
    assert read(conn, data) == durable.Append("/s", b"abcd", "a/b")


def test_a_content_length_one_over_max_body_size_is_refused_with_413() -> None:
    conn = server(durable.Limits(max_body_size=4))
    data = b"POST /s HTTP/1.1\r\nHost: a\r\nContent-Type: a/b\r\nContent-Length: 5\r\n\r\n"
    error = refused(conn, data)
    assert error.message == "request body larger than 4 bytes"
    assert error.code is ErrorCode.PAYLOAD_TOO_LARGE
    assert error.reply == ErrorResponse(ErrorCode.PAYLOAD_TOO_LARGE, error.message)


def test_a_chunked_body_of_exactly_max_body_size_is_read() -> None:
    conn = server(durable.Limits(max_body_size=4))
    data = (
        b"POST /s HTTP/1.1\r\nHost: a\r\nContent-Type: a/b\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"2\r\nab\r\n2\r\ncd\r\n0\r\n\r\n"
    )
    assert read(conn, data) == durable.Append("/s", b"abcd", "a/b")


def test_a_chunked_body_one_over_max_body_size_is_refused_with_413() -> None:
    conn = server(durable.Limits(max_body_size=4))
    data = (
        b"POST /s HTTP/1.1\r\nHost: a\r\nContent-Type: a/b\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"2\r\nab\r\n3\r\ncde\r\n0\r\n\r\n"
    )
    error = refused(conn, data)
    assert error.message == "request body larger than 4 bytes"
    assert error.code is ErrorCode.PAYLOAD_TOO_LARGE


# -- local refusals of send: their words and codes -------------------------------------------


def test_a_response_while_an_sse_response_is_open_is_refused_in_its_words() -> None:
    conn = sse_server()
    with pytest.raises(LocalProtocolError) as caught:
        conn.send(durable.LongPollTimeout(OFFSET, cursor="1"))
    assert caught.value.message == "an SSE response is open: send SSE events"
    assert caught.value.code is ConnectionErrorCode.STATE
    assert conn.state is ConnectionState.STREAMING


def test_a_response_with_no_request_is_refused_in_its_words() -> None:
    conn = server()
    with pytest.raises(LocalProtocolError) as caught:
        conn.send(ErrorResponse(ErrorCode.NOT_FOUND))
    assert caught.value.message == "no request is waiting for a response"
    assert caught.value.code is ConnectionErrorCode.STATE


def test_only_an_error_answers_a_rejected_request_in_its_words() -> None:
    conn = server()
    refused(conn, b"PATCH /s HTTP/1.1\r\nHost: a\r\n\r\n")
    with pytest.raises(LocalProtocolError) as caught:
        conn.send(durable.Deleted())
    words = "only an ErrorResponse (or a SubscriptionError) answers a rejected request"
    assert caught.value.message == words
    assert caught.value.code is ConnectionErrorCode.STATE


def test_an_sse_event_with_no_sse_response_open_is_refused_in_its_words() -> None:
    conn = server()
    read(conn, b"GET /s HTTP/1.1\r\nHost: a\r\n\r\n")
    for event in (durable.SSEData(b"x"), durable.SSEControl(OFFSET, cursor="1"), durable.SSEEnd()):
        with pytest.raises(LocalProtocolError) as caught:
            conn.send(event)
        assert caught.value.message == "no SSE response is open"
        assert caught.value.code is ConnectionErrorCode.STATE
    assert conn.state is ConnectionState.BUSY


# -- SSE control events: streamNextOffset and streamCursor -----------------------------------


@pytest.mark.parametrize(
    ("offset", "why"),
    [
        ("", "empty offset"),
        ("a,b", "offset MUST NOT contain ','"),
        ("-1", "sentinel"),
        ("now", "sentinel"),
    ],
)
def test_a_control_event_with_an_invalid_or_sentinel_offset_is_refused(
    offset: str, why: str
) -> None:
    conn = sse_server()
    with pytest.raises(LocalProtocolError) as caught:
        conn.send(durable.SSEControl(offset, cursor="1"))
    assert caught.value.message == f"invalid streamNextOffset: {why}"
    assert caught.value.code is ConnectionErrorCode.STATE
    assert caught.value.fatal is False
    assert conn.state is ConnectionState.STREAMING
    # Not fatal: the stream goes on.
    assert b"\r\nevent: control\n" in conn.send(durable.SSEControl(OFFSET, cursor="1"))


def test_an_open_streams_control_event_without_a_cursor_is_refused_in_its_words() -> None:
    conn = sse_server()
    with pytest.raises(LocalProtocolError) as caught:
        conn.send(durable.SSEControl(OFFSET))
    assert caught.value.message == "an open stream's control event MUST carry a cursor"
    assert caught.value.code is ConnectionErrorCode.STATE
    assert caught.value.fatal is False
    assert conn.state is ConnectionState.STREAMING
    # A closed stream's needs none.
    assert b"\r\nevent: control\n" in conn.send(durable.SSEControl(OFFSET, closed=True))


# -- SSE to an HTTP/1.0 client ---------------------------------------------------------------


def test_an_sse_response_to_http_1_0_ends_with_the_close() -> None:
    conn = server()
    read(conn, f"GET /s?offset={OFFSET}&live=sse HTTP/1.0\r\n\r\n".encode())
    start = conn.send(durable.SSEStart())
    assert start.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"\r\nConnection: close\r\n" in start
    assert b"transfer-encoding" not in start.lower()
    assert conn.send(durable.SSEData(b"x")) == b"event: data\ndata:x\n\n"
    assert conn.send(durable.SSEEnd()) == b""  # no last chunk: the close ends the body
    assert conn.state is ConnectionState.CLOSED
    assert conn.finished
    assert conn.next_event() is NEED_DATA


def test_a_response_with_connection_close_leaves_the_connection_closed() -> None:
    conn = server()
    read(conn, b"GET /s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    out = conn.send(durable.Chunk(b"ab", OFFSET))
    assert out.endswith(b"\r\n\r\nab")
    assert conn.state is ConnectionState.CLOSED
    assert conn.finished
    assert conn.request is None
    assert conn.request_line is None


# -- a refusal answered in the other error form ----------------------------------------------
# ``send`` lets an ErrorResponse or a SubscriptionError answer any refused request; either one
# settles the reply owed. (It did not: the other form left the debt owed, so a second answer
# went out with no request, ending in an internal ``IllegalTransition``, and a fatal error
# answered with a SubscriptionError raised one after writing the reply.)


def state_of(conn: durable.Connection) -> ConnectionState:
    """The state, read afresh (mypy keeps a narrowed property otherwise)."""
    return conn.state


def assert_settled(conn: durable.Connection) -> None:
    with pytest.raises(LocalProtocolError) as caught:
        conn.send(ErrorResponse(ErrorCode.BAD_REQUEST))
    assert caught.value.message == "no request is waiting for a response"


def test_a_refusal_owing_an_error_response_is_settled_by_a_subscription_error() -> None:
    conn = server()
    error = refused(conn, b"PATCH /s HTTP/1.1\r\nHost: a\r\n\r\n")
    assert isinstance(error.reply, ErrorResponse)
    out = conn.send(durable.SubscriptionError(durable.SubscriptionErrorCode.INVALID_REQUEST))
    assert out.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert conn.state is ConnectionState.IDLE
    assert_settled(conn)
    assert read(conn, b"GET /s HTTP/1.1\r\nHost: a\r\n\r\n") == durable.Read("/s")
    conn.send(durable.Chunk(b"", OFFSET))
    conn.receive_data(b"")
    assert conn.next_event() is NEED_DATA
    assert state_of(conn) is ConnectionState.CLOSED
    assert conn.finished


def test_a_refusal_owing_a_subscription_error_is_settled_by_an_error_response() -> None:
    conn = server()
    error = refused(
        conn,
        b"PUT /v1/stream/__ds/subscriptions/x HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\n"
        b"[1, 2]",
    )
    assert isinstance(error.reply, durable.SubscriptionError)
    out = conn.send(ErrorResponse(ErrorCode.BAD_REQUEST, "no"))
    assert out.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert out.endswith(b"\r\n\r\nno")
    assert conn.state is ConnectionState.IDLE
    assert_settled(conn)
    conn.receive_data(b"")
    assert conn.next_event() is NEED_DATA
    assert conn.finished


def test_a_fatal_error_answered_with_a_subscription_error_ends_the_connection() -> None:
    conn = server()
    refused(conn, b"GARBAGE\r\n\r\n")
    out = conn.send(durable.SubscriptionError(durable.SubscriptionErrorCode.INVALID_REQUEST))
    assert out.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert b"connection: close\r\n" in out.lower()
    assert conn.state is ConnectionState.ERROR
    assert conn.finished
    assert_settled(conn)
    with pytest.raises(LocalProtocolError) as caught:
        conn.next_event()
    assert caught.value.message == "connection is in ERROR"


# -- a HEAD refused before its head was kept -------------------------------------------------
# The refusals of ``_begin`` (head over the limit, both framings) came before the head was
# kept: the reply to a HEAD was built with a body, which h11 refused ("Too much data for
# declared Content-Length"), so the 400 or 431 owed could not be sent; ``request_line`` was None.


def test_a_head_request_with_both_framings_gets_its_400_without_a_body() -> None:
    conn = server()
    data = b"HEAD /s HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
    error = refused(conn, data)
    assert conn.request_line == (b"HEAD", b"/s")
    assert isinstance(error.reply, ErrorResponse)
    out = conn.send(error.reply)
    assert out.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert out.endswith(b"\r\n\r\n")  # the head alone
    assert b"connection: close\r\n" in out.lower()
    assert conn.state is ConnectionState.ERROR
    assert conn.finished


def test_a_head_request_over_the_head_limit_gets_its_431_without_a_body() -> None:
    conn = server(durable.Limits(max_header_size=100))
    data = b"HEAD" + head_of(100)[3:]  # 101 bytes: complete, one over the limit
    assert len(data) == 101
    error = refused(conn, data)
    assert error.code is ErrorCode.REQUEST_HEADER_FIELDS_TOO_LARGE
    assert conn.request_line == (b"HEAD", b"/s")
    assert isinstance(error.reply, ErrorResponse)
    out = conn.send(error.reply)
    assert out.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    assert out.endswith(b"\r\n\r\n")
    assert conn.finished


def test_a_get_refused_before_its_head_was_read_still_names_its_request_line() -> None:
    conn = server()
    data = b"GET /s HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
    error = refused(conn, data)
    assert conn.request_line == (b"GET", b"/s")
    assert isinstance(error.reply, ErrorResponse)
    out = conn.send(error.reply)
    assert out.endswith(b"\r\n\r\n" + error.message.encode())
    assert conn.request_line is None  # until its answer is sent
