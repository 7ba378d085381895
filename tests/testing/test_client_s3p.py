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


def _client_error(
    case: MalformedReply, pieces: list[bytes], limits: s3p.Limits | None = None
) -> RemoteProtocolError | None:
    client = s3p.Connection(Role.CLIENT, limits)
    for request in case.pending:
        assert isinstance(request, s3p.Create | s3p.Append | s3p.Read | s3p.Trim | s3p.Delete)
        client.send(request)
    try:
        for piece in pieces:
            client.receive_data(piece)
            while client.next_event() is not NEED_DATA:
                pass
        if case.half_close:
            client.receive_data(b"")
            while client.next_event() is not NEED_DATA:
                pass
    except RemoteProtocolError as exc:
        return exc
    return None


def _assert_refused(case: MalformedReply, error: RemoteProtocolError | None) -> None:
    assert error is not None, f"{case.label}: accepted {case.data[:80]!r}"
    assert error.code == case.code, f"{case.label}: {error!r}"
    assert error.fatal == case.fatal, f"{case.label}: {error!r}"
    assert error.reply is None  # a client closes; it owes the server nothing


def test_every_malformed_reply_gets_its_error_from_our_client_codec() -> None:
    @given(cases.malformed_replies())
    def check(case: MalformedReply) -> None:
        assert case.reply is False
        _assert_refused(case, _client_error(case, [case.data]))

    check()


def test_malformed_replies_split_anywhere_get_the_same_error() -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases.malformed_replies())
        _assert_refused(case, _client_error(case, data.draw(chunkings(case.data))))

    check()


def test_malformed_replies_follow_the_client_limits_given() -> None:
    limits = s3p.Limits(max_record_size=10, default_count=2, max_count=3)

    @given(cases.malformed_replies(limits))
    def check(case: MalformedReply) -> None:
        _assert_refused(case, _client_error(case, [case.data], limits))

    check()


def test_reply_wire_decodes_back_to_the_reply_whole_and_split() -> None:
    @given(cases.reply_wire(), st.data())
    def check(pair: tuple[s3p.Reply, bytes], data: st.DataObject) -> None:
        reply, wire = pair
        for pieces in ([wire], data.draw(chunkings(wire))):
            client = s3p.Connection(Role.CLIENT)
            for request in cases.requests_for(reply):
                client.send(request)
            got = []
            for piece in pieces:
                client.receive_data(piece)
                got.extend(client.events())
            assert got == [reply]

    check()


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
