"""S3P's state table (``s3p/_state.py``): every state reachable, CLOSED for good, ERROR's one
way out the Error reply a server owes."""

from __future__ import annotations

import pytest

from s3p_codec import NEED_DATA, RemoteProtocolError, Role, s3p
from s3p_codec._core.transitions import IllegalTransition
from s3p_codec.s3p import _state
from s3p_codec.s3p._state import TRANSITIONS, ConnectionState, Trigger
from tests.state_support import check_table

S, T = ConnectionState, Trigger


def test_the_table_reaches_every_state_and_closes_for_good() -> None:
    table = check_table(_state, final={S.CLOSED})
    # ERROR carries no traffic: its only move is the one reply a server owes.
    assert dict(table.moves(S.ERROR)) == {T.CLOSING_ERROR_SENT: S.CLOSED}
    with pytest.raises(IllegalTransition):
        TRANSITIONS.next(S.ERROR, T.PEER_CLOSED)


def test_the_package_exports_the_tables_enum() -> None:
    assert s3p.ConnectionState is ConnectionState


def test_a_server_moves_by_the_table_through_error_to_closed() -> None:
    server = s3p.Connection(Role.SERVER)
    assert server.state is TRANSITIONS.initial
    server.receive_data(b"*1\r\n$4\r\nNOPE\r\n")
    with pytest.raises(RemoteProtocolError) as raised:
        server.next_event()
    assert server.state is S.ERROR
    assert raised.value.reply is not None
    server.send(raised.value.reply)
    assert server.state is S.CLOSED
    assert server.finished


def test_a_clean_end_closes() -> None:
    client = s3p.Connection(Role.CLIENT)
    client.receive_data(b"")
    assert client.next_event() is NEED_DATA
    assert client.state is S.CLOSED
