"""What every package's state table must prove (``<package>/_state.py``)."""

from __future__ import annotations

import enum
from types import ModuleType

from s3p_codec._core.transitions import StateEnum, Transitions


def check_table(module: ModuleType, *, final: set[enum.Enum]) -> Transitions[enum.Enum, enum.Enum]:
    """The checks shared by the five packages; returns the table for package-specific ones.

    Every state is reachable from the initial state, every trigger is used, the ``final``
    states (and only they) have no way out, and every other state has one.
    """
    table: Transitions[enum.Enum, enum.Enum] = module.TRANSITIONS
    states = module.ConnectionState
    assert issubclass(states, StateEnum)
    assert set(table.states) == set(states)
    assert table.reachable() == set(states), "states no trigger reaches from the initial one"
    assert not table.unused(module.Trigger), "triggers the table never uses"
    assert table.final == final
    for state in final:
        assert all(target is state for target in table.moves(state).values())
        assert table.reachable(state) == {state}
    return table
