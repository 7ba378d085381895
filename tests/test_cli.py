"""The ``s3p-codec`` command line: decode and stats on synthetic captures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from s3p_codec.capture import COLUMNS
from s3p_codec.cli import COMMANDS, build_parser, main
from tests.capture.synth import Flow, write_capture
from tests.capture.test_observe import CLIENT, SERVER, conversation


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    path = tmp_path / "s3p.pcap.gz"
    frames = conversation(Flow(CLIENT, SERVER)) + conversation(Flow(("10.0.0.5", 41000), SERVER))
    path.write_bytes(write_capture(frames, compress=True))
    return path


def test_decode_prints_a_table(capture: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", str(capture)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["pkt", "time", "proto", "dir"]
    assert out[1].startswith("# ")
    assert "10.0.0.1:40000 -> 10.0.0.2:7500  [s3p]" in out[1]
    assert sum("Append " in line for line in out) == 2
    assert sum(line.startswith("# ") for line in out) == 2


def test_decode_jsonl_has_every_column(capture: Path, tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    assert main(["decode", str(capture), "--format", "jsonl", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 20
    assert list(rows[0]) == [c.name for c in COLUMNS]
    assert rows[2]["event_type"] == "Append"
    assert rows[2]["stream"] == "orders"


def test_decode_parquet(capture: Path, tmp_path: Path) -> None:
    out = tmp_path / "rows.parquet"
    assert main(["decode", str(capture), "--format", "parquet", "--out", str(out)]) == 0
    table = pq.read_table(out)
    assert table.num_rows == 20
    assert table.schema.names == [c.name for c in COLUMNS]


def test_decode_as_is_parsed_and_checked(capture: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", str(capture), "--decode-as", "7500=s3p"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["decode", str(capture), "--decode-as", "7500=kafka"])
    assert "unknown protocol" in capsys.readouterr().err


def test_parquet_needs_an_output_path(capture: Path) -> None:
    with pytest.raises(SystemExit):
        main(["decode", str(capture), "--format", "parquet"])


def test_stats_summarises_per_protocol(capture: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(capture), "--format", "json"]) == 0
    (s3p,) = json.loads(capsys.readouterr().out)
    assert s3p["protocol"] == "s3p"
    assert s3p["conversations"] == 2
    assert s3p["events"] == 20
    assert s3p["requests"] == s3p["replies"] == 10
    assert s3p["errors"] == 0
    assert s3p["latency_p50_ms"] == pytest.approx(1.0, abs=0.01)
    assert main(["stats", str(capture)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["protocol", "conversations", "events"]
    assert lines[1].split()[:3] == ["s3p", "2", "20"]


def test_sub_commands_come_from_one_list() -> None:
    """A new command group is one register function appended to COMMANDS."""

    def register_demo(sub: object) -> None:
        parser = sub.add_parser("demo")  # type: ignore[attr-defined]
        parser.set_defaults(handler=lambda args: 7)

    COMMANDS.append(register_demo)
    try:
        assert main(["demo"]) == 7
    finally:
        COMMANDS.remove(register_demo)
    assert "demo" not in build_parser().format_help()


def test_python_dash_m_runs_the_cli(capture: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "s3p_codec", "stats", str(capture)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert done.stdout.splitlines()[1].startswith("s3p")


def test_progress_bar_on_request(capture: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(capture), "--progress"]) == 0
    assert "decoding" in capsys.readouterr().err
    assert main(["stats", str(capture), "--no-progress"]) == 0
    assert capsys.readouterr().err == ""
