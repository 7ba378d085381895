"""The shuffle pipeline (``decode``) and the per-protocol summary, against the one-process code."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from s3p_codec import capture
from s3p_codec.spark import EVENT_COLUMNS, decode, summarize
from tests.spark._pcaps import write_pcap
from tests.spark.captures import APPENDS, FLOWS, rotated_set, s3p_packets

pytestmark = pytest.mark.spark
KIND = EVENT_COLUMNS.index("kind")


def _sorted(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted(rows, key=repr)


def _record_start(pcap: bytes, index: int) -> int:
    """Byte offset of record ``index`` of a little-endian pcap file."""
    at = 24
    for _ in range(index):
        at += 16 + struct.unpack_from("<I", pcap, at + 8)[0]
    return at


def _both(spark: Any, paths: list[str]) -> tuple[list[capture.Row], list[tuple[Any, ...]]]:
    expected = list(capture.decode_files(paths, {7500: "s3p"}))
    got = [tuple(r) for r in decode(spark, paths, {7500: "s3p"}).collect()]
    return expected, got


def test_decode_equals_the_single_process_decoder_on_rotated_files(
    spark: Any, tmp_path: Path
) -> None:
    paths = [str(p) for p in rotated_set(tmp_path, per_file=7)]
    expected, got = _both(spark, paths)
    assert _sorted(got) == _sorted([r.as_tuple() for r in expected])
    events = [r for r in got if r[KIND] == "event"]
    assert len(events) == FLOWS * (APPENDS + 1) * 2
    assert not [r for r in got if r[KIND] != "event"]


def test_decode_schema_is_the_capture_columns(spark: Any, tmp_path: Path) -> None:
    df = decode(spark, [str(p) for p in rotated_set(tmp_path)])
    assert tuple(df.columns) == EVENT_COLUMNS
    nullable = {c.name: c.nullable for c in capture.COLUMNS}
    for field in df.schema.fields:
        assert nullable[field.name] or not field.nullable, field.name


def test_a_corrupt_file_is_an_error_row_counted_and_the_rest_decodes(
    spark: Any, tmp_path: Path
) -> None:
    paths = [str(p) for p in rotated_set(tmp_path, per_file=7)]
    junk = tmp_path / "cap.pcap99"
    junk.write_bytes(b"this is not a capture file, whatever its name says" * 4)
    # A file that breaks off mid-record, as when tcpdump is killed hard: what came first counts.
    whole = write_pcap(tmp_path / "other.pcap", s3p_packets()).read_bytes()
    truncated = tmp_path / "truncated.pcap"
    truncated.write_bytes(whole[: _record_start(whole, 20) + 9])  # inside a record header
    inputs = [*paths, str(junk), str(truncated)]

    expected, got = _both(spark, inputs)
    assert _sorted(got) == _sorted([r.as_tuple() for r in expected])
    errors = [r for r in got if r[KIND] == "capture_error"]
    assert sorted(r[0] for r in errors) == sorted([str(junk), str(truncated)])
    assert all(r[EVENT_COLUMNS.index("error_code")] == "capture_file" for r in errors)
    assert len([r for r in got if r[KIND] == "event" and r[0] in paths]) == FLOWS * 14

    table = summarize(decode(spark, inputs, {7500: "s3p"}))
    assert table == capture.summarize(expected)
    unknown = next(row for row in table if row["protocol"] == "unknown")
    assert unknown["errors"] >= 2


def test_an_empty_file_is_reported_and_an_empty_capture_gives_no_rows(
    spark: Any, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"")
    header_only = write_pcap(tmp_path / "header-only.pcap", [])
    expected, got = _both(spark, [str(empty), str(header_only)])
    assert _sorted(got) == _sorted([r.as_tuple() for r in expected])
    assert [(r[0], r[KIND]) for r in got] == [(str(empty), "capture_error")]


def test_summary_equals_the_single_process_summary(spark: Any, tmp_path: Path) -> None:
    paths = [str(p) for p in rotated_set(tmp_path)]
    expected = capture.summarize(capture.decode_files(paths, {7500: "s3p"}))
    table = summarize(decode(spark, paths, {7500: "s3p"}))
    assert table == expected
    (s3p,) = table
    assert s3p["protocol"] == "s3p"
    assert s3p["conversations"] == FLOWS
    assert s3p["requests"] == s3p["replies"] == FLOWS * (APPENDS + 1)
    assert s3p["latency_p50_ms"] is not None


SAMPLES = Path(__file__).resolve().parents[2] / "examples" / "captures"


def test_the_sample_captures_of_every_protocol_decode_and_summarize_as_in_one_process(
    spark: Any,
) -> None:
    paths = [str(p) for p in sorted(SAMPLES.glob("*.pcap*"))]
    if not paths:
        pytest.skip("no sample captures recorded")
    expected = list(capture.decode_files(paths))
    events = decode(spark, paths).cache()
    try:
        got = [tuple(r) for r in events.collect()]
        table = summarize(events)
    finally:
        events.unpersist()
    assert _sorted(got) == _sorted([r.as_tuple() for r in expected])
    assert table == capture.summarize(expected)
    assert {row["protocol"] for row in table} >= {"s3p"}
