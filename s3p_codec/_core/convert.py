"""Converters the event classes share, so every package accepts the same inputs.

The API documents sequence fields (``records``, ``headers``, ``events``, ...) as tuples because
events are immutable and hashable; users naturally pass a list. Converting at construction keeps
the events exact while accepting any iterable. ``bytes``/``str`` and non-iterables are left as
they are, so the check at ``send`` can say which type was wanted instead of splitting a single
record into its characters.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["as_tuple"]


def as_tuple(value: Iterable[object]) -> tuple[object, ...]:
    """``value`` as a tuple; a tuple passes through untouched (the parser's fast path)."""
    if type(value) is tuple:
        return value
    if isinstance(value, str | bytes | bytearray | memoryview) or not isinstance(value, Iterable):
        return value  # type: ignore[return-value]  # refused with a clear message at send
    return tuple(value)
