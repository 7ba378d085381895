"""The Observer: pairing by order and type, recovery after errors and gaps."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import Direction, Role, rustlog
from s3p_codec._core import Observed, ObservedError, ObservedGap
from s3p_codec._core.connection import Observer as ObserverProtocol
from tests.observer_support import Damage, damaged_decoding, damages
from tests.rustlog.frames import frame

C2S = Direction.CLIENT_TO_SERVER
S2C = Direction.SERVER_TO_CLIENT
PING = frame({"type": "Ping"})
PONG = frame({"type": "Pong"})
LIST = frame({"type": "ListTopics"})
LISTED = frame({"type": "ListTopicsResponse", "topics": []})


def test_observer_satisfies_the_core_protocol() -> None:
    assert isinstance(rustlog.Observer(), ObserverProtocol)


def test_requests_and_responses_pair_in_order_with_offsets() -> None:
    observer = rustlog.Observer()
    out = observer.observe(C2S, PING + LIST)
    assert out == [
        Observed(C2S, rustlog.Ping(), 0, len(PING), 0),
        Observed(C2S, rustlog.ListTopics(), len(PING), len(PING) + len(LIST), 1),
    ]
    out = observer.observe(S2C, PONG + LISTED)
    assert [(o.event, o.pair_id) for o in out] == [  # type: ignore[union-attr]
        (rustlog.Pong(), 0),
        (rustlog.ListTopicsResponse(()), 1),
    ]


def test_a_response_pairs_with_the_oldest_request_of_its_type() -> None:
    # The Pong to the first Ping was lost in the capture: ListTopicsResponse still pairs right.
    observer = rustlog.Observer()
    observer.observe(C2S, PING + LIST)
    (listed,) = observer.observe(S2C, LISTED)
    assert isinstance(listed, Observed)
    assert listed.pair_id == 1
    (late,) = observer.observe(S2C, PONG)
    assert isinstance(late, Observed)
    assert late.pair_id is None


def test_an_error_response_pairs_with_the_oldest_request() -> None:
    observer = rustlog.Observer()
    observer.observe(C2S, PING)
    (error,) = observer.observe(S2C, frame({"type": "Error", "code": 500, "message": "x"}))
    assert isinstance(error, Observed)
    assert error.pair_id == 0


def test_recoverable_error_is_reported_and_decoding_goes_on() -> None:
    observer = rustlog.Observer()
    bad = frame({"type": "Fetch"})
    out = observer.observe(C2S, bad + PING)
    assert isinstance(out[0], ObservedError)
    assert not out[0].error.fatal
    assert (out[0].start, out[0].skipped, out[0].resynchronized) == (0, len(bad), True)
    assert out[1] == Observed(C2S, rustlog.Ping(), len(bad), len(bad) + len(PING), 0)
    # The server's Error answers the bad request, so the Pong still pairs with the Ping.
    error = frame({"type": "Error", "code": 400, "message": "bad", "details": None})
    replies = observer.observe(S2C, error + PONG)
    assert [o.pair_id for o in replies] == [None, 0]  # type: ignore[union-attr]


def test_fatal_error_resynchronises_at_a_plausible_header() -> None:
    observer = rustlog.Observer()
    junk = b"\x00\x00\x00\x05junk!"
    out = observer.observe(C2S, junk + b"\xff\xff" + PING)
    assert isinstance(out[0], ObservedError)
    assert out[0].error.fatal
    assert out[0].start == 0
    assert out[0].skipped == len(junk) + 2
    assert out[0].resynchronized
    assert out[1] == Observed(C2S, rustlog.Ping(), len(junk) + 2, len(junk) + 2 + len(PING), 0)


def test_oversized_length_resynchronises() -> None:
    observer = rustlog.Observer()
    out = observer.observe(C2S, b"\xff\xff\xff\xff" + PING)
    assert isinstance(out[0], ObservedError)
    assert out[0].skipped == 4
    assert isinstance(out[1], Observed)


def test_a_gap_inside_a_known_frame_resynchronises_exactly() -> None:
    observer = rustlog.Observer()
    observer.observe(C2S, PING)
    cut = LIST[:6]
    assert observer.observe(C2S, cut) == []
    lost = len(LIST) - 6 - 3
    (gap,) = observer.gap(C2S, lost)
    assert gap == ObservedGap(C2S, len(PING) + 6, lost, resynchronized=True)
    out = observer.observe(C2S, LIST[-3:] + PING)
    assert out == [Observed(C2S, rustlog.Ping(), len(PING) + len(LIST),
                            2 * len(PING) + len(LIST), 1)]  # fmt: skip
    # The lost request still takes the answer meant for it, so the last Pong pairs right.
    replies = observer.observe(S2C, PONG + LISTED + PONG)
    assert [o.pair_id for o in replies] == [0, None, 1]  # type: ignore[union-attr]


def test_a_gap_that_loses_the_boundary_scans_for_the_next_frame() -> None:
    observer = rustlog.Observer()
    observer.observe(C2S, PING[:2])
    (gap,) = observer.gap(C2S, 100)
    assert isinstance(gap, ObservedGap)
    assert not gap.resynchronized
    out = observer.observe(C2S, b"tail of something}" + PING)
    assert isinstance(out[0], ObservedError)
    assert out[0].resynchronized
    assert out[0].start == 102
    assert out[0].skipped == len(b"tail of something}")
    assert isinstance(out[1], Observed)
    assert out[1].start == 102 + len(b"tail of something}")


def test_close_mid_frame_and_while_scanning_are_reported() -> None:
    observer = rustlog.Observer()
    observer.observe(C2S, PING[:-1])
    (error,) = observer.close(C2S)
    assert isinstance(error, ObservedError)
    assert not error.resynchronized
    assert observer.observe(C2S, PING) == []  # closed
    observer.observe(S2C, b"\x00\x00\x00\x00garbage")
    (abandoned,) = observer.close(S2C)
    assert isinstance(abandoned, ObservedError)
    assert not abandoned.resynchronized
    assert abandoned.skipped == len(b"\x00\x00\x00\x00garbage")


def test_clean_close_reports_nothing() -> None:
    observer = rustlog.Observer()
    observer.observe(C2S, PING)
    assert observer.close(C2S) == []


def test_a_gap_while_scanning_counts_into_the_bytes_skipped() -> None:
    observer = rustlog.Observer()
    observer.observe(C2S, b"\x00\x00\x00\x00abc")  # empty frame: fatal, scanning from byte 1
    (gap,) = observer.gap(C2S, 10)
    assert isinstance(gap, ObservedGap)
    assert not gap.resynchronized
    out = observer.observe(C2S, b"xyz" + PING)
    assert isinstance(out[0], ObservedError)
    assert out[0].start == 0
    assert out[0].resynchronized
    # 7 bytes before the gap, 10 lost in it, 3 after it: the Ping starts at 20.
    assert out[0].skipped == 20
    assert out[1] == Observed(C2S, rustlog.Ping(), 20, 20 + len(PING), 0)


PRODUCE = frame({"type": "Produce", "topic": "t", "partition": 0, "records": ["aGk=", "e30="]})
# Records are base64 strings; objects make the request refused (a recoverable error mid-stream).
REFUSED = frame({"type": "Produce", "topic": "t", "partition": 0, "records": [{"value": "aGk="}]})


def test_the_damaged_stream_holds_a_valid_and_a_refused_produce() -> None:
    observer = rustlog.Observer()
    out = list(observer.observe(C2S, PING + LIST + PRODUCE + REFUSED + PING))
    assert [type(o) for o in out] == [Observed, Observed, Observed, ObservedError, Observed]
    assert out[2].event == rustlog.Produce("t", 0, (b"hi", b"{}"))  # type: ignore[union-attr]


@given(damages())
def test_a_damaged_stream_decodes_the_same_in_any_chunking(damage: Damage) -> None:
    stream = PING + LIST + PRODUCE + REFUSED + PING
    whole, split = damaged_decoding(rustlog.Observer, stream, damage)
    assert split == whole


def responses() -> bytes:
    """A server's answers to Ping, Fetch, ListTopics, Produce, MetricsFetch and Ping, as its
    connection sends them (one of them an Error; objects nested in the metrics)."""
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    server = rustlog.Connection(Role.SERVER)
    requests = (
        rustlog.Ping(),
        rustlog.Fetch("g", "t", 0, 0, 1000),
        rustlog.ListTopics(),
        rustlog.Produce("t", 0, (b"hi",)),
        rustlog.MetricsFetch(),
        rustlog.Ping(),
    )
    server.receive_data(b"".join(client.send(request) for request in requests))
    list(server.events())
    records = (rustlog.Record(0, 1700000000000000, b"hi"), rustlog.Record(1, 1, b"{}"))
    return b"".join(
        server.send(response)
        for response in (
            rustlog.Pong(),
            rustlog.FetchResponse(records, 2),
            rustlog.ListTopicsResponse((rustlog.TopicInfo("t", 3),)),
            rustlog.Error(404, "no such topic: {t}", {"topic": "t"}),
            rustlog.MetricsFetchResponse({"frames": {"in": 4, "out": [2, {}]}, "x": "\\u0000{"}),
            rustlog.Pong(),
        )
    )


# Server-shaped garbage: a header whose payload opens like an object, a bare object, a length.
_GARBAGE = st.binary(max_size=12) | st.sampled_from(
    [b"\x00\x00\x00\x02{}", b"\x00\x00\x00\x10{", b'{"type":"Pong"}', b"}", b"\x00\x00\x00"]
)


@given(damages(garbage=_GARBAGE))
def test_a_damaged_response_stream_decodes_the_same_in_any_chunking(damage: Damage) -> None:
    whole, split = damaged_decoding(rustlog.Observer, responses(), damage, S2C)
    assert split == whole
