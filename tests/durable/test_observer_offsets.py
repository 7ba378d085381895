"""Observer offsets: every event's exact byte range in its direction, whatever the chunking."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import Direction, Role, durable
from s3p_codec._core.observe import ObservedError
from tests.durable.test_observer import OFFSET, conversation
from tests.observer_support import chunked as _chunked
from tests.observer_support import interleaved, pieces
from tests.observer_support import observed as _observed

C2S, S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
SSE_READ = b"GET /s?offset=-1&live=sse HTTP/1.1\r\nHost: x\r\n\r\n"
SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
)
SSE_EVENTS = (durable.SSEStart, durable.SSEData, durable.SSEControl, durable.SSEEnd)
CONTROL = b'{"streamNextOffset":"' + OFFSET.encode() + b'","streamCursor":"1"}'


def _ranges(outputs: Sequence[object], direction: Direction) -> list[tuple[int, int]]:
    return [(o.start, o.end) for o in _observed(outputs, direction)]


def _bounds(messages: Sequence[bytes]) -> list[tuple[int, int]]:
    ends = list(itertools.accumulate(len(m) for m in messages))
    return list(zip([0, *ends], ends, strict=False))


def test_pipelined_requests_in_one_chunk_span_exactly_their_messages() -> None:
    up, down, _ = conversation()
    observer = durable.Observer()
    outputs = [*observer.observe(C2S, b"".join(up)), *observer.observe(S2C, b"".join(down))]
    assert _ranges(outputs, C2S) == _bounds(up)
    replies = _observed(outputs, S2C)
    buffered = [(o.start, o.end) for o in replies if not isinstance(o.event, SSE_EVENTS)]
    # Created, Appended, then (after the SSE response) the 404 to the HEAD.
    first, second, _, last = _bounds(down)
    assert buffered == [first, second, last]


def test_sse_events_span_from_the_previous_event_to_their_line_end() -> None:
    up, down, _ = conversation()
    observer = durable.Observer()
    outputs = [*observer.observe(C2S, b"".join(up)), *observer.observe(S2C, b"".join(down))]
    sse = [o for o in _observed(outputs, S2C) if isinstance(o.event, SSE_EVENTS)]
    base = len(down[0]) + len(down[1])
    raw = down[2]
    head_end = raw.index(b"\r\n\r\n") + 4
    data_end = raw.index(b"hix\n\n") + 5
    control_start = raw.index(b"event: control")
    control_end = raw.index(b"}\n\n") + 3
    assert [(o.start - base, o.end - base) for o in sse] == [
        (0, head_end),
        (head_end + len(b"16\r\n"), data_end),
        (control_start, control_end),
        (control_end, len(raw)),
    ]


@given(sizes=st.lists(st.integers(1, 40), max_size=10), crlf=st.booleans())
def test_sse_events_split_across_chunks_end_after_their_own_line_end(
    sizes: list[int], crlf: bool
) -> None:
    newline = b"\r\n" if crlf else b"\n"
    events = [
        b"event: data" + newline + b"data: one" + newline + newline,
        b": comment" + newline + b"event: data" + newline + b"data: two" + newline + newline,
        b"event: control" + newline + b"data: " + CONTROL + newline + newline,
    ]
    body, where = _chunked(b"".join(events), sizes)
    observer = durable.Observer()
    observer.observe(C2S, SSE_READ)
    outputs = _observed(observer.observe(S2C, SSE_HEAD + body), S2C)
    assert [type(o.event) for o in outputs] == [
        durable.SSEStart,
        durable.SSEData,
        durable.SSEData,
        durable.SSEControl,
        durable.SSEEnd,
    ]
    assert (outputs[0].start, outputs[0].end) == (0, len(SSE_HEAD))
    at = 0
    for event, observed in zip(events, outputs[1:4], strict=True):
        # A CRLF's LF comes after the CR that dispatched the event: it opens the next range.
        last = at + len(event) - (2 if crlf else 1)
        first = at - 1 if crlf and at else at
        assert observed.start == len(SSE_HEAD) + where[first]
        assert observed.end == len(SSE_HEAD) + where[last] + 1
        at += len(event)
    assert outputs[4].end == len(SSE_HEAD) + len(body)
    assert outputs[4].start < outputs[4].end


def test_a_chunked_request_spans_its_whole_message() -> None:
    body, _ = _chunked(b"hello", [2, 1])
    request = (
        b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n" + body
    )
    head = b"HEAD /s HTTP/1.1\r\nHost: x\r\n\r\n"
    outputs = durable.Observer().observe(C2S, request + head)
    assert [o.event for o in _observed(outputs, C2S)] == [
        durable.Append("/s", b"hello", "text/plain"),
        durable.Head("/s"),
    ]
    assert _ranges(outputs, C2S) == _bounds([request, head])


def test_a_message_spanning_many_chunks_gets_the_same_offsets() -> None:
    up, down, _ = conversation()
    whole = durable.Observer()
    expected = [*whole.observe(C2S, b"".join(up)), *whole.observe(S2C, b"".join(down))]
    bytewise = durable.Observer()
    got: list[object] = []
    for direction, data in ((C2S, b"".join(up)), (S2C, b"".join(down))):
        for i in range(len(data)):
            got += bytewise.observe(direction, data[i : i + 1])
    assert got == expected


def test_a_rejected_request_is_reported_at_its_start() -> None:
    bad = b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
    good = b"HEAD /s HTTP/1.1\r\nHost: x\r\n\r\n"
    outputs = durable.Observer().observe(C2S, good + bad + good)
    error = outputs[1]
    assert isinstance(error, ObservedError)
    assert error.start == len(good)
    assert _ranges(outputs, C2S) == [(0, len(good)), (len(good + bad), len(good + bad + good))]


@given(
    cuts=st.lists(st.integers(min_value=0, max_value=1 << 16), max_size=10),
    picks=st.lists(st.booleans(), max_size=40),
)
def test_offsets_are_the_same_under_any_chunking_and_never_overlap(
    cuts: list[int], picks: list[bool]
) -> None:
    up, down, events = conversation()
    c2s, s2c = b"".join(up), b"".join(down)
    reference = durable.Observer()
    expected = [*reference.observe(C2S, c2s), *reference.observe(S2C, s2c)]
    observer = durable.Observer()
    outputs = interleaved(observer, pieces(c2s, cuts), pieces(s2c, cuts[::-1]), picks)
    assert len(_observed(outputs, C2S)) + len(_observed(outputs, S2C)) == len(events)
    for direction in (C2S, S2C):
        assert _observed(outputs, direction) == _observed(expected, direction)
        ranges = _ranges(outputs, direction)
        assert all(start < end for start, end in ranges)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(ranges))
    assert _ranges(outputs, S2C)[-1][1] == len(s2c)


def test_the_end_of_a_close_delimited_sse_body_is_an_empty_range_at_its_end() -> None:
    observer = durable.Observer()
    observer.observe(C2S, SSE_READ)
    head = b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
    event = b"event: data\ndata: x\n\n"
    first = _observed(observer.observe(S2C, head + event), S2C)
    assert [(o.start, o.end) for o in first] == [(0, len(head)), (len(head), len(head + event))]
    (end,) = _observed(observer.close(S2C), S2C)
    assert end.event == durable.SSEEnd()
    assert (end.start, end.end) == (len(head + event), len(head + event))


def test_a_broken_sse_event_is_reported_where_it_starts() -> None:
    observer = durable.Observer()
    observer.observe(C2S, SSE_READ)
    good = b"event: data\ndata: x\n\n"
    body, where = _chunked(good + b"event: data\ndata: \xff\n\n", [len(good) + 3])
    outputs = observer.observe(S2C, SSE_HEAD + body)
    error = outputs[-1]
    assert isinstance(error, ObservedError)
    assert error.error.code == "sse"
    assert error.start == len(SSE_HEAD) + where[len(good)]


def test_a_client_connection_with_event_spans_measures_every_event_it_returns() -> None:
    spans = durable.EventSpans()
    client = durable.Connection(Role.CLIENT, spans=spans)
    plain = durable.Connection(Role.CLIENT)
    read = durable.Read("/s", offset="-1", live=durable.LiveMode.SSE)
    body = b"event: data\ndata:hi\n\n"
    chunk = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    for conn in (client, plain):
        conn.expect_response(read, b"GET", b"/s")
        conn.receive_data(SSE_HEAD + chunk)
    events = list(client.events())
    assert events == list(plain.events())  # measuring changes nothing the connection yields
    ranges = [spans.pop() for _ in events]
    head_end = len(SSE_HEAD)
    data_start = head_end + chunk.index(b"event")  # the first body byte, after the chunk size
    data_end = head_end + chunk.index(b"hi\n\n") + 4
    assert ranges == [(0, head_end), (data_start, data_end), (data_end, head_end + len(chunk))]


def test_connection_of_the_client_role_takes_event_spans_and_the_server_role_refuses_them() -> None:
    spans = durable.EventSpans()
    client = durable.Connection(Role.CLIENT, spans=spans)
    assert client.role is Role.CLIENT
    client.expect_response(durable.Read("/s", offset="-1"), b"GET", b"/s")
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: a/b\r\nStream-Next-Offset: 1_1\r\n"
        b"Content-Length: 2\r\n\r\n"
    )
    client.receive_data(head + b"hi")
    (event,) = client.events()
    assert event == durable.Chunk(
        data=b"hi", next_offset="1_1", content_type="a/b", cache_control=None
    )
    assert spans.pop() == (0, len(head) + 2)
    with pytest.raises(TypeError, match="server"):
        durable.Connection(Role.SERVER, spans=durable.EventSpans())
