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
    max_header_size: int = 64 * 1024
    max_offset_length: int = 256
    max_sse_line: int = 16 << 20
    max_sse_event: int = 32 << 20
