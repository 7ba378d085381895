"""What a replay found: per request, per conversation and in sum."""

from __future__ import annotations

import attrs

__all__ = ["Outcome", "RequestResult", "ConversationResult", "Summary", "summarize"]


class Outcome:
    """The verdict on one conversation (plain strings: they are what JSON lines carry)."""

    IDENTICAL = "identical"
    DIFFERS = "differs"
    SKIPPED = "skipped"
    ERROR = "error"


@attrs.frozen
class RequestResult:
    """One request sent again: the recorded answer, the live one, and how they differ."""

    index: int
    request: object
    recorded: tuple[object, ...]
    live: tuple[object, ...]
    difference: str | None = None
    baseline_difference: str | None = None

    @property
    def differs(self) -> bool:
        """A difference the baseline (if any) does not show too."""
        return self.difference is not None and self.baseline_difference is None


@attrs.frozen
class ConversationResult:
    """One recorded conversation replayed against the target (or skipped, or unreachable)."""

    id: str
    protocol: str
    target: str
    requests: tuple[RequestResult, ...] = ()
    skipped: str | None = None
    error: str | None = None

    @property
    def outcome(self) -> str:
        """identical, differs, skipped or error."""
        if self.error is not None:
            return Outcome.ERROR
        if self.skipped is not None:
            return Outcome.SKIPPED
        return Outcome.DIFFERS if self.first_difference is not None else Outcome.IDENTICAL

    @property
    def first_difference(self) -> RequestResult | None:
        """The first request whose live answer differs from the recorded one."""
        return next((r for r in self.requests if r.differs), None)


@attrs.frozen
class Summary:
    """Counts over a whole replay."""

    conversations: int
    requests: int
    identical: int
    differing: int
    skipped: int
    errors: int
    noise: int

    @property
    def exit_status(self) -> int:
        """0 when nothing differs, 1 when something does, 2 when a target could not be used."""
        if self.errors:
            return 2
        return 1 if self.differing else 0


def summarize(results: list[ConversationResult]) -> Summary:
    """Requests are counted one by one; conversations by their outcome."""
    requests = [r for c in results for r in c.requests]
    return Summary(
        conversations=len(results),
        requests=len(requests),
        identical=sum(1 for r in requests if r.difference is None),
        differing=sum(1 for r in requests if r.differs),
        skipped=sum(1 for c in results if c.outcome == Outcome.SKIPPED),
        errors=sum(1 for c in results if c.outcome == Outcome.ERROR),
        noise=sum(1 for r in requests if r.difference is not None and not r.differs),
    )
