"""Pravega's state table (``pravega/_state.py``): every state reachable, the final ones closed."""

from __future__ import annotations

import pytest

from s3p_codec import NEED_DATA, RemoteProtocolError, Role, pravega
from s3p_codec.pravega import _state
from s3p_codec.pravega._state import TRANSITIONS, ConnectionState
from tests.state_support import check_table

S = ConnectionState


def test_the_table_reaches_every_state_and_errors_and_closes_for_good() -> None:
    check_table(_state, final={S.ERROR, S.CLOSED})


def test_the_package_exports_the_tables_enum() -> None:
    assert pravega.ConnectionState is ConnectionState


def test_a_connection_moves_by_the_table() -> None:
    peer = pravega.Connection(Role.SERVER)
    assert peer.state is TRANSITIONS.initial
    peer.receive_data(b"")
    assert peer.next_event() is NEED_DATA
    assert peer.next_event() is NEED_DATA  # the end, seen again
    assert peer.state is S.CLOSED
    broken = pravega.Connection(Role.SERVER)
    broken.receive_data(b"\x7f\xff\xff\xff\x00\x00\x00\x00")  # no such command
    with pytest.raises(RemoteProtocolError):
        broken.next_event()
    assert broken.state is S.ERROR
