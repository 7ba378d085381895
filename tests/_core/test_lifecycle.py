"""The reply-after-error rule and the ``finished`` formula every codec shares."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from s3p_codec._core.lifecycle import ReplyAfterError, finished


@dataclass(frozen=True)
class _Error:
    code: str


@dataclass(frozen=True)
class _Data:
    value: bytes


def test_nothing_is_owed_at_first_and_nothing_pays() -> None:
    gate = ReplyAfterError()
    assert not gate.owed
    assert gate.reply is None
    assert not gate.pay(_Error("x"))


def test_one_reply_of_the_errors_type_pays_the_debt_once() -> None:
    gate = ReplyAfterError()
    gate.owe(_Error("bad"))
    assert gate.owed
    assert not gate.pay(_Data(b"no"))  # only the error's kind of reply
    assert gate.owed
    assert gate.pay(_Error("worded differently"))
    assert not gate.owed
    assert not gate.pay(_Error("bad"))  # one reply, never two


def test_exact_replies_must_equal_the_one_owed() -> None:
    gate = ReplyAfterError()
    gate.owe(_Error("bad"))
    assert not gate.pay(_Error("other"), exact=True)
    assert gate.pay(_Error("bad"), exact=True)


def test_forgive_drops_the_debt_and_owing_none_owes_nothing() -> None:
    gate = ReplyAfterError()
    gate.owe(_Error("bad"))
    gate.forgive()
    assert not gate.owed
    gate.owe(None)
    assert not gate.owed


@pytest.mark.parametrize(
    ("owed", "ended", "closed", "outstanding", "expected"),
    [
        (False, False, False, False, False),  # open
        (False, True, False, False, True),  # ended (error, terminal)
        (True, True, False, False, False),  # ended, but the error's reply may still go out
        (False, False, True, False, True),  # closed cleanly, nothing outstanding
        (False, False, True, True, False),  # closed, answers still owed to the peer
        (True, False, True, False, False),
    ],
)
def test_finished(owed: bool, ended: bool, closed: bool, outstanding: bool, expected: bool) -> None:
    gate = ReplyAfterError()
    if owed:
        gate.owe(_Error("x"))
    assert finished(gate, ended=ended, closed=closed, outstanding=outstanding) is expected
