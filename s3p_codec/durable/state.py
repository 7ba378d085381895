"""The state enum shared by both roles of a Durable Streams connection."""

from __future__ import annotations

import enum

__all__ = ["ConnectionState"]


class ConnectionState(enum.Enum):
    """Where one HTTP connection is (both roles).

    IDLE: between exchanges. BUSY: a request is in flight (client) or owed a response (server).
    STREAMING: an SSE response body is open. CLOSED and ERROR are final.
    """

    IDLE = "idle"
    BUSY = "busy"
    STREAMING = "streaming"
    CLOSED = "closed"
    ERROR = "error"
