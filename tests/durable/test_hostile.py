"""Durable Streams input an attacker controls: smuggling, pipelining floods, huge SSE events,
and verdicts that must not depend on how the bytes were split."""

from __future__ import annotations

import time
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, durable
from s3p_codec.durable import ErrorCode, ErrorResponse
from s3p_codec.durable.sse import SSEParser

GET = b"GET /v1/stream/a?offset=-1 HTTP/1.1\r\nHost: x\r\n\r\n"


def _verdict(chunks: list[bytes]) -> tuple[list[str], int | None]:
    """The requests read and the error code, feeding ``chunks`` and answering each request."""
    server = durable.Connection(Role.SERVER)
    seen: list[str] = []
    try:
        for chunk in chunks:
            server.receive_data(chunk)
            while (event := server.next_event()) is not NEED_DATA:
                seen.append(type(event).__name__)
                server.send(ErrorResponse(ErrorCode.NOT_FOUND, "no"))
    except RemoteProtocolError as exc:
        return seen, int(exc.code)
    return seen, None


def test_content_length_with_transfer_encoding_is_400_and_the_smuggled_request_never_runs() -> (
    None
):
    """RFC 9112 6.3: a server "MAY reject" such a request and "MUST close the connection after
    responding"; we reject it, so the DELETE hidden behind it is never read."""
    attack = (
        b"POST /v1/stream/a HTTP/1.1\r\nHost: x\r\nContent-Type: a/b\r\n"
        b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        b"DELETE /v1/stream/a HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    server = durable.Connection(Role.SERVER)
    server.receive_data(attack)
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    assert caught.value.code == ErrorCode.BAD_REQUEST
    assert caught.value.fatal
    assert isinstance(caught.value.reply, ErrorResponse)
    wire = server.send(caught.value.reply)
    assert wire.startswith(b"HTTP/1.1 400")
    assert b"connection: close" in wire.lower()
    assert server.finished
    with pytest.raises(LocalProtocolError):
        server.next_event()


def _pipelined_seconds(count: int) -> float:
    data = GET * count
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        seen, error = _verdict([data])
        best = min(best, time.perf_counter() - start)
        assert len(seen) == count
        assert error is None
    return best


def test_pipelined_requests_in_one_chunk_cost_linear_time() -> None:
    # h11 alone deletes the consumed prefix and copies the rest per request: 100k GETs took
    # 18.6 s. Four times the requests must cost about four times the time, not sixteen.
    small, large = _pipelined_seconds(2_000), _pipelined_seconds(8_000)
    assert large / small < 8


def test_the_client_reads_a_body_of_many_chunks_in_one_piece_in_linear_time() -> None:
    # The client fed h11 the same way: one Data event per chunk, each deleting the consumed
    # prefix of everything received.
    def seconds(count: int) -> float:
        client = durable.Connection(Role.CLIENT, host="x")
        client.send(durable.Read("/v1/stream/a", offset="-1"))
        head = (
            b"HTTP/1.1 200 OK\r\nContent-Type: a/b\r\nStream-Next-Offset: 1_1\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        start = time.perf_counter()
        client.receive_data(head + b"1\r\nx\r\n" * count + b"0\r\n\r\n")
        events = list(client.events())
        assert events
        return time.perf_counter() - start

    small = min(seconds(5_000) for _ in range(2))
    large = min(seconds(20_000) for _ in range(2))
    assert large / small < 8


def test_a_10_mb_request_line_gets_the_same_verdict_whole_or_in_pieces() -> None:
    line = b"GET /v1/stream/" + b"a" * 10_000_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    whole = _verdict([line])
    pieces = _verdict([line[i : i + 1000] for i in range(0, 200_000, 1000)])
    assert whole == pieces == ([], ErrorCode.REQUEST_HEADER_FIELDS_TOO_LARGE)


_REQUESTS = st.sampled_from(
    [
        GET,
        b"POST /v1/stream/a HTTP/1.1\r\nHost: x\r\nContent-Type: a/b\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: t\r\n\r\n",
        b"POST /v1/stream/a HTTP/1.1\r\nHost: x\r\nContent-Type: a/b\r\n"
        b"Content-Length: 2\r\n\r\nhi",
        b"GET /v1/stream/" + b"b" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"POST /v1/stream/a HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"GARBAGE\r\n\r\n",
    ]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_REQUESTS, min_size=1, max_size=4), st.lists(st.integers(1, 9000), max_size=30))
def test_the_verdict_does_not_depend_on_how_the_bytes_are_split(
    requests: list[bytes], cuts: list[int]
) -> None:
    data = b"".join(requests)
    chunks, at = [], 0
    for cut in cuts:
        chunks.append(data[at : at + cut])
        at += cut
    chunks.append(data[at:])
    assert _verdict([data]) == _verdict([c for c in chunks if c])


def test_an_sse_event_of_ten_million_empty_data_lines_costs_what_it_is_counted() -> None:
    parser = SSEParser(max_event=32 << 20)
    lines = b"data:\n" * 500_000
    tracemalloc.start()  # tracemalloc makes every allocation ~12x slower: keep the count modest
    try:
        for at in range(0, len(lines), 1 << 18):
            assert parser.feed(lines[at : at + (1 << 18)]) == []
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Half a million lines are counted as 0.5 MB of event data (peak ~1 MiB with the 256 KiB
    # chunk fed); a list of one string per line cost ~5.5 MiB (~22 MiB for two million).
    assert peak < 2 << 20
    (event,) = parser.feed(b"\n")
    assert event.data == "\n" * 499_999


def test_sse_data_lines_keep_their_bytes_and_one_optional_space() -> None:
    parser = SSEParser()
    (event,) = parser.feed("data: héllo\ndata:  two\ndata\ndata:x\n\n".encode())
    assert event.data == "héllo\n two\n\nx"
    with pytest.raises(RemoteProtocolError, match="larger than"):
        SSEParser(max_event=10).feed(b"data: 0123456789\n")
