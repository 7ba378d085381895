"""``durable.Connection(role)`` gives each role's connection; both fit the shared Protocols."""

from __future__ import annotations

from s3p_codec import NEED_DATA, Role, durable
from s3p_codec._core.connection import Connection, Observer


def test_connection_takes_a_role() -> None:
    client = durable.Connection(Role.CLIENT, host="h:1")
    server = durable.Connection(Role.SERVER, durable.Limits(max_body_size=10))
    assert isinstance(client, durable.ClientConnection)
    assert isinstance(server, durable.ServerConnection)
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
