"""``s3p_codec.testing.s3p``'s client-side strategies checked against our client-role codec.

Every ``malformed_replies()`` case, served after its ``pending`` requests were sent, must make
our client raise exactly its code and fatality, whole and split anywhere; every
``reply_wire()`` must decode back to its reply; every category must really be produced.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, RemoteProtocolError, Role, s3p
from s3p_codec.testing import MalformedReply, chunkings, live
from s3p_codec.testing import s3p as cases
from tests.testing.support import assert_refused, feed


def _client_error(
    case: MalformedReply, pieces: list[bytes], limits: s3p.Limits | None = None
) -> RemoteProtocolError | None:
    client = s3p.Connection(Role.CLIENT, limits)
    return feed(client, pieces, case.pending, end=case.half_close)[1]


def test_every_malformed_reply_gets_its_error_from_our_client_codec() -> None:
    @given(cases.malformed_replies())
    def check(case: MalformedReply) -> None:
        assert case.reply is False
        assert_refused(case, _client_error(case, [case.data]))

    check()


def test_malformed_replies_split_anywhere_get_the_same_error() -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases.malformed_replies())
        assert_refused(case, _client_error(case, data.draw(chunkings(case.data))))

    check()


def test_malformed_replies_follow_the_client_limits_given() -> None:
    limits = s3p.Limits(max_record_size=10, default_count=2, max_count=3)

    @given(cases.malformed_replies(limits))
    def check(case: MalformedReply) -> None:
        assert_refused(case, _client_error(case, [case.data], limits))

    check()


def test_reply_wire_decodes_back_to_the_reply_whole_and_split() -> None:
    @given(cases.reply_wire(), st.data())
    def check(pair: tuple[s3p.Reply, bytes], data: st.DataObject) -> None:
        reply, wire = pair
        for pieces in ([wire], data.draw(chunkings(wire))):
            client = s3p.Connection(Role.CLIENT)
            got, error = feed(client, pieces, cases.requests_for(reply))
            assert error is None, repr(error)
            assert got == [reply]

    check()


@settings(max_examples=200)
@given(st.sampled_from(["0.1.0", "0.2.0"]), st.data())
def test_replies_for_a_request_are_accepted_by_a_client_that_sent_it(
    version: str, data: st.DataObject
) -> None:
    request = data.draw(cases.requests(version=version))
    reply = data.draw(cases.replies_for(request, version=version))
    assert not isinstance(reply, s3p.ErrorReply)
    server = s3p.Connection(Role.SERVER, version=version)
    client = s3p.Connection(Role.CLIENT, version=version)
    server.receive_data(client.send(request))
    assert server.next_event() == request
    client.receive_data(server.send(reply))
    assert client.next_event() == reply


def _read_replies_for(request: s3p.Read, version: str = "0.1.0") -> list[s3p.ReadReply]:
    drawn = live.draw(cases.replies_for(request, version=version), 300, seed=1)
    assert all(isinstance(reply, s3p.ReadReply) for reply in drawn)
    return [reply for reply in drawn if isinstance(reply, s3p.ReadReply)]


def test_replies_for_a_read_reach_its_bound_and_its_count() -> None:
    after = _read_replies_for(s3p.Read(b"s", 2, min_timestamp=s3p.Timestamp(7, 1)))
    stamps = {stamp for reply in after for stamp, _ in reply.records}
    assert s3p.Timestamp(7, 2) in stamps
    assert s3p.Timestamp(7, 1) not in stamps  # MIN_TIMESTAMP is exclusive
    assert max(len(reply.records) for reply in after) == 2  # COUNT bounds the reply
    inclusive = _read_replies_for(s3p.Read(b"s", min_id=s3p.Timestamp(7, 1)), "0.2.0")
    assert any(s3p.Timestamp(7, 1) in dict(reply.records) for reply in inclusive)


def test_conversations_pair_every_request_with_an_answer_of_its_version() -> None:
    for version in ("0.1.0", "0.2.0"):
        drawn = live.draw(cases.conversations(version=version), 200, seed=2)
        errors = [
            reply for talk in drawn for _, reply in talk[:-1] if isinstance(reply, s3p.ErrorReply)
        ]
        if version == "0.1.0":
            assert not errors  # v0.1.0 closes after any error: only the last reply may be one
        else:
            assert errors  # v0.2.0: recoverable errors anywhere, the connection goes on
            assert all(e.code is not s3p.ErrorCode.BAD_FORMAT for e in errors)
        assert any(isinstance(talk[-1][1], s3p.ErrorReply) for talk in drawn)


CATEGORIES = [
    "record length -1",
    "record length +1",
    "timestamp length -1",
    "timestamp length +1",
    "array length -1",
    "array length +1",
    "record length over the limit (header only)",
    "record length at the limit, then end",
    "timestamp length over the limit (header only)",
    "more records than COUNT (header only)",
    "records at COUNT, then end",
    "Error line over 4096 bytes (no CRLF yet)",
    "READ answered by +OK",
    "APPEND answered by an Array",
    "CREATE answered by a Bulk String",
    "invalid UTF-8 in a Simple String",
    "repeated timestamp",
    "timestamp without its record",
    "Array nested in a READ reply",
    "a reply with no request pending",
    "one reply too many",
    "replies swapped (+OK for READ)",
    "reply cut by end of stream",
]


def test_every_category_is_generated() -> None:
    labels = {case.label for case in live.draw(cases.malformed_replies(), 600, seed=3)}
    missing = [label for label in CATEGORIES if label not in labels]
    assert not missing


@settings(max_examples=30)
@given(cases._reply_truncated(s3p.Limits()))
def test_truncated_replies_are_cut_strictly_inside_a_reply(case: MalformedReply) -> None:
    assert case.half_close
    client = s3p.Connection(Role.CLIENT)
    client.send(case.pending[0])  # type: ignore[arg-type]
    client.receive_data(case.data)
    assert client.next_event() is NEED_DATA  # nothing complete before the end of stream
