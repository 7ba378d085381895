"""Write a replay's results: readable text for people, JSON lines for tools."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from typing import IO, Any

from s3p_codec.replay._results import ConversationResult, Outcome, Summary, summarize

__all__ = ["write_jsonl", "write_text"]

_COLUMN = 58
_EVENT = 400


def _wrapped(event: object) -> list[str]:
    """An event's repr cut to ``_EVENT`` characters (a 1 MiB read is not worth printing whole),
    wrapped to the column."""
    text = repr(event)
    if len(text) > _EVENT:
        text = f"{text[: _EVENT - 20]}... ({len(text)} characters)"
    return textwrap.wrap(text, _COLUMN)


def _side_by_side(recorded: Sequence[object], live: Sequence[object]) -> list[str]:
    """Two columns, recorded left and live right, each event wrapped to the column width."""
    left = [line for e in recorded for line in _wrapped(e)] or ["(nothing)"]
    right = [line for e in live for line in _wrapped(e)] or ["(nothing)"]
    lines = [f"    {'recorded':<{_COLUMN}} | live"]
    for index in range(max(len(left), len(right))):
        old = left[index] if index < len(left) else ""
        new = right[index] if index < len(right) else ""
        lines.append(f"    {old:<{_COLUMN}} | {new}".rstrip())
    return lines


def _conversation_text(result: ConversationResult) -> list[str]:
    head = f"{result.id} ({result.protocol} -> {result.target})"
    if result.error is not None:
        return [f"{head}: error: {result.error}"]
    if result.skipped is not None:
        return [f"{head}: skipped: {result.skipped}"]
    count = len(result.requests)
    first = result.first_difference
    if first is None:
        return [f"{head}: identical ({count} request{'s' * (count != 1)})"]
    differing = sum(1 for r in result.requests if r.differs)
    lines = [
        f"{head}: differs at request {first.index + 1} of {count} ({differing} differing)",
        f"  request: {first.request!r}",
        f"  {first.difference}",
    ]
    return lines + _side_by_side(first.recorded, first.live)


def format_summary(summary: Summary) -> str:
    """One line of counts."""
    noise = f", {summary.noise} differing on the baseline too" if summary.noise else ""
    return (
        f"{summary.conversations} conversations, {summary.requests} requests: "
        f"{summary.identical} identical, {summary.differing} differing, "
        f"{summary.skipped} skipped, {summary.errors} unreachable{noise}"
    )


def write_text(results: Sequence[ConversationResult], out: IO[str]) -> Summary:
    """One paragraph per conversation, then the summary line."""
    for result in results:
        out.write("\n".join(_conversation_text(result)) + "\n")
    summary = summarize(list(results))
    out.write(format_summary(summary) + "\n")
    return summary


def _jsonable(result: ConversationResult) -> dict[str, Any]:
    first = result.first_difference
    record: dict[str, Any] = {
        "type": "conversation",
        "conversation": result.id,
        "protocol": result.protocol,
        "target": result.target,
        "outcome": result.outcome,
        "requests": len(result.requests),
        "differing": sum(1 for r in result.requests if r.differs),
        "reason": result.skipped or result.error,
    }
    if first is not None and result.outcome == Outcome.DIFFERS:
        record["first_difference"] = {
            "request_index": first.index,
            "request": repr(first.request),
            "difference": first.difference,
            "recorded": [repr(e) for e in first.recorded],
            "live": [repr(e) for e in first.live],
        }
    return record


def write_jsonl(results: Sequence[ConversationResult], out: IO[str]) -> Summary:
    """One JSON object per conversation, then one ``{"type": "summary", ...}``."""
    for result in results:
        out.write(json.dumps(_jsonable(result)) + "\n")
    summary = summarize(list(results))
    out.write(json.dumps({"type": "summary", **_summary_dict(summary)}) + "\n")
    return summary


def _summary_dict(summary: Summary) -> dict[str, int]:
    return {
        "conversations": summary.conversations,
        "requests": summary.requests,
        "identical": summary.identical,
        "differing": summary.differing,
        "skipped": summary.skipped,
        "errors": summary.errors,
        "noise": summary.noise,
        "exit_status": summary.exit_status,
    }
