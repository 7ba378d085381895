"""The example S3P server over real sockets on 127.0.0.1, on both backends.

Clients use each adapter (blocking, asyncio, trio) in the client role against the server, which
runs the asyncio or trio adapter in the server role. Raw sockets check exact bytes where the
codec would hide them (error replies, the close that follows, byte-at-a-time delivery).
"""

from __future__ import annotations

import asyncio
import itertools
import signal
import socket
import threading
import time

import pytest
import trio

from s3p_codec import Role, s3p
from s3p_codec.io import ConnectionClosed
from s3p_codec.io import asyncio as aio_io
from s3p_codec.io import sync as sync_io
from s3p_codec.io import trio as trio_io
from tests.examples.conftest import RunningServer, StartServer

pytestmark = [pytest.mark.network, pytest.mark.timeout(60)]

TS = s3p.Timestamp
_names = itertools.count()


def fresh_name(tag: str = "s") -> bytes:
    """Stream names unique across the session: the servers live for the whole run."""
    return f"{tag}-{next(_names)}".encode()


def client(
    server: RunningServer, timeout: float = 10.0
) -> sync_io.SyncConnection[s3p.Event, s3p.Event]:
    return sync_io.connect(s3p.Connection(Role.CLIENT), *server.address, timeout=timeout)


def call(conn: sync_io.SyncConnection[s3p.Event, s3p.Event], request: s3p.Request) -> s3p.Event:
    conn.send(request)
    return conn.next_event()


