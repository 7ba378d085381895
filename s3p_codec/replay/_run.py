"""Replay many conversations: in recorded causal order, with bounded concurrency, paced or not.

Conversations that followed each other in the capture must follow each other again (a CREATE on
one connection before an APPEND on the next), yet a conversation that waits for another one's
data (a long poll, an SSE read) must run beside it. So each running conversation announces the
capture time it has reached (its next request not yet sent, or the next recorded answer event
not yet seen live), and a conversation starts only once every earlier one has reached its own
start. Concurrency is bounded by a thread pool that takes conversations in start order, so an
earlier conversation always has a thread before a later one waits for it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import attrs

from s3p_codec.replay._conversations import Conversation
from s3p_codec.replay._dialects import DIALECTS
from s3p_codec.replay._results import ConversationResult, RequestResult
from s3p_codec.replay._session import Live, Target, open_live

__all__ = ["Options", "run"]


@attrs.frozen
class Options:
    """How to replay: ``speed`` None sends as fast as answers come; 1.0 as recorded; N: N x."""

    speed: float | None = None
    timeout: float = 5.0
    concurrency: int = 8
    grace: float = 0.25
    """Seconds to wait for a live answer to a request that had none recorded: one that comes
    is reported at that request, not taken for the next request's answer."""


class _Board:
    """Capture time each conversation has reached, for the ones after it to wait on."""

    def __init__(self, count: int) -> None:
        self._reached = [-math.inf] * count
        self._changed = threading.Condition()

    def reach(self, index: int, ts: float) -> None:
        with self._changed:
            self._reached[index] = ts
            self._changed.notify_all()

    def wait_turn(self, index: int, start: float) -> None:
        with self._changed:
            self._changed.wait_for(lambda: all(t >= start for t in self._reached[:index]))


@attrs.frozen
class _Pacer:
    """Maps capture time to wall time when pacing; never waits when not."""

    speed: float | None
    capture_start: float
    wall_start: float

    def wait(self, ts: float) -> None:
        if self.speed is None:
            return
        delay = self.wall_start + (ts - self.capture_start) / self.speed - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def run(
    conversations: Sequence[Conversation], targets: Sequence[Target], options: Options
) -> list[ConversationResult]:
    """One result per conversation, against ``targets[0]``; later targets are baselines."""
    first = min((c.exchanges[0].ts for c in conversations if c.exchanges), default=0.0)
    replayer = _Replayer(
        conversations, targets, options, _Board(len(conversations)),
        _Pacer(options.speed, first, time.monotonic()),
    )  # fmt: skip
    with ThreadPoolExecutor(max_workers=max(1, options.concurrency)) as pool:
        return list(pool.map(replayer.one, range(len(conversations))))


def _skip_reason(conversation: Conversation) -> str | None:
    if conversation.skipped is not None:
        return conversation.skipped
    dialect = DIALECTS.get(conversation.protocol)
    if dialect is None:
        return f"no replay for protocol {conversation.protocol}"
    return dialect.skip_reason(conversation)


@attrs.frozen
class _Replayer:
    """Everything the conversations of one run share."""

    conversations: Sequence[Conversation]
    targets: Sequence[Target]
    options: Options
    board: _Board
    pacer: _Pacer

    def one(self, index: int) -> ConversationResult:
        """Replay conversation ``index`` once its turn comes; later ones may then start."""
        try:
            return self._replay(index, self.conversations[index])
        finally:
            self.board.reach(index, math.inf)

    def _replay(self, index: int, conversation: Conversation) -> ConversationResult:
        primary = str(self.targets[0])
        result = ConversationResult(conversation.id, conversation.protocol, primary)
        reason = _skip_reason(conversation)
        if reason is not None:
            return attrs.evolve(result, skipped=reason)
        dialect = DIALECTS[conversation.protocol]
        conversation = attrs.evolve(conversation, exchanges=dialect.regroup(conversation.exchanges))
        self.board.wait_turn(index, conversation.exchanges[0].ts)
        self.pacer.wait(conversation.exchanges[0].ts)
        lives: list[Live] = []
        try:
            for target in self.targets:
                try:
                    lives.append(open_live(target, dialect, conversation, self.options.timeout))
                except OSError as exc:
                    error = f"cannot connect to {target}: {exc.strerror or exc}"
                    return attrs.evolve(result, error=error)
            requests = tuple(self._ask(index, conversation, lives))
            return attrs.evolve(result, requests=requests)
        finally:
            for live in lives:
                live.close()

    def _ask(
        self, index: int, conversation: Conversation, lives: list[Live]
    ) -> Iterator[RequestResult]:
        exchanges = conversation.exchanges
        for position, exchange in enumerate(exchanges):
            self.pacer.wait(exchange.ts)
            following = exchanges[position + 1].ts if position + 1 < len(exchanges) else math.inf

            def progress(
                seen: int, times: tuple[float, ...] = exchange.answer_ts, after: float = following
            ) -> None:
                self.board.reach(index, times[seen] if seen < len(times) else after)

            answers = [
                live.ask(exchange, self.options.timeout, progress, self.options.grace)
                for live in lives
            ]
            (live_answer, difference), *baselines = answers
            baseline = next((d for _, d in baselines if d is not None), None)
            yield RequestResult(
                exchange.index, exchange.request, exchange.answer, live_answer, difference,
                baseline if difference is not None else None,
            )  # fmt: skip
            self.board.reach(index, following)
