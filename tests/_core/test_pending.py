"""PendingBound: the bound on requests an Observer keeps awaiting a reply, in its own words.

A queue of ``limit`` waiting requests is full; the oldest is then forgotten, and each overflow is
reported once, as a non-fatal error row, until the queue fell back under half the bound.
"""

from __future__ import annotations

import enum
import re

import pytest

from s3p_codec._core import Direction, RemoteProtocolError
from s3p_codec._core.observe import ObservedError
from s3p_codec._core.pending import MAX_PENDING, PendingBound, check_max_pending


class _Code(enum.Enum):
    FULL = "full"


def _words(limit: int) -> str:
    return (
        f"more than {limit} requests await a reply (max_pending): the oldest are forgotten,"
        " and their replies will be unpaired"
    )


def test_the_default_bound_is_a_hundred_thousand_requests() -> None:
    assert MAX_PENDING == 100_000
    assert check_max_pending(MAX_PENDING) == MAX_PENDING


def test_a_bound_of_one_request_is_accepted() -> None:
    assert check_max_pending(1) == 1
    assert PendingBound(1, _Code.FULL).limit == 1


@pytest.mark.parametrize("value", [0, -1, True, 1.0, 2.5, "3", None])
def test_a_bound_that_is_not_a_positive_int_is_refused_naming_the_value(value: object) -> None:
    words = re.escape(f"max_pending must be a positive int, got {value!r}")
    with pytest.raises(ValueError, match=f"^{words}$"):
        check_max_pending(value)
    with pytest.raises(ValueError, match=f"^{words}$"):
        PendingBound(value, _Code.FULL)  # type: ignore[arg-type]


def test_a_queue_under_the_bound_takes_one_more_request() -> None:
    bound = PendingBound(3, _Code.FULL)
    assert bound.admit(0, 0) == (False, None)
    assert bound.admit(2, 10) == (False, None)
    assert bound.forgotten == 0


def test_the_first_overflow_forgets_the_oldest_and_says_so_once() -> None:
    bound = PendingBound(3, _Code.FULL)
    full, said = bound.admit(3, 77)
    assert full is True
    assert said is not None
    assert type(said) is ObservedError
    assert (said.direction, said.start, said.skipped, said.resynchronized) == (
        Direction.CLIENT_TO_SERVER,
        77,
        0,
        True,
    )
    error = said.error
    assert type(error) is RemoteProtocolError
    assert str(error) == error.message == _words(3)
    assert error.code is _Code.FULL
    assert error.fatal is False
    assert error.reply is None
    assert bound.forgotten == 1


def test_an_overflow_goes_on_without_a_second_report() -> None:
    bound = PendingBound(2, _Code.FULL)
    assert bound.admit(2, 0)[1] is not None
    assert bound.admit(2, 5) == (True, None)
    assert bound.admit(2, 9) == (True, None)
    assert bound.forgotten == 3


def test_the_queue_falling_back_but_not_under_half_the_bound_is_the_same_overflow() -> None:
    bound = PendingBound(4, _Code.FULL)
    assert bound.admit(4, 0)[1] is not None
    assert bound.admit(3, 1) == (False, None)  # not full, still above half
    assert bound.admit(2, 2) == (False, None)  # exactly half: not under it
    assert bound.admit(4, 3) == (True, None)
    assert bound.forgotten == 2


def test_half_of_an_odd_bound_is_rounded_down() -> None:
    bound = PendingBound(5, _Code.FULL)
    assert bound.admit(5, 0)[1] is not None
    assert bound.admit(2, 1) == (False, None)  # 5 // 2 == 2: not under it
    assert bound.admit(5, 2) == (True, None)
    assert bound.admit(1, 3) == (False, None)  # under half: the overflow is over
    full, said = bound.admit(5, 4)
    assert full is True
    assert said is not None
    assert said.start == 4


def test_a_new_overflow_after_the_queue_fell_under_half_the_bound_is_reported_again() -> None:
    bound = PendingBound(6, _Code.FULL)
    first = bound.admit(6, 0)[1]
    assert first is not None
    assert bound.admit(2, 1) == (False, None)  # 2 < 6 // 2
    full, said = bound.admit(6, 40)
    assert full is True
    assert said is not None
    assert (said.start, said.error.message) == (40, _words(6))
    assert bound.forgotten == 2
