"""Configurable limits (spec section 11) and the fixed bounds of the wire format.

"Implementations MUST bound memory usage by enforcing configured limits": every length and count
read from the wire is checked against these before its payload is waited for, so nothing is
allocated from an untrusted number. Defaults are the project's (docs/decisions.rst): name 256
bytes, 1000 records and 8 MiB per APPEND, 1 MiB per record, COUNT 100 by default and 10000 at
most, BLOCK at most 30000 ms.
"""

from __future__ import annotations

import attrs

__all__ = [
    "MAX_DEPTH",
    "MAX_HEADER_LINE",
    "MAX_OPTION_ELEMENTS",
    "MAX_OPTION_SIZE",
    "MAX_TEXT_LINE",
    "Limits",
]

MAX_HEADER_LINE = 21
"""``$``/``*`` header lines: the type byte and at most 20 decimal digits (any u64)."""

MAX_TEXT_LINE = 4096
"""Simple String and Error lines (``+OK``, ``-ERR_LIMITS ...``) are short by nature."""

MAX_OPTION_ELEMENTS = 64
"""Options arrays hold at most this many elements (32 key/value pairs).

The spec names at most three options per command; repeating keys is legal (last value wins) but
an options array of a billion elements is not a request anyone means, so it is ERR_BAD_FORMAT
("malformed command or options array") from its header line.
"""

MAX_OPTION_SIZE = 64
"""Option keys and values are short ASCII words, numbers and timestamps (41 bytes at most)."""

MAX_DEPTH = 2
"""S3P values nest at most two deep (a command holds options/records arrays of Bulk Strings).

The generic wire reader takes its own bound; the typed parsers never recurse at all.
"""


def _positive(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if type(value) is not int or value < 1:
        raise ValueError(f"{attribute.name} must be a positive int, got {value!r}")


def _non_negative(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if type(value) is not int or value < 0:
        raise ValueError(f"{attribute.name} must be a non-negative int, got {value!r}")


@attrs.frozen(slots=True)
class Limits:
    """What one end accepts and sends; a server may configure others than the defaults.

    Over-limit values give ``ERR_LIMITS`` for COUNT, BLOCK, record size, record count and
    aggregate payload, and ``ERR_BAD_FORMAT`` for stream name length (spec section 11).
    """

    max_stream_name: int = attrs.field(default=256, validator=_positive)
    """Longest stream name, in bytes (longer: ``ERR_BAD_FORMAT``)."""
    max_records_per_append: int = attrs.field(default=1000, validator=_positive)
    """Most records in one APPEND (more: ``ERR_LIMITS``)."""
    max_record_size: int = attrs.field(default=1 << 20, validator=_positive)
    """Largest record, in bytes (larger: ``ERR_LIMITS``)."""
    max_append_size: int = attrs.field(default=8 << 20, validator=_positive)
    """Largest sum of record sizes in one APPEND (larger: ``ERR_LIMITS``)."""
    default_count: int = attrs.field(default=100, validator=_positive)
    """The COUNT a READ without one gets (a server's choice; at most ``max_count``)."""
    max_count: int = attrs.field(default=10_000, validator=_positive)
    """Largest COUNT a READ may ask for (larger: ``ERR_LIMITS``)."""
    max_block_ms: int = attrs.field(default=30_000, validator=_non_negative)
    """Longest BLOCK a READ may ask for, in milliseconds (longer: ``ERR_LIMITS``)."""
    max_read_reply_bytes: int = attrs.field(default=8 << 20, validator=_positive)
    """Most record bytes a server puts in one READ reply: the reply is cut at a record
    boundary as a smaller COUNT would cut it (the client reads on from its last ID), so one
    READ of a large stream cannot pin its whole size. At least ``max_record_size``."""

    def __attrs_post_init__(self) -> None:
        if self.default_count > self.max_count:
            raise ValueError("default_count must not exceed max_count")
        if self.max_read_reply_bytes < self.max_record_size:
            raise ValueError("max_read_reply_bytes must be at least max_record_size")
