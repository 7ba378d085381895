"""``s3p_codec.testing.durable``'s client-side strategies checked against our client codec.

Every ``malformed_replies()`` case, served after its ``pending`` request was sent, must make
our client raise exactly its code and fatality, whole and split anywhere; every
``response_wire()`` must decode back to its events; every category must really be produced.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import RemoteProtocolError, Role, durable
from s3p_codec.testing import MalformedReply, chunkings, live
from s3p_codec.testing import durable as cases
from tests.testing.support import assert_refused, feed

SMALL = durable.Limits(
    max_body_size=2048, max_header_size=2048, max_sse_line=4096, max_sse_event=8192
)
"""Small enough that the cases aimed at the SSE line and event bounds are generated."""


def _client(case: MalformedReply, limits: durable.Limits | None) -> durable.Connection:
    client = durable.Connection(Role.CLIENT, limits, host="127.0.0.1")
    for request in case.pending:
        client.send(request)  # type: ignore[arg-type]
    return client


def _client_error(
    case: MalformedReply, pieces: list[bytes], limits: durable.Limits | None = None
) -> RemoteProtocolError | None:
    return feed(_client(case, limits), pieces, end=case.half_close)[1]


@pytest.mark.parametrize("limits", [None, SMALL], ids=["default", "small"])
def test_every_malformed_reply_gets_its_error_from_our_client_codec(
    limits: durable.Limits | None,
) -> None:
    @given(cases.malformed_replies(limits))
    def check(case: MalformedReply) -> None:
        assert case.reply is False
        assert len(case.pending) <= 1  # one exchange at a time
        assert_refused(case, _client_error(case, [case.data], limits))

    check()


@pytest.mark.parametrize("limits", [None, SMALL], ids=["default", "small"])
def test_malformed_replies_split_anywhere_get_the_same_error(
    limits: durable.Limits | None,
) -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases.malformed_replies(limits))
        assert_refused(case, _client_error(case, data.draw(chunkings(case.data)), limits))

    check()


def test_after_a_recoverable_reply_the_connection_serves_the_next_exchange() -> None:
    @given(cases._reply_headers())
    def check(case: MalformedReply) -> None:
        client = _client(case, None)
        client.receive_data(case.data)
        with pytest.raises(RemoteProtocolError):
            list(client.events())
        assert client.state is durable.ConnectionState.IDLE
        wire = client.send(durable.Delete(cases.STREAM))
        server = durable.Connection(Role.SERVER)
        server.receive_data(wire)
        assert server.next_event() == durable.Delete(cases.STREAM)
        client.receive_data(server.send(durable.Deleted()))
        assert list(client.events()) == [durable.Deleted()]

    check()


def test_response_wire_decodes_back_to_its_events_whole_and_split() -> None:
    @given(cases.response_wire(), st.data())
    def check(
        triple: tuple[durable.Request, cases.ClientEvents, bytes], data: st.DataObject
    ) -> None:
        request, events, wire = triple
        assert cases.reply_wire is cases.response_wire
        for pieces in ([wire], data.draw(chunkings(wire))):
            client = durable.Connection(Role.CLIENT, host="127.0.0.1")
            client.send(request)
            got = []
            for piece in pieces:
                client.receive_data(piece)
                got.extend(client.events())
            assert tuple(got) == events
            assert client.state is durable.ConnectionState.IDLE

    check()


def test_responses_cover_every_response_kind() -> None:
    # Stream answers come from ``responses()``; subscription answers (sections 6-7) come paired
    # with their requests from ``subscription_exchanges()``: together, every kind.
    kinds = {type(r) for r in live.draw(cases.responses(), 400, seed=5)}
    kinds |= {type(a) for _, a in live.draw(cases.subscription_exchanges(), 400, seed=5)}
    # A webhook receiver's answer is the one kind no strategy draws yet: a server receives it,
    # it never answers a client's request (tests/durable/test_subscriptions.py round-trips it).
    kinds.add(durable.WebhookReply)
    assert kinds == set(durable.Response.__args__)  # type: ignore[attr-defined]


def test_response_wire_carries_sse_bodies_of_both_encodings() -> None:
    found = set()
    for _, events, _ in live.draw(cases.response_wire(), 600, seed=5):
        if isinstance(events[0], durable.SSEStart):
            found |= {(events[0].base64, type(e)) for e in events[1:-1]}
    for base64 in (False, True):
        assert {(base64, durable.SSEData), (base64, durable.SSEControl)} <= found


CATEGORIES = [
    "Content-Length -1",
    "Content-Length +1",
    "chunk size -1",
    "chunk size +1",
    "Content-Length over the body limit (header only)",
    "Content-Length at the body limit (header only), then end",
    "response head over the header limit (no end yet)",
    "status code not a number",
    "101 Switching Protocols, no upgrade asked",
    "header line without a colon",
    "repeated Content-Length, different values",
    "Read answered without Stream-Next-Offset",
    "Stream-Next-Offset repeated",
    "Stream-Next-Offset not ASCII",
    "Producer-Epoch not a number",
    "control event a JSON array",
    "control streamNextOffset a number",
    "control streamNextOffset an object",
    "control JSON nested 100000 deep",
    "invalid UTF-8 in an SSE line",
    "base64 data not a multiple of 4",
    "SSE body ends inside an event",
    "a response with no request pending",
    "one response too many",
    "body on a 204",
    "body on a HEAD response",
    "response cut by end of stream",
]
SMALL_ONLY = ["chunked body over the body limit", "SSE line over the limit (no end yet)",
              "SSE event over the limit"]  # fmt: skip


def test_every_category_is_generated() -> None:
    labels = {case.label for case in live.draw(cases.malformed_replies(), 800, seed=3)}
    assert not [label for label in CATEGORIES if label not in labels]
    small = {case.label for case in live.draw(cases.malformed_replies(SMALL), 800, seed=3)}
    assert not [label for label in SMALL_ONLY if label not in small]
    assert not labels & set(SMALL_ONLY)  # no multi-megabyte cases with the default limits


def test_a_response_head_over_the_limit_is_refused_however_it_arrives() -> None:
    limits = durable.Limits(max_header_size=1024)
    head = (
        b"HTTP/1.1 204 No Content\r\nstream-next-offset: 0000000000000000_0000000000000001\r\n"
        b"stream-up-to-date: true\r\nstream-cursor: 1\r\nx-big: " + b"a" * 2000 + b"\r\n\r\n"
    )
    request = durable.Read(cases.STREAM, "-1", durable.LiveMode.LONG_POLL)
    for pieces in ([head[:1500], head[1500:]], [head]):
        client = durable.Connection(Role.CLIENT, limits, host="127.0.0.1")
        client.send(request)
        with pytest.raises(RemoteProtocolError):
            _feed(client, pieces)


def _feed(client: durable.Connection, pieces: list[bytes]) -> None:
    for piece in pieces:
        client.receive_data(piece)
        list(client.events())


def _events(request: durable.Request, data: bytes) -> list[durable.ClientEvent]:
    client = durable.Connection(Role.CLIENT, host="127.0.0.1")
    client.send(request)
    client.receive_data(data)
    return list(client.events())


@pytest.mark.parametrize("offset", [b"", b"a/b", b"a,b", b"a b"])
def test_an_sse_control_offset_is_held_to_the_header_offset_rules(offset: bytes) -> None:
    control = b'{"streamNextOffset":"' + offset + b'","streamCursor":"1"}'
    with pytest.raises(RemoteProtocolError):
        _events(cases._OPEN_SSE, cases._sse(b"event: control\ndata:" + control + b"\n\n"))


@pytest.mark.parametrize("sentinel", [b"-1", b"now"])
@pytest.mark.parametrize("where", ["header", "sse"])
def test_a_sentinel_is_never_accepted_as_a_next_offset(sentinel: bytes, where: str) -> None:
    if where == "header":
        request: durable.Request = cases._READ
        data = b"HTTP/1.1 200 OK\r\nstream-next-offset: %s\r\ncontent-length: 0\r\n\r\n" % (
            sentinel
        )
    else:
        request = cases._OPEN_SSE
        control = b'{"streamNextOffset":"' + sentinel + b'","streamCursor":"1"}'
        data = cases._sse(b"event: control\ndata:" + control + b"\n\n")
    with pytest.raises(RemoteProtocolError):
        _events(request, data)
