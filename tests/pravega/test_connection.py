"""The connection state machine: Hello negotiation, end of stream, errors, chunking, garbage."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role
from s3p_codec import pravega as p
from s3p_codec._core import Connection as ConnectionProtocol
from tests.pravega.strategies import client_request, opaque_reply, server_reply

LONG_MIN = -(1 << 63)

W = uuid.UUID(int=7)


def test_satisfies_the_connection_protocol() -> None:
    assert isinstance(p.Connection(Role.CLIENT), ConnectionProtocol)


# --- Hello ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("high", "low", "negotiated"), [(17, 5, 17), (20, 3, 17), (9, 9, 9)])
def test_compatible_hello_negotiates_min_of_17_and_peer_high(
    high: int, low: int, negotiated: int
) -> None:
    for role, sender in ((Role.SERVER, Role.CLIENT), (Role.CLIENT, Role.SERVER)):
        conn = p.Connection(role)
        conn.receive_data(p.Connection(sender).send(p.Hello(high, low)))
        assert conn.next_event() == p.Hello(high, low)
        assert conn.negotiated_version == negotiated


@pytest.mark.parametrize(("high", "low"), [(4, 1), (30, 18)])
def test_server_rejects_incompatible_hello_and_replies_hello_17_5(high: int, low: int) -> None:
    conn = p.Connection(Role.SERVER)
    conn.receive_data(p.encode(p.Hello(high, low)))
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    err = info.value
    assert err.code is p.ErrorCode.INCOMPATIBLE_VERSION
    assert err.fatal
    assert err.reply == p.Hello(17, 5)
    assert not conn.finished  # may still send the reply once
    assert conn.send(p.Hello(17, 5)) == p.encode(p.Hello(17, 5))
    assert conn.finished
    with pytest.raises(LocalProtocolError):
        conn.send(p.Hello(17, 5))


def test_client_rejects_incompatible_server_hello() -> None:
    conn = p.Connection(Role.CLIENT)
    conn.receive_data(p.encode(p.Hello(4, 2)))
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    assert info.value.code is p.ErrorCode.INCOMPATIBLE_VERSION
    assert info.value.reply is None
    assert conn.finished


# --- end of stream and errors ------------------------------------------------------------------


def test_clean_eof_closes_after_the_complete_events() -> None:
    conn = p.Connection(Role.SERVER)
    conn.receive_data(p.encode(p.KeepAlive()))
    conn.receive_data(b"")
    assert conn.next_event() == p.KeepAlive()
    assert conn.next_event() is NEED_DATA
    assert conn.state is p.ConnectionState.CLOSED
    assert conn.finished
    assert conn.next_event() is NEED_DATA


def test_eof_inside_a_frame_is_an_error() -> None:
    conn = p.Connection(Role.SERVER)
    conn.receive_data(p.encode(p.KeepAlive())[:5])
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"")
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    assert info.value.code is p.ErrorCode.BAD_FRAME


def test_data_after_eof_is_refused() -> None:
    conn = p.Connection(Role.SERVER)
    conn.receive_data(b"")
    with pytest.raises(LocalProtocolError):
        conn.receive_data(b"x")


def test_after_an_error_every_call_raises() -> None:
    conn = p.Connection(Role.SERVER)
    conn.receive_data(b"\x00\x00\x00\x63\x00\x00\x00\x00")
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
    with pytest.raises(LocalProtocolError):
        conn.send(p.KeepAlive())
    assert conn.finished  # no reply: a real segment store just closes


def test_sends_follow_the_direction_of_each_command() -> None:
    with pytest.raises(LocalProtocolError) as info:
        p.Connection(Role.CLIENT).send(p.DataAppended(W, 1))
    assert info.value.code is p.ErrorCode.UNEXPECTED_COMMAND
    with pytest.raises(LocalProtocolError):
        p.Connection(Role.SERVER).send(p.ReadSegment("s", 0, 10))
    with pytest.raises(LocalProtocolError):
        p.Connection(Role.SERVER).send(p.Opaque(p.CommandType.MERGE_SEGMENTS, b""))
    with pytest.raises(LocalProtocolError):
        p.Connection(Role.SERVER).send("hello")  # type: ignore[arg-type]
    assert p.Connection(Role.SERVER).send(p.KeepAlive()) == p.encode(p.KeepAlive())


def test_a_refused_send_emits_nothing_and_keeps_the_open_block() -> None:
    conn = p.Connection(Role.CLIENT, block_size=64)
    conn.send(p.SetupAppend(1, W, "s"))
    opened = conn.send(p.Append(W, 0, (b"x",)))
    with pytest.raises(LocalProtocolError):
        conn.send(p.SegmentCreated(1 << 64, "s"))  # type: ignore[arg-type]
    # The block is still open: the next event is written raw into it.
    assert conn.send(p.Append(W, 1, (b"y",))) == b"\x00\x00\x00\x00\x00\x00\x00\x01y"
    assert opened


# --- properties ------------------------------------------------------------------------------


def _conversation(events: list[Any], sender: Role) -> bytes:
    conn = p.Connection(sender, block_size=50)
    wire = b""
    if sender is Role.CLIENT:
        wire += conn.send(p.SetupAppend(0, W, "seg"))
        for i, event in enumerate(events):
            wire += conn.send(event)
            wire += conn.send(p.Append(W, i, (bytes([i % 256]) * (i * 7 % 40),)))
        return wire + conn.send(p.FlushAppends())
    return b"".join(conn.send(event) for event in events)


def _without_appends(events: list[Any]) -> list[Any]:
    return [e for e in events if not isinstance(e, p.Append | p.SetupAppend)]


@given(st.lists(client_request, max_size=8))
def test_round_trip_of_client_requests_through_connections(events: list[Any]) -> None:
    # Setup and conditional appends need a set-up writer: use W throughout.
    events = [
        e
        for e in events
        if not isinstance(e, p.SetupAppend | p.ConditionalAppend | p.ConditionalBlockEnd)
    ]
    server = p.Connection(Role.SERVER)
    server.receive_data(_conversation(events, Role.CLIENT))
    got = list(server.events())
    assert _without_appends(got) == events


_ACKS = (p.AppendSetup, p.DataAppended)


@given(st.lists(st.one_of(server_reply, opaque_reply), max_size=8))
def test_round_trip_of_server_replies_through_connections(events: list[Any]) -> None:
    # Acknowledgements need the appends they acknowledge: tested on their own below.
    events = [event for event in events if not isinstance(event, _ACKS)]
    client = p.Connection(Role.CLIENT)
    client.receive_data(_conversation(events, Role.SERVER))
    assert list(client.events()) == events


W1, W2 = uuid.UUID(int=1), uuid.UUID(int=2)


def _client_with_appends() -> p.Connection:
    """A client that set up W1 and W2 and sent events 0..4 of W1 (none of W2 yet)."""
    client = p.Connection(Role.CLIENT, block_size=0)
    client.send(p.SetupAppend(1, W1, "seg"))
    client.send(p.SetupAppend(2, W2, "seg"))
    client.send(p.Append(W1, 4, (b"a", b"b", b"c", b"d", b"e")))
    client.send(p.FlushAppends())
    return client


def _acks(*events: p.Command) -> bytes:
    return b"".join(p.encode(event) for event in events)


def test_acknowledgements_of_sent_events_pass_in_order() -> None:
    client = _client_with_appends()
    replies = [
        p.AppendSetup(1, "seg", W1, LONG_MIN),
        p.AppendSetup(2, "seg", W2, LONG_MIN),
        p.DataAppended(W1, 1, -1),
        p.DataAppended(W1, 1, -1),  # the same point again is no step back
        p.DataAppended(W1, 4, 1),
    ]
    client.receive_data(_acks(*replies))
    assert list(client.events()) == replies


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (p.DataAppended(uuid.UUID(int=9), 0, -1), "never set up"),
        (p.AppendSetup(1, "seg", uuid.UUID(int=9), LONG_MIN), "never set up"),
        (p.DataAppended(W1, 5, 4), "acknowledges event 5 .* the last one sent is 4"),
        (p.DataAppended(W2, 0, -1), "acknowledges event 0 .* the last one sent is -1"),
    ],
)
def test_client_refuses_an_acknowledgement_of_what_it_never_sent(
    reply: p.Command, words: str
) -> None:
    client = _client_with_appends()
    client.receive_data(_acks(reply))
    with pytest.raises(RemoteProtocolError, match=words) as info:
        client.next_event()
    assert info.value.code is p.ErrorCode.INVALID_APPEND
    assert client.state is p.ConnectionState.ERROR


def test_client_refuses_an_acknowledgement_going_back() -> None:
    client = _client_with_appends()
    client.receive_data(_acks(p.DataAppended(W1, 3, -1), p.DataAppended(W1, 2, 3)))
    assert next(client.events()) == p.DataAppended(W1, 3, -1)
    with pytest.raises(RemoteProtocolError, match="goes back to event 2") as info:
        client.next_event()
    assert info.value.code is p.ErrorCode.INVALID_APPEND


def test_append_setup_and_conditional_appends_raise_what_may_be_acknowledged() -> None:
    # After a reconnect the store reports events persisted earlier, and acknowledges up to them.
    client = _client_with_appends()
    client.send(p.ConditionalAppend(W2, 7, 0, b"x", 3))
    replies = [
        p.AppendSetup(1, "seg", W1, 20),
        p.DataAppended(W1, 20, 4),
        p.DataAppended(W2, 7, -1),
    ]
    client.receive_data(_acks(*replies))
    assert list(client.events()) == replies


@given(st.lists(client_request, max_size=5), st.data())
def test_any_chunking_gives_the_same_events(events: list[Any], data: Any) -> None:
    events = [
        e
        for e in events
        if not isinstance(e, p.SetupAppend | p.ConditionalAppend | p.ConditionalBlockEnd)
    ]
    wire = _conversation(events, Role.CLIENT)
    whole = p.Connection(Role.SERVER)
    whole.receive_data(wire)
    expected = list(whole.events())
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(wire) - 1)), max_size=10))))
    chunked = p.Connection(Role.SERVER)
    got: list[Any] = []
    last = 0
    for cut in [*cuts, len(wire)]:
        if cut > last:
            chunked.receive_data(wire[last:cut])
            got.extend(chunked.events())
            last = cut
    assert got == expected


def test_one_byte_at_a_time_gives_the_same_events() -> None:
    events = [p.KeepAlive(), p.ReadSegment("s\x00é", 3, 100, "t", 9), p.CreateSegment(1, "x")]
    wire = _conversation(events, Role.CLIENT)
    whole = p.Connection(Role.SERVER)
    whole.receive_data(wire)
    expected = list(whole.events())
    conn = p.Connection(Role.SERVER)
    got: list[Any] = []
    for i in range(len(wire)):
        conn.receive_data(wire[i : i + 1])
        got.extend(conn.events())
    assert got == expected
    assert len(appends_of(got)) == 3


def appends_of(events: list[Any]) -> list[bytes]:
    return [d for e in events if isinstance(e, p.Append) for d in e.events]


@pytest.mark.parametrize("read", [7, 1460, 65536, 200_000])
def test_large_blocks_of_varied_events_in_reads_of_any_size(read: int) -> None:
    # Blocks far above the 64 KiB from which a frame spanning reads is collected aside.
    client = p.Connection(Role.CLIENT, block_size=150_000)
    wire = client.send(p.Hello()) + client.send(p.SetupAppend(1, W, "seg"))
    sent = [bytes([n % 251]) * ((n * 37) % 301) for n in range(3000)]
    for number, data in enumerate(sent):
        wire += client.send(p.Append(W, number, (data,)))
    wire += client.send(p.FlushAppends()) + client.send(p.KeepAlive())
    conn = p.Connection(Role.SERVER)
    got: list[Any] = []
    for at in range(0, len(wire), read):
        conn.receive_data(wire[at : at + read])
        got.extend(conn.events())
    conn.receive_data(b"")
    assert list(conn.events()) == []
    assert appends_of(got) == sent
    assert got[-1] == p.KeepAlive()
    assert conn.state is p.ConnectionState.CLOSED


@pytest.mark.parametrize("role", [Role.CLIENT, Role.SERVER])
@given(garbage=st.binary(max_size=200), prefix=st.booleans())
def test_random_bytes_give_events_or_our_errors_only(
    role: Role, garbage: bytes, prefix: bool
) -> None:
    conn = p.Connection(role)
    if prefix and role is Role.SERVER:
        conn.receive_data(p.encode(p.SetupAppend(0, uuid.UUID(int=0), "s")))
    conn.receive_data(garbage)
    conn.receive_data(b"")
    error: RemoteProtocolError | None = None
    try:
        for _ in conn.events():
            pass
    except RemoteProtocolError as exc:
        error = exc
    if error is None:
        assert conn.state is p.ConnectionState.CLOSED
    else:
        assert isinstance(error.code, p.ErrorCode)
        assert conn.state is p.ConnectionState.ERROR


def test_check_acks_false_reads_acknowledgements_of_appends_sent_elsewhere() -> None:
    client = p.Connection(Role.CLIENT, check_acks=False)
    replies = [
        p.AppendSetup(1, "seg", W2, LONG_MIN),
        p.DataAppended(W1, 9, 3),
        p.DataAppended(W1, 2),
    ]
    client.receive_data(_acks(*replies))
    assert list(client.events()) == replies
