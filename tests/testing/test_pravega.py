"""``s3p_codec.testing.pravega`` against this library's own Pravega codecs, both directions.

Limit and aggregate-size cases must get their error from our server-role codec, edge cases
(exactly at a limit) must be accepted, replies must decode back, and every malformed reply must
get its error from our client-role codec, in one piece and split anywhere.
"""

from __future__ import annotations

import struct
import typing
import uuid
from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import RemoteProtocolError, Role, pravega
from s3p_codec.testing import Malformed, MalformedReply, Valid, chunkings, live
from s3p_codec.testing import pravega as cases
from tests.testing.support import assert_refused, feed

LIMITS = pravega.Limits()
SMALL = pravega.Limits(max_frame=4096, max_writers=3)


def _feed(
    conn: pravega.Connection,
    pieces: Iterable[bytes],
    pending: tuple[object, ...] = (),
    *,
    end: bool = True,
) -> tuple[list[object], RemoteProtocolError | None]:
    """Send ``pending``, feed ``pieces`` then (``end``) end of stream; the events and error."""
    return feed(conn, pieces, pending, end=end)


def _server_case(case: Malformed, pieces: Iterable[bytes], limits: pravega.Limits) -> None:
    assert_refused(
        case, _feed(pravega.Connection(Role.SERVER, limits), pieces, end=case.half_close)[1]
    )


def _client_case(case: MalformedReply, pieces: Iterable[bytes], limits: pravega.Limits) -> None:
    conn = pravega.Connection(Role.CLIENT, limits)
    assert_refused(case, _feed(conn, pieces, case.pending, end=case.half_close)[1])


def _labels(strategy: st.SearchStrategy[Malformed | MalformedReply | Valid]) -> set[str]:
    return {case.label for case in live.draw(strategy, 400, seed=7)}


# --- server direction: limits and aggregate sizes ----------------------------------------------


@pytest.mark.parametrize("limits", [LIMITS, SMALL], ids=["default", "small"])
def test_every_aggregate_case_gets_its_error_from_our_server_codec(limits: pravega.Limits) -> None:
    for case in cases._aggregates(limits).elements:
        _server_case(case, [case.data], limits)


def test_every_order_case_gets_its_error_whole_and_split() -> None:
    for case in cases._orders().elements:
        _server_case(case, [case.data], LIMITS)

    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases._orders())
        _server_case(case, data.draw(chunkings(case.data)), LIMITS)

    check()


def test_aggregate_cases_split_anywhere_get_the_same_error() -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases._aggregates(SMALL))
        _server_case(case, data.draw(chunkings(case.data)), SMALL)

    check()


def test_over_limit_lengths_are_refused_from_the_header_alone() -> None:
    for case in cases._aggregates(LIMITS).elements:
        if "header only" in case.label:
            assert len(case.data) == len(cases.HELLO) + len(cases.SETUP) + 8, case.label


@pytest.mark.parametrize("limits", [LIMITS, SMALL], ids=["default", "small"])
def test_every_edge_case_is_accepted_by_our_server_codec(limits: pravega.Limits) -> None:
    for case in cases.edge_cases(limits).elements:
        events, error = _feed(pravega.Connection(Role.SERVER, limits), [case.data])
        assert error is None, f"{case.label}: {error!r}"
        assert events[-1] == case.event, case.label


def test_edge_cases_split_anywhere_are_accepted() -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases.edge_cases(SMALL))
        events, error = _feed(
            pravega.Connection(Role.SERVER, SMALL), data.draw(chunkings(case.data))
        )
        assert error is None, f"{case.label}: {error!r}"
        assert events[-1] == case.event

    check()


def test_edge_cases_sit_exactly_at_the_limits() -> None:
    by_label = {case.label: case for case in cases.edge_cases(SMALL).elements}
    at_frame = by_label["payload exactly at the frame limit (KeepAlive)"].data
    assert len(at_frame) == len(cases.HELLO) + 8 + SMALL.max_frame
    block = by_label["AppendBlock exactly at the frame limit"].data[len(cases.HELLO) :]
    block = block[len(cases.SETUP) :]
    assert int.from_bytes(block[4:8], "big") == SMALL.max_frame
    events, error = _feed(
        pravega.Connection(Role.SERVER, SMALL), [by_label["exactly max_writers (3) writers"].data]
    )
    assert error is None
    assert sum(isinstance(e, pravega.SetupAppend) for e in events) == SMALL.max_writers
    (over,) = [c for c in cases._aggregates(SMALL).elements if "max_writers" in c.label]
    events, error = _feed(pravega.Connection(Role.SERVER, SMALL), [over.data])
    assert error is not None
    assert sum(isinstance(e, pravega.SetupAppend) for e in events) == SMALL.max_writers


