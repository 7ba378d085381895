"""``durable.Connection(role)`` gives each role's connection; both fit the shared Protocols."""

from __future__ import annotations

import pytest

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, durable
from s3p_codec._core.connection import Connection, Observer


def test_connection_takes_a_role() -> None:
    client = durable.Connection(Role.CLIENT, host="h:1")
    server = durable.Connection(Role.SERVER, durable.Limits(max_body_size=10))
    assert type(client) is type(server) is durable.Connection
    assert (client.role, server.role) == (Role.CLIENT, Role.SERVER)
    assert client.host == "h:1"
    assert server.limits.max_body_size == 10


def test_both_roles_and_the_observer_satisfy_the_core_protocols() -> None:
    assert isinstance(durable.Connection(Role.CLIENT), Connection)
    assert isinstance(durable.Connection(Role.SERVER), Connection)
    assert isinstance(durable.Observer(), Observer)


def test_a_fresh_connection_needs_data_and_is_idle() -> None:
    for role in Role:
        conn = durable.Connection(role)
        assert conn.next_event() is NEED_DATA
        assert conn.state is durable.ConnectionState.IDLE
        assert not conn.finished


def test_the_members_of_one_role_are_missing_on_the_other() -> None:
    client = durable.Connection(Role.CLIENT, host="h:1")
    server = durable.Connection(Role.SERVER)
    assert client.queued == 0
    assert server.message_start == 0
    assert server.request_line is None
    for name in ("message_start", "request_line"):
        assert not hasattr(client, name)
    for name in ("host", "queued"):
        assert not hasattr(server, name)
    with pytest.raises(AttributeError, match="client-role"):
        server.expect_response(None, b"GET", b"/")


def test_each_role_refuses_the_other_roles_events_and_stays_usable() -> None:
    client = durable.Connection(Role.CLIENT)
    with pytest.raises(LocalProtocolError) as caught:
        client.send(durable.SSEEnd())
    assert caught.value.code is durable.ConnectionErrorCode.STATE
    assert client.state is durable.ConnectionState.IDLE
    server = durable.Connection(Role.SERVER)
    server.receive_data(b"HEAD /v1/stream/x HTTP/1.1\r\nHost: a\r\n\r\n")
    assert isinstance(server.next_event(), durable.Head)
    with pytest.raises(LocalProtocolError):
        server.send(durable.Head("/v1/stream/x"))
    assert server.send(durable.StreamInfo(next_offset="0000000000000000_0000000000000000"))


def test_error_codes_without_a_status_are_enum_members_equal_to_their_old_strings() -> None:
    client = durable.Connection(Role.CLIENT)
    client.send(durable.Head("/v1/stream/x"))
    with pytest.raises(LocalProtocolError) as caught:
        client.send(durable.Head("/v1/stream/x"))
    assert caught.value.code is durable.ConnectionErrorCode.STATE
    assert caught.value.code == "state"
    client.receive_data(b"")
    with pytest.raises(LocalProtocolError) as eof:
        client.receive_data(b"late")
    assert eof.value.code is durable.ConnectionErrorCode.EOF
    assert eof.value.code == "eof"


def test_expect_response_is_for_an_idle_connection_only() -> None:
    client = durable.Connection(Role.CLIENT)
    client.expect_response(durable.Head("/v1/stream/x"), b"HEAD", b"/v1/stream/x")
    assert client.state is durable.ConnectionState.BUSY
    with pytest.raises(LocalProtocolError):
        client.expect_response(None, b"GET", b"/")


def test_the_server_says_where_a_request_began_and_what_it_asked() -> None:
    server = durable.Connection(Role.SERVER)
    good = b"HEAD /v1/stream/x HTTP/1.1\r\nHost: a\r\n\r\n"
    bad = b"POST /v1/stream/x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"
    server.receive_data(good + bad)
    assert server.message_start == 0
    request = server.next_event()
    assert isinstance(request, durable.Head)
    assert server.request_line == (b"HEAD", b"/v1/stream/x")
    assert server.message_start == len(good)
    server.send(durable.StreamInfo(next_offset="0000000000000000_0000000000000000"))
    assert server.request_line is None
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()  # an empty append body: refused, the reply owed
    assert server.request_line == (b"POST", b"/v1/stream/x")
    assert caught.value.reply is not None
    server.send(caught.value.reply)
    assert not server.finished
