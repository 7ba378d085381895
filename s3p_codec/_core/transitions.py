"""Each protocol's legal state changes, written once as a table.

A codec never assigns a state of its own accord: it names what happened (a *trigger*: a request
sent, the peer's stream ended, a fatal error) and its package's table gives the next state.
A reader finds every legal move of a package in one place (its ``_state.py``); a move the table
does not hold is a bug in the codec, never the peer's fault, and raises ``IllegalTransition``
instead of leaving the state as it was.

Lookups run per message on hot paths, so the table is precomputed per trigger: ``on(trigger)``
is a ``Step``, a dict from each state that allows the trigger to the state it leads to, and a
codec keeps it in a module constant (``self._state = _ON_REQUEST[self._state]``). State enums
derive from ``StateEnum``, whose members hash by identity (an Enum's own ``__hash__`` is a
Python-level function, about 0.1 µs a lookup in CPython 3.11).

A state is *final* when every trigger it allows leads back to itself (ERROR, CLOSED,
TERMINATED...): the connection can never leave it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Generic, TypeVar

__all__ = ["IllegalTransition", "StateEnum", "Step", "Transitions"]


class StateEnum(enum.Enum):
    """The base of every ``ConnectionState``: members hash by identity (they are singletons,
    and equal only to themselves), which keeps a table lookup as cheap as a dict lookup."""

    __hash__ = object.__hash__


S = TypeVar("S", bound=enum.Enum)
T = TypeVar("T", bound=enum.Enum)


class IllegalTransition(AssertionError):
    """A codec asked its table for a move the table does not hold.

    This is a bug in the codec (a state check missing before the move), not a protocol error:
    it is neither a ``LocalProtocolError`` nor a ``RemoteProtocolError``, and no input from a
    peer should ever raise it. ``machine`` names the table, ``state`` and ``trigger`` the move.
    """

    def __init__(self, machine: str, state: enum.Enum, trigger: enum.Enum) -> None:
        super().__init__(f"{machine}: no move from {state.name} on {trigger.name}")
        self.machine = machine
        self.state = state
        self.trigger = trigger

    def __reduce__(self) -> tuple[type[IllegalTransition], tuple[str, enum.Enum, enum.Enum]]:
        return (type(self), (self.machine, self.state, self.trigger))


class Step(dict[S, S]):
    """One trigger's moves: ``step[state]`` is the next state, or ``IllegalTransition``."""

    __slots__ = ("machine", "trigger")

    def __init__(self, machine: str, trigger: enum.Enum, moves: Mapping[S, S]) -> None:
        super().__init__(moves)
        self.machine = machine
        self.trigger = trigger

    def __missing__(self, state: S) -> S:
        raise IllegalTransition(self.machine, state, self.trigger)


class Transitions(Generic[S, T]):
    """A package's state table: ``{state: {trigger: next state}}`` and its initial state.

    Every member of the state enum must be a key (a final state with ``{}`` or only moves back
    to itself); every state named must belong to that enum. ``next`` looks one move up (cold
    paths); ``on`` gives the precomputed ``Step`` of one trigger (hot paths).
    """

    def __init__(self, name: str, initial: S, table: Mapping[S, Mapping[T, S]]) -> None:
        states = type(initial)
        missing = [state.name for state in states if state not in table]
        if missing:
            raise ValueError(f"{name}: states without a row: {missing}")
        for state, moves in table.items():
            for target in moves.values():
                if type(state) is not states or type(target) is not states:
                    raise ValueError(f"{name}: {state!r} -> {target!r} leaves {states.__name__}")
        self.name = name
        self.initial = initial
        self._table: dict[S, dict[T, S]] = {state: dict(moves) for state, moves in table.items()}
        triggers: set[T] = {trigger for moves in table.values() for trigger in moves}
        self._steps: dict[T, Step[S]] = {
            trigger: Step(
                name,
                trigger,
                {state: moves[trigger] for state, moves in table.items() if trigger in moves},
            )
            for trigger in triggers
        }

    def __repr__(self) -> str:
        return f"<Transitions {self.name}: {len(self._table)} states>"

    @property
    def states(self) -> tuple[S, ...]:
        """Every state, in the table's order."""
        return tuple(self._table)

    def moves(self, state: S) -> Mapping[T, S]:
        """The triggers ``state`` allows and where each leads."""
        return self._table[state]

    def next(self, state: S, trigger: T) -> S:
        """The state ``trigger`` leads to from ``state``; ``IllegalTransition`` if none."""
        target = self._table[state].get(trigger)
        if target is None:
            raise IllegalTransition(self.name, state, trigger)
        return target

    def on(self, trigger: T) -> Step[S]:
        """Every move of ``trigger``, as a dict to look the current state up in."""
        step = self._steps.get(trigger)
        if step is None:
            step = self._steps[trigger] = Step(self.name, trigger, {})
        return step

    @property
    def final(self) -> frozenset[S]:
        """The states no trigger leads out of."""
        return frozenset(
            state
            for state, moves in self._table.items()
            if all(target is state for target in moves.values())
        )

    def reachable(self, start: S | None = None) -> frozenset[S]:
        """Every state some sequence of triggers leads to from ``start`` (the initial state)."""
        seen = {self.initial if start is None else start}
        todo = list(seen)
        while todo:
            for target in self._table[todo.pop()].values():
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return frozenset(seen)

    def unused(self, triggers: Iterable[T]) -> frozenset[T]:
        """The triggers of ``triggers`` that no state allows (a table that forgot one)."""
        return frozenset(trigger for trigger in triggers if trigger not in self._steps)
