"""The ``s3p-codec`` command line: decode and stats on synthetic captures."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from s3p_codec.capture import COLUMNS
from s3p_codec.cli import COMMANDS, build_parser, main
from tests.capture.conftest import s3p_exchanges
from tests.capture.synth import Flow, write_capture
from tests.capture.test_decoder import CLIENT, SERVER, conversation
from tests.capture.test_drivers import two_conversations


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


# -- unreadable inputs, directories and globs (issue 20.2) -----------------------------------


@pytest.mark.parametrize("kind", ["missing", "directory", "text", "empty", "glob"])
def test_an_unreadable_input_is_one_stderr_line_and_exit_2(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x.pcap"
    if kind == "directory":
        path.mkdir()
    elif kind == "text":
        path.write_text("hello, not a capture\n")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "glob":
        path = tmp_path / "nothing-*.pcap"
    assert main(["decode", str(path)]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith(f"s3p-codec: {path}: ")
    reason = line.removeprefix(f"s3p-codec: {path}: ")
    assert (
        reason
        == {
            "missing": "no such file",
            "directory": "a directory without capture files",
            "text": "not a pcap or pcapng file (starts with b'hell')",
            "empty": "empty file (no capture header)",
            "glob": "no file matches this pattern",
        }[kind]
    )
    (said,) = [line for line in captured.out.splitlines() if line.startswith(f"# {path}: ")]
    assert said.startswith(f"# {path}: cannot read: ")  # the table says it too, in full
    if kind in ("text", "empty"):
        assert said.endswith(reason)
    else:
        assert "[Errno " in said
    assert main(["stats", str(path)]) == 2


def test_one_readable_input_is_enough_and_the_table_shows_the_other(
    capture: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "gone.pcap"
    assert main(["decode", str(capture), str(missing)]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"s3p-codec: {missing}: no such file\n"
    assert f"# {missing}: cannot read: [Errno 2] No such file or directory" in captured.out
    assert sum("Append " in line for line in captured.out.splitlines()) == 2


def test_decode_takes_directories_and_quoted_globs(
    capture: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["decode", str(capture), "--format", "jsonl"]) == 0
    expected = capsys.readouterr().out
    (tmp_path / "notes.json").write_text("{}")  # beside the captures: passed over
    assert main(["decode", str(tmp_path), "--format", "jsonl"]) == 0
    assert capsys.readouterr() == (expected, "")
    assert main(["decode", str(tmp_path / "s3p.*"), "--format", "jsonl"]) == 0
    assert capsys.readouterr().out == expected


# -- missing extras (issue 20.3) -------------------------------------------------------------

_WITHOUT = """
import sys
sys.modules[{module!r}] = None  # as if not installed
from s3p_codec.cli import main
sys.exit(main({argv!r}))
"""


@pytest.mark.parametrize(
    ("module", "command", "extra_args"),
    [
        ("dpkt", "decode", []),
        ("dpkt", "stats", []),
        ("sortedcontainers", "decode", []),
        ("tqdm", "stats", ["--progress"]),
    ],
)
def test_a_missing_extra_is_named_in_one_line_with_exit_2(
    capture: Path, tmp_path: Path, module: str, command: str, extra_args: list[str]
) -> None:
    argv = [command, str(capture), *(a.replace("OUT", str(tmp_path / "o")) for a in extra_args)]
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT.format(module=module, argv=argv)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        f"s3p-codec {command} needs the capture extra ({module} is missing): "
        "pip install 's3p-codec[capture]'\n"
    )
    assert done.stdout == ""


# -- output format from the suffix (issue 20.6) ----------------------------------------------


def test_the_out_suffix_chooses_the_format(capture: Path, tmp_path: Path) -> None:
    parquet = tmp_path / "rows.parquet"
    assert main(["decode", str(capture), "--out", str(parquet)]) == 0
    assert pq.read_table(parquet).num_rows == 20
    jsonl = tmp_path / "rows.jsonl"
    assert main(["decode", str(capture), "--out", str(jsonl)]) == 0
    assert len([json.loads(line) for line in jsonl.read_text().splitlines()]) == 20
    text = tmp_path / "rows.txt"
    assert main(["decode", str(capture), "--out", str(text)]) == 0
    assert text.read_text().startswith("pkt")
    forced = tmp_path / "forced.parquet"
    assert main(["decode", str(capture), "--out", str(forced), "--format", "jsonl"]) == 0
    assert forced.read_text().startswith("{")


# -- tshark habits: time, display filter, count (issue 20.10) --------------------------------


def _table_rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines()[1:] if not line.startswith("# ")]


def test_table_time_is_relative_by_default_and_absolute_on_request(
    capture: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["decode", str(capture)]) == 0
    rows = _table_rows(capsys.readouterr().out)
    assert rows[0][1] == "0.003000"  # since the capture's first packet (the handshake)
    assert rows[1][1] == "0.004000"
    assert main(["decode", str(capture), "-t", "epoch"]) == 0
    assert _table_rows(capsys.readouterr().out)[0][1] == "1700000000.004000"
    assert main(["decode", str(capture), "-t", "absolute"]) == 0
    assert _table_rows(capsys.readouterr().out)[0][1:3] == ["2023-11-14", "22:13:20.004000"]
    assert main(["decode", str(capture), "--format", "jsonl"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["ts"] == 1700000000.004


def test_display_filter_keeps_the_matching_rows(
    capture: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def kept(expression: str) -> list[dict[str, object]]:
        assert main(["decode", str(capture), "--format", "jsonl", "-Y", expression]) == 0
        return [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    assert len(kept("s3p")) == 20
    assert kept("rustlog") == []
    appends = kept("protocol==s3p and event_type==Append")
    assert [(r["event_type"], r["count"]) for r in appends] == [("Append", 2)] * 2
    assert len(kept("latency_ms >= 0.5 and not kind==error")) == 10
    assert len(kept('stream contains "ord" || event_type == Ok')) == 16  # 5 named + 3 Ok, x2
    assert kept("kind==error") == []


def test_a_bad_display_filter_is_a_usage_error(
    capture: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["decode", str(capture), "-Y", "latency_ms > fast"])
    assert info.value.code == 2
    assert "-Y: latency_ms is a number; 'fast' at column 14 is not" in capsys.readouterr().err


def test_count_stops_after_n_rows(capture: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", str(capture), "--format", "jsonl", "-c", "3"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3
    assert main(["decode", str(capture), "--format", "jsonl", "-c", "2", "-Y", "count"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


# -- streams: standard input, a growing file, an interface (issue 16) ------------------------

WAIT = 20.0


def _cli(*args: str, stdin: int | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "s3p_codec", *args], stdin=stdin, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip


def _lines(proc: subprocess.Popen[bytes], count: int) -> list[dict[str, object]]:
    """``count`` JSON rows from the process's stdout, as they come (fails after WAIT)."""
    assert proc.stdout is not None
    rows: list[dict[str, object]] = []
    timer = threading.Timer(WAIT, proc.kill)  # a row that never comes: end the test
    timer.start()
    try:
        while len(rows) < count:
            line = proc.stdout.readline()
            assert line, f"the decoder stopped after {len(rows)} rows"
            rows.append(json.loads(line))
    finally:
        timer.cancel()
    return rows


