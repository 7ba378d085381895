"""The decode table as a new user meets it (issue 31, items 3, 4 and 5): fitted to the
terminal, error codes whole, ``--wide`` and ``-e``, relative time across files, the same formats
for ``decode`` and ``stats``, and help texts that read as plain text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from s3p_codec.capture import Row, format_table
from s3p_codec.cli import main

ROOT = Path(__file__).parents[1]
CAPTURES = ROOT / "examples" / "captures"
OLDER, NEWER = CAPTURES / "s3p.pcap", CAPTURES / "s3p_v020.pcap"
LONG_SEGMENT = "scope-with-a-long-name/stream-with-a-long-name/0.#epoch.0"


def row(**changes: object) -> Row:
    base: dict[str, object] = {
        "file": "f.pcap", "first_packet": 4, "last_packet": 4, "ts": 1.0, "conversation": "f#1",
        "client": "10.0.0.1:40000", "server": "10.0.0.2:12345", "direction": "server_to_client",
        "protocol": "pravega", "kind": "event", "event_type": "NoSuchSegment", "pair_id": 3,
        "latency_ms": 0.5, "stream": LONG_SEGMENT, "offset": "123456789012345678901234",
        "count": None, "payload_bytes": None, "wire_bytes": 58,
        "error_code": "ERR_UNKNOWN_STREAM_OF_A_LONG_NAME", "detail": "NoSuchSegment(...)",
    }  # fmt: skip
    base.update(changes)
    return Row(**base)  # type: ignore[arg-type]


def _body(lines: list[str]) -> list[str]:
    return [line for line in lines[1:] if not line.startswith("# ")]


@pytest.mark.parametrize("width", [60, 100, 140, 220])
def test_an_error_code_is_never_cut_and_the_line_fits(width: int) -> None:
    (line,) = _body(list(format_table([row()], width=width)))
    assert "ERR_UNKNOWN_STREAM_OF_A_LONG_NAME" in line
    (line,) = _body(list(format_table([row(error_code="ERR_NON_MONOTONIC_ID")], width=width)))
    assert "ERR_NON_MONOTONIC_ID" in line
    if width >= 130:  # room for every column at its smallest
        assert len(line) <= width


def test_a_wide_terminal_shows_the_whole_stream_and_the_detail_of_events() -> None:
    (line,) = _body(list(format_table([row(stream="orders/segment-0000001")], width=200)))
    assert "orders/segment-0000001" in line
    assert line.endswith("NoSuchSegment(...)")  # detail is shown for events too


def test_wide_cuts_nothing() -> None:
    (line,) = _body(list(format_table([row(detail="x" * 300)], width=None)))
    assert LONG_SEGMENT in line
    assert "123456789012345678901234" in line
    assert line.endswith("x" * 300)
    assert "..." not in line


def test_fields_choose_the_columns() -> None:
    lines = list(format_table([row()], fields=["first_packet", "stream", "error_code"]))
    assert lines[0].split() == ["pkt", "stream", "error"]
    assert _body(lines)[0].split() == ["4", LONG_SEGMENT, "ERR_UNKNOWN_STREAM_OF_A_LONG_NAME"]
    with pytest.raises(ValueError, match="unknown field 'nope'"):
        list(format_table([row()], fields=["nope"]))


def test_the_cli_fits_columns_and_takes_wide_and_e(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "90")
    assert main(["decode", str(NEWER), "-Y", "error"]) == 0
    out = capsys.readouterr().out
    assert "ERR_NON_MONOTONIC_ID" in out
    assert "ERR_STREAM_EXISTS" in out
    assert "ERR_NON_MONOT..." not in out
    assert main(["decode", str(NEWER), "-Y", "error", "--wide"]) == 0
    assert "ErrorReply(code=<ErrorCode.NON_MONOTONIC_ID" in capsys.readouterr().out
    assert main(["decode", str(NEWER), "-Y", "error", "-e", "first_packet,error_code"]) == 0
    assert _body(capsys.readouterr().out.splitlines())[0].split() == ["52", "ERR_STREAM_EXISTS"]
    with pytest.raises(SystemExit):
        main(["decode", str(NEWER), "-e", "nope"])
    assert "unknown field 'nope'" in capsys.readouterr().err


def test_relative_time_counts_from_the_earliest_packet_of_all_files(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 31.4: the newer capture first on the command line gave -2.62 s, then 253496 s."""
    assert main(["decode", str(NEWER), str(OLDER), "-e", "file,ts"]) == 0
    cells = (line.split() for line in _body(capsys.readouterr().out.splitlines()))
    times = [(name, float(ts)) for name, ts in cells]
    assert min(t for _, t in times) >= 0
    older = [t for name, t in times if name.endswith("s3p.pcap")]
    assert older
    assert max(older) < 60  # the older file starts the clock


def test_help_says_what_relative_counts_from(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["decode", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "earliest packet of all the input files" in said
    assert "--wide" in said
    assert "-e FIELD" in said


def test_decode_and_stats_take_the_same_formats(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", str(OLDER), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["protocol"] == "s3p"
    assert main(["stats", str(OLDER), "--format", "jsonl"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert json.loads(line)["protocol"] == "s3p"
    assert main(["stats", str(OLDER), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["errors"] == 1


def test_live_interface_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["live", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "-i IFACE, --interface IFACE network interface to capture on" in said


@pytest.mark.parametrize(
    "client", ["s3p_client", "rustlog_client", "pravega_client", "durable_client"]
)
def test_example_clients_help_is_plain_text(client: str) -> None:
    said = subprocess.run(
        [sys.executable, "-m", f"examples.{client}", "--help"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    for rest in ("::", "``", ":class:"):
        assert rest not in said
    assert "python -m examples." in said
