"""Replay captured conversations against a server and show where its answers differ.

::

    from s3p_codec import replay

    results = replay.replay(["s3p.pcap"], "127.0.0.1:7500")
    for result in results:
        print(result.id, result.outcome, result.first_difference)
    replay.summarize(results).exit_status        # 0 identical, 1 differs, 2 unreachable

Each conversation that was recorded from its start is sent again, request by request, through
the protocol's client codec over a real socket; each live answer is compared with the recorded
answer to the same request. Server-assigned values (timestamps, offsets, cursors, ETags) are
paired, not compared. ``baseline="HOST:PORT"`` replays to a second server too and reports only
the differences it does not show.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from s3p_codec.replay._compare import Pairing
from s3p_codec.replay._conversations import Conversation, Exchange, load_conversations
from s3p_codec.replay._report import format_summary, write_jsonl, write_text
from s3p_codec.replay._results import (
    ConversationResult,
    Outcome,
    RequestResult,
    Summary,
    summarize,
)
from s3p_codec.replay._run import Options
from s3p_codec.replay._run import run as _run
from s3p_codec.replay._session import Target

__all__ = [
    "Conversation",
    "ConversationResult",
    "Exchange",
    "Options",
    "Outcome",
    "Pairing",
    "RequestResult",
    "Summary",
    "Target",
    "format_summary",
    "load_conversations",
    "parse_target",
    "replay",
    "replay_conversations",
    "summarize",
    "write_jsonl",
    "write_text",
]


def parse_target(text: str) -> Target:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as a ``Target``; ValueError when malformed."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"target must be HOST:PORT, not {text!r}")
    return Target(host.strip("[]"), int(port))


def replay_conversations(
    conversations: list[Conversation],
    to: str | Target,
    *,
    baseline: str | Target | None = None,
    options: Options | None = None,
) -> list[ConversationResult]:
    """Replay conversations already loaded (``load_conversations``); one result each."""
    targets = [to if isinstance(to, Target) else parse_target(to)]
    if baseline is not None:
        targets.append(baseline if isinstance(baseline, Target) else parse_target(baseline))
    return _run(conversations, targets, options or Options())


def replay(
    paths: Iterable[str],
    to: str | Target,
    *,
    decode_as: Mapping[int, str] | None = None,
    baseline: str | Target | None = None,
    options: Options | None = None,
) -> list[ConversationResult]:
    """Load the capture's conversations and replay them to ``to``; one result each."""
    conversations = load_conversations(paths, decode_as)
    return replay_conversations(conversations, to, baseline=baseline, options=options)
