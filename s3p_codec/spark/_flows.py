"""Steps two and three on Spark: one flow's shuffled segments in, the capture rows out.

Spark shuffles the segments by flow key (``segments.FLOW_COLUMNS``) and sorts each partition
by (flow key, file index, packet number); ``decode_chunks`` (chunk rows, what ``decode``
shuffles) or ``decode_sorted`` (a row per segment) then hands each flow's segments to the
capture layer's own ``decode_flow``, so every flow is decoded by the same code,
in one place, as in the single-process decoder. A task holds one flow's segments at a time:
memory is bounded by the largest flow, never by the input.

Error rows of broken files (null flow key) become the same ``capture_error`` rows that
``capture.decode_files`` writes.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Mapping

import pyarrow as pa

from s3p_codec.capture import (
    COLUMNS,
    Row,
    Segment,
    arrow_schema,
    capture_error_row,
    decode_flow,
    parse_decode_as,
)
from s3p_codec.spark._chunks import unpack_chunk
from s3p_codec.spark._segments import SEGMENT_FIELDS

__all__ = [
    "EVENT_COLUMNS",
    "capture_error_row",
    "decode_chunks",
    "decode_options",
    "decode_sorted",
    "parse_options",
    "rows_to_batch",
    "spark_ddl",
]

#: The column names of a decoded-events DataFrame, in order (``capture.COLUMNS``).
EVENT_COLUMNS = tuple(c.name for c in COLUMNS)
_FLOW_KEY = ("flow_a_addr", "flow_a_port", "flow_b_addr", "flow_b_port")
_SPARK_TYPES = {"str": "string", "int": "bigint", "float": "double", "bool": "boolean"}


def spark_ddl() -> str:
    """The Spark schema of the rows, as DDL: ``capture.COLUMNS`` names, types and order."""
    return ", ".join(
        f"`{c.name}` {_SPARK_TYPES[c.kind]}{'' if c.nullable else ' NOT NULL'}" for c in COLUMNS
    )


_ROW_VALUES = operator.attrgetter(*EVENT_COLUMNS)
"""A row's written columns as one tuple (one C call, not twenty attribute reads)."""


def rows_to_batch(rows: Iterable[Row]) -> pa.RecordBatch:
    """Rows as one Arrow record batch with ``capture.arrow_schema()``.

    Built column-wise: the rows are transposed once (``zip``), then each column is converted
    by pyarrow in one call.
    """
    values = [_ROW_VALUES(r) for r in rows]
    schema = arrow_schema()
    columns = [list(c) for c in zip(*values, strict=True)] if values else [[] for _ in schema]
    arrays = [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


_BATCH_END = None  # marks the end of an input batch in a stream of pieces


def decode_chunks(
    batches: Iterable[pa.RecordBatch], decode_as: Mapping[int, str], batch_rows: int = 4096
) -> Iterator[pa.RecordBatch]:
    """Decode a partition of chunk rows (``chunks.CHUNK_SCHEMA``) sorted by (flow key, file
    index, first packet number), one flow at a time, as ``decode_sorted`` does segment rows.

    A flow's chunks arrive together and in capture order; its segments are unpacked chunk by
    chunk and decoded (``decode_flow``) as soon as the key changes, so a task holds one input
    batch and one flow's segments. The binary columns are read one value at a time, never the
    whole batch's payloads at once.
    """
    return _decode_runs(_chunk_pieces(batches), decode_as, batch_rows)


def _chunk_pieces(
    batches: Iterable[pa.RecordBatch],
) -> Iterator[Row | tuple[tuple[object, ...], list[Segment]] | None]:
    for batch in batches:
        names = ("flow_a_addr", "flow_a_port", "flow_b_addr", "flow_b_port", "file",
                 "file_index", "error_type", "error")  # fmt: skip
        small = [batch.column(name).to_pylist() for name in names]
        headers = batch.column("headers")
        payloads = batch.column("payloads")
        for i, (a_addr, a_port, b_addr, b_port, file, index, kind, message) in enumerate(
            zip(*small, strict=True)
        ):
            if message is not None:
                yield capture_error_row(str(file), str(kind), str(message))
                continue
            key = (a_addr, a_port, b_addr, b_port)
            yield key, unpack_chunk(key, file, index, headers[i].as_py(), payloads[i].as_py())
        yield _BATCH_END


def _decode_runs(
    pieces: Iterable[Row | tuple[tuple[object, ...], list[Segment]] | None],
    decode_as: Mapping[int, str],
    batch_rows: int,
) -> Iterator[pa.RecordBatch]:
    """Decode a partition's flows as their key changes (pieces: error rows, ``(key, segments)``
    of one flow in capture order, or ``_BATCH_END`` after each input batch); error rows last."""
    current: tuple[object, ...] | None = None
    flow: list[Segment] = []
    errors: list[Row] = []
    out: list[Row] = []
    for piece in pieces:
        if piece is _BATCH_END:
            if len(out) >= batch_rows:
                yield rows_to_batch(out)
                out = []
        elif isinstance(piece, tuple):
            key, segments = piece
            if key != current:
                if flow:
                    out += decode_flow(flow, decode_as)
                    flow = []
                current = key
            flow += segments
        else:
            errors.append(piece)
    if flow:
        out += decode_flow(flow, decode_as)
    out += errors
    if out:
        yield rows_to_batch(out)


def decode_sorted(
    batches: Iterable[pa.RecordBatch], decode_as: Mapping[int, str], batch_rows: int = 4096
) -> Iterator[pa.RecordBatch]:
    """Decode a partition of segment rows sorted by flow key, one flow at a time.

    Spark sorts each shuffle partition by (flow key, file index, packet number), so a flow's
    segments arrive together and in capture order: each flow is decoded (``decode_flow``) as
    soon as the key changes and forgotten, which keeps memory at one flow's segments. Compared
    with a grouped-map UDF this makes one Python call per partition instead of one per flow.
    """
    return _decode_runs(_segment_pieces(batches), decode_as, batch_rows)


def _segment_pieces(
    batches: Iterable[pa.RecordBatch],
) -> Iterator[Row | tuple[tuple[object, ...], list[Segment]] | None]:
    for batch in batches:
        keys = zip(*(batch.column(name).to_pylist() for name in _FLOW_KEY), strict=True)
        fields = [batch.column(name).to_pylist() for name in SEGMENT_FIELDS]
        kinds = batch.column("error_type").to_pylist()
        messages = batch.column("error").to_pylist()
        for key, values, kind, message in zip(keys, zip(*fields, strict=True), kinds, messages,
                                              strict=True):  # fmt: skip
            if message is not None:
                yield capture_error_row(str(values[0]), str(kind), str(message))
            else:
                yield key, [Segment(*values)]
        yield _BATCH_END


def decode_options(decode_as: Mapping[int, str] | None) -> str:
    """A port map as the data sources' ``decode_as`` option (``7500=s3p,7600=rustlog``)."""
    return ",".join(f"{port}={proto}" for port, proto in sorted((decode_as or {}).items()))


def parse_options(text: str | None) -> dict[int, str]:
    """The ``decode_as`` option back into a port map (validated by the capture layer)."""
    specs = [part.strip() for part in (text or "").split(",") if part.strip()]
    return parse_decode_as(specs)
