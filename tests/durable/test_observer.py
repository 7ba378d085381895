"""The Observer: both directions of a recorded conversation, paired, in any chunking."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from s3p_codec import Direction, Role, durable
from s3p_codec._core.observe import Observed, ObservedError, ObservedGap
from s3p_codec.durable import ErrorCode, LiveMode
from tests.observer_support import Damage, damaged_decoding, damages

C2S, S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
OFFSET = "0000000000000000_0000000000000005"


def conversation() -> tuple[list[bytes], list[bytes], list[object]]:
    """Requests and responses of one connection, as bytes per direction, and all the events."""
    cli, srv = durable.Connection(Role.CLIENT), durable.Connection(Role.SERVER)
    plan: list[tuple[durable.Request, list[object]]] = [
        (durable.Create("/s", body=b"hi"), [durable.Created(OFFSET, "text/plain")]),
        (durable.Append("/s", b"x", "text/plain"), [durable.Appended(OFFSET)]),
        (
            durable.Read("/s", "-1", LiveMode.SSE),
            [
                durable.SSEStart(),
                durable.SSEData(b"hix"),
                durable.SSEControl(OFFSET, cursor="1", up_to_date=True),
                durable.SSEEnd(),
            ],
        ),
        (durable.Head("/nope"), [durable.ErrorResponse(ErrorCode.NOT_FOUND)]),  # HEAD: no body
    ]  # fmt: skip
    up: list[bytes] = []
    down: list[bytes] = []
    events: list[object] = []
    for request, responses in plan:
        up.append(cli.send(request))
        srv.receive_data(up[-1])
        assert srv.next_event() == request
        events.append(request)
        down.append(b"".join(srv.send(r) for r in responses))  # type: ignore[arg-type]
        cli.receive_data(down[-1])
        assert list(cli.events()) == responses
        events.extend(responses)
    return up, down, events


def test_a_conversation_is_decoded_and_paired() -> None:
    up, down, events = conversation()
    observer = durable.Observer()
    out = []
    for request_bytes, response_bytes in zip(up, down, strict=True):
        out += observer.observe(C2S, request_bytes)
        out += observer.observe(S2C, response_bytes)
    assert all(isinstance(o, Observed) for o in out)
    observed = [o for o in out if isinstance(o, Observed)]
    assert [o.event for o in observed] == events
    requests = [o for o in observed if o.direction is C2S]
    assert [o.pair_id for o in requests] == [0, 1, 2, 3]
    sse_pairs = {
        o.pair_id for o in observed if isinstance(o.event, durable.SSEData | durable.SSEEnd)
    }
    assert sse_pairs == {2}


@given(st.lists(st.integers(1, 900), max_size=8), st.booleans())
def test_any_chunking_and_interleaving_gives_the_same_events(
    cuts: list[int], requests_first: bool
) -> None:
    up, down, events = conversation()
    up_bytes, down_bytes = b"".join(up), b"".join(down)
    observer = durable.Observer()
    out = []
    directions = [(C2S, up_bytes), (S2C, down_bytes)]
    if not requests_first:
        directions.reverse()  # responses seen before their requests wait for them
    for direction, data in directions:
        points = sorted({c for c in cuts if c < len(data)})
        for start, end in zip([0, *points], [*points, len(data)], strict=True):
            out += observer.observe(direction, data[start:end])
    observed = [o.event for o in out if isinstance(o, Observed)]
    assert sorted(map(repr, observed)) == sorted(map(repr, events))
    responses = [o.event for o in out if isinstance(o, Observed) and o.direction is S2C]
    assert responses == [e for e in events if not isinstance(e, durable.Request)]


def test_a_rejected_request_is_an_error_and_decoding_continues() -> None:
    observer = durable.Observer()
    bad = b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"  # empty body, no close
    good = b"HEAD /s HTTP/1.1\r\nHost: x\r\n\r\n"
    out = list(observer.observe(C2S, bad + good))
    assert isinstance(out[0], ObservedError)
    assert out[0].resynchronized
    assert isinstance(out[1], Observed)
    assert out[1].event == durable.Head("/s")
    answer = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 3\r\n\r\nbad"
    answer += b"HTTP/1.1 200 OK\r\nStream-Next-Offset: " + OFFSET.encode() + b"\r\n\r\n"
    replies = [o for o in observer.observe(S2C, answer) if isinstance(o, Observed)]
    assert [r.event for r in replies] == [
        durable.ErrorResponse(ErrorCode.BAD_REQUEST, "bad"),
        durable.StreamInfo(OFFSET),
    ]
    assert [r.pair_id for r in replies] == [0, 1]


def test_broken_framing_or_a_gap_abandons_the_direction() -> None:
    observer = durable.Observer()
    (error,) = observer.observe(C2S, b"NOT HTTP\r\n\r\n")
    assert isinstance(error, ObservedError)
    assert not error.resynchronized
    assert observer.observe(C2S, b"HEAD /s HTTP/1.1\r\nHost: x\r\n\r\n") == []
    (gap,) = observer.gap(S2C, 10)
    assert isinstance(gap, ObservedGap)
    assert observer.observe(S2C, b"HTTP/1.1 200 OK\r\n\r\n") == []


def test_close_of_a_direction_ends_a_close_delimited_sse_body() -> None:
    observer = durable.Observer()
    observer.observe(C2S, b"GET /s?offset=-1&live=sse HTTP/1.1\r\nHost: x\r\n\r\n")
    body = b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: data\ndata: x\n\n"
    first = [o.event for o in observer.observe(S2C, body) if isinstance(o, Observed)]
    assert first == [durable.SSEStart(), durable.SSEData(b"x")]
    last = [o.event for o in observer.close(S2C) if isinstance(o, Observed)]
    assert last == [durable.SSEEnd()]


@given(damages())
def test_a_damaged_request_stream_decodes_the_same_in_any_chunking(damage: Damage) -> None:
    whole, split = damaged_decoding(durable.Observer, b"".join(conversation()[0]), damage)
    assert split == whole


# Server-shaped garbage: a status line, a header line, a chunk size, an SSE line, bare line ends.
_GARBAGE = st.binary(max_size=12) | st.sampled_from(
    [b"HTTP/1.1 200", b"\r\n", b"\n", b"0\r\n\r\n", b"5\r\nevent", b"data: x\n\n", b"X: y\r\n"]
)


@given(damages(garbage=_GARBAGE))
@example(  # a chunk-size line over h11's bound: taken when given whole in a body slice
    damage=Damage(cut=0, gap=None, garbage=b";x=" + b"a" * 66_000, at=1429, sizes=(1460,))
)
def test_a_damaged_response_stream_decodes_the_same_in_any_chunking(damage: Damage) -> None:
    up, down, _ = conversation()

    def make() -> durable.Observer:
        """An Observer that saw the requests (responses wait for the requests they answer)."""
        observer = durable.Observer()
        observer.observe(C2S, b"".join(up))
        return observer

    whole, split = damaged_decoding(make, b"".join(down), damage, S2C)
    assert split == whole
