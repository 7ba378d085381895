"""The Connection state machine: roles, pipelining, end of stream, send-side validation, and
the hypothesis properties every codec keeps (round trip, any chunking, garbage in)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, s3p
from s3p_codec._core.connection import Connection as ConnectionProtocol
from s3p_codec.s3p import (
    Append,
    AppendReply,
    Create,
    Delete,
    ErrorCode,
    ErrorReply,
    Ok,
    Read,
    ReadReply,
    Timestamp,
    Trim,
)
from s3p_codec.s3p._events import MAX_U64
from s3p_codec.testing.s3p import conversations, requests

from .support import client_for, crlf, feed_garbage


def test_connection_satisfies_the_core_connection_protocol() -> None:
    for role in Role:
        conn = s3p.Connection(role)
        assert isinstance(conn, ConnectionProtocol)
        assert conn.role is role
        assert conn.state is s3p.ConnectionState.OPEN
        assert not conn.finished


def run(conversation: list[tuple[s3p.Request, s3p.Reply]]) -> tuple[bytes, bytes]:
    """Both byte streams of a conversation, checked event by event on the way."""
    client = s3p.Connection(Role.CLIENT)
    server = s3p.Connection(Role.SERVER)
    up = b"".join(client.send(request) for request, _ in conversation)
    server.receive_data(up)
    assert list(server.events()) == [request for request, _ in conversation]
    down = b"".join(server.send(reply) for _, reply in conversation)
    client.receive_data(down)
    assert list(client.events()) == [reply for _, reply in conversation]
    return up, down


@given(conversations())
def test_round_trip_of_every_request_and_reply(conversation: list) -> None:
    run(conversation)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


def decode(role: Role, chunks: list[bytes], asked: list[s3p.Request]) -> list[object]:
    conn = client_for(*asked) if role is Role.CLIENT else s3p.Connection(role)
    out: list[object] = []
    for chunk in chunks:
        conn.receive_data(chunk)
        out.extend(conn.events())
    conn.receive_data(b"")
    assert conn.next_event() is NEED_DATA
    assert conn.state is s3p.ConnectionState.CLOSED
    return out


@given(conversations(), st.lists(st.integers(0, 10_000), max_size=12))
def test_any_chunking_of_a_pipelined_stream_yields_the_same_events(
    conversation: list, cuts: list[int]
) -> None:
    up, down = run(conversation)
    asked = [request for request, _ in conversation]
    answers = [reply for _, reply in conversation]
    assert decode(Role.SERVER, split(up, cuts), []) == asked
    assert decode(Role.CLIENT, split(down, cuts), asked) == answers


@given(conversations())
def test_one_byte_at_a_time_yields_the_same_events(conversation: list) -> None:
    up, down = run(conversation)
    asked = [request for request, _ in conversation]
    one_by_one = [bytes([b]) for b in up]
    assert decode(Role.SERVER, one_by_one, []) == asked
    one_by_one = [bytes([b]) for b in down]
    assert decode(Role.CLIENT, one_by_one, asked) == [reply for _, reply in conversation]


@given(st.binary(max_size=200), st.booleans(), st.lists(requests(), max_size=3))
def test_random_bytes_yield_events_or_remote_protocol_errors_only(
    data: bytes, eof: bool, asked: list[s3p.Request]
) -> None:
    feed_garbage(s3p.Connection(Role.SERVER), data, eof)
    feed_garbage(client_for(*asked), data, eof)


@given(conversations(), st.data())
def test_mutated_valid_streams_yield_events_or_remote_protocol_errors_only(
    conversation: list, data: st.DataObject
) -> None:
    up, down = run(conversation)
    asked = [request for request, _ in conversation]
    for stream, conn in ((up, s3p.Connection(Role.SERVER)), (down, client_for(*asked))):
        raw = bytearray(stream)
        for _ in range(data.draw(st.integers(1, 4))):
            at = data.draw(st.integers(0, len(raw) - 1))
            raw[at] = data.draw(st.sampled_from(b"\r\n*$+-0123456789:_ax\x00\xff"))
        feed_garbage(conn, bytes(raw), data.draw(st.booleans()))


# --- end of stream ---------------------------------------------------------------------------


def test_eof_after_complete_events_is_a_clean_close() -> None:
    server = s3p.Connection(Role.SERVER)
    server.receive_data(client_for().send(Delete(b"s")))
    server.receive_data(b"")
    assert server.next_event() == Delete(b"s")
    assert server.next_event() is NEED_DATA
    assert server.state is s3p.ConnectionState.CLOSED
    assert not server.finished  # it still owes the DELETE its reply (the peer half-closed)
    assert server.send(Ok()) == b"+OK\r\n"
    assert server.finished
    assert server.next_event() is NEED_DATA


@pytest.mark.parametrize("role", list(Role))
def test_eof_mid_frame_is_a_remote_protocol_error(role: Role) -> None:
    conn = client_for(Read(b"s")) if role is Role.CLIENT else s3p.Connection(role)
    conn.receive_data(b"*2\r\n$3\r\n1-")
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"")
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.code is ErrorCode.BAD_FORMAT
    assert conn.state is s3p.ConnectionState.ERROR


def test_data_after_eof_is_a_local_error() -> None:
    conn = s3p.Connection(Role.SERVER)
    conn.receive_data(b"")
    with pytest.raises(LocalProtocolError):
        conn.receive_data(b"*")


def test_a_reply_with_no_pending_request_is_an_error() -> None:
    client = s3p.Connection(Role.CLIENT)
    client.receive_data(b"+OK\r\n")
    with pytest.raises(RemoteProtocolError, match="no pending request"):
        client.next_event()


def test_pipelined_replies_are_typed_by_the_requests_they_answer() -> None:
    asked = [Append(b"s", (b"a",)), Read(b"s"), Delete(b"s"), Append(b"s", (b"b",))]
    client = client_for(*asked)
    assert client.pending == 4
    client.receive_data(crlf("$3\n1-0\n*2\n$3\n1-0\n$1\na\n+OK\n$3\n2-0"))
    assert list(client.events()) == [
        AppendReply(Timestamp(1, 0)),
        ReadReply(((Timestamp(1, 0), b"a"),)),
        Ok(),
        AppendReply(Timestamp(2, 0)),
    ]
    assert client.pending == 0


@pytest.mark.parametrize(
    ("asked", "reply"),
    [
        (Delete(b"s"), b"$3\r\n1-0\r\n"),  # a timestamp where +OK is due
        (Append(b"s", (b"a",)), b"+OK\r\n"),  # +OK where a timestamp is due
        (Read(b"s"), b"+OK\r\n"),
        (Create(b"s"), b"+FINE\r\n"),
        (Append(b"s", (b"a",)), b"$3\r\n1_0\r\n"),
        (Read(b"s", count=1), b"*4\r\n"),  # more records than COUNT
        (Read(b"s"), b"*3\r\n"),  # not pairs
        (Delete(b"s"), b"-ERR_NOPE what\r\n"),  # not a code of the spec
        (Delete(b"s"), b"-ERR_LIMITS \x01\r\n"),  # not printable
    ],
)
def test_a_reply_of_the_wrong_shape_is_err_bad_format(asked: s3p.Request, reply: bytes) -> None:
    client = client_for(asked)
    client.receive_data(reply)
    with pytest.raises(RemoteProtocolError) as caught:
        client.next_event()
    assert caught.value.code is ErrorCode.BAD_FORMAT


def test_an_error_reply_without_message_is_accepted() -> None:
    client = client_for(Delete(b"s"))
    client.receive_data(b"-ERR_UNKNOWN_STREAM\r\n")
    assert client.next_event() == ErrorReply(ErrorCode.UNKNOWN_STREAM, "")


# --- send-side validation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        Delete(b""),
        Delete(b"x" * 257),
        Delete("text"),  # type: ignore[arg-type]
        Append(b"s", ()),
        Append(b"s", (b"",)),
        Append(b"s", b"a"),  # one bytes value, not a sequence of them (a list is accepted)
        Append(b"s", (b"a",) * 1001),
        Append(b"s", (b"a" * ((1 << 20) + 1),)),
        Append(b"s", (b"a" * (1 << 20),) * 9),
        Append(b"s", (b"a",), Timestamp(-1, 0)),
        Append(b"s", (b"a",), Timestamp(MAX_U64 + 1, 0)),
        Append(b"s", (b"a",), (1, 2)),  # type: ignore[arg-type]
        Read(b"s", count=0),
        Read(b"s", count=10_001),
        Read(b"s", count=True),
        Read(b"s", block_ms=-1),
        Read(b"s", block_ms=30_001),
        Read(b"s", min_timestamp=Timestamp(0, -1)),
        Trim(b"s", Timestamp(1.5, 0)),  # type: ignore[arg-type]
        Create(b"s", "client"),  # type: ignore[arg-type]
        Ok(),
    ],
)
def test_send_refuses_invalid_requests_with_local_protocol_error(event: s3p.Event) -> None:
    client = s3p.Connection(Role.CLIENT)
    with pytest.raises(LocalProtocolError) as caught:
        client.send(event)
    assert isinstance(caught.value.code, ErrorCode)
    assert client.pending == 0  # nothing half-done


@pytest.mark.parametrize(
    ("asked", "reply"),
    [
        (Read(b"s"), Ok()),
        (Delete(b"s"), ReadReply(())),
        (Append(b"s", (b"a",)), AppendReply(Timestamp(1, -1))),
        (Read(b"s", count=1), ReadReply(((Timestamp(1, 0), b"a"), (Timestamp(2, 0), b"b")))),
        (Read(b"s"), ReadReply(((Timestamp(1, 0), b""),))),
        (Read(b"s"), ReadReply(b"a")),  # bytes, not pairs (a list of pairs is accepted)
        (Delete(b"s"), ErrorReply(ErrorCode.LIMITS, "two\r\nlines")),
        (Delete(b"s"), ErrorReply("ERR_OTHER", "x")),  # type: ignore[arg-type]
        (Delete(b"s"), Delete(b"s")),
    ],
)
def test_send_refuses_invalid_replies_with_local_protocol_error(
    asked: s3p.Request, reply: s3p.Event
) -> None:
    server = s3p.Connection(Role.SERVER)
    server.receive_data(client_for().send(asked))
    list(server.events())
    with pytest.raises(LocalProtocolError):
        server.send(reply)
    assert server.pending == 1  # nothing half-done: the request still awaits its reply


def test_a_server_in_error_sends_only_one_error_reply() -> None:
    server = s3p.Connection(Role.SERVER)
    server.receive_data(b"+hello\r\n")
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    with pytest.raises(LocalProtocolError):
        server.send(Ok())
    assert server.send(caught.value.reply) == (
        b"-ERR_BAD_FORMAT commands MUST be sent as a top-level Array\r\n"
    )
    assert server.finished


def test_limits_are_configurable_per_connection() -> None:
    limits = s3p.Limits(max_records_per_append=2)
    client = s3p.Connection(Role.CLIENT, limits)
    with pytest.raises(LocalProtocolError) as caught:
        client.send(Append(b"s", (b"a", b"b", b"c")))
    assert caught.value.code is ErrorCode.LIMITS
