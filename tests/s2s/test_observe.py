"""The Observer: S2S sessions decoded from both directions of captured HTTP/1.1 traffic."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import example, given
from hypothesis import strategies as st

from s3p_codec import Direction, Role, s2s
from s3p_codec._core import Observed, ObservedError, ObservedGap
from s3p_codec._core import Observer as ObserverProtocol
from s3p_codec.s2s._compression import Compression
from tests.observer_support import Damage, damaged_decoding, damages, interleaved, pieces

C2S, S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
POS = s2s.StreamPosition


def _append_conversation(compression: Compression) -> tuple[bytes, bytes, list[object]]:
    client = s2s.Http1Connection(Role.CLIENT, host="h")
    server = s2s.Http1Connection(Role.SERVER)
    request = s2s.SessionRequest(s2s.Session.APPEND, "s", accept=compression)
    inputs = [
        s2s.AppendInput((s2s.AppendRecord(b"x" * 1500),)),
        s2s.AppendInput((s2s.AppendRecord(b"y"),) * 2),
    ]
    c2s = client.send(request) + b"".join(client.send(i) for i in inputs)
    c2s += client.send(s2s.EndOfBody())
    server.receive_data(c2s)
    list(server.events())
    s2c = server.send(s2s.SessionResponse(compression))
    list(server.events())
    acks = [
        s2s.AppendAck(POS(0, 5), POS(1, 5), POS(1, 5)),
        s2s.AppendAck(POS(1, 6), POS(3, 6), POS(3, 6)),
    ]
    s2c += b"".join(server.send(a) for a in acks) + server.send(s2s.EndOfBody())
    return c2s, s2c, [request, *inputs, s2s.SessionResponse(compression), *acks]


def _events(outputs: Sequence[object]) -> list[object]:
    return [o.event for o in outputs if isinstance(o, Observed)]


def test_satisfies_the_observer_protocol() -> None:
    assert isinstance(s2s.Observer(), ObserverProtocol)


def test_append_session_in_http11_is_decoded_and_paired() -> None:
    for compression in Compression:
        c2s, s2c, expected = _append_conversation(compression)
        observer = s2s.Observer()
        outputs = [*observer.observe(C2S, c2s), *observer.observe(S2C, s2c)]
        assert _events(outputs) == expected
        assert {o.pair_id for o in outputs if isinstance(o, Observed)} == {0}
        directions = [o.direction for o in outputs if isinstance(o, Observed)]
        assert directions == [C2S, C2S, C2S, S2C, S2C, S2C]


@given(
    cuts=st.lists(st.integers(min_value=0, max_value=1 << 16), max_size=8),
    picks=st.lists(st.booleans(), max_size=40),
)
def test_any_chunking_and_interleaving_gives_the_same_events(
    cuts: list[int], picks: list[bool]
) -> None:
    c2s, s2c, expected = _append_conversation(Compression.GZIP)
    observer = s2s.Observer()
    outputs = interleaved(observer, pieces(c2s, cuts), pieces(s2c, cuts[::-1]), picks)
    # Each direction's events come out whole and in order (across directions, order follows
    # the interleaving of the capture).
    for direction, want in ((C2S, expected[:3]), (S2C, expected[3:])):
        got = [o.event for o in outputs if isinstance(o, Observed) and o.direction is direction]
        assert got == want


def test_read_session_with_terminal_frame_and_refused_session() -> None:
    observer = s2s.Observer()
    c2s = (
        b"GET /v1/streams/s/records?seq_num=0 HTTP/1.1\r\nhost: h\r\naccept: s2s/proto\r\n\r\n"
        b"GET /v1/streams/t/records HTTP/1.1\r\nhost: h\r\naccept: s2s/proto\r\n\r\n"
    )
    server = s2s.Connection(Role.SERVER, s2s.Session.READ)
    frames = server.send(s2s.Heartbeat(POS(0, 1))) + server.send(s2s.Terminal(status=503))
    chunk = f"{len(frames):x}\r\n".encode() + frames + b"\r\n0\r\n\r\n"
    s2c = (
        b"HTTP/1.1 200 OK\r\ncontent-type: s2s/proto\r\ntransfer-encoding: chunked\r\n\r\n"
        + chunk
        + b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 49\r\n"
        b"\r\n" + b'{"code":"stream_not_found","message":"no such s"}'
    )
    outputs = [*observer.observe(C2S, c2s), *observer.observe(S2C, s2c)]
    events = _events(outputs)
    assert events[0] == s2s.SessionRequest(s2s.Session.READ, "s", query=s2s.ReadQuery(seq_num=0))
    assert events[1:] == [
        s2s.SessionResponse(),
        s2s.Heartbeat(POS(0, 1)),
        s2s.Terminal(status=503),
        s2s.SessionRequest(s2s.Session.READ, "t"),
        s2s.ErrorResponse(404, "stream_not_found", "no such s"),
    ]
    pairs = [o.pair_id for o in outputs if isinstance(o, Observed)]
    assert pairs == [0, 0, 0, 0, 1, 1]


def test_rest_calls_are_skipped() -> None:
    observer = s2s.Observer()
    out = observer.observe(C2S, b"GET /v1/streams HTTP/1.1\r\nhost: h\r\n\r\n")
    out = [*out, *observer.observe(S2C, b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")]
    assert out == []


def test_broken_frame_is_an_error_and_the_direction_is_abandoned() -> None:
    observer = s2s.Observer()
    head = b"POST /v1/streams/s/records HTTP/1.1\r\nhost: h\r\ncontent-type: s2s/proto\r\n"
    out = observer.observe(
        C2S, head + b"transfer-encoding: chunked\r\n\r\n4\r\n\x00\x00\x00\x00\r\n"
    )
    assert isinstance(out[0], Observed)
    assert isinstance(out[1], ObservedError)
    assert out[1].error.code is s2s.ErrorCode.BAD_FRAME
    assert not out[1].resynchronized
    assert observer.observe(C2S, b"more") == []


def test_gap_abandons_the_direction() -> None:
    observer = s2s.Observer()
    assert observer.gap(C2S, 10) == [ObservedGap(C2S, 0, 10, resynchronized=False)]
    assert observer.observe(C2S, b"GET / HTTP/1.1\r\n\r\n") == []
    assert observer.gap(C2S, 5) == []


def test_offsets_do_not_depend_on_the_observe_calls() -> None:
    c2s, _, _ = _append_conversation(Compression.NONE)
    whole = s2s.Observer().observe(C2S, c2s)
    observer = s2s.Observer()
    split = [*observer.observe(C2S, c2s[:10]), *observer.observe(C2S, c2s[10:])]
    assert split == whole
    head_end = c2s.index(b"\r\n\r\n") + 4
    first = whole[0]
    assert isinstance(first, Observed)
    assert (first.start, first.end) == (0, head_end)


@given(data=st.binary(max_size=300), direction=st.sampled_from([C2S, S2C]))
def test_random_bytes_give_events_or_error_records_only(data: bytes, direction: Direction) -> None:
    observer = s2s.Observer()
    head = b"POST /v1/streams/s/records HTTP/1.1\r\nhost: h\r\ncontent-type: s2s/proto\r\n"
    observer.observe(C2S, head + b"transfer-encoding: chunked\r\n\r\n")
    outputs = [*observer.observe(direction, data), *observer.close(direction)]
    assert all(isinstance(o, Observed | ObservedError) for o in outputs)


@given(damages(cuts=st.sampled_from([0, 60, 125, 900]), garbage=st.binary(max_size=8)))
@example(  # a head over h11's 16 KiB bound: taken when it came whole, refused in pieces
    Damage(cut=0, gap=None, garbage=b"x-trace: " + b"a" * 20000 + b"\r\n", at=37, sizes=(1460,))
)
def test_a_damaged_request_stream_decodes_the_same_in_any_chunking(damage: Damage) -> None:
    # A broken chunked body is reported where the bytes h11 refused begin (the end of its last
    # event), not where h11 had read to: that depends on how the bytes came.
    stream = _append_conversation(Compression.NONE)[0]
    whole, split = damaged_decoding(s2s.Observer, stream, damage)
    assert split == whole


# Server-shaped garbage: a status line, a header line, chunk sizes, an S2S frame's length.
_SERVER_GARBAGE = st.binary(max_size=8) | st.sampled_from(
    [b"HTTP/1.1 200 OK\r\n", b"\r\n", b"0\r\n\r\n", b"5\r\n", b"\x00\x00\x05", b"a: b\r\n"]
)


@given(damages(garbage=_SERVER_GARBAGE))
@example(  # a head over h11's 16 KiB bound: taken when it came whole, refused in pieces
    Damage(cut=0, gap=None, garbage=b"x-trace: " + b"a" * 20000 + b"\r\n", at=15, sizes=(1460,))
)
def test_a_damaged_response_stream_decodes_the_same_in_any_chunking(damage: Damage) -> None:
    c2s, s2c, _ = _append_conversation(Compression.NONE)

    def make() -> s2s.Observer:
        """An Observer that saw the request (responses wait for the requests they answer)."""
        observer = s2s.Observer()
        observer.observe(C2S, c2s)
        return observer

    whole, split = damaged_decoding(make, s2c, damage, S2C)
    assert split == whole


def test_requests_piled_behind_an_unanswered_one_are_bounded_by_max_waiting() -> None:
    # HTTP/1.1 answers in order, so a request never answered holds the ones pipelined after
    # it; past ``max_waiting`` bytes the direction is given up with one error, its bytes gone.
    request = (
        b"GET /v1/streams/x/records?seq_num=0 HTTP/1.1\r\nHost: a\r\nAccept: s2s/proto\r\n\r\n"
    )
    observer = s2s.Observer(max_waiting=1000)
    first = observer.observe(Direction.CLIENT_TO_SERVER, request)
    assert [type(o) for o in first] == [Observed]
    burst = request * 30
    outputs = [o for _ in range(3) for o in observer.observe(Direction.CLIENT_TO_SERVER, burst)]
    errors = [o for o in outputs if isinstance(o, ObservedError)]
    assert len(errors) == 1
    assert "max_waiting" in errors[0].error.message
    assert errors[0].error.code is s2s.ErrorCode.INVALID
    assert not errors[0].resynchronized
    assert observer.observe(Direction.CLIENT_TO_SERVER, request * 30) == []
    restored = s2s.Observer.restore(observer.snapshot())  # nothing waits: the snapshot is small
    assert len(observer.snapshot()) < 16 * 1024
    assert restored.observe(Direction.CLIENT_TO_SERVER, request) == []


def test_max_waiting_defaults_to_64_mib() -> None:
    from s3p_codec.s2s._observer import MAX_WAITING

    assert MAX_WAITING == 64 << 20
