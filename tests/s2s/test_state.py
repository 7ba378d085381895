"""S2S's state table (``s2s/_state.py``): every state reachable, the final ones closed."""

from __future__ import annotations

from s3p_codec import NEED_DATA, Role, s2s
from s3p_codec.s2s import _state
from s3p_codec.s2s._state import TRANSITIONS, ConnectionState, Trigger
from tests.state_support import check_table

S, T = ConnectionState, Trigger


def test_the_table_reaches_every_state_and_terminates_and_errors_for_good() -> None:
    table = check_table(_state, final={S.TERMINATED, S.ERROR})
    # The peer's body ended; ours may still end with a terminal frame.
    assert dict(table.moves(S.CLOSED)) == {T.TERMINAL_SENT: S.TERMINATED}


def test_the_package_exports_the_tables_enum() -> None:
    assert s2s.ConnectionState is ConnectionState


def test_a_session_moves_by_the_table() -> None:
    server = s2s.Connection(Role.SERVER, s2s.Session.READ)
    assert server.state is TRANSITIONS.initial
    server.receive_data(b"")
    assert server.next_event() is NEED_DATA
    assert server.state is S.CLOSED
    server.send(s2s.Terminal(status=503, code="server_draining", message="bye"))
    assert server.state is S.TERMINATED
    assert server.finished
