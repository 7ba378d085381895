"""The idempotent-producer state machine, branch by branch of the spec's validation logic."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from s3p_codec.durable.producer import (
    MAX_PRODUCER_INT,
    ProducerOutcome,
    ProducerState,
    check,
)


def test_epoch_and_seq_are_bounded_by_2_to_the_53_minus_1() -> None:
    assert MAX_PRODUCER_INT == 2**53 - 1


def test_a_new_producer_starting_at_seq_0_is_accepted() -> None:
    decision = check(None, 0, 0)
    assert decision.outcome is ProducerOutcome.ACCEPTED
    assert decision.state == ProducerState(0, 0)
    assert decision.status == 200


def test_a_new_producer_must_start_at_seq_0() -> None:
    decision = check(None, 0, 3)
    assert decision.outcome is ProducerOutcome.SEQUENCE_GAP
    assert (decision.expected_seq, decision.received_seq) == (0, 3)


def test_stale_epoch_is_403_with_the_current_epoch() -> None:
    decision = check(ProducerState(2, 7), 1, 8)
    assert decision.outcome is ProducerOutcome.STALE_EPOCH
    assert decision.current_epoch == 2
    assert decision.status == 403


def test_new_epoch_must_start_at_seq_0() -> None:
    assert check(ProducerState(0, 5), 1, 1).outcome is ProducerOutcome.INVALID_EPOCH_SEQ
    assert check(ProducerState(0, 5), 1, 1).status == 400
    accepted = check(ProducerState(0, 5), 1, 0)
    assert accepted.outcome is ProducerOutcome.ACCEPTED
    assert accepted.state == ProducerState(1, 0)


def test_seq_at_or_below_the_last_is_a_duplicate_reporting_the_highest_accepted() -> None:
    for seq in (0, 4, 5):
        decision = check(ProducerState(0, 5), 0, seq)
        assert decision.outcome is ProducerOutcome.DUPLICATE
        assert decision.last_seq == 5
        assert decision.status == 204
        assert decision.state is None


def test_next_seq_is_accepted() -> None:
    decision = check(ProducerState(0, 5), 0, 6)
    assert decision.outcome is ProducerOutcome.ACCEPTED
    assert decision.state == ProducerState(0, 6)
    assert decision.last_seq == 6


def test_a_gap_is_409_with_expected_and_received() -> None:
    decision = check(ProducerState(0, 5), 0, 9)
    assert decision.outcome is ProducerOutcome.SEQUENCE_GAP
    assert (decision.expected_seq, decision.received_seq) == (6, 9)
    assert decision.status == 409


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6)), max_size=40))
def test_accepted_sequences_only_move_forward(requests: list[tuple[int, int]]) -> None:
    state: ProducerState | None = None
    for epoch, seq in requests:
        decision = check(state, epoch, seq)
        if decision.state is not None:
            if state is not None:
                assert (decision.state.epoch, decision.state.last_seq) > (
                    state.epoch,
                    state.last_seq,
                )
            state = decision.state
