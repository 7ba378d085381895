"""The idempotent-producer state machine (Kafka-style), pure: state in, decision out.

Validation, as the spec writes it::

    epoch < state.epoch            -> 403 Forbidden, Producer-Epoch: <current epoch>
    epoch > state.epoch, seq != 0  -> 400 Bad Request (new epoch must start at seq=0)
    epoch > state.epoch, seq == 0  -> accept, new epoch established
    seq <= state.lastSeq           -> 204 No Content (duplicate, idempotent success)
    seq == state.lastSeq + 1       -> accept
    seq >  state.lastSeq + 1       -> 409 Conflict, Producer-Expected-Seq / Producer-Received-Seq

A producer the stream has never seen must start at ``seq == 0`` (any epoch); anything else is a
gap with expected sequence 0. ``check`` never mutates: the store commits ``decision.state``
only once the append itself succeeded, so a failed append (bad JSON) does not advance it.
"""

from __future__ import annotations

import enum

import attrs

__all__ = ["MAX_PRODUCER_INT", "ProducerDecision", "ProducerOutcome", "ProducerState", "check"]

MAX_PRODUCER_INT = 2**53 - 1
"""Producer-Epoch and Producer-Seq "MUST be a non-negative integer <= 2^53-1"."""


@attrs.frozen(slots=True)
class ProducerState:
    """What a stream remembers of one producer id."""

    epoch: int
    last_seq: int


class ProducerOutcome(enum.Enum):
    """What the idempotent producer rules decide for one append (each maps to one HTTP status)."""
    ACCEPTED = "accepted"  # 200 OK
    DUPLICATE = "duplicate"  # 204 No Content
    STALE_EPOCH = "stale_epoch"  # 403 Forbidden
    INVALID_EPOCH_SEQ = "invalid_epoch_seq"  # 400 Bad Request
    SEQUENCE_GAP = "sequence_gap"  # 409 Conflict


@attrs.frozen(slots=True)
class ProducerDecision:
    """The outcome, and what goes in the response headers.

    ``state`` is the state to commit (ACCEPTED only). ``last_seq`` is the highest accepted
    sequence (ACCEPTED, DUPLICATE): "On success (200/204), the highest accepted sequence number".
    ``current_epoch`` for STALE_EPOCH; ``expected_seq``/``received_seq`` for SEQUENCE_GAP.
    """

    outcome: ProducerOutcome
    state: ProducerState | None = None
    last_seq: int | None = None
    current_epoch: int | None = None
    expected_seq: int | None = None
    received_seq: int | None = None

    @property
    def status(self) -> int:
        """The HTTP status that answers this outcome (200, 204, 403, 400 or 409)."""
        return _STATUS[self.outcome]


_STATUS = {
    ProducerOutcome.ACCEPTED: 200,
    ProducerOutcome.DUPLICATE: 204,
    ProducerOutcome.STALE_EPOCH: 403,
    ProducerOutcome.INVALID_EPOCH_SEQ: 400,
    ProducerOutcome.SEQUENCE_GAP: 409,
}


def check(state: ProducerState | None, epoch: int, seq: int) -> ProducerDecision:
    """Decide what an append with (epoch, seq) does to a producer in ``state``."""
    if state is None:
        if seq != 0:
            return ProducerDecision(ProducerOutcome.SEQUENCE_GAP, expected_seq=0, received_seq=seq)
        return ProducerDecision(ProducerOutcome.ACCEPTED, state=ProducerState(epoch, 0), last_seq=0)
    if epoch < state.epoch:
        return ProducerDecision(ProducerOutcome.STALE_EPOCH, current_epoch=state.epoch)
    if epoch > state.epoch:
        if seq != 0:
            return ProducerDecision(ProducerOutcome.INVALID_EPOCH_SEQ)
        return ProducerDecision(ProducerOutcome.ACCEPTED, state=ProducerState(epoch, 0), last_seq=0)
    if seq <= state.last_seq:
        return ProducerDecision(ProducerOutcome.DUPLICATE, last_seq=state.last_seq)
    if seq == state.last_seq + 1:
        return ProducerDecision(
            ProducerOutcome.ACCEPTED, state=ProducerState(epoch, seq), last_seq=seq
        )
    return ProducerDecision(
        ProducerOutcome.SEQUENCE_GAP, expected_seq=state.last_seq + 1, received_seq=seq
    )