def _interrupt(proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=WAIT)
    return proc.returncode, err.decode()


def test_decode_dash_reads_a_trickling_pipe_row_by_row() -> None:
    data, first_end = two_conversations()
    proc = _cli("decode", "-", "--format", "jsonl", stdin=subprocess.PIPE)
    assert proc.stdin is not None
    for at in range(0, first_end, 50):  # the first conversation, in 50-byte pieces
        proc.stdin.write(data[at : min(at + 50, first_end)])
        proc.stdin.flush()
        time.sleep(0.002)
    first = _lines(proc, 10)  # all there before one byte of the second was written
    assert [r["event_type"] for r in first][:3] == ["Create", "Ok", "Append"]
    proc.stdin.write(data[first_end:])
    proc.stdin.close()
    second = _lines(proc, 10)
    assert proc.wait(WAIT) == 0
    assert {r["client"] for r in second} == {"10.0.0.3:40001"}
    assert {r["file"] for r in first + second} == {"-"}


def test_decode_follow_reads_a_growing_file_and_ctrl_c_prints_the_summary(
    tmp_path: Path,
) -> None:
    data, first_end = two_conversations()
    path = tmp_path / "growing.pcap"
    path.write_bytes(data[:100])
    proc = _cli("decode", "--follow", str(path), "--format", "jsonl")
    with open(path, "ab") as out:
        time.sleep(0.2)
        out.write(data[100:first_end])
        out.flush()
        assert len(_lines(proc, 10)) == 10
        out.write(data[first_end:])
        out.flush()
        assert len(_lines(proc, 10)) == 10
    status, err = _interrupt(proc)
    assert status == 0
    summary = err.splitlines()
    assert summary[0].split()[:3] == ["protocol", "conversations", "events"]
    assert summary[1].split()[:3] == ["s3p", "2", "20"]


