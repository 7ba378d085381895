"""What the strategy tests share: feeding one of our codecs, and judging a refusal."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from s3p_codec import RemoteProtocolError
from s3p_codec.testing import Malformed, MalformedReply


def feed(
    conn: Any, pieces: Iterable[bytes], pending: Iterable[object] = (), *, end: bool = False
) -> tuple[list[object], RemoteProtocolError | None]:
    """Send ``pending`` on ``conn``, feed it ``pieces`` then (``end``) end of stream: the events
    it gave and the error it raised (None if it raised none)."""
    for request in pending:
        conn.send(request)
    events: list[object] = []
    try:
        for piece in [*pieces, b""] if end else pieces:
            conn.receive_data(piece)
            events.extend(conn.events())
    except RemoteProtocolError as exc:
        return events, exc
    return events, None


def assert_refused(case: Malformed | MalformedReply, error: RemoteProtocolError | None) -> None:
    """``error`` is exactly what ``case`` says a strict peer raises."""
    assert error is not None, f"{case.label}: accepted {case.data[:120]!r}"
    assert error.code == case.code, f"{case.label}: {error!r}"
    assert error.fatal == case.fatal, f"{case.label}: {error!r}"
    if isinstance(case, MalformedReply):
        assert error.reply is None, case.label  # a client closes; it owes the server nothing
