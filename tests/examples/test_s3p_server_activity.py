"""The S3P example server's ``Activity`` at the cap: which connection counts as idle.

No sockets and no sleeps: a stand-in writer plays the adapter's write progress and the test
passes the clock readings. The same rules are checked over real sockets in
``test_s3p_server.py``.
"""

from __future__ import annotations

import attrs

from examples._policy import ConnectionPolicy, Gatekeeper
from examples.s3p_server import Activity

POLICY = ConnectionPolicy(idle_timeout=300, request_timeout=30, max_connections=1)


@attrs.define
class Writer:
    """The adapter's ``bytes_written`` / ``write_waiting``, set by the test."""

    bytes_written: int = 0
    write_waiting: bool = False


def at_the_cap(activity: Activity) -> tuple[bool, list[str]]:
    """Admit ``activity``, then a newcomer: whether the newcomer got in, and who was closed."""
    gatekeeper = Gatekeeper(POLICY)
    closed: list[str] = []
    assert gatekeeper.admit(activity, "a", lambda _: closed.append("first")) is not None
    admitted = gatekeeper.admit(Activity(last=2.0), "b", lambda _: closed.append("newcomer"))
    return admitted is not None, closed


def test_a_write_sampled_mid_flight_does_not_make_a_later_blocked_read_look_idle() -> None:
    """The trio race: the timer's first look fell on the checkpoint of a reply the kernel took
    at once, then slept ``request_timeout``; the READ blocked since must still count busy."""
    writer = Writer(write_waiting=True)
    activity = Activity(last=0.0, writer=writer)
    assert activity.next_check(1.0, POLICY) == 30  # sampled waiting: next look in 30 s
    writer.bytes_written, writer.write_waiting = 12, False  # the reply went out
    activity.busy = True  # a blocking READ, waiting on the server
    assert activity.stalled_since is None
    assert at_the_cap(activity) == (False, [])


def test_a_new_write_after_the_sample_is_not_a_stall_until_looked_at_again() -> None:
    writer = Writer(write_waiting=True)
    activity = Activity(last=0.0, writer=writer, busy=True)
    activity.next_check(1.0, POLICY)
    writer.bytes_written = 12  # that write finished and another one waits now
    assert activity.stalled_since is None
    assert at_the_cap(activity) == (False, [])


def test_a_reply_still_not_taken_since_the_sample_counts_as_idle_and_is_shed() -> None:
    writer = Writer(bytes_written=12, write_waiting=True)
    activity = Activity(last=0.0, writer=writer, busy=True)
    activity.next_check(1.0, POLICY)
    assert activity.stalled_since == 1.0
    assert at_the_cap(activity) == (True, ["first"])
