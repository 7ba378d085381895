"""Observer offsets: every event's exact byte range in its direction, whatever the chunking."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import Direction, Role, s2s
from s3p_codec._core import ObservedError
from tests.observer_support import chunked as _chunked
from tests.observer_support import interleaved, pieces
from tests.observer_support import observed as _observed

C2S, S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
POS = s2s.StreamPosition
APPEND_HEAD = b"POST /v1/streams/s/records HTTP/1.1\r\nhost: h\r\ncontent-type: s2s/proto\r\n"
READ_HEAD = b"GET /v1/streams/s/records HTTP/1.1\r\nhost: h\r\naccept: s2s/proto\r\n\r\n"
OK_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: s2s/proto\r\ntransfer-encoding: chunked\r\n\r\n"
INPUTS = [
    s2s.AppendInput((s2s.AppendRecord(b"x" * 300),)),
    s2s.AppendInput((s2s.AppendRecord(b"y"),) * 2),
    s2s.AppendInput((s2s.AppendRecord(b"z" * 40),)),
]


def _frames(role: Role, session: s2s.Session, events: Sequence[s2s.Event]) -> list[bytes]:
    writer = s2s.Connection(role, session)
    return [writer.send(event) for event in events]


def _feed(
    observer: s2s.Observer, direction: Direction, data: bytes, cuts: Sequence[int]
) -> list[object]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    out: list[object] = []
    for a, b in itertools.pairwise(points):
        if b > a:
            out += observer.observe(direction, data[a:b])
    return out


def test_frames_in_a_content_length_body_span_exactly_their_bytes() -> None:
    frames = _frames(Role.CLIENT, s2s.Session.APPEND, INPUTS)
    body = b"".join(frames)
    head = APPEND_HEAD + b"content-length: %d\r\n\r\n" % len(body)
    outputs = s2s.Observer().observe(C2S, head + body)
    request, *inputs = _observed(outputs, C2S)
    assert (request.start, request.end) == (0, len(head))
    starts = list(itertools.accumulate([len(head)] + [len(f) for f in frames]))
    assert [o.event for o in inputs] == INPUTS
    assert [(o.start, o.end) for o in inputs] == list(itertools.pairwise(starts))


@given(sizes=st.lists(st.integers(1, 120), max_size=12))
def test_frames_in_a_chunked_body_span_exactly_their_bytes(sizes: list[int]) -> None:
    frames = _frames(Role.CLIENT, s2s.Session.APPEND, INPUTS)
    head = APPEND_HEAD + b"transfer-encoding: chunked\r\n\r\n"
    body, where = _chunked(b"".join(frames), sizes)
    outputs = s2s.Observer().observe(C2S, head + body)
    request, *inputs = _observed(outputs, C2S)
    assert (request.start, request.end) == (0, len(head))
    assert [o.event for o in inputs] == INPUTS
    at = 0
    for frame, observed in zip(frames, inputs, strict=True):
        # First and last byte of the frame, wherever chunk framing put them.
        assert observed.start == len(head) + where[at]
        assert observed.end == len(head) + where[at + len(frame) - 1] + 1
        at += len(frame)


def test_pipelined_requests_in_one_chunk_span_their_own_heads() -> None:
    second = READ_HEAD.replace(b"/s/", b"/t/")
    outputs = s2s.Observer().observe(C2S, READ_HEAD + second)
    first_request = _observed(outputs, C2S)
    assert [(o.start, o.end) for o in first_request] == [(0, len(READ_HEAD))]
    refusal = (
        b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 27\r\n"
        b'\r\n{"code":"x","message":"no"}'
    )
    observer = s2s.Observer()
    outputs = [*observer.observe(C2S, READ_HEAD + second), *observer.observe(S2C, refusal * 2)]
    requests = _observed(outputs, C2S)
    assert [(o.start, o.end) for o in requests] == [
        (0, len(READ_HEAD)),
        (len(READ_HEAD), len(READ_HEAD) + len(second)),
    ]
    replies = _observed(outputs, S2C)
    assert [o.event for o in replies] == [s2s.ErrorResponse(404, "x", "no")] * 2
    assert [(o.start, o.end) for o in replies] == [
        (0, len(refusal)),
        (len(refusal), 2 * len(refusal)),
    ]


def _read_conversation() -> tuple[bytes, bytes]:
    server = s2s.Connection(Role.SERVER, s2s.Session.READ)
    server.advise_reconnect()
    batch = s2s.ReadBatch((s2s.SequencedRecord(0, 1, b"r" * 200),), POS(1, 1))
    frames = server.send(batch) + server.send(s2s.Heartbeat(POS(1, 2)))
    frames += server.send(s2s.Terminal(status=503))
    body, _ = _chunked(frames, [7, 100, 1, 50])
    return READ_HEAD, OK_HEAD + body


def test_a_message_spanning_many_chunks_gets_the_same_offsets() -> None:
    c2s, s2c = _read_conversation()
    whole = s2s.Observer()
    expected = [*whole.observe(C2S, c2s), *whole.observe(S2C, s2c)]
    bytewise = s2s.Observer()
    got = _feed(bytewise, C2S, c2s, range(len(c2s))) + _feed(bytewise, S2C, s2c, range(len(s2c)))
    assert got == expected
    events = [o.event for o in _observed(got, S2C)]
    assert isinstance(events[1], s2s.ReadBatch)
    assert events[2:] == [s2s.ReconnectAdvised(), s2s.Heartbeat(POS(1, 2)), s2s.Terminal(503)]
    ranges = [(o.start, o.end) for o in _observed(got, S2C)]
    assert ranges[0] == (0, len(OK_HEAD))
    assert ranges[2] == ranges[1]  # the flag of the frame that carried it


def test_a_broken_frame_is_reported_where_the_frame_starts() -> None:
    head = APPEND_HEAD + b"transfer-encoding: chunked\r\n\r\n"
    frame = _frames(Role.CLIENT, s2s.Session.APPEND, INPUTS[:1])[0]
    body, where = _chunked(frame + b"\x00\x00\x00\x00", [5])
    outputs = s2s.Observer().observe(C2S, head + body)
    error = outputs[-1]
    assert isinstance(error, ObservedError)
    assert error.start == len(head) + where[len(frame)]


def _conversation() -> tuple[bytes, bytes]:
    frames = _frames(Role.CLIENT, s2s.Session.APPEND, INPUTS)
    c2s = APPEND_HEAD + b"transfer-encoding: chunked\r\n\r\n" + _chunked(b"".join(frames), [9])[0]
    acks = [
        s2s.AppendAck(POS(0, 5), POS(1, 5), POS(1, 5)),
        s2s.AppendAck(POS(1, 6), POS(3, 6), POS(3, 6)),
        s2s.AppendAck(POS(3, 7), POS(4, 7), POS(4, 7)),
    ]
    server = s2s.Connection(Role.SERVER, s2s.Session.APPEND)
    server.receive_data(b"".join(frames))
    assert list(server.events()) == INPUTS
    reply = b"".join(server.send(ack) for ack in acks)
    s2c = OK_HEAD + _chunked(reply, [30, 2])[0]
    read_c2s, read_s2c = _read_conversation()
    return c2s + read_c2s, s2c + read_s2c


@given(
    cuts=st.lists(st.integers(min_value=0, max_value=1 << 16), max_size=10),
    picks=st.lists(st.booleans(), max_size=40),
)
def test_offsets_are_the_same_under_any_chunking_and_never_overlap(
    cuts: list[int], picks: list[bool]
) -> None:
    c2s, s2c = _conversation()
    reference = s2s.Observer()
    expected = [*reference.observe(C2S, c2s), *reference.observe(S2C, s2c)]
    observer = s2s.Observer()
    outputs = interleaved(observer, pieces(c2s, cuts), pieces(s2c, cuts[::-1]), picks)
    for direction in (C2S, S2C):
        got = _observed(outputs, direction)
        assert got == _observed(expected, direction)
        ranges = [(o.start, o.end) for o in got]
        assert all(start < end for start, end in ranges)
        distinct = sorted(set(ranges))  # a ReconnectAdvised repeats its frame's range
        assert distinct == list(dict.fromkeys(ranges))
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(distinct))
    assert len(_observed(outputs, C2S)) == 1 + len(INPUTS) + 1
