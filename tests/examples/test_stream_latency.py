"""``examples/stream_latency.py`` on a streaming query's output: committed files only, each
read once, nearest-rank percentiles per minute and protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from examples.stream_latency import LatencyTable, main


def _part(folder: Path, name: str, rows: list[tuple[float, str, float | None]]) -> Path:
    ts, protocol, latency = zip(*rows, strict=True)
    table = pa.table({"ts": list(ts), "protocol": list(protocol), "latency_ms": list(latency)})
    path = folder / name
    pq.write_table(table, path)
    return path


def test_latency_per_minute_and_protocol_from_committed_files_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    minute = 1_700_000_040.0  # a whole minute
    committed = _part(tmp_path, "part-0.parquet", [
        (minute + 1, "s3p", 1.0), (minute + 2, "s3p", 3.0), (minute + 3, "s3p", None),
        (minute + 61, "rustlog", 7.0),
    ])  # fmt: skip
    _part(tmp_path, "part-orphan.parquet", [(minute, "s3p", 1000.0)])  # never committed
    log = tmp_path / "_spark_metadata"
    log.mkdir()
    entry = {"path": f"file://{committed}", "action": "add"}
    (log / "0").write_text("v1\n" + json.dumps(entry))
    assert main([str(tmp_path), "--once"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert "s3p" in lines[0]
    assert "replies      2" in lines[0]
    assert "p50    1.000 ms" in lines[0]
    assert "p99    3.000 ms" in lines[0]
    assert "rustlog" in lines[1]
    assert "p50    7.000 ms" in lines[1]
    table = LatencyTable()
    assert table.add_file(str(committed))
    assert table.add_file(str(committed)) == set()  # each file once
