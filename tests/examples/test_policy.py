"""``examples/_policy.py`` on its own, with a clock the test moves: which connection is overdue,
which one a cap sheds, and what the codec wrapper reports."""

from __future__ import annotations

import argparse

import pytest

from examples._policy import (
    Activity,
    ConnectionPolicy,
    Gatekeeper,
    WatchedCodec,
    add_arguments,
)
from s3p_codec import NEED_DATA, RemoteProtocolError, Role, rustlog


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


POLICY = ConnectionPolicy(idle_timeout=10, request_timeout=3, max_connections=2)


def test_idle_counts_from_when_the_server_began_waiting_for_the_client() -> None:
    clock = Clock()
    activity = Activity(clock)
    activity.request_arrived()
    clock.now += 60  # serving a long request: the client waits for us
    assert activity.overdue(clock.now, POLICY) is None
    activity.waiting()
    clock.now += 9.9
    assert activity.overdue(clock.now, POLICY) is None
    clock.now += 0.1
    assert activity.overdue(clock.now, POLICY) == "idle"


def test_a_request_arriving_slowly_is_overdue_however_recent_its_last_byte() -> None:
    clock = Clock()
    activity = Activity(clock)
    for _ in range(3):
        activity.bytes_arrived()
        clock.now += 1
    assert activity.overdue(clock.now, POLICY) == "request too slow"


def test_a_bound_set_to_none_is_off() -> None:
    clock = Clock()
    activity = Activity(clock)
    activity.bytes_arrived()
    clock.now += 1e6
    off = ConnectionPolicy(idle_timeout=None, request_timeout=None)
    assert activity.overdue(clock.now, off) is None
    assert not off.timed


def test_negative_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="idle_timeout"):
        ConnectionPolicy(idle_timeout=-1)


def test_at_the_cap_the_idlest_is_shed_and_when_all_are_busy_the_newcomer_is_refused() -> None:
    clock = Clock()
    gate = Gatekeeper(POLICY, clock)
    closed: list[tuple[str, str]] = []
    old, recent = Activity(clock), Activity(clock)
    old.last, recent.last = 50.0, 90.0
    assert gate.admit(old, "a", lambda why: closed.append(("old", why))) is not None
    assert gate.admit(recent, "a", lambda why: closed.append(("recent", why))) is not None
    newcomer = Activity(clock)
    assert gate.admit(newcomer, "b", lambda why: closed.append(("new", why))) is not None
    assert closed == [("old", "idlest")]
    recent.busy = newcomer.busy = True
    assert gate.admit(Activity(clock), "c", lambda why: closed.append(("late", why))) is None
    assert gate.shed == {"idlest": 1, "refused": 1}
    assert len(gate) == 2


def test_the_per_address_cap_counts_only_that_address() -> None:
    clock = Clock()
    gate = Gatekeeper(ConnectionPolicy(max_connections_per_address=1), clock)
    closed: list[str] = []
    assert gate.admit(Activity(clock), "a", lambda why: closed.append("a1")) is not None
    assert gate.admit(Activity(clock), "b", lambda why: closed.append("b1")) is not None
    assert gate.admit(Activity(clock), "a", lambda why: closed.append("a2")) is not None
    assert closed == ["a1"]


def test_a_sweep_closes_the_overdue_and_forgets_them() -> None:
    clock = Clock()
    gate = Gatekeeper(POLICY, clock)
    closed: list[str] = []
    quiet, talking = Activity(clock), Activity(clock)
    gate.admit(quiet, "a", closed.append)
    key = gate.admit(talking, "a", lambda why: closed.append("talking " + why))
    clock.now += 5
    talking.last = clock.now
    clock.now += 5
    gate.sweep()
    assert closed == ["idle"]
    assert len(gate) == 1
    assert key is not None
    gate.leave(key)
    assert len(gate) == 0


def test_the_watched_codec_reports_arrivals_completions_and_waits() -> None:
    clock = Clock()
    activity = Activity(clock)
    codec = WatchedCodec(rustlog.Connection(Role.SERVER), activity)
    request = rustlog.Connection(Role.CLIENT).send(rustlog.Ping())
    codec.receive_data(request[:5])
    assert codec.next_event() is NEED_DATA
    assert activity.partial_since == 100.0
    clock.now += 1
    codec.receive_data(request[5:])
    assert codec.next_event() == rustlog.Ping()
    assert activity.partial_since is None
    assert activity.busy
    codec.send(rustlog.Pong())
    clock.now += 1
    assert codec.next_event() is NEED_DATA
    assert not activity.busy
    assert activity.last == 102.0
    assert codec.role is Role.SERVER
    assert not codec.finished
    codec.receive_data(b"\x00\x00\x00\x01x")
    with pytest.raises(RemoteProtocolError):
        codec.next_event()
    assert activity.partial_since is None  # answered, not a slow request


def test_the_flags_make_the_policy_and_zero_turns_a_bound_off() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert ConnectionPolicy.from_args(parser.parse_args([])) == ConnectionPolicy()
    args = parser.parse_args(["--idle-timeout", "0", "--max-connections-per-address", "4"])
    assert ConnectionPolicy.from_args(args) == ConnectionPolicy(
        idle_timeout=None, max_connections_per_address=4
    )


def test_events_of_the_watched_codec_report_to_the_activity_too() -> None:
    clock = Clock()
    activity = Activity(clock)
    codec = WatchedCodec(rustlog.Connection(Role.SERVER), activity)
    codec.receive_data(rustlog.Connection(Role.CLIENT).send(rustlog.Ping()))
    assert list(codec.events()) == [rustlog.Ping()]
    assert activity.partial_since is None
    assert not activity.busy  # NEED_DATA ended the iteration: waiting for the client again
