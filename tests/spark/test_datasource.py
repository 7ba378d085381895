"""``format("s3p_codec")`` and ``format("s3p_codec_segments")`` on small captures."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from s3p_codec import capture
from s3p_codec.spark import EVENT_COLUMNS, SEGMENT_SCHEMA, expand_paths
from s3p_codec.spark._datasource import _bucket_of
from tests.spark.captures import APPENDS, FLOWS, rotated_set

pytestmark = pytest.mark.spark


def _sorted(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted(rows, key=repr)


def _single_process(paths: list[str]) -> list[tuple[Any, ...]]:
    return _sorted([row.as_tuple() for row in capture.decode_files(paths)])


def test_expand_paths_orders_a_rotated_set_like_tcpdump_names_it(tmp_path: Path) -> None:
    for name in ("cap", "cap1", "cap2", "cap10", "cap11"):
        (tmp_path / name).write_bytes(b"")
    found = expand_paths([str(tmp_path / "cap*"), str(tmp_path / "cap2")])
    assert [Path(p).name for p in found] == ["cap", "cap1", "cap2", "cap10", "cap11"]
    assert [Path(p).name for p in expand_paths([str(tmp_path)])] == [
        "cap", "cap1", "cap2", "cap10", "cap11",
    ]  # fmt: skip


def test_expand_paths_keeps_a_missing_file_so_it_is_reported() -> None:
    assert expand_paths(["no/such/file.pcap"]) == ["no/such/file.pcap"]


def test_flow_buckets_are_stable_and_spread() -> None:
    keys = [("10.0.0.1", 40000 + i, "10.0.0.2", 7500) for i in range(64)]
    buckets = [_bucket_of(k, 4) for k in keys]
    assert buckets == [_bucket_of(k, 4) for k in keys]
    assert set(buckets) == {0, 1, 2, 3}


def test_events_schema_is_the_capture_columns(spark: Any, tmp_path: Path) -> None:
    paths = rotated_set(tmp_path)
    df = spark.read.format("s3p_codec").load(str(tmp_path / "cap.pcap*"))
    assert tuple(df.columns) == EVENT_COLUMNS
    spark_types = {"str": "string", "int": "bigint", "float": "double", "bool": "boolean"}
    for field, column in zip(df.schema.fields, capture.COLUMNS, strict=True):
        assert field.dataType.simpleString() == spark_types[column.kind]
    assert len(paths) > 2


def test_segments_schema_names_every_segment_field(spark: Any, tmp_path: Path) -> None:
    rotated_set(tmp_path)
    df = spark.read.format("s3p_codec_segments").load(str(tmp_path / "cap.pcap*"))
    assert df.columns == SEGMENT_SCHEMA.names
    import attrs

    fields = {f.name for f in attrs.fields(capture.Segment)}
    assert fields <= set(df.columns)


def test_events_equal_the_single_process_decoder_on_rotated_files(
    spark: Any, tmp_path: Path
) -> None:
    paths = [str(p) for p in rotated_set(tmp_path)]
    expected = _single_process(paths)
    df = (
        spark.read.format("s3p_codec")
        .option("decode_as", "7500=s3p")
        .option("partitions", "3")
        .load(str(tmp_path / "cap.pcap*"))
    )
    got = _sorted([tuple(r) for r in df.collect()])
    assert got == expected
    events = [r for r in expected if r[EVENT_COLUMNS.index("kind")] == "event"]
    # Every request and reply of every flow, although each flow spans several files.
    assert len(events) == FLOWS * (APPENDS + 1) * 2
    files_per_flow: dict[str, set[str]] = {}
    for r in events:
        files_per_flow.setdefault(r[EVENT_COLUMNS.index("conversation")], set()).add(r[0])
    assert len(files_per_flow) == FLOWS
    assert all(len(files) >= 3 for files in files_per_flow.values()), files_per_flow


def test_segments_are_read_per_file_with_their_flow_key(spark: Any, tmp_path: Path) -> None:
    paths = rotated_set(tmp_path)
    df = spark.read.format("s3p_codec_segments").load([str(p) for p in paths])
    assert df.rdd.getNumPartitions() == len(paths)
    rows = df.collect()
    expected = [s for i, p in enumerate(paths) for s in capture.read_segments(str(p), i)]
    assert len(rows) == len(expected)
    assert {(r.flow_a_addr, r.flow_a_port, r.flow_b_addr, r.flow_b_port) for r in rows} == {
        capture.flow_key(s) for s in expected
    }
    assert all(r.error is None for r in rows)


def test_gzip_compressed_files_are_read(spark: Any, tmp_path: Path) -> None:
    paths = rotated_set(tmp_path)
    zipped = []
    for path in paths:
        target = path.with_name(path.name + ".gz")
        target.write_bytes(gzip.compress(path.read_bytes()))
        zipped.append(str(target))
    df = spark.read.format("s3p_codec").option("paths", json.dumps(zipped)).load()
    assert _sorted([tuple(r) for r in df.collect()]) == _single_process(zipped)
