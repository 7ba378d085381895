"""Durable Streams' state table (``durable/_state.py``): every state reachable, the final ones
closed."""

from __future__ import annotations

from s3p_codec import NEED_DATA, Role, durable
from s3p_codec.durable import _state
from s3p_codec.durable._state import TRANSITIONS, ConnectionState, Trigger
from tests.state_support import check_table

S, T = ConnectionState, Trigger


def test_the_table_reaches_every_state_and_errors_and_closes_for_good() -> None:
    check_table(_state, final={S.ERROR, S.CLOSED})


def test_the_package_exports_the_tables_enum() -> None:
    assert durable.ConnectionState is ConnectionState


def test_both_roles_start_idle_and_close_at_the_end_of_the_stream() -> None:
    for conn in (durable.Connection(Role.CLIENT), durable.Connection(Role.SERVER)):
        assert conn.state is TRANSITIONS.initial
        conn.receive_data(b"")
        assert conn.next_event() is NEED_DATA
        assert conn.state is S.CLOSED
