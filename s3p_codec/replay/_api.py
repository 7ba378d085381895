"""The replay package's functions (``s3p_codec.replay`` exports them, loaded on first use)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from s3p_codec.replay._conversations import Conversation, load_conversations
from s3p_codec.replay._results import ConversationResult
from s3p_codec.replay._run import Options
from s3p_codec.replay._run import run as _run
from s3p_codec.replay._session import Target

__all__ = ["parse_target", "replay", "replay_conversations"]


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