def test_new_server_categories_are_produced_by_malformed_and_edge_cases() -> None:
    labels = _labels(cases.malformed(SMALL))
    parts = ("header only", "sizeOfWholeEvents", "numEvents", "max_writers", "dataLen",
             "PARTIAL_EVENT declares", "Event length", "lastEventNumber goes back",
             "directly after an AppendBlock", "another writer",
             "inside an append block")  # fmt: skip
    for part in parts:
        assert any(part in label for label in labels), part
    edges = _labels(cases.edge_cases(SMALL))
    for part in ("exactly at the frame limit", "exactly max_writers", "split"):
        assert any(part in label for label in edges), part
    assert any("65535" in case.label for case in cases.edge_cases(LIMITS).elements)


# --- client direction ------------------------------------------------------------------------


def test_reply_wire_decodes_back_to_the_reply_whole_and_chunked() -> None:
    @given(cases.reply_wire(), st.data())
    def check(pair: tuple[pravega.Command, bytes], data: st.DataObject) -> None:
        reply, wire = pair
        for pieces in ([wire], data.draw(chunkings(wire))):
            client = pravega.Connection(Role.CLIENT)
            for request in cases.requests_for(reply):
                client.send(request)
            events, error = _feed(client, pieces)
            assert error is None, repr(error)
            assert events == [reply]

    check()


def test_every_listed_malformed_reply_gets_its_error_from_our_client_codec() -> None:
    listed = [*cases._reply_framing(LIMITS), *cases._reply_strings(), *cases._cut_replies()]
    for case in listed:
        assert case.reply is False
        assert isinstance(case.pending[0], pravega.Hello)
        _client_case(case, [case.data], LIMITS)


def test_malformed_replies_split_anywhere_get_the_same_error() -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases.malformed_replies())
        _client_case(case, data.draw(chunkings(case.data)), LIMITS)

    check()


def test_malformed_replies_respect_smaller_limits() -> None:
    @given(cases.malformed_replies(SMALL))
    def check(case: MalformedReply) -> None:
        _client_case(case, [case.data], SMALL)

    check()


def test_every_reply_edge_case_is_accepted_by_our_client_codec() -> None:
    for limits in (LIMITS, SMALL):
        for case in cases.reply_edge_cases(limits).elements:
            pending = cases.requests_for(case.event)  # type: ignore[arg-type]
            events, error = _feed(pravega.Connection(Role.CLIENT, limits), [case.data], pending)
            assert error is None, f"{case.label}: {error!r}"
            assert events[-1] == case.event, case.label


def test_reply_categories_are_produced_by_malformed_replies() -> None:
    labels = _labels(cases.malformed_replies(SMALL))
    for part in ("length -1 byte", "length +1 byte", "header only", "cut after", "cut by end",
                 "modified UTF-8", "type code", "sent to a client", "incompatible Hello",
                 "dataLen"):  # fmt: skip
        assert any(part in label for label in labels), part
    # every field boundary of every sample, header included
    cut = {label for label in labels if "cut after" in label}
    assert any("cut after length," in label for label in cut)
    assert any("cut after half of the type code" in label for label in cut)


def test_client_codec_refuses_an_ack_for_a_writer_it_never_set_up() -> None:
    client = pravega.Connection(Role.CLIENT)
    client.send(pravega.Hello())
    ack = pravega.Connection(Role.SERVER).send(pravega.DataAppended(uuid.UUID(int=7), 0))
    client.receive_data(cases.HELLO + ack)
    assert client.next_event() == pravega.Hello()
    with pytest.raises(RemoteProtocolError):
        client.next_event()


def test_over_limit_reply_headers_come_without_their_payload() -> None:
    headers_only = [c for c in cases._reply_framing(LIMITS) if "header only" in c.label]
    assert len(headers_only) == 2
    for case in headers_only:
        assert len(case.data) == len(cases.HELLO) + 8, case.label
        assert not case.half_close  # refused before any payload, no end of stream needed


# --- commands(): every typed command, whole wire ranges ---------------------------------------


def test_commands_draw_every_typed_command_and_only_those_asked_for() -> None:
    typed = set(typing.get_args(pravega.Command))
    assert {type(c) for c in live.draw(cases.commands(), 800, seed=1)} == typed
    seals = live.draw(cases.commands(pravega.SealSegment, pravega.Hello), 50, seed=1)
    assert {type(c) for c in seals} == {pravega.SealSegment, pravega.Hello}
    assert any(c.request_id < 0 for c in seals if isinstance(c, pravega.SealSegment))
    with pytest.raises(ValueError, match="typed"):
        cases.commands(pravega.Opaque)  # type: ignore[arg-type]


def test_every_drawn_command_encodes_to_a_frame_of_its_type() -> None:
    # Decoding back is tests/pravega/test_wire.py's round trip, class by class.
    @given(cases.commands())
    def check(command: pravega.Command) -> None:
        wire = pravega.encode(command)
        code, length = struct.unpack_from(">ii", wire)
        assert code == int(command.TYPE)
        assert length == len(wire) - 8

    check()
