"""The example server and client in S3P v0.2.0 mode (``--s3p-version 0.2.0``), over sockets.

Recoverable errors keep the connection (pipelined requests behind them are answered in order),
``append --id`` and ``read --min-id`` work end to end, a v0.1.0 option is refused, and the live
fuzzer's v0.2.0 target finds nothing.
"""

from __future__ import annotations

import io
import itertools

import pytest

from examples.s3p_client import main
from s3p_codec import Role, s3p
from s3p_codec.io import sync as sync_io
from s3p_codec.testing import live
from s3p_codec.testing import s3p as cases
from tests.examples.conftest import FLAGS, RunningServer, StartServer

pytestmark = [pytest.mark.network, pytest.mark.timeout(60)]

_names = itertools.count()
Id = s3p.Id
V2 = "0.2.0"


@pytest.fixture(scope="module", params=["asyncio", "trio"])
def server(request: pytest.FixtureRequest, start_server: StartServer) -> RunningServer:
    return start_server(request.param, *FLAGS, "--s3p-version", V2)


def fresh_name() -> bytes:
    return f"v2-{next(_names)}".encode()


def connect(server: RunningServer) -> sync_io.SyncConnection[s3p.Event, s3p.Event]:
    codec = s3p.Connection(Role.CLIENT, version=V2)
    return sync_io.connect(codec, *server.address, timeout=10.0)


def cli(server: RunningServer, *argv: str) -> tuple[int, bytes]:
    out = io.BytesIO()
    status = main(
        ["--port", str(server.port), "--s3p-version", V2, *argv],
        stdin=io.BytesIO(b""),
        stdout=out,
    )
    return status, out.getvalue()


def test_recoverable_errors_keep_the_connection_and_pipelined_requests_are_answered(
    server: RunningServer,
) -> None:
    name = fresh_name()
    requests = [
        s3p.Create(name),
        s3p.Create(name),  # ERR_STREAM_EXISTS
        s3p.Append(name, (b"a",), id=50),
        s3p.Append(name, (b"b",), id=49),  # ERR_NON_MONOTONIC_ID
        s3p.Append(name, (b"c",), id=50),  # equal: seq + 1
        s3p.Read(b"missing-" + name),  # ERR_UNKNOWN_STREAM
        s3p.Read(name, min_id=Id(50, 1)),  # inclusive
        s3p.Delete(name),
    ]
    with connect(server) as conn:
        for request in requests:
            conn.send(request)
        replies = [conn.next_event() for _ in requests]
    codes = [r.code if isinstance(r, s3p.ErrorReply) else None for r in replies]
    assert codes == [
        None,
        s3p.ErrorCode.STREAM_EXISTS,
        None,
        s3p.ErrorCode.NON_MONOTONIC_ID,
        None,
        s3p.ErrorCode.UNKNOWN_STREAM,
        None,
        None,
    ]
    assert replies[2] == s3p.AppendReply(Id(50, 0))
    assert replies[4] == s3p.AppendReply(Id(50, 1))
    assert replies[6] == s3p.ReadReply(((Id(50, 1), b"c"),))


def test_an_unrecoverable_error_still_closes_the_connection(server: RunningServer) -> None:
    with connect(server) as conn:
        conn.send(s3p.Read(b"x" * 33))  # over --max-stream-name 32: ERR_LIMITS in v0.2.0
        conn.send(s3p.Create(fresh_name()))
        reply = conn.next_event()
        assert isinstance(reply, s3p.ErrorReply)
        assert reply.code is s3p.ErrorCode.LIMITS
        assert conn.conn.finished


def test_the_client_cli_appends_with_id_and_reads_from_min_id(
    server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    name = fresh_name().decode()
    assert cli(server, "create", name) == (0, b"OK\n")
    assert cli(server, "create", name)[0] == 1
    assert capsys.readouterr().err.startswith("ERR_STREAM_EXISTS ")
    assert cli(server, "append", name, "--id", "1700000001234", "a", "b") == (
        0,
        b"1700000001234-1\n",
    )
    assert cli(server, "append", name, "--id", "1700000001233", "c")[0] == 1
    assert capsys.readouterr().err.startswith("ERR_NON_MONOTONIC_ID ")
    assert cli(server, "read", name, "--min-id", "1700000001234-1") == (
        0,
        b"1700000001234-1 b\n",
    )
    assert cli(server, "trim", name, "1700000001234-1") == (0, b"OK\n")
    assert cli(server, "read", name) == (0, b"1700000001234-1 b\n")
    assert cli(server, "delete", name) == (0, b"OK\n")


def test_the_client_cli_refuses_options_of_the_other_version(server: RunningServer) -> None:
    with pytest.raises(SystemExit):
        cli(server, "read", "s", "--after", "1-0")
    with pytest.raises(SystemExit):
        main(["--port", str(server.port), "append", "s", "--id", "5", "x"])


def test_the_live_fuzzer_finds_nothing_on_the_v020_server(server: RunningServer) -> None:
    limits = s3p.Limits(
        max_stream_name=32,
        max_records_per_append=100,
        max_record_size=4096,
        max_append_size=65536,
        default_count=7,
        max_count=5000,
        max_block_ms=3000,
    )
    report = live.fuzz(
        cases.Target(limits, version=V2), *server.address, seconds=3, seed=1, case_timeout=2
    )
    assert report.ok, report.summary()
