"""The state table every codec moves by: lookups, the internal error, and what it proves."""

from __future__ import annotations

import enum
import pickle

import pytest

from s3p_codec._core.transitions import IllegalTransition, StateEnum, Step, Transitions


class _S(StateEnum):
    IDLE = "idle"
    BUSY = "busy"
    DONE = "done"
    BROKEN = "broken"


class _T(enum.Enum):
    GO = "go"
    STOP = "stop"
    FAIL = "fail"
    NEVER = "never"


def _table() -> Transitions[_S, _T]:
    return Transitions(
        "toy",
        _S.IDLE,
        {
            _S.IDLE: {_T.GO: _S.BUSY, _T.FAIL: _S.BROKEN},
            _S.BUSY: {_T.GO: _S.BUSY, _T.STOP: _S.DONE, _T.FAIL: _S.BROKEN},
            _S.DONE: {_T.STOP: _S.DONE},
            _S.BROKEN: {},
        },
    )


def test_next_and_on_give_the_same_moves() -> None:
    table = _table()
    for state in _S:
        for trigger, target in table.moves(state).items():
            assert table.next(state, trigger) is target
            assert table.on(trigger)[state] is target
    assert table.initial is _S.IDLE
    assert table.states == tuple(_S)


def test_a_move_the_table_lacks_is_an_illegal_transition_not_a_silent_no_op() -> None:
    table = _table()
    with pytest.raises(IllegalTransition) as raised:
        table.next(_S.BROKEN, _T.GO)
    assert (raised.value.machine, raised.value.state, raised.value.trigger) == (
        "toy",
        _S.BROKEN,
        _T.GO,
    )
    assert str(raised.value) == "toy: no move from BROKEN on GO"
    with pytest.raises(IllegalTransition, match="no move from DONE on GO"):
        table.on(_T.GO)[_S.DONE]
    # A trigger no state allows still gives a Step, which refuses every state.
    with pytest.raises(IllegalTransition, match="no move from IDLE on NEVER"):
        table.on(_T.NEVER)[_S.IDLE]


def test_the_internal_error_is_an_assertion_and_no_protocol_error() -> None:
    from s3p_codec._core.errors import ProtocolError

    assert issubclass(IllegalTransition, AssertionError)
    assert not issubclass(IllegalTransition, ProtocolError)


def test_the_internal_error_survives_pickling() -> None:
    error = IllegalTransition("toy", _S.DONE, _T.FAIL)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.machine, copy.state, copy.trigger, str(copy)) == (
        "toy",
        _S.DONE,
        _T.FAIL,
        str(error),
    )


def test_a_step_is_a_plain_dict_lookup() -> None:
    step = _table().on(_T.STOP)
    assert isinstance(step, Step)
    assert isinstance(step, dict)
    assert dict(step) == {_S.BUSY: _S.DONE, _S.DONE: _S.DONE}
    assert step.get(_S.IDLE) is None  # only ``[]`` raises


def test_final_states_and_reachability() -> None:
    table = _table()
    assert table.final == {_S.DONE, _S.BROKEN}
    assert table.reachable() == set(_S)
    assert table.reachable(_S.DONE) == {_S.DONE}
    assert table.unused(_T) == {_T.NEVER}


def test_a_table_must_name_every_state_and_only_its_own() -> None:
    with pytest.raises(ValueError, match="without a row"):
        Transitions("toy", _S.IDLE, {_S.IDLE: {_T.GO: _S.BUSY}})

    class _Other(StateEnum):
        X = "x"

    rows: dict[enum.Enum, dict[_T, enum.Enum]] = {state: {} for state in _S}
    rows[_S.IDLE] = {_T.GO: _Other.X}
    with pytest.raises(ValueError, match="leaves _S"):
        Transitions("toy", _S.IDLE, rows)  # type: ignore[arg-type]


def test_state_members_hash_by_identity_and_still_behave_as_enum_members() -> None:
    assert hash(_S.IDLE) == object.__hash__(_S.IDLE)
    assert _S("idle") is _S.IDLE
    assert _S["BUSY"] is _S.BUSY
    assert {_S.IDLE: 1}[_S.IDLE] == 1
    assert pickle.loads(pickle.dumps(_S.DONE)) is _S.DONE
    assert isinstance(_S.IDLE, enum.Enum)
