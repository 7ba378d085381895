"""``s3p_codec.testing.rustlog``'s client-side strategies checked against our client-role codec.

Every ``malformed_replies()`` case, served after its ``pending`` requests were sent, must make
our client raise exactly its status and fatality, whole and split anywhere (with the standard
library and the orjson backend alike); every ``reply_wire()`` must decode back to its response;
every category must really be produced.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import RemoteProtocolError, Role, rustlog
from s3p_codec.testing import MalformedReply, chunkings, live
from s3p_codec.testing import rustlog as cases
from tests.testing.support import assert_refused, feed

BACKENDS = ["json", "orjson"]


def _client(case: MalformedReply, json: str, limits: rustlog.Limits | None) -> rustlog.Connection:
    client = rustlog.Connection(Role.CLIENT, limits, pipelining=len(case.pending) > 1, json=json)
    for request in case.pending:
        client.send(request)  # type: ignore[arg-type]
    return client


def _client_error(
    case: MalformedReply,
    pieces: list[bytes],
    json: str = "json",
    limits: rustlog.Limits | None = None,
) -> RemoteProtocolError | None:
    return feed(_client(case, json, limits), pieces, end=case.half_close)[1]


@pytest.mark.parametrize("json", BACKENDS)
def test_every_malformed_reply_gets_its_error_from_our_client_codec(json: str) -> None:
    @given(cases.malformed_replies())
    def check(case: MalformedReply) -> None:
        assert case.reply is False
        assert_refused(case, _client_error(case, [case.data], json))

    check()


def test_malformed_replies_split_anywhere_get_the_same_error() -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases.malformed_replies())
        assert_refused(case, _client_error(case, data.draw(chunkings(case.data))))

    check()


def test_malformed_replies_follow_the_client_limits_given() -> None:
    limits = rustlog.Limits(max_frame_size=4096, max_record_size=100)

    @given(cases.malformed_replies(limits))
    def check(case: MalformedReply) -> None:
        assert_refused(case, _client_error(case, [case.data], limits=limits))

    check()
    labels = {case.label for case in live.draw(cases.malformed_replies(limits), 300, seed=3)}
    assert "record over the limit after base64" in labels


def test_after_a_recoverable_reply_the_connection_still_pairs_responses() -> None:
    @given(cases._reply_fields())
    def check(case: MalformedReply) -> None:
        client = _client(case, "json", None)
        client.receive_data(case.data)
        with pytest.raises(RemoteProtocolError):
            client.next_event()
        assert client.in_flight == 0  # the bad response answered its request
        client.send(rustlog.Ping())
        client.receive_data(b"\x00\x00\x00\x0f" + b'{"type":"Pong"}')
        assert client.next_event() == rustlog.Pong()

    check()


def test_reply_wire_decodes_back_to_the_response_whole_and_split() -> None:
    @given(cases.reply_wire(), st.data())
    def check(pair: tuple[rustlog.Response, bytes], data: st.DataObject) -> None:
        response, wire = pair
        for pieces in ([wire], data.draw(chunkings(wire))):
            client = rustlog.Connection(Role.CLIENT)
            got, error = feed(client, pieces, cases.requests_for(response))
            assert error is None, repr(error)
            assert got == [response]

    check()


CATEGORIES = [
    "frame length 0",
    "frame length over the limit (header only)",
    "frame length at the limit (header only), then end",
    "length header cut, then end",
    "frame length -1",
    "frame length +1",
    "invalid UTF-8",
    "JSON array root",
    "type is a number",
    "nesting deeper than 64 in an unknown field",
    "a request type as a response",
    "base_offset is a string",
    "missing record_count",
    "repeated field, the last one ill-typed",
    "repeated record offset",
    "response type does not answer the request",
    "a response with no request pending",
    "one response too many",
    "responses swapped",
    "frame cut by end of stream",
]


def test_every_category_is_generated() -> None:
    labels = {case.label for case in live.draw(cases.malformed_replies(), 1500, seed=3)}
    missing = [label for label in CATEGORIES if label not in labels]
    assert not missing
    # With the spec's limits a record can never outgrow its frame: no such case.
    assert "record over the limit after base64" not in labels
