"""The cursor algorithm for CDN collapsing (clock and random source passed in).

"Servers divide time into fixed intervals (default: 20 seconds) counted from an epoch (default:
October 9, 2024 00:00:00 UTC). The cursor value is the interval number as a decimal string."
"When a client provides a cursor query parameter that is greater than or equal to the current
interval number, the server MUST return a cursor strictly greater than the client's cursor (by
adding random jitter of 1-3600 seconds)."
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = [
    "CURSOR_EPOCH",
    "CURSOR_INTERVAL_SECONDS",
    "MAX_JITTER_SECONDS",
    "current_interval",
    "response_cursor",
]

#: The spec's default cursor epoch: 2024-10-09T00:00:00Z, in Unix seconds.
CURSOR_EPOCH = 1728432000.0  # 2024-10-09T00:00:00Z as Unix seconds
#: The spec's default cursor interval, in seconds.
CURSOR_INTERVAL_SECONDS = 20
MIN_JITTER_SECONDS = 1
#: Upper bound of the random jitter added to a client's cursor (the spec's 1-3600 s).
MAX_JITTER_SECONDS = 3600


def current_interval(
    now: float, *, epoch: float = CURSOR_EPOCH, interval: int = CURSOR_INTERVAL_SECONDS
) -> int:
    """floor((now - epoch) / interval), ``now`` in Unix seconds."""
    return int((now - epoch) // interval)


def response_cursor(
    client_cursor: str | None,
    now: float,
    randint: Callable[[int, int], int],
    *,
    epoch: float = CURSOR_EPOCH,
    interval: int = CURSOR_INTERVAL_SECONDS,
) -> str:
    """The cursor to send: the current interval, or the client's plus jitter if not behind it.

    ``randint(a, b)`` returns an integer in [a, b] (``random.randint`` fits); the jitter J is
    drawn from [1, 3600] seconds and converted to max(1, ceil(J / interval)) intervals, so the
    result is always strictly greater than an echoed cursor that is not behind the clock.
    A cursor that is not a decimal integer is treated as absent.
    """
    now_interval = current_interval(now, epoch=epoch, interval=interval)
    if client_cursor is None or not (client_cursor.isascii() and client_cursor.isdigit()):
        return str(now_interval)
    if len(client_cursor) > 20:
        # Longer than any 64-bit interval: treat as garbage rather than do bignum arithmetic.
        return str(now_interval)
    echoed = int(client_cursor)
    if echoed < now_interval:
        return str(now_interval)
    jitter = randint(MIN_JITTER_SECONDS, MAX_JITTER_SECONDS)
    return str(echoed + max(1, -(-jitter // interval)))
