"""RustLog's state table (``rustlog/_state.py``): every state reachable, the final ones closed."""

from __future__ import annotations

import pytest

from s3p_codec import NEED_DATA, Role, rustlog
from s3p_codec._core.transitions import IllegalTransition
from s3p_codec.rustlog import _state
from s3p_codec.rustlog._state import TRANSITIONS, ConnectionState, Trigger
from tests.state_support import check_table

S, T = ConnectionState, Trigger


def test_the_table_reaches_every_state_and_errors_and_closes_for_good() -> None:
    check_table(_state, final={S.ERROR, S.CLOSED})


def test_the_package_exports_the_tables_enum() -> None:
    assert rustlog.ConnectionState is ConnectionState
    assert rustlog.State is ConnectionState


def test_the_spec_lifecycle_is_a_path_of_the_table() -> None:
    # "CONNECTED → REQUEST_ACTIVE → CONNECTED → CLOSED"
    moves = [T.REQUEST_SENT, T.ALL_ANSWERED, T.PEER_CLOSED]
    current = TRANSITIONS.initial
    seen = [current]
    for trigger in moves:
        current = TRANSITIONS.next(current, trigger)
        seen.append(current)
    assert seen == [S.CONNECTED, S.REQUEST_ACTIVE, S.CONNECTED, S.CLOSED]
    with pytest.raises(IllegalTransition):
        TRANSITIONS.next(S.ERROR, T.REQUEST_RECEIVED)  # no arrow back from ERROR


def test_a_connection_moves_by_the_table() -> None:
    client = rustlog.Connection(Role.CLIENT)
    assert client.state is TRANSITIONS.initial
    client.send(rustlog.Fetch("g", "t", 0, 0, 100))
    assert client.state is S.REQUEST_ACTIVE
    client.receive_data(b"")
    assert client.next_event() is NEED_DATA
    assert client.state is S.CLOSED


def test_a_server_answers_after_the_peer_closed_and_stays_closed() -> None:
    client, server = rustlog.Connection(Role.CLIENT), rustlog.Connection(Role.SERVER)
    server.receive_data(client.send(rustlog.Fetch("g", "t", 0, 0, 100)))
    assert isinstance(server.next_event(), rustlog.Fetch)
    assert server.state is S.REQUEST_ACTIVE
    server.receive_data(b"")
    assert server.next_event() is NEED_DATA
    assert server.state is S.CLOSED
    assert not server.finished
    server.send(rustlog.FetchResponse((), 0))
    assert server.state is S.CLOSED
    assert server.finished
