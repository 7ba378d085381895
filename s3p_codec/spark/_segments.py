"""Step one on Spark: the TCP segments of each capture file, as Arrow record batches.

Each file is read by one task with the capture layer's own ``read_segments``, so files of a
rotated set (``tcpdump -C``/``-G``) are read in parallel. Every segment row carries its flow key
(both endpoints, lower one first, as ``capture.flow_key`` computes it) so that Spark can shuffle
the segments of one connection to one place, whichever files they came from.

A file that cannot be read, or that breaks off mid-record, yields one *error row* (flow columns
null, ``error`` set) after the segments read before the break: the job never fails because of one
bad file, and the error is reported and counted downstream.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from s3p_codec.capture import CaptureFileError, Segment, flow_key, read_segments

__all__ = [
    "BATCH_BYTES",
    "BATCH_ROWS",
    "FLOW_COLUMNS",
    "SEGMENT_SCHEMA",
    "SEGMENT_FIELDS",
    "file_error",
    "file_segments",
    "segment_ddl",
]

FLOW_COLUMNS = ("flow_a_addr", "flow_a_port", "flow_b_addr", "flow_b_port")
"""The grouping key of the shuffle: ``capture.flow_key`` of the segment, one column per part."""

SEGMENT_SCHEMA = pa.schema(
    [
        pa.field("flow_a_addr", pa.string()),
        pa.field("flow_a_port", pa.int32()),
        pa.field("flow_b_addr", pa.string()),
        pa.field("flow_b_port", pa.int32()),
        pa.field("file", pa.string()),
        pa.field("file_index", pa.int32()),
        pa.field("number", pa.int64()),
        pa.field("ts", pa.float64()),
        pa.field("src", pa.string()),
        pa.field("sport", pa.int32()),
        pa.field("dst", pa.string()),
        pa.field("dport", pa.int32()),
        pa.field("seq", pa.int64()),
        pa.field("ack", pa.int64()),
        pa.field("flags", pa.int32()),
        pa.field("payload", pa.binary()),
        pa.field("length", pa.int64()),
        pa.field("error_type", pa.string()),
        pa.field("error", pa.string()),
    ]
)
"""One row per TCP segment (the fields of ``capture.Segment`` plus the flow key), or per broken
file (``error`` set, flow and segment columns null)."""

#: Most rows in one Arrow batch a reader yields.
BATCH_ROWS = 8192
BATCH_BYTES = 8 << 20
"""A batch is flushed at whichever bound comes first, so a task holds at most ~8 MiB of payload."""

#: The segment columns, in order, as ``capture.Segment`` names them.
SEGMENT_FIELDS = (
    "file", "file_index", "number", "ts", "src", "sport", "dst", "dport", "seq", "ack", "flags",
    "payload", "length",
)  # fmt: skip


_DDL_TYPES = {pa.string(): "string", pa.int32(): "int", pa.int64(): "bigint",
              pa.float64(): "double", pa.binary(): "binary"}  # fmt: skip


def segment_ddl() -> str:
    """``SEGMENT_SCHEMA`` as a Spark DDL string."""
    return ", ".join(f"`{f.name}` {_DDL_TYPES[f.type]}" for f in SEGMENT_SCHEMA)


_FIELDS_OF = operator.attrgetter(*SEGMENT_FIELDS)
"""A segment's ``SEGMENT_FIELDS`` as one tuple (one C call, not thirteen attribute reads)."""


def _batch(
    held: list[Segment], error: tuple[str, int, int, str, str] | None = None
) -> pa.RecordBatch:
    """Segments (and an error row: file, file index, last packet, type, message) as a batch.

    Built column-wise: the segments are transposed once (``zip``), which costs a fraction of
    appending every field of every segment to its own list.
    """
    keys: list[tuple[Any, ...]] = [flow_key(segment) for segment in held]
    values: list[tuple[Any, ...]] = [_FIELDS_OF(segment) for segment in held]
    blank: tuple[Any, ...] = (None,) * len(SEGMENT_FIELDS)
    if error is not None:
        file, file_index, last, _kind, _message = error
        keys.append((None, None, None, None))
        values.append((file, file_index, last, *blank[3:]))
    rows = len(values)
    # Lists, not the tuples zip gives: pyarrow converts a list several times faster.
    key_columns = [list(c) for c in zip(*keys, strict=True)] if rows else [[]] * 4
    field_columns = [list(c) for c in zip(*values, strict=True)] if rows else [[]] * len(blank)
    errors: list[list[Any]] = [[None] * rows, [None] * rows]
    if error is not None:
        errors[0][-1] = error[3]
        errors[1][-1] = error[4]
    columns = [*key_columns, *field_columns, *errors]
    return pa.RecordBatch.from_arrays(
        [
            pa.array(values, type=field.type)
            for values, field in zip(columns, SEGMENT_SCHEMA, strict=True)
        ],
        schema=SEGMENT_SCHEMA,
    )


def file_error(exc: Exception, name: str) -> str:
    """The message of an error row: the capture layer's words, or the OS's naming the file as
    the caller did (``name``), whatever path this worker opened it by."""
    if isinstance(exc, CaptureFileError):
        return exc.message
    if isinstance(exc, OSError) and exc.errno:
        return str(type(exc)(exc.errno, exc.strerror, name))
    return str(exc)


def file_segments(
    path: str, file_index: int, name: str | None = None, *, batch_rows: int = BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """The segments of one capture file as record batches, then an error row if it broke."""
    label = path if name is None else name
    held: list[Segment] = []
    size = 0
    last = 0
    try:
        for segment in read_segments(path, file_index, label):
            held.append(segment)
            last = segment.number
            size += len(segment.payload)
            if len(held) >= batch_rows or size >= BATCH_BYTES:
                yield _batch(held)
                held = []
                size = 0
        problem: Exception | None = None
    except (CaptureFileError, OSError) as exc:
        problem = exc
    if problem is not None:
        message = file_error(problem, label)
        yield _batch(held, (label, file_index, last, type(problem).__name__, message))
    elif held:
        yield _batch(held)
