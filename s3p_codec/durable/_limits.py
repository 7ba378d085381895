"""Bounds on what a Durable Streams connection accepts from its peer."""

from __future__ import annotations

import attrs

__all__ = ["Limits"]


@attrs.frozen(slots=True)
class Limits:
    """Memory bounds; a body over ``max_body_size`` is refused from its ``Content-Length``.

    ``max_offset_length`` follows "Servers SHOULD keep offsets reasonably short (under 256
    characters)". ``max_sse_line`` bounds one SSE line (a ``data:`` line of a data event).
    """

    max_body_size: int = 16 << 20
    """Largest request or response body (over it: 413, from ``Content-Length`` when known)."""
    max_header_size: int = 64 * 1024
    """Largest HTTP head, in bytes."""
    max_offset_length: int = 256
    """Longest offset accepted."""
    max_sse_line: int = 16 << 20
    """Longest SSE line (a ``data:`` line of a data event)."""
    max_sse_event: int = 32 << 20
    """Largest SSE event, all its lines together."""
    max_subscription_streams: int = 1024
    """Most stream paths, acks or keys one subscription request or response may list (the
    reserved ``__ds`` APIs); over it: 429 ``LIMIT_EXCEEDED``, before any is typed."""
