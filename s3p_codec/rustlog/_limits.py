"""The spec's constants, and the limits a RustLog connection enforces.

The spec fixes the frame bounds ("MAX_FRAME_SIZE: 10,485,760 bytes (10MB)", "MIN_FRAME_SIZE:
1 byte") and the Produce bounds ("Records array ≤ 1000 elements per batch", "Each record ≤ 10MB
after Base64 decoding"). They are the defaults of ``Limits``; a deployment may tighten them.
Topic names and partition counts are fixed by the protocol, not by memory, so they are plain
constants.
"""

from __future__ import annotations

import attrs

__all__ = [
    "LENGTH_FIELD_SIZE",
    "MAX_FRAME_SIZE",
    "MAX_JSON_DEPTH",
    "MAX_PARTITION_COUNT",
    "MAX_RECORDS_PER_PRODUCE",
    "MAX_RECORD_SIZE",
    "MAX_TOPIC_LENGTH",
    "MIN_FRAME_SIZE",
    "Limits",
    "U16_MAX",
    "U32_MAX",
    "U64_MAX",
]

MAX_FRAME_SIZE = 10_485_760
""""MAX_FRAME_SIZE: 10,485,760 bytes (10MB)"."""
MIN_FRAME_SIZE = 1
""""MIN_FRAME_SIZE: 1 byte": a zero length is the spec's ``FrameError::EmptyFrame``."""
LENGTH_FIELD_SIZE = 4
""""LENGTH_FIELD_SIZE: 4 bytes", "u32 big-endian"."""
MAX_RECORDS_PER_PRODUCE = 1000
""""Records array ≤ 1000 elements per batch"."""
MAX_RECORD_SIZE = 10_485_760
""""Each record ≤ 10MB after Base64 decoding" (10MB read as the spec's MAX_FRAME_SIZE does).

With the default frame limit this bound cannot be reached: base64 makes a record a third
larger, so a 10 MB record never fits in a 10 MB frame. It matters when ``Limits`` lowers it.
"""
MAX_TOPIC_LENGTH = 255
""""Topic name (1-255 characters, alphanumeric + underscore/hyphen)"."""
MAX_PARTITION_COUNT = 1000
""""Partition count: 1-1000 partitions"."""
MAX_JSON_DEPTH = 64
"""Nesting bound for a payload (ours, not the spec's; see ``json_backend``)."""

#: Largest u16.
U16_MAX = (1 << 16) - 1
#: Largest u32.
U32_MAX = (1 << 32) - 1
#: Largest u64.
U64_MAX = (1 << 64) - 1


def _positive_u32(_instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if type(value) is not int or not 1 <= value <= U32_MAX:
        raise ValueError(f"Limits.{attribute.name} must be an integer in 1..{U32_MAX}")


def _frame_size(_instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if type(value) is not int or not MIN_FRAME_SIZE <= value <= U32_MAX:
        raise ValueError(f"Limits.{attribute.name} must fit the u32 length field")


@attrs.frozen(slots=True)
class Limits:
    """Bounds on what a connection accepts and sends; the defaults are the spec's.

    ``max_frame_size`` is checked on the 4-byte header alone, before any payload is buffered.
    """

    max_frame_size: int = attrs.field(default=MAX_FRAME_SIZE, validator=_frame_size)
    """Largest frame payload, judged from the 4-byte header alone (larger: 413, fatal)."""
    max_records_per_produce: int = attrs.field(
        default=MAX_RECORDS_PER_PRODUCE, validator=_positive_u32
    )
    """Most records in one Produce (more: 400, recoverable)."""
    max_record_size: int = attrs.field(default=MAX_RECORD_SIZE, validator=_positive_u32)
    """Largest record after base64 decoding (larger: 413, recoverable)."""
