"""``s3p-codec fuzz``: argument checks, the loopback-only default, and a short run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from s3p_codec.cli import main
from s3p_codec.testing.command import parse_address

from .testing.servers import example_server


def test_fuzz_refuses_a_remote_address_without_allow_remote(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["fuzz", "s3p", "192.0.2.1:7500", "--seconds", "1"])
    assert exited.value.code == 2
    assert "--allow-remote" in capsys.readouterr().err


def test_allow_remote_lifts_the_loopback_rule() -> None:
    assert parse_address("192.0.2.1:7500", allow_remote=True) == ("192.0.2.1", 7500)
    assert parse_address("[::1]:80", allow_remote=False) == ("::1", 80)


@pytest.mark.parametrize("text", ["localhost", "127.0.0.1:", ":80", "127.0.0.1:99999", "h:x"])
def test_fuzz_rejects_a_malformed_address(text: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_address(text, allow_remote=True)


def test_fuzz_runs_against_the_example_server_and_writes_both_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    with example_server("s3p") as port:
        status = main(
            ["fuzz", "s3p", f"127.0.0.1:{port}", "--seconds", "1.5", "--seed", "5",
             "--report", str(out)]
        )  # fmt: skip
    assert status == 0
    report = json.loads(out.read_text())
    assert report["protocol"] == "s3p"
    assert report["seed"] == 5
    assert report["ok"] is True
    assert report["findings"] == []
    assert report["cases"]["malformed"] > 0
    assert "no findings" in capsys.readouterr().out
    assert "no findings" in (tmp_path / "report.txt").read_text()


def test_fuzz_exits_1_and_names_the_smallest_input_when_the_server_is_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from .testing.test_live import _silence, fake_server

    out = tmp_path / "report.json"
    with fake_server(_silence) as port:
        status = main(
            ["fuzz", "rustlog", f"127.0.0.1:{port}", "--seconds", "1", "--timeout", "0.3",
             "--report", str(out)]
        )  # fmt: skip
    assert status == 1
    report = json.loads(out.read_text())
    assert report["findings"]
    smallest = report["findings"][0]["smallest"]
    assert bytes.fromhex(smallest["hex"])
    assert "FINDING" in capsys.readouterr().out


def test_fuzz_where_nothing_listens_says_so_and_keeps_an_earlier_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    report = tmp_path / "fuzz-report-s3p.json"
    report.write_text('{"earlier": true}')
    status = main(["fuzz", "s3p", f"127.0.0.1:{port}", "--seconds", "1", "--report", str(report)])
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"s3p-codec fuzz: nothing listens on 127.0.0.1:{port}"]
    assert report.read_text() == '{"earlier": true}'
    assert not report.with_suffix(".txt").exists()
