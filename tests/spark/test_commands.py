"""``s3p-codec spark decode`` and ``s3p-codec spark stats`` (in the test's Spark session)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from s3p_codec import capture
from s3p_codec.cli import main
from tests.spark.captures import FLOWS, rotated_set

pytestmark = pytest.mark.spark


@pytest.mark.slow
def test_spark_stats_prints_the_single_process_summary(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [str(p) for p in rotated_set(tmp_path)]
    pattern = str(tmp_path / "cap.pcap*")
    assert main(["spark", "stats", pattern, "--decode-as", "7500=s3p", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(capture.summarize(capture.decode_files(paths))))
    assert main(["spark", "stats", pattern]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table == list(capture.format_summary(capture.summarize(capture.decode_files(paths))))


def test_spark_decode_writes_the_rows_as_parquet(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow.parquet as pq

    paths = [str(p) for p in rotated_set(tmp_path)]
    out = tmp_path / "events.parquet"
    assert main(["spark", "decode", str(tmp_path / "cap.pcap*"), "--out", str(out)]) == 0
    assert f"from {len(paths)} files" in capsys.readouterr().err
    table = pq.read_table(out)
    assert table.schema.names == [c.name for c in capture.COLUMNS]
    got = sorted(map(tuple, (r.values() for r in table.to_pylist())), key=repr)
    expected = sorted((r.as_tuple() for r in capture.decode_files(paths)), key=repr)
    assert got == expected
    assert len({r[4] for r in got}) == FLOWS


def test_spark_commands_reject_patterns_that_match_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["spark", "stats", str(tmp_path / "nothing-*.pcap")])
    assert "no capture file matches" in capsys.readouterr().err


def test_the_command_line_does_not_load_pyspark_for_other_commands() -> None:
    import subprocess

    code = "import sys; from s3p_codec.cli import build_parser; build_parser(); "
    code += "sys.exit('pyspark' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
