"""What Observers yield: typed events tagged with direction, pairing and byte offsets.

Every protocol's ``Observer`` returns these three record types, so the capture layer turns any
protocol's traffic into table rows with one piece of code. Offsets are absolute positions in that
direction's byte stream; the capture layer maps them back to packet numbers.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import attrs

from s3p_codec._core.errors import RemoteProtocolError
from s3p_codec._core.types import Direction

__all__ = ["Observed", "ObservedError", "ObservedGap", "ObserverOutput"]

EventT = TypeVar("EventT")


@attrs.frozen(slots=True)
class Observed(Generic[EventT]):
    """One decoded event.

    ``pair_id`` links a reply to the request it answers: a request gets a fresh id and its reply
    (or replies, for streaming protocols) carry the same one. ``None`` for unpaired events
    (heartbeats, keep-alives, hello).
    """

    direction: Direction
    event: EventT
    start: int
    end: int
    pair_id: int | None = None


@attrs.frozen(slots=True)
class ObservedError:
    """The stream broke the protocol at ``start``.

    ``resynchronized`` tells whether decoding continues (the Observer found a plausible frame or
    line start further on, ``skipped`` bytes later) or this direction is abandoned.
    """

    direction: Direction
    error: RemoteProtocolError
    start: int
    skipped: int = 0
    resynchronized: bool = False


@attrs.frozen(slots=True)
class ObservedGap:
    """``size`` bytes were missing at ``start`` in this direction (reported by the capture)."""

    direction: Direction
    start: int
    size: int
    resynchronized: bool = False


ObserverOutput = Observed[EventT] | ObservedError | ObservedGap
"""What an Observer returns: an event, an error where the stream broke, or a gap."""
