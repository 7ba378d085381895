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

# Loaded on first use, as the protocol packages are: the command line builds its parser from
# this package at every start, and the replay machinery imports all five codecs (~0.35 s).

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from s3p_codec.replay._api import parse_target, replay, replay_conversations
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
    from s3p_codec.replay._session import Target

_WHERE = {
    "parse_target": "_api",
    "replay": "_api",
    "replay_conversations": "_api",
    "Pairing": "_compare",
    "Conversation": "_conversations",
    "Exchange": "_conversations",
    "load_conversations": "_conversations",
    "format_summary": "_report",
    "write_jsonl": "_report",
    "write_text": "_report",
    "ConversationResult": "_results",
    "Outcome": "_results",
    "RequestResult": "_results",
    "Summary": "_results",
    "summarize": "_results",
    "Options": "_run",
    "Target": "_session",
}

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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 's3p_codec.replay' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"s3p_codec.replay.{module}"), name)
    globals()[name] = value  # looked up here from now on, and seen by help() and autodoc
    return value
