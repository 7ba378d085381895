"""What ``decode`` shuffles: each flow's segments of a stretch of one file, packed into one row.

Spark's cost is per row and per column: every row a Python task yields is converted from Arrow
into Spark's row format, serialised for the shuffle, sorted, and converted back into Arrow for
the decoding task. A row per TCP segment made the JVM's share of the job about as large as the
decoding itself. So a file's reader keeps, per flow key, the segments it read since the last
flush (at most ``CHUNK_BYTES`` of payload in all), and writes each flow's share as one *chunk
row*: the flow key, the file, the first packet number, a packed header per segment and the
payloads back to back. Spark shuffles and sorts a few hundred rows per flush instead of tens
of thousands, and the payload bytes travel as one binary value, copied but never looked at.

The decoding task unpacks each chunk into the very ``capture.Segment`` objects the file gave
(``unpack_chunk``); a flow's chunks, sorted by (flow key, file index, first packet number), give
its segments in capture order. A file that cannot be read, or breaks off, ends with one error
row (flow columns null, ``error`` set) after the chunks of what was read before, as
``segments.file_segments`` writes it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from s3p_codec.capture import CaptureFileError, Segment, flow_key, read_segments
from s3p_codec.spark._segments import FLOW_COLUMNS, SEGMENT_SCHEMA, file_error

__all__ = [
    "CHUNK_BYTES",
    "CHUNK_SCHEMA",
    "CHUNK_SEGMENTS",
    "chunk_ddl",
    "file_chunks",
    "unpack_chunk",
]

CHUNK_BYTES = 8 << 20
"""Payload bytes a reader holds before it writes its chunks: what one task keeps in memory."""
CHUNK_SEGMENTS = 65536
"""Segments a reader holds before it writes its chunks (bounds a flood of empty segments)."""

CHUNK_SCHEMA = pa.schema(
    [
        # Where the segments come from: the same columns, typed the same, as a segment row.
        *(SEGMENT_SCHEMA.field(name) for name in (*FLOW_COLUMNS, "file", "file_index", "number")),
        pa.field("headers", pa.binary()),
        pa.field("payloads", pa.binary()),
        pa.field("error_type", pa.string()),
        pa.field("error", pa.string()),
    ]
)
"""One row per flow per flush of one file (``number``: the chunk's first packet), or per broken
file (``error`` set, flow columns null, ``number`` the last packet read)."""

_HEADER = struct.Struct("<?qdqqqqI")
"""Per segment: from the key's second endpoint?, number, ts, seq, ack, flags, length, payload
size. Little-endian, no padding: the same bytes on every machine of a cluster."""

_DDL_TYPES = {pa.string(): "string", pa.int32(): "int", pa.int64(): "bigint",
              pa.binary(): "binary"}  # fmt: skip


def chunk_ddl() -> str:
    """``CHUNK_SCHEMA`` as a Spark DDL string."""
    return ", ".join(f"`{f.name}` {_DDL_TYPES[f.type]}" for f in CHUNK_SCHEMA)


class _Held:
    """One flow's segments since the last flush: packed headers and payloads, in file order."""

    __slots__ = ("first", "headers", "payloads")

    def __init__(self, first: int) -> None:
        self.first = first
        self.headers: list[bytes] = []
        self.payloads: list[bytes] = []


def _batch(
    file: str, file_index: int, held: dict[tuple[Any, ...], _Held],
    error: tuple[int, str, str] | None = None,
) -> pa.RecordBatch:  # fmt: skip
    """The chunks of ``held`` (and an error row: last packet, type, message) as one batch."""
    keys = list(held)
    chunks = list(held.values())
    rows = len(keys) + (error is not None)
    columns: list[list[Any]] = [[k[i] for k in keys] for i in range(len(FLOW_COLUMNS))]
    numbers: list[int] = [c.first for c in chunks]
    headers: list[bytes | None] = [b"".join(c.headers) for c in chunks]
    payloads: list[bytes | None] = [b"".join(c.payloads) for c in chunks]
    error_types: list[str | None] = [None] * rows
    errors: list[str | None] = [None] * rows
    if error is not None:
        for column in columns:
            column.append(None)
        numbers.append(error[0])
        headers.append(None)
        payloads.append(None)
        error_types[-1] = error[1]
        errors[-1] = error[2]
    data = [
        *columns, [file] * rows, [file_index] * rows, numbers, headers, payloads, error_types,
        errors,
    ]  # fmt: skip
    arrays = [pa.array(values, type=f.type) for values, f in zip(data, CHUNK_SCHEMA, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=CHUNK_SCHEMA)


def file_chunks(
    path: str,
    file_index: int,
    name: str | None = None,
    *,
    chunk_bytes: int = CHUNK_BYTES,
    chunk_segments: int = CHUNK_SEGMENTS,
) -> Iterator[pa.RecordBatch]:
    """The segments of one capture file as chunk rows (one batch per flush), then an error row
    if the file could not be read or broke off."""
    label = path if name is None else name
    pack = _HEADER.pack
    held: dict[tuple[Any, ...], _Held] = {}
    size = count = last = 0
    try:
        for segment in read_segments(path, file_index, label):
            key = flow_key(segment)
            chunk = held.get(key)
            if chunk is None:
                chunk = held[key] = _Held(segment.number)
            payload = segment.payload
            reverse = segment.sport != key[1] or segment.src != key[0]
            chunk.headers.append(
                pack(reverse, segment.number, segment.ts, segment.seq, segment.ack,
                     segment.flags, segment.length, len(payload))
            )  # fmt: skip
            chunk.payloads.append(payload)
            last = segment.number
            size += len(payload)
            count += 1
            if size >= chunk_bytes or count >= chunk_segments:
                yield _batch(label, file_index, held)
                held = {}
                size = count = 0
        problem: tuple[int, str, str] | None = None
    except (CaptureFileError, OSError) as exc:
        problem = (last, type(exc).__name__, file_error(exc, label))
    if problem is not None or held:
        yield _batch(label, file_index, held, problem)


def unpack_chunk(
    key: tuple[str, int, str, int], file: str, file_index: int, headers: bytes, payloads: bytes
) -> list[Segment]:
    """The segments of one chunk row, equal to those ``capture.read_segments`` gave."""
    a_addr, a_port, b_addr, b_port = key
    out: list[Segment] = []
    append = out.append
    at = 0
    for reverse, number, ts, seq, ack, flags, length, size in _HEADER.iter_unpack(headers):
        end = at + size
        if reverse:
            append(Segment(file, file_index, number, ts, b_addr, b_port, a_addr, a_port, seq, ack,
                           flags, payloads[at:end], length))  # fmt: skip
        else:
            append(Segment(file, file_index, number, ts, a_addr, a_port, b_addr, b_port, seq, ack,
                           flags, payloads[at:end], length))  # fmt: skip
        at = end
    return out