def test_decode_follow_goes_on_through_a_truncated_file_and_says_so(tmp_path: Path) -> None:
    from tests.capture.test_drivers import NEW, OLD

    path = tmp_path / "cap.pcap"
    path.write_bytes(OLD)
    proc = _cli("decode", "--follow", str(path), "--format", "jsonl")
    assert proc.stderr is not None
    old = _lines(proc, 8)  # the old file's rows, its conversation still open
    time.sleep(0.3)  # the decoder goes on to the cut frame behind them (else lost, as tail's)
    with open(path, "r+b") as out:
        out.truncate(0)  # logrotate copytruncate
        notice = proc.stderr.readline().decode()
        out.write(NEW)  # tcpdump started again: a new capture header
    assert (
        notice
        == f"s3p-codec: {path}: file truncated; decoding it again from its start as {path}[2]\n"
    )
    finished = _lines(proc, 1)  # the old conversation finished as at the end of a capture
    new = _lines(proc, 10)
    status, err = _interrupt(proc)
    assert status == 0
    assert {r["file"] for r in old + finished} == {str(path)}
    assert finished[0]["kind"] == "error"
    assert {r["file"] for r in new} == {f"{path}[2]"}
    assert [r["event_type"] for r in new][:3] == ["Create", "Ok", "Append"]
    assert err.splitlines()[1].split()[:3] == ["s3p", "2", "18"]


def test_follow_takes_one_existing_file(
    capture: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["decode", "--follow", str(capture), str(capture)])
    with pytest.raises(SystemExit):
        main(["decode", "-", str(capture)])
    capsys.readouterr()
    missing = tmp_path / "not-yet.pcap"
    assert main(["decode", "--follow", str(missing)]) == 2
    assert capsys.readouterr().err == f"s3p-codec: {missing}: no such file\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _s3p_conversation(port: int) -> None:
    """One real S3P conversation over loopback: a server thread answers each request."""
    exchanges = s3p_exchanges()
    listener = socket.create_server(("127.0.0.1", port))

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            for request, reply in exchanges:
                got = b""
                while len(got) < len(request):
                    got += conn.recv(65536)
                conn.sendall(reply)

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as client:
        for request, reply in exchanges:
            client.sendall(request)
            got = b""
            while len(got) < len(reply):
                got += client.recv(65536)
    server.join(WAIT)
    listener.close()


def _live_unavailable() -> str | None:
    if shutil.which("tcpdump") is None:
        return "tcpdump is not installed"
    probe = subprocess.run(
        ["tcpdump", "-D"], capture_output=True, text=True, timeout=30, check=False
    )  # fmt: skip
    if probe.returncode != 0 or "lo" not in probe.stdout:
        return f"tcpdump cannot list interfaces here: {probe.stderr.strip()[:80]}"
    return None


