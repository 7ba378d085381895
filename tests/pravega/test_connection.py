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


@given(st.lists(st.one_of(server_reply, opaque_reply), max_size=8))
def test_round_trip_of_server_replies_through_connections(events: list[Any]) -> None:
    client = p.Connection(Role.CLIENT)
    client.receive_data(_conversation(events, Role.SERVER))
    assert list(client.events()) == events


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
