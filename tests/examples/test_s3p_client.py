"""The command-line client against the example server, in-process and as a real process."""

from __future__ import annotations

import io
import subprocess
import sys
import threading
import time

import pytest

from examples.s3p_client import main
from s3p_codec import s3p
from tests.examples.conftest import ROOT, RunningServer
from tests.examples.test_s3p_server import call, client, fresh_name

pytestmark = [pytest.mark.network, pytest.mark.timeout(60)]


def cli(server: RunningServer, *argv: str, stdin: bytes = b"") -> tuple[int, bytes]:
    out = io.BytesIO()
    status = main(["--port", str(server.port), *argv], stdin=io.BytesIO(stdin), stdout=out)
    return status, out.getvalue()


def records_of(output: bytes) -> list[bytes]:
    return [line.split(b" ", 1)[1] for line in output.splitlines()]


def test_create_append_read_trim_delete(server: RunningServer) -> None:
    name = fresh_name("cli").decode()
    assert cli(server, "create", name) == (0, b"OK\n")
    status, out = cli(server, "append", name, "hello", "world")
    assert status == 0
    last = s3p.Timestamp.parse(out.strip())
    status, out = cli(server, "read", name, "--count", "10")
    assert status == 0
    assert records_of(out) == [b"hello", b"world"]
    assert out.splitlines()[-1].startswith(bytes(last) + b" ")
    status, out = cli(server, "read", name, "--after", str(last))
    assert (status, out) == (0, b"")
    assert cli(server, "trim", name, str(last)) == (0, b"OK\n")
    status, out = cli(server, "read", name)
    assert records_of(out) == [b"world"]
    assert cli(server, "delete", name) == (0, b"OK\n")


def test_append_from_stdin_lines_in_pipelined_batches(server: RunningServer) -> None:
    name = fresh_name("cli").decode()
    assert cli(server, "create", name)[0] == 0
    lines = b"".join(b"line %d\n" % n for n in range(25))
    status, out = cli(server, "append", name, "--batch", "10", stdin=lines)
    assert status == 0
    stamps = [s3p.Timestamp.parse(line) for line in out.splitlines()]
    assert len(stamps) == 3  # 10 + 10 + 5 records
    assert stamps == sorted(stamps)
    status, out = cli(server, "read", name, "--count", "100")
    assert records_of(out) == [b"line %d" % n for n in range(25)]


def test_client_timestamps_from_the_command_line(server: RunningServer) -> None:
    name = fresh_name("cli").decode()
    assert cli(server, "create", name, "--client-timestamps")[0] == 0
    assert cli(server, "append", name, "--timestamp", "5-0", "a", "b") == (0, b"5-1\n")
    assert cli(server, "read", name) == (0, b"5-0 a\n5-1 b\n")


def test_error_reply_is_printed_and_exits_1(
    server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _ = cli(server, "delete", fresh_name("never").decode())
    assert status == 1
    assert capsys.readouterr().err.startswith("ERR_UNKNOWN_STREAM ")


def test_tail_follows_new_records_with_block(server: RunningServer) -> None:
    name = fresh_name("tail")
    with client(server) as conn:
        assert call(conn, s3p.Create(name)) == s3p.Ok()
        assert isinstance(call(conn, s3p.Append(name, (b"first",))), s3p.AppendReply)

    def append_later() -> None:
        time.sleep(0.2)
        with client(server) as conn:
            call(conn, s3p.Append(name, (b"second",)))

    thread = threading.Thread(target=append_later)
    thread.start()
    started = time.monotonic()
    status, out = cli(server, "tail", name.decode(), "--block", "2500", "--max-records", "2")
    thread.join(10)
    assert status == 0
    assert records_of(out) == [b"first", b"second"]
    assert time.monotonic() - started < 2.4  # woken by the append, not by BLOCK's end


def test_the_cli_runs_as_a_module(server: RunningServer) -> None:
    name = fresh_name("proc").decode()
    base = [sys.executable, "-m", "examples.s3p_client", "--port", str(server.port)]
    done = subprocess.run(
        [*base, "create", name], cwd=ROOT, capture_output=True, timeout=30, check=False
    )
    assert (done.returncode, done.stdout) == (0, b"OK\n")
    done = subprocess.run(
        [*base, "append", name],
        cwd=ROOT,
        input=b"x\ny\n",
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0
    done = subprocess.run(
        [*base, "read", name], cwd=ROOT, capture_output=True, timeout=30, check=False
    )
    assert records_of(done.stdout) == [b"x", b"y"]