def raw(server: RunningServer) -> socket.socket:
    sock = socket.create_connection(server.address, timeout=10.0)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_until_eof(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def command(*parts: bytes | list[bytes]) -> bytes:
    """Encode a command by hand (RESP framing), so tests can send what no codec would."""
    out = [b"*%d\r\n" % len(parts)]
    for part in parts:
        if isinstance(part, list):
            out.append(b"*%d\r\n" % len(part))
            out.extend(b"$%d\r\n%s\r\n" % (len(item), item) for item in part)
        else:
            out.append(b"$%d\r\n%s\r\n" % (len(part), part))
    return b"".join(out)


def assert_still_serving(
    server: RunningServer, conn: sync_io.SyncConnection[s3p.Event, s3p.Event]
) -> None:
    """An established connection and a new one both still get answers."""
    name = fresh_name("alive")
    assert call(conn, s3p.Create(name)) == s3p.Ok()
    with client(server) as other:
        reply = call(other, s3p.Append(name, (b"ping",)))
        assert isinstance(reply, s3p.AppendReply)
    reply = call(conn, s3p.Read(name))
    assert isinstance(reply, s3p.ReadReply)
    assert [payload for _, payload in reply.records] == [b"ping"]


# --- each adapter, client role, against the server (which uses asyncio or trio) ------------


def scenario_requests(name: bytes) -> list[s3p.Request]:
    return [
        s3p.Create(name),
        s3p.Append(name, (b"hello", b"world")),
        s3p.Read(name, count=10),
        s3p.Trim(name, TS(2**63, 0)),
        s3p.Read(name),
        s3p.Delete(name),
    ]


def check_scenario(replies: list[s3p.Event]) -> None:
    ok, appended, read, trimmed, empty, deleted = replies
    assert ok == trimmed == deleted == s3p.Ok()
    assert isinstance(appended, s3p.AppendReply)
    assert isinstance(read, s3p.ReadReply)
    assert [payload for _, payload in read.records] == [b"hello", b"world"]
    assert read.records[-1][0] == appended.timestamp
    assert read.records[0][0] < read.records[1][0]
    assert empty == s3p.ReadReply(())


def test_sync_adapter_client_role_against_the_server(server: RunningServer) -> None:
    with client(server) as conn:
        check_scenario([call(conn, r) for r in scenario_requests(fresh_name())])


def test_asyncio_adapter_client_role_against_the_server(server: RunningServer) -> None:
    async def main() -> list[s3p.Event]:
        async with asyncio.timeout(10):
            conn = await aio_io.connect(s3p.Connection(Role.CLIENT), *server.address)
            async with conn:
                requests = scenario_requests(fresh_name())
                for r in requests:  # pipelined
                    await conn.send(r)
                return [await conn.next_event() for _ in requests]

    check_scenario(asyncio.run(main()))


def test_trio_adapter_client_role_against_the_server(server: RunningServer) -> None:
    async def main() -> list[s3p.Event]:
        with trio.fail_after(10):
            conn = await trio_io.connect(s3p.Connection(Role.CLIENT), *server.address)
            async with conn:
                replies = []
                for r in scenario_requests(fresh_name()):
                    await conn.send(r)
                    replies.append(await conn.next_event())
                return replies

    check_scenario(trio.run(main))


# --- semantics over the wire ----------------------------------------------------------------


def test_create_twice_answers_err_stream_exists_and_closes(server: RunningServer) -> None:
    name = fresh_name()
    with client(server) as conn:
        assert call(conn, s3p.Create(name)) == s3p.Ok()
        reply = call(conn, s3p.Create(name))
        assert isinstance(reply, s3p.ErrorReply)
        assert reply.code is s3p.ErrorCode.STREAM_EXISTS
        with pytest.raises(ConnectionClosed):
            conn.next_event()


@pytest.mark.parametrize("kind", ["append", "read", "trim", "delete"])
def test_missing_stream_answers_err_unknown_stream_and_closes(
    server: RunningServer, kind: str
) -> None:
    name = fresh_name("missing")
    requests: dict[str, s3p.Request] = {
        "append": s3p.Append(name, (b"x",)),
        "read": s3p.Read(name),
        "trim": s3p.Trim(name, TS(1, 0)),
        "delete": s3p.Delete(name),
    }
    request = requests[kind]
    with raw(server) as sock:
        sock.sendall(s3p.Connection(Role.CLIENT).send(request) + command(b"READ", name, []))
        reply = read_until_eof(sock)
    assert reply.startswith(b"-ERR_UNKNOWN_STREAM ")
    assert reply.count(b"\r\n") == 1  # the pipelined READ after the error got nothing


def test_server_timestamps_are_strictly_increasing_under_concurrency(server: RunningServer) -> None:
    name = fresh_name()
    with client(server) as conn:
        assert call(conn, s3p.Create(name)) == s3p.Ok()
    stamps: list[list[s3p.Timestamp]] = [[] for _ in range(4)]

    def writer(index: int) -> None:
        with client(server) as conn:
            for _ in range(50):
                conn.send(s3p.Append(name, (b"%d" % index,)))
            for _ in range(50):
                reply = conn.next_event()
                assert isinstance(reply, s3p.AppendReply)
                stamps[index].append(reply.timestamp)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    every = sorted(itertools.chain.from_iterable(stamps))
    assert len(set(every)) == 200
    for own in stamps:
        assert own == sorted(own)
    with client(server) as conn:
        reply = call(conn, s3p.Read(name, count=500))
        assert isinstance(reply, s3p.ReadReply)
        assert [ts for ts, _ in reply.records] == every


def test_client_timestamps_must_exceed_the_tail_else_err_bad_format(server: RunningServer) -> None:
    name = fresh_name()
    with client(server) as conn:
        assert call(conn, s3p.Create(name, s3p.TimestampStrategy.CLIENT)) == s3p.Ok()
        assert call(conn, s3p.Append(name, (b"a",), TS(10, 0))) == s3p.AppendReply(TS(10, 0))
        reply = call(conn, s3p.Append(name, (b"b",), TS(10, 0)))
        assert isinstance(reply, s3p.ErrorReply)
        assert reply.code is s3p.ErrorCode.BAD_FORMAT
    with client(server) as conn:
        assert call(conn, s3p.Append(name, (b"c",), TS(10, 1))) == s3p.AppendReply(TS(10, 1))
        reply = call(conn, s3p.Read(name))
        assert isinstance(reply, s3p.ReadReply)
        assert [payload for _, payload in reply.records] == [b"a", b"c"]


def test_read_count_min_timestamp_and_configured_default_count(server: RunningServer) -> None:
    name = fresh_name()
    with client(server) as conn:
        call(conn, s3p.Create(name, s3p.TimestampStrategy.CLIENT))
        for ms in range(1, 21):
            call(conn, s3p.Append(name, (b"r%d" % ms,), TS(ms, 0)))
        default = call(conn, s3p.Read(name))
        assert isinstance(default, s3p.ReadReply)
        assert len(default.records) == 7  # --default-count 7
        page = call(conn, s3p.Read(name, count=3, min_timestamp=TS(15, 0)))
        assert page == s3p.ReadReply(
            ((TS(16, 0), b"r16"), (TS(17, 0), b"r17"), (TS(18, 0), b"r18"))
        )


def test_blocking_read_is_woken_by_a_concurrent_append(server: RunningServer) -> None:
    name = fresh_name()
    with client(server) as conn:
        call(conn, s3p.Create(name))
        started = time.monotonic()
        conn.send(s3p.Read(name, block_ms=3000))
        time.sleep(0.1)
        with client(server) as writer:
            appended = call(writer, s3p.Append(name, (b"wake up",)))
        reply = conn.next_event()
        elapsed = time.monotonic() - started
    assert isinstance(appended, s3p.AppendReply)
    assert reply == s3p.ReadReply(((appended.timestamp, b"wake up"),))
    assert elapsed < 2.5  # woken by the APPEND, not by the 3 s time-out


def test_blocking_read_answers_an_empty_array_on_time_out(server: RunningServer) -> None:
    name = fresh_name()
    with client(server) as conn:
        call(conn, s3p.Create(name))
        started = time.monotonic()
        assert call(conn, s3p.Read(name, block_ms=300)) == s3p.ReadReply(())
        assert time.monotonic() - started >= 0.29
        assert call(conn, s3p.Append(name, (b"x",))) is not None  # the connection lives on


# --- every limit flag is in force (FLAGS in conftest.py) ------------------------------------


LIMIT_CASES = {
    "stream name over --max-stream-name is ERR_BAD_FORMAT": (
        command(b"CREATE", b"n" * 33, []),
        b"-ERR_BAD_FORMAT ",
    ),
    "records over --max-records-per-append is ERR_LIMITS": (
        command(b"APPEND", b"limits", [], [b"x"] * 101),
        b"-ERR_LIMITS ",
    ),
    "record over --max-record-size is ERR_LIMITS": (
        command(b"APPEND", b"limits", [], [b"x" * 4097]),
        b"-ERR_LIMITS ",
    ),
    "append over --max-append-size is ERR_LIMITS": (
        command(b"APPEND", b"limits", [], [b"x" * 4000] * 17),
        b"-ERR_LIMITS ",
    ),
    "COUNT over --max-count is ERR_LIMITS": (
        command(b"READ", b"limits", [b"COUNT", b"5001"]),
        b"-ERR_LIMITS ",
    ),
    "BLOCK over --max-block-ms is ERR_LIMITS": (
        command(b"READ", b"limits", [b"BLOCK", b"3001"]),
        b"-ERR_LIMITS ",
    ),
}


@pytest.mark.parametrize("case", list(LIMIT_CASES))
def test_limit_flags_are_enforced(server: RunningServer, case: str) -> None:
    wire, expected = LIMIT_CASES[case]
    with raw(server) as sock:
        sock.sendall(wire)
        reply = read_until_eof(sock)
    assert reply.startswith(expected)
    assert reply.endswith(b"\r\n")
    assert reply.count(b"\r\n") == 1


def test_values_at_the_limit_flags_are_accepted(server: RunningServer) -> None:
    name = fresh_name().ljust(32, b"n")  # --max-stream-name 32
    with client(server) as conn:
        assert call(conn, s3p.Create(name)) == s3p.Ok()
        at_size = call(conn, s3p.Append(name, (b"x" * 4096,) * 16))  # 65536 bytes in all
        assert isinstance(at_size, s3p.AppendReply)
        assert isinstance(call(conn, s3p.Append(name, (b"x",) * 100)), s3p.AppendReply)
        reply = call(conn, s3p.Read(name, count=5000, block_ms=3000))
        assert isinstance(reply, s3p.ReadReply)
        assert len(reply.records) == 116


# --- connection limits: idle time-out and maximum connections -------------------------------


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_idle_connections_are_closed_and_the_cap_sheds_the_idlest(
    start_server: StartServer, backend: str
) -> None:
    small = start_server(backend, "--idle-timeout", "0.8", "--max-connections", "2")
    with client(small) as first, client(small) as second:
        assert call(first, s3p.Create(fresh_name())) == s3p.Ok()
        assert call(second, s3p.Create(fresh_name())) == s3p.Ok()
        # At the cap a newcomer sheds the connection idle the longest (``first``), instead of
        # being locked out by connections that do nothing.
        with client(small) as third:
            assert call(third, s3p.Create(fresh_name())) == s3p.Ok()
            with pytest.raises(ConnectionClosed):
                first.next_event()
            # A READ blocked on the server is not idle, even past the idle time-out.
            name = fresh_name()
            assert call(second, s3p.Create(name)) == s3p.Ok()
            assert call(second, s3p.Read(name, block_ms=1000)) == s3p.ReadReply(())
            assert call(second, s3p.Read(name)) == s3p.ReadReply(())
            time.sleep(1.1)  # silent longer than --idle-timeout: both are closed
            with pytest.raises(ConnectionClosed):
                second.next_event()
            with pytest.raises(ConnectionClosed):
                third.next_event()
    with client(small) as again:  # the slots were given back
        assert call(again, s3p.Create(fresh_name())) == s3p.Ok()


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_at_the_cap_with_every_connection_busy_the_newcomer_is_closed(
    start_server: StartServer, backend: str
) -> None:
    small = start_server(backend, "--max-connections", "1")
    name = fresh_name()
    with client(small) as first:
        assert call(first, s3p.Create(name)) == s3p.Ok()
        first.send(s3p.Read(name, block_ms=3000))  # busy: blocked on the server
        time.sleep(0.5)
        with raw(small) as newcomer:  # nobody idle to shed: closed without a reply
            assert read_until_eof(newcomer) == b""


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_request_trickled_slower_than_the_request_timeout_is_cut_off(
    start_server: StartServer, backend: str
) -> None:
    """Slowloris: a byte every 0.2 s never lets a connection look idle; the request-progress
    time-out closes it once its request has been arriving for ``--request-timeout``."""
    small = start_server(backend, "--request-timeout", "0.6", "--idle-timeout", "0")
    started = time.monotonic()
    with raw(small) as slow:
        slow.settimeout(0.2)
        closed = False
        for byte in command(b"CREATE", fresh_name(), []) * 10:
            try:
                slow.sendall(bytes([byte]))
                if slow.recv(1) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue
            except OSError:
                closed = True
                break
        assert closed
    assert time.monotonic() - started < 2.5
    with client(small) as quick:  # a client that sends whole requests is served
        assert call(quick, s3p.Create(fresh_name())) == s3p.Ok()


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_per_address_cap_sheds_that_address_s_idlest(
    start_server: StartServer, backend: str
) -> None:
    small = start_server(backend, "--max-connections-per-address", "1")
    with client(small) as first:
        assert call(first, s3p.Create(fresh_name())) == s3p.Ok()
        with client(small) as second:
            assert call(second, s3p.Create(fresh_name())) == s3p.Ok()
            with pytest.raises(ConnectionClosed):
                first.next_event()


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_ctrl_c_stops_the_server_cleanly(start_server: StartServer, backend: str) -> None:
    running = start_server(backend)
    running.process.send_signal(signal.SIGINT)
    assert running.process.wait(10) == 0
    assert b"Traceback" not in running.log.read_bytes()


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_client_that_leaves_during_a_blocking_read_is_let_go_at_once(
    start_server: StartServer, backend: str
) -> None:
    # One connection allowed: the next one is admitted only once the server let the first go.
    single = start_server(backend, "--max-connections", "1", "--max-block-ms", "30000")
    name = fresh_name()
    with client(single) as setup:
        assert call(setup, s3p.Create(name)) == s3p.Ok()
    time.sleep(0.2)  # the server counts the setup connection out
    with client(single) as leaving:
        leaving.send(s3p.Read(name, block_ms=20000))
        # Pipelined behind the blocked READ: read ahead by the watch, never answered.
        leaving.send(s3p.Append(name, (b"never",)))
    began = time.monotonic()
    while True:  # well before BLOCK's 20 s run out
        with client(single, timeout=2.0) as after:
            after.send(s3p.Read(name))
            try:
                reply = after.next_event()
                break
            except (ConnectionClosed, ConnectionError):
                assert time.monotonic() - began < 5, "the blocked client was not let go"
                time.sleep(0.05)
    assert reply == s3p.ReadReply(())  # and the APPEND behind the READ was dropped with it
    assert time.monotonic() - began < 5


def test_requests_pipelined_behind_a_blocking_read_are_answered_after_it_in_order(
    server: RunningServer,
) -> None:
    name = fresh_name()
    with client(server) as conn:
        assert call(conn, s3p.Create(name)) == s3p.Ok()
        conn.send(s3p.Read(name, block_ms=300))  # the watch reads the next two ahead of time
        conn.send(s3p.Append(name, (b"after",)))
        conn.send(s3p.Read(name))
        assert conn.next_event() == s3p.ReadReply(())  # BLOCK ran out: the APPEND came later
        appended = conn.next_event()
        assert isinstance(appended, s3p.AppendReply)
        assert conn.next_event() == s3p.ReadReply(((appended.timestamp, b"after"),))