@pytest.mark.slow
def test_live_decodes_a_loopback_conversation_and_ctrl_c_prints_the_summary() -> None:
    reason = _live_unavailable()
    if reason is not None:
        pytest.skip(reason)
    port = _free_port()
    proc = _cli(
        "live", "-i", "lo", "--format", "jsonl", "--decode-as", f"{port}=s3p",
        "tcp", "port", str(port),
    )  # fmt: skip
    assert proc.stderr is not None
    first = proc.stderr.readline().decode()
    if "permission" in first.lower() or "not permitted" in first.lower():
        proc.kill()
        pytest.skip(f"capturing is not permitted here: {first.strip()}")
    assert first == "Capturing on 'lo'\n"
    _s3p_conversation(port)
    rows = _lines(proc, 10)
    assert [r["event_type"] for r in rows] == [
        "Create", "Ok", "Append", "AppendReply", "Read", "ReadReply", "Trim", "Ok", "Delete",
        "Ok",
    ]  # fmt: skip
    assert {r["server"] for r in rows} == {f"127.0.0.1:{port}"}
    status, err = _interrupt(proc)
    assert status == 0
    assert err.splitlines()[1].split()[:3] == ["s3p", "1", "10"]


def test_live_without_tcpdump_says_so_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["live", "-i", "lo", "--tcpdump", "/nonexistent/tcpdump"]) == 2
    assert capsys.readouterr().err == (
        "s3p-codec: live capture runs /nonexistent/tcpdump, which is not installed "
        "(apt-get install tcpdump, or --tcpdump PATH)\n"
    )


def test_live_on_an_interface_tcpdump_refuses_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What tcpdump says when it may not capture reaches the user as one line (a stand-in
    tcpdump plays the refusal, so the test runs with and without root)."""
    fake = tmp_path / "tcpdump"
    fake.write_text(
        "#!/bin/sh\necho \"tcpdump: eth9: You don't have permission to perform this capture "
        'on that device" >&2\nexit 1\n'
    )
    fake.chmod(0o755)
    assert main(["live", "-i", "eth9", "--tcpdump", str(fake)]) == 2
    assert capsys.readouterr().err == (
        "s3p-codec: tcpdump: eth9: You don't have permission to perform this capture on that "
        "device (capturing needs root or the CAP_NET_RAW capability)\n"
    )


@pytest.mark.parametrize("command", [["decode", "x.pcap"], ["spark", "decode", "x.pcap"]])
def test_out_into_a_missing_directory_is_one_line_before_any_work(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "missing" / "events.parquet"
    assert main([*command, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"s3p-codec: cannot write {out}: no such directory {out.parent}"]


@pytest.mark.parametrize(
    ("environment", "words"),
    [
        ({"PATH": "/nonexistent"}, "no java was found"),
        ({"JAVA_HOME": "/nonexistent"}, "no bin/java"),
    ],
)
def test_spark_without_java_says_java_17_is_needed_in_one_line(
    environment: dict[str, str], words: str
) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"} | environment
    line = _spark_stats_fails_in_one_line(env)
    assert "Spark needs Java 17" in line
    assert words in line


def _spark_stats_fails_in_one_line(env: dict[str, str]) -> str:
    """``s3p-codec spark stats`` on a sample under ``env``: exit 2 and one line on stderr."""
    result = subprocess.run(
        [sys.executable, "-m", "s3p_codec", "spark", "stats", "examples/captures/s3p.pcap"],
        cwd=Path(__file__).resolve().parents[1],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


_HIDE = """
import importlib.util, sys
HIDDEN = ("pyarrow", "pyspark")
_real = importlib.util.find_spec
def _find_spec(name, package=None):
    return None if name.split(".")[0] in HIDDEN else _real(name, package)
importlib.util.find_spec = _find_spec
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, _Block())
"""


def test_spark_without_its_extra_names_the_extra_in_one_line(tmp_path: Path) -> None:
    """As if pyspark and pyarrow were not installed (a ``sitecustomize`` hides them)."""
    import os

    (tmp_path / "sitecustomize.py").write_text(_HIDE)
    root = Path(__file__).resolve().parents[1]
    line = _spark_stats_fails_in_one_line(
        {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{root}"}
    )
    assert "pip install 's3p-codec[spark]'" in line
