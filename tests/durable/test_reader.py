"""The client read state machine: catch-up, then live, resuming from the last offset."""

from __future__ import annotations

from s3p_codec.durable import (
    Chunk,
    ErrorCode,
    ErrorResponse,
    LiveMode,
    LongPollTimeout,
    Read,
    ReadPhase,
    SSEControl,
    SSEData,
    SSEEnd,
    SSEStart,
    StreamReader,
)

A, B, C = (f"0000000000000000_000000000000000{i}" for i in (1, 2, 3))


def test_catch_up_until_up_to_date_then_long_poll_with_the_cursor() -> None:
    reader = StreamReader("/s", live=LiveMode.LONG_POLL)
    assert reader.next_request() == Read("/s", offset="-1")
    reader.on_event(Chunk(b"ab", A))  # more data exists: stay in catch-up
    assert reader.phase is ReadPhase.CATCH_UP
    assert reader.next_request() == Read("/s", offset=A)
    reader.on_event(Chunk(b"c", B, up_to_date=True))
    assert reader.phase is ReadPhase.LIVE
    assert reader.next_request() == Read("/s", offset=B, live=LiveMode.LONG_POLL)
    reader.on_event(LongPollTimeout(B, cursor="100"))
    # "Clients MUST include the received cursor value as the cursor query parameter"
    assert reader.next_request() == Read("/s", offset=B, live=LiveMode.LONG_POLL, cursor="100")
    reader.on_event(Chunk(b"d", C, up_to_date=True, cursor="101"))
    assert reader.take() == b"abcd"
    assert reader.next_request() == Read("/s", offset=C, live=LiveMode.LONG_POLL, cursor="101")


def test_up_to_date_alone_is_not_eof_only_stream_closed_is() -> None:
    reader = StreamReader("/s", live=LiveMode.LONG_POLL)
    reader.on_event(Chunk(b"", A, up_to_date=True))
    assert not reader.closed
    reader.on_event(LongPollTimeout(A, closed=True))
    assert reader.closed
    assert reader.phase is ReadPhase.DONE
    assert reader.next_request() is None


def test_without_live_mode_the_reader_stops_when_caught_up() -> None:
    reader = StreamReader("/s", offset=A)
    reader.on_event(Chunk(b"x", B, up_to_date=True))
    assert reader.phase is ReadPhase.DONE
    assert not reader.closed
    assert reader.next_request() is None


def test_sse_reconnects_from_the_last_control_offset_and_not_after_closed() -> None:
    reader = StreamReader("/s", offset=A, live=LiveMode.SSE)
    reader.on_event(Chunk(b"", A, up_to_date=True))
    assert reader.next_request() == Read("/s", offset=A, live=LiveMode.SSE)
    for event in (SSEStart(), SSEData(b"x"), SSEControl(B, cursor="7", up_to_date=True), SSEEnd()):
        reader.on_event(event)
    # "Client MUST reconnect using the last received streamNextOffset value"
    assert reader.next_request() == Read("/s", offset=B, live=LiveMode.SSE, cursor="7")
    reader.on_event(SSEData(b"y"))
    reader.on_event(SSEControl(C, closed=True))
    # "Client MUST NOT reconnect if the last control event included streamClosed: true"
    assert reader.next_request() is None
    assert reader.take() == b"xy"


def test_an_error_response_fails_the_reader() -> None:
    reader = StreamReader("/s")
    reader.on_event(ErrorResponse(ErrorCode.GONE))
    assert reader.phase is ReadPhase.FAILED
    assert reader.error == ErrorResponse(ErrorCode.GONE)
    assert reader.next_request() is None
