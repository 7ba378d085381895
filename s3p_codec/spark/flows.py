"""Steps two and three on Spark: one flow's shuffled segments in, the capture rows out.

Spark groups the segment rows by flow key (``segments.FLOW_COLUMNS``) and hands each group to
``decode_group`` as one Arrow table; the capture layer's own ``decode_flow`` sorts the segments
back into capture order (file index, packet number) and decodes them, so every flow is decoded
by the same code, in one place, as in the single-process decoder. A group's memory is its
flow's segments: bounded by the largest flow, never by the input.

Error rows of broken files (null flow key, so they form their own group) become the same
``capture_error`` rows that ``capture.decode_files`` writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import pyarrow as pa

from s3p_codec.capture import (
    COLUMNS,
    Row,
    Segment,
    arrow_schema,
    decode_flow,
    parse_decode_as,
)

__all__ = [
    "EVENT_COLUMNS",
    "capture_error_row",
    "decode_group",
    "decode_options",
    "parse_options",
    "rows_to_batch",
    "spark_ddl",
]

EVENT_COLUMNS = tuple(c.name for c in COLUMNS)
_SEGMENT_FIELDS = (
    "file", "file_index", "number", "ts", "src", "sport", "dst", "dport", "seq", "ack", "flags",
    "payload", "length",
)  # fmt: skip
_DETAIL_LIMIT = 200  # the single-process decoder shortens details to this many characters
_SPARK_TYPES = {"str": "string", "int": "bigint", "float": "double", "bool": "boolean"}


def spark_ddl() -> str:
    """The Spark schema of the rows, as DDL: ``capture.COLUMNS`` names, types and order."""
    return ", ".join(
        f"`{c.name}` {_SPARK_TYPES[c.kind]}{'' if c.nullable else ' NOT NULL'}" for c in COLUMNS
    )


def rows_to_batch(rows: Iterable[Row]) -> pa.RecordBatch:
    """Rows as one Arrow record batch with ``capture.arrow_schema()``."""
    listed = list(rows)
    schema = arrow_schema()
    arrays = [
        pa.array([getattr(r, f.name) for r in listed], type=f.type) for f in schema
    ]  # fmt: skip
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _short(text: str) -> str:
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 3] + "..."


def capture_error_row(file: str, error_type: str, message: str) -> Row:
    """The row a capture file that could not be read (or broke off) gives."""
    return Row(
        file=file,
        first_packet=0,
        last_packet=0,
        ts=0.0,
        conversation=f"{file}#0",
        client="",
        server="",
        direction="",
        protocol="unknown",
        kind="capture_error",
        event_type=error_type,
        pair_id=None,
        latency_ms=None,
        stream=None,
        offset=None,
        count=None,
        payload_bytes=None,
        wire_bytes=0,
        error_code="capture_file",
        detail=_short(message),
    )


def _segments(table: pa.Table) -> Iterator[Segment]:
    columns = [table.column(name).to_pylist() for name in _SEGMENT_FIELDS]
    for values in zip(*columns, strict=True):
        yield Segment(*values)


def decode_group(table: pa.Table, decode_as: Mapping[int, str]) -> pa.Table:
    """Decode one group of segment rows (one flow key, or the broken files) into rows."""
    errors = table.column("error")
    if errors.null_count == len(table):
        rows: list[Row] = decode_flow(_segments(table), decode_as)
    else:
        rows = [
            capture_error_row(str(file), str(kind), str(message))
            for file, kind, message in zip(
                table.column("file").to_pylist(),
                table.column("error_type").to_pylist(),
                errors.to_pylist(),
                strict=True,
            )
            if message is not None
        ]
    return pa.Table.from_batches([rows_to_batch(rows)])


def decode_options(decode_as: Mapping[int, str] | None) -> str:
    """A port map as the data sources' ``decode_as`` option (``7500=s3p,7600=rustlog``)."""
    return ",".join(f"{port}={proto}" for port, proto in sorted((decode_as or {}).items()))


def parse_options(text: str | None) -> dict[int, str]:
    """The ``decode_as`` option back into a port map (validated by the capture layer)."""
    specs = [part.strip() for part in (text or "").split(",") if part.strip()]
    return parse_decode_as(specs)
