"""Scope, stream and segment names, checked as Pravega checks them.

A stream's segments are named ``scope/stream/<number>.#epoch.<epoch>``, so a name holding a
``/`` would let scope ``a`` + stream ``b/c`` and scope ``a/b`` + stream ``c`` share one segment
(deleting one would destroy the other's data), and a name of megabytes would be copied into
every listing. Pravega's ``NameUtils`` (``validateScopeName``, ``validateStreamName``) allows
ASCII letters and digits, ``.`` and ``-``, with one leading ``_`` for the system's own names,
and at most ``MAX_NAME_SIZE`` (255) characters; its controller answers ``INVALID_SCOPE_NAME``
and ``INVALID_STREAM_NAME`` otherwise. The controller and the store both use these checks.
"""

from __future__ import annotations

import re

__all__ = [
    "MAX_NAME_SIZE",
    "check_name",
    "check_segment_name",
    "valid_name",
]

MAX_NAME_SIZE = 255
"""Longest scope or stream name (Pravega's ``NameUtils.MAX_NAME_SIZE``)."""

_NAME = re.compile(r"_?[A-Za-z0-9.\-]+")
# Java's \p{Alnum} is ASCII unless UNICODE_CHARACTER_CLASS is set (Pravega does not set it).
_SEGMENT_NUMBER = re.compile(r"[0-9]+\.#epoch\.[0-9]+(#transaction\.[0-9a-f]{32})?")


def check_name(name: str) -> str | None:
    """Why ``name`` is no valid scope or stream name, or None when it is one."""
    if len(name) > MAX_NAME_SIZE:
        return f"name cannot exceed {MAX_NAME_SIZE} characters"
    if _NAME.fullmatch(name) is None:
        return "name must be a-z, A-Z, 0-9, '.', '-' (one leading '_' for system names)"
    return None


def valid_name(name: str) -> bool:
    """Whether ``name`` is a valid scope or stream name (see ``check_name``)."""
    return check_name(name) is None


def check_segment_name(name: str) -> str | None:
    """Why the store must refuse to create segment ``name``, or None.

    A stream segment (its last part ``<number>.#epoch.<epoch>``) must be exactly
    ``scope/stream/<number>``, with a valid scope and stream: otherwise two streams could
    share it. Any other segment name (a standalone segment) has parts of 1 to
    ``MAX_NAME_SIZE`` characters.
    """
    parts = name.split("/")
    if _SEGMENT_NUMBER.fullmatch(parts[-1]) is not None:
        if len(parts) != 3:
            return "a stream segment is named scope/stream/<number>.#epoch.<epoch>"
        for part in parts[:2]:
            why = check_name(part)
            if why is not None:
                return f"{part[:40]!r}: {why}"
        return None
    if any(not part or len(part) > MAX_NAME_SIZE for part in parts):
        return f"each '/'-separated part of a segment name has 1 to {MAX_NAME_SIZE} characters"
    return None
