"""``s3p_codec.testing.s2s`` against this library's own S2S codecs, both directions.

Cases one over a limit must get their error from our server-role codec, cases exactly at a
limit must be accepted, server frames must decode back in a client, and every malformed
response must get its error from our client-role codec, in one piece and split anywhere.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, RemoteProtocolError, Role, s2s
from s3p_codec.testing import Malformed, MalformedReply, Valid, chunkings, live
from s3p_codec.testing import s2s as cases
from tests.testing.support import assert_refused, feed

LIMITS = s2s.Limits()


def _server(pieces: Iterable[bytes]) -> tuple[list[object], RemoteProtocolError | None]:
    """Our server-role HTTP/1.1 codec fed ``pieces``: the events and the error raised."""
    conn = s2s.Http1Connection(Role.SERVER)
    events: list[object] = []
    try:
        for piece in pieces:
            conn.receive_data(piece)
            for event in conn.events():
                if isinstance(event, s2s.SessionRequest):
                    conn.send(s2s.SessionResponse())
                events.append(event)
    except RemoteProtocolError as exc:
        return events, exc
    return events, None


def _client(
    pieces: Iterable[bytes], pending: tuple[object, ...], *, end: bool = True
) -> tuple[list[object], RemoteProtocolError | None]:
    """Our client-role codec after sending ``pending``, fed ``pieces`` then (``end``) a close."""
    return feed(s2s.Http1Connection(Role.CLIENT, host="127.0.0.1"), pieces, pending, end=end)


def _refused_by_server(case: Malformed, pieces: Iterable[bytes]) -> None:
    _, error = _server(pieces)
    assert error is not None, f"{case.label}: accepted"
    assert error.code == case.code, f"{case.label}: {error!r}"
    assert error.fatal == case.fatal, f"{case.label}: {error!r}"
    assert isinstance(error.reply, s2s.Terminal), case.label
    assert error.reply.code == case.code, case.label


def _refused_by_client(case: MalformedReply, pieces: Iterable[bytes]) -> None:
    assert_refused(case, _client(pieces, case.pending, end=case.half_close)[1])


def _frame_of(data: bytes, head: bytes) -> bytes:
    """The S2S bytes of the first body chunk after ``head``."""
    size, _, rest = data[len(head) :].partition(b"\r\n")
    return rest[: int(size, 16)]


def _inflate(frame: bytes) -> bytes:
    payload = frame[4:]
    compression = (frame[3] >> 5) & 3
    if compression == 1:
        return bytes(
            zstandard.ZstdDecompressor().stream_reader(payload, read_across_frames=True).read()
        )
    if compression == 2:
        return gzip.decompress(payload)
    return payload


def _labels(strategy: st.SearchStrategy[Malformed | MalformedReply | Valid]) -> set[str]:
    return {case.label for case in live.draw(strategy, 400, seed=7)}


# --- server direction: limits -------------------------------------------------------------------


def test_every_limit_case_gets_its_error_from_our_server_codec() -> None:
    for case in cases._limits(LIMITS).elements:
        _refused_by_server(case, [case.data])


def test_limit_cases_split_anywhere_get_the_same_error() -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases._limits(LIMITS))
        _refused_by_server(case, data.draw(chunkings(case.data)))

    check()


def test_limit_cases_are_one_over_and_edge_cases_exactly_at_the_limits() -> None:
    for case in cases._limits(LIMITS).elements:
        frame = _frame_of(case.data, cases.HEAD)
        if "inflating" in case.label:
            assert len(_inflate(frame)) == LIMITS.max_payload + 1, case.label
    edges = {case.label: case for case in cases.edge_cases(LIMITS).elements}
    frame = _frame_of(edges["frame length exactly 2097152"].data, cases.HEAD)
    assert int.from_bytes(frame[:3], "big") == LIMITS.max_frame_length
    for label, case in edges.items():
        if "inflating" in label:
            assert len(_inflate(_frame_of(case.data, cases.HEAD))) == LIMITS.max_payload, label
    metered = edges["exactly 1048576 metered bytes"].event
    assert isinstance(metered, s2s.AppendInput)
    assert s2s.metered_bytes(metered.records) == LIMITS.max_append_bytes


def test_every_edge_case_is_accepted_by_our_server_codec_split_anywhere() -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases.edge_cases())
        events, error = _server(data.draw(chunkings(case.data)))
        assert error is None, f"{case.label}: {error!r}"
        assert events[-1] == case.event, case.label

    check()


def test_new_server_categories_are_produced_by_malformed_and_edge_cases() -> None:
    labels = _labels(cases.malformed())
    for part in ("one byte over the cap (size declared)", "no size declared", "gzip payload",
                 "two frames", "metered bytes", "over 2 MiB (header only)", "1001 records",
                 "bomb"):  # fmt: skip
        assert any(part in label for label in labels), part
    edges = _labels(cases.edge_cases())
    for part in ("frame length exactly", "zstd payload inflating to exactly",
                 "gzip payload inflating to exactly", "metered bytes", "1000 records"):  # fmt: skip
        assert any(part in label for label in edges), part


# --- client direction ------------------------------------------------------------------------


def _decoded(reply: s2s.Event, pieces: list[bytes]) -> None:
    requests = cases.requests_for(reply)
    first = requests[0]
    assert isinstance(first, s2s.SessionRequest)
    client = s2s.Connection(Role.CLIENT, first.session)
    for request in requests[1:]:
        client.send(request)
    for piece in pieces:
        client.receive_data(piece)
    if isinstance(reply, s2s.Terminal):
        with pytest.raises(s2s.SessionTerminated) as ended:
            client.next_event()
        assert ended.value.terminal == reply
    else:
        assert client.next_event() == reply
        assert client.next_event() is NEED_DATA


def test_reply_wire_decodes_back_to_the_event_whole_and_chunked() -> None:
    @given(cases.reply_wire(), st.data())
    def check(pair: tuple[s2s.Event, bytes], data: st.DataObject) -> None:
        reply, wire = pair
        _decoded(reply, [wire])
        _decoded(reply, data.draw(chunkings(wire)))

    check()


def test_reply_wire_uses_every_compression_and_every_server_frame() -> None:
    pairs = live.draw(cases.reply_wire(), 400, seed=3)
    compressions = {(wire[3] >> 5) & 3 for event, wire in pairs}
    assert compressions == {0, 1, 2}
    kinds = {type(event) for event, _ in pairs}
    assert kinds == {s2s.ReadBatch, s2s.Heartbeat, s2s.AppendAck, s2s.Terminal}


def test_acks_for_inputs_are_accepted_in_order_by_a_client_that_sent_them() -> None:
    @given(st.lists(cases.append_inputs(), min_size=1, max_size=4), st.data())
    def check(inputs: list[s2s.AppendInput], data: st.DataObject) -> None:
        acks = data.draw(cases.acks_for(inputs))
        assert [ack.end.seq_num - ack.start.seq_num for ack in acks] == [
            len(event.records) for event in inputs
        ]
        server = s2s.Connection(Role.SERVER, s2s.Session.APPEND)
        client = s2s.Connection(Role.CLIENT, s2s.Session.APPEND)
        server.receive_data(b"".join(client.send(event) for event in inputs))
        assert list(server.events()) == inputs
        client.receive_data(b"".join(server.send(ack) for ack in acks))
        assert list(client.events()) == acks

    check()


def test_the_live_target_sends_inputs_without_conditions() -> None:
    drawn = live.draw(cases.Target().valid(), 200, seed=1)
    sent = [case.event for case in drawn if isinstance(case.event, s2s.AppendInput)]
    assert sent
    for event in sent:
        assert event.match_seq_num is None
        assert event.fencing_token is None
        assert all(header.name for record in event.records for header in record.headers)
    wide = live.draw(cases.append_inputs(), 200, seed=1)
    assert any(event.match_seq_num is not None for event in wide)
    assert any(not h.name for event in wide for record in event.records for h in record.headers)


def _listed() -> list[MalformedReply]:
    return [
        *cases._reply_framing(LIMITS),
        *cases._reply_cuts(),
        *cases._reply_protobuf(),
        *cases._reply_orders(),
        *cases._reply_heads(),
    ]


def test_every_listed_malformed_reply_gets_its_error_from_our_client_codec() -> None:
    for case in _listed():
        assert case.reply is False
        assert isinstance(case.pending[0], s2s.SessionRequest)
        _refused_by_client(case, [case.data])


def test_malformed_replies_split_anywhere_get_the_same_error() -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases.malformed_replies())
        _refused_by_client(case, data.draw(chunkings(case.data)))

    check()


def test_every_reply_edge_case_is_accepted_by_our_client_codec() -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases.reply_edge_cases())
        events, error = _client(data.draw(chunkings(case.data)), (cases.READ_REQUEST,))
        assert error is None, f"{case.label}: {error!r}"
        assert case.event in events, case.label

    check()
    for case in cases.reply_edge_cases().elements:
        events, error = _client([case.data], (cases.READ_REQUEST,))
        assert error is None, f"{case.label}: {error!r}"
        assert case.event in events, case.label


def test_reply_categories_are_produced_by_malformed_replies() -> None:
    labels = _labels(cases.malformed_replies())
    for part in ("length -1 byte", "length +1 byte", "header only", "cut after byte",
                 "compression value 3", "bomb", "over the cap", "protobuf", "no records",
                 "no AppendInput pending", "before the first one's end", "unacknowledged",
                 "Content-Type", "terminal frame shorter"):  # fmt: skip
        assert any(part in label for label in labels), part


def test_cuts_cover_every_byte_of_every_sample_frame() -> None:
    cuts = [case for case in cases._reply_cuts() if "AppendAck" in case.label]
    frame = _frame_of(
        cases.RESPONSE_HEAD
        + b"%x\r\n" % len(cases._server_frames(cases._inputs(1), [cases._ack(0, 1)]))
        + cases._server_frames(cases._inputs(1), [cases._ack(0, 1)])
        + b"\r\n",
        cases.RESPONSE_HEAD,
    )
    assert len(cuts) == len(frame) - 1


def test_over_limit_reply_headers_come_without_their_payload() -> None:
    headers_only = [c for c in cases._reply_framing(LIMITS) if "header only" in c.label]
    assert len(headers_only) == 2
    for case in headers_only:
        assert len(_frame_of(case.data, cases.RESPONSE_HEAD)) == 3, case.label
        assert not case.half_close
