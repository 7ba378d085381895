"""The limits a Pravega connection enforces.

"Max payload 0xFFFFFF" bounds every frame (``MAX_FRAME``, the real ``MAX_WIRECOMMAND_SIZE``);
the other bounds are the real client's event size and a cap on writers per connection, which
each cost a little memory. A deployment may tighten them.
"""

from __future__ import annotations

import attrs

from s3p_codec.pravega._wire import MAX_FRAME

__all__ = ["MAX_FRAME", "Limits"]


@attrs.frozen(slots=True)
class Limits:
    """Bounds on what a peer may make us hold.

    ``max_frame``: the largest payload a header may declare ("Max payload 0xFFFFFF");
    ``max_event_size``: the largest event the block writer sends (the real client's 8 MiB);
    ``max_writers``: writers one connection may set up (each costs a little memory).
    """

    max_frame: int = MAX_FRAME
    """Largest payload a frame header may declare (the protocol's 0xFFFFFF at most)."""
    max_event_size: int = 8 << 20
    """Largest event the client's block writer sends."""
    max_writers: int = 10_000
    """Most writers one connection may set up."""

    def __attrs_post_init__(self) -> None:
        if not 64 <= self.max_frame <= MAX_FRAME:
            raise ValueError(f"max_frame must be in 64..{MAX_FRAME}")
        if self.max_event_size < 0:
            raise ValueError("max_event_size must not be negative")
        if self.max_writers < 1:
            raise ValueError("max_writers must be at least 1")
