"""Offsets: opaque, lexicographically sortable position tokens, and the two sentinels.

"Offsets are single tokens and MUST NOT contain ``,``, ``&``, ``=``, ``?``, or ``/``" and
servers "SHOULD use URL-safe characters": this codec accepts printable ASCII without spaces
(0x21-0x7E) minus those five, at most ``Limits.max_offset_length`` characters. ``-1`` (stream
beginning) and ``now`` (current tail) are reserved: "Server implementations MUST NOT generate
these strings as actual stream offsets".

``format_offset`` mints the reference server's shape, ``%016d_%016d`` (read sequence, byte
position), which sorts lexicographically in the same order as numerically.
"""

from __future__ import annotations

__all__ = [
    "BEGINNING",
    "FORBIDDEN_OFFSET_CHARS",
    "NOW",
    "format_offset",
    "is_sentinel",
    "offset_error",
    "parse_offset",
]

#: The offset that means the start of a stream.
BEGINNING = "-1"
#: The offset that means the current tail (read only what comes next).
NOW = "now"
#: Characters an offset may not contain (they would break the query string).
FORBIDDEN_OFFSET_CHARS = frozenset(",&=?/")
_WIDTH = 16
_MAX_PART = 10**_WIDTH - 1


def offset_error(offset: str, max_length: int = 256) -> str | None:
    """Why ``offset`` is not a valid offset token (sentinels included), or None if it is."""
    if not offset:
        return "empty offset"
    if len(offset) > max_length:
        return f"offset longer than {max_length} characters"
    for char in offset:
        if char in FORBIDDEN_OFFSET_CHARS:
            return f"offset MUST NOT contain {char!r}"
        if not "\x21" <= char <= "\x7e":
            return "offset must be printable ASCII without spaces"
    return None


def is_sentinel(offset: str) -> bool:
    """True for the reserved sentinels ``-1`` and ``now``."""
    return offset in (BEGINNING, NOW)


def format_offset(read_seq: int, position: int) -> str:
    """The ``%016d_%016d`` offset of (read sequence, byte position).

    Raises ``ValueError`` when either part is negative or has more than 16 digits.
    """
    if not (0 <= read_seq <= _MAX_PART and 0 <= position <= _MAX_PART):
        raise ValueError("offset parts must be in [0, 10**16)")
    return f"{read_seq:0{_WIDTH}d}_{position:0{_WIDTH}d}"


def parse_offset(offset: str) -> tuple[int, int] | None:
    """(read sequence, byte position) of a ``digits_digits`` offset, or None for other shapes."""
    head, sep, tail = offset.partition("_")
    if not sep or not head or not tail:
        return None
    if not (head.isascii() and head.isdigit() and tail.isascii() and tail.isdigit()):
        return None
    if len(head) > _WIDTH or len(tail) > _WIDTH:
        return None
    return int(head), int(tail)
