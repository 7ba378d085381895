"""``decode_sorted`` and the error rows, without Spark: the per-partition step on its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from s3p_codec import capture
from s3p_codec.spark._flows import decode_sorted, parse_options, rows_to_batch, spark_ddl
from s3p_codec.spark._segments import FLOW_COLUMNS, file_segments
from tests.spark.captures import rotated_set


def _sorted_segments(paths: list[str], batch_rows: int) -> list[pa.RecordBatch]:
    table = pa.Table.from_batches(
        [b for i, p in enumerate(paths) for b in file_segments(p, i, p, batch_rows=batch_rows)]
    )
    order = [(c, "ascending") for c in (*FLOW_COLUMNS, "file_index", "number")]
    return table.sort_by(order).to_batches(max_chunksize=batch_rows)


def _rows(batches: list[pa.RecordBatch]) -> list[tuple[Any, ...]]:
    table = pa.Table.from_batches(batches)
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


def test_sorted_flows_decode_like_the_single_process_decoder(tmp_path: Path) -> None:
    paths = [str(p) for p in rotated_set(tmp_path)]
    expected = sorted((r.as_tuple() for r in capture.decode_files(paths)), key=repr)
    # Tiny batches: flows straddle batch boundaries, and rows come out in several batches.
    got = _rows(list(decode_sorted(_sorted_segments(paths, 5), {}, batch_rows=3)))
    assert got == expected
    assert len(got) > 3


def test_error_rows_match_the_single_process_capture_errors(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"\x00" * 40)
    missing = str(tmp_path / "missing.pcap")
    paths = [str(junk), missing]
    expected = sorted((r.as_tuple() for r in capture.decode_files(paths)), key=repr)
    batches = [b for i, p in enumerate(paths) for b in file_segments(p, i, p)]
    assert _rows(list(decode_sorted(batches, {}))) == expected
    assert [r[9] for r in expected] == ["capture_error", "capture_error"]


def test_rows_batch_has_the_capture_schema() -> None:
    assert rows_to_batch([]).schema == capture.arrow_schema()
    assert spark_ddl().split(", ")[0] == "`file` string NOT NULL"


def test_decode_as_option_round_trips_through_the_capture_parser() -> None:
    assert parse_options("7500=s3p, 7600=rustlog") == {7500: "s3p", 7600: "rustlog"}
    assert parse_options(None) == {}


def test_segment_columns_follow_the_capture_segment_fields_in_order() -> None:
    # Segments are rebuilt positionally from these columns: a new or moved field must show here.
    import attrs

    from s3p_codec.spark import _flows as flows
    from s3p_codec.spark import _segments as segments

    names = tuple(f.name for f in attrs.fields(capture.Segment))
    assert names == flows.SEGMENT_FIELDS
    assert set(names) <= set(segments.SEGMENT_SCHEMA.names)
