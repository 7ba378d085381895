"""Chunk rows (what ``decode`` shuffles), without Spark: packing, unpacking, decoding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from s3p_codec import capture
from s3p_codec.spark._chunks import CHUNK_SCHEMA, chunk_ddl, file_chunks, unpack_chunk
from s3p_codec.spark._flows import decode_chunks
from s3p_codec.spark._segments import FLOW_COLUMNS, file_segments
from tests.spark._pcaps import write_pcap
from tests.spark.captures import rotated_set, s3p_packets

SAMPLES = Path(__file__).resolve().parents[2] / "examples" / "captures"


def _chunks(paths: list[str], **bounds: int) -> pa.Table:
    return pa.Table.from_batches(
        [b for i, p in enumerate(paths) for b in file_chunks(p, i, p, **bounds)],
        schema=CHUNK_SCHEMA,
    )


def _unpacked(table: pa.Table) -> list[capture.Segment]:
    segments: list[capture.Segment] = []
    for row in table.to_pylist():
        if row["error"] is None:
            key = tuple(row[name] for name in FLOW_COLUMNS)
            segments += unpack_chunk(
                key, row["file"], row["file_index"], row["headers"], row["payloads"]
            )
    return segments


def _sorted_rows(rows: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r.values()) for r in rows), key=repr)


def _decoded(table: pa.Table, max_chunksize: int) -> list[tuple[Any, ...]]:
    order = [(c, "ascending") for c in (*FLOW_COLUMNS, "file_index", "number")]
    batches = table.sort_by(order).to_batches(max_chunksize=max_chunksize)
    out = list(decode_chunks(batches, {}, batch_rows=3))
    return _sorted_rows(pa.Table.from_batches(out).to_pylist())


def _sample_paths() -> list[str]:
    paths = [str(p) for p in sorted(SAMPLES.glob("*.pcap*"))]
    if not paths:
        pytest.skip("no sample captures recorded")
    return paths


@pytest.mark.parametrize("bounds", [{}, {"chunk_bytes": 300}, {"chunk_segments": 1}])
def test_chunks_unpack_into_the_segments_the_file_gave(
    tmp_path: Path, bounds: dict[str, int]
) -> None:
    paths = [str(p) for p in rotated_set(tmp_path)] + _sample_paths()
    expected = [s for i, p in enumerate(paths) for s in capture.read_segments(p, i, p)]
    got = _unpacked(_chunks(paths, **bounds))
    order = lambda s: (s.file_index, s.number)  # noqa: E731
    assert sorted(got, key=order) == expected
    assert len(got) == len(expected) > 0


def test_one_chunk_per_flow_and_flush(tmp_path: Path) -> None:
    paths = [str(p) for p in rotated_set(tmp_path)]
    segments = sum(1 for i, p in enumerate(paths) for _ in capture.read_segments(p, i, p))
    flows_per_file = [
        len({capture.flow_key(s) for s in capture.read_segments(p, i, p)})
        for i, p in enumerate(paths)
    ]
    table = _chunks(paths)
    assert table.num_rows == sum(flows_per_file) < segments
    assert _chunks(paths, chunk_segments=1).num_rows == segments


@pytest.mark.parametrize("bounds", [{}, {"chunk_bytes": 300}])
def test_sorted_chunks_decode_like_the_single_process_decoder(
    tmp_path: Path, bounds: dict[str, int]
) -> None:
    paths = [str(p) for p in rotated_set(tmp_path)] + _sample_paths()
    expected = _sorted_rows(r.as_dict() for r in capture.decode_files(paths))
    # Tiny batches: flows straddle batch boundaries, and rows come out in several batches.
    assert _decoded(_chunks(paths, **bounds), max_chunksize=2) == expected
    assert len(expected) > 3


def test_broken_and_missing_files_end_with_the_single_process_error_rows(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"\x00" * 40)
    whole = write_pcap(tmp_path / "whole.pcap", s3p_packets()).read_bytes()
    truncated = tmp_path / "truncated.pcap"
    truncated.write_bytes(whole[: len(whole) - 7])
    paths = [str(junk), str(tmp_path / "missing.pcap"), str(truncated)]
    expected = _sorted_rows(r.as_dict() for r in capture.decode_files(paths))
    table = _chunks(paths, chunk_bytes=500)
    assert _decoded(table, max_chunksize=4) == expected
    errors = [r for r in table.to_pylist() if r["error"] is not None]
    assert [r["file"] for r in errors] == paths
    assert all(r[name] is None for r in errors for name in FLOW_COLUMNS)
    # The same error columns as the segment rows of format("s3p_codec_segments").
    segment_errors = [
        r for i, p in enumerate(paths) for b in file_segments(p, i, p) for r in b.to_pylist()
        if r["error"] is not None
    ]  # fmt: skip
    assert [(r["file"], r["number"], r["error_type"], r["error"]) for r in errors] == [
        (r["file"], r["number"], r["error_type"], r["error"]) for r in segment_errors
    ]


def test_chunk_ddl_names_every_column_in_order() -> None:
    assert [c.split(" ")[0].strip("`") for c in chunk_ddl().split(", ")] == CHUNK_SCHEMA.names
    assert CHUNK_SCHEMA.names[:4] == list(FLOW_COLUMNS)


@pytest.mark.spark
def test_the_session_bounds_arrow_batches_by_bytes_and_runs_the_quick_jit(spark: Any) -> None:
    # Chunk rows carry up to CHUNK_BYTES each: a bound on rows alone would not bound memory.
    from s3p_codec.spark._session import ARROW_BATCH_BYTES, JIT_OPTIONS

    assert spark.conf.get("spark.sql.execution.arrow.maxBytesPerBatch") == str(ARROW_BATCH_BYTES)
    conf = spark.sparkContext.getConf()
    assert JIT_OPTIONS in conf.get("spark.driver.extraJavaOptions")
    assert JIT_OPTIONS in conf.get("spark.executor.extraJavaOptions")
