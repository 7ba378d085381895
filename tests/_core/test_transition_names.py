"""The hot-path lookup names its table too: an ``IllegalTransition`` from ``on(trigger)[state]``
says which machine, as ``next`` does, so a codec bug in one of five tables is found at once."""

from __future__ import annotations

import enum

import pytest

from s3p_codec._core.transitions import IllegalTransition, StateEnum, Transitions


class _S(StateEnum):
    OPEN = "open"
    CLOSED = "closed"


class _T(enum.Enum):
    CLOSE = "close"
    NEVER = "never"


def _table() -> Transitions[_S, _T]:
    return Transitions("toy", _S.OPEN, {_S.OPEN: {_T.CLOSE: _S.CLOSED}, _S.CLOSED: {}})


@pytest.mark.parametrize("trigger", [_T.CLOSE, _T.NEVER])
def test_a_step_names_its_machine_state_and_trigger(trigger: _T) -> None:
    table = _table()
    for step in (table.on(trigger), table.on(trigger)):  # built, then found again
        assert step.machine == "toy"
        with pytest.raises(IllegalTransition) as raised:
            step[_S.CLOSED]
        assert raised.value.machine == "toy"
        assert str(raised.value) == f"toy: no move from CLOSED on {trigger.name}"
