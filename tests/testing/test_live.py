"""``live.fuzz`` against every example server, and against servers that misbehave on purpose.

A broken server (resets, garbage, silence, gigantic length headers) must be reported, and the
run must still end within its budget (plus one case time-out) with bounded memory.
"""

from __future__ import annotations

import functools
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from s3p_codec import s3p
from s3p_codec.testing import durable as durable_cases
from s3p_codec.testing import live
from s3p_codec.testing import pravega as pravega_cases
from s3p_codec.testing import rustlog as rustlog_cases
from s3p_codec.testing import s3p as s3p_cases
from s3p_codec.testing.command import make_target

from .faulty import tcp_server
from .servers import example_server

BUDGET = 2.5
TIMEOUT = 1.0


@pytest.mark.parametrize("protocol", ["s3p", "rustlog", "pravega", "s2s", "durable"])
def test_fuzz_finds_nothing_wrong_with_the_example_server(protocol: str) -> None:
    with example_server(protocol) as port:
        report = live.fuzz(make_target(protocol), "127.0.0.1", port, seconds=BUDGET, seed=7)
    assert report.ok, report.summary()
    assert report.malformed > 20
    assert report.valid > 0
    assert report.probes > 0
    assert len(report.labels) > 5


def test_limits_of_a_configured_server_are_aimed_at_exactly() -> None:
    # A server started with small limits: the cases at and just over them follow.
    limits = s3p.Limits(
        max_stream_name=32, max_records_per_append=100, max_record_size=4096,
        max_append_size=65536, max_count=5000, max_block_ms=3000,
    )  # fmt: skip
    flags = ["--max-stream-name", "32", "--max-records-per-append", "100",
             "--max-record-size", "4096", "--max-append-size", "65536",
             "--max-count", "5000", "--max-block-ms", "3000"]  # fmt: skip
    with example_server("s3p", *flags) as port:
        report = live.fuzz(s3p_cases.Target(limits), "127.0.0.1", port, seconds=2, seed=11)
    assert report.ok, report.summary()
    assert report.labels["COUNT over the limit"] + report.labels["BLOCK over the limit"] > 0


def test_the_same_seed_sends_the_same_cases() -> None:
    strategy = s3p_cases.malformed()
    assert live.draw(strategy, 30, seed=3) == live.draw(strategy, 30, seed=3)
    assert live.draw(strategy, 30, seed=3) != live.draw(strategy, 30, seed=4)


# --- servers that misbehave --------------------------------------------------------------------

Behaviour = Callable[[socket.socket], None]


@contextmanager
def fake_server(behaviour: Behaviour) -> Iterator[int]:
    """A TCP server on 127.0.0.1 that treats every connection with ``behaviour``."""
    with tcp_server(functools.partial(_guarded, behaviour)) as port:
        yield port


def _guarded(behaviour: Behaviour, conn: socket.socket, stop: threading.Event) -> None:
    conn.settimeout(0.2)
    try:
        behaviour(conn)
        while not stop.is_set():  # keep the connection as the behaviour left it
            try:
                if not conn.recv(65536):
                    break
            except TimeoutError:
                continue
    except OSError:
        pass
    finally:
        conn.close()


def _reset(conn: socket.socket) -> None:
    conn.recv(1)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    conn.close()


def _garbage(conn: socket.socket) -> None:
    conn.recv(65536)
    conn.sendall(b"\x00\xff garbage \r\n\x07" * 10)


def _silence(conn: socket.socket) -> None:
    conn.recv(65536)


def _endless(header: bytes) -> Behaviour:
    def behaviour(conn: socket.socket) -> None:
        conn.recv(65536)
        conn.sendall(header)
        chunk = b"x" * 65536
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            conn.sendall(chunk)  # stops when the client closes (OSError)

    return behaviour


BROKEN = {
    "reset": _reset,
    "garbage": _garbage,
    "silence": _silence,
    "s3p gigantic bulk length": _endless(b"$99999999999\r\n"),
    "rustlog length 2^32-1": _endless(b"\xff\xff\xff\xff"),
    "pravega length 2^31-1": _endless(b"\xff\xff\xff\x81\x7f\xff\xff\xff"),
    "gigantic but legal s3p array": _endless(b"*1000000\r\n"),
    "HTTP body of 10 GB": _endless(b"HTTP/1.1 200 OK\r\ncontent-length: 10000000000\r\n\r\n"),
}
# The check each behaviour must at least fail (more may fail with it).
EXPECTED = {
    "reset": "error reply sent",
    "garbage": "well-formed reply",
    "silence": "connection closed after a fatal error",
    "s3p gigantic bulk length": "well-formed reply",
    "rustlog length 2^32-1": "well-formed reply",
    "pravega length 2^31-1": "well-formed reply",
    "gigantic but legal s3p array": "well-formed reply",
    "HTTP body of 10 GB": "bounded reply",
}
TARGETS = {
    "reset": rustlog_cases.Target(),
    "garbage": s3p_cases.Target(),
    "silence": pravega_cases.Target(),
    "s3p gigantic bulk length": s3p_cases.Target(),
    "rustlog length 2^32-1": rustlog_cases.Target(),
    "pravega length 2^31-1": pravega_cases.Target(),
    "gigantic but legal s3p array": s3p_cases.Target(),
    "HTTP body of 10 GB": durable_cases.Target(),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_misbehaving_server_is_reported_within_the_budget(name: str) -> None:
    # Drawing the first 200 cases takes about a second of the budget (two on a busy machine);
    # a server that resets at once must still get a malformed case that expects a reply.
    seconds = 3.0 if name == "reset" else 1.5
    with fake_server(BROKEN[name]) as port:
        began = time.monotonic()
        report = live.fuzz(
            TARGETS[name], "127.0.0.1", port, seconds=seconds, seed=1, case_timeout=0.5
        )
        took = time.monotonic() - began
    assert not report.ok
    assert EXPECTED[name] in {check for check, _ in report.findings}, report.summary()
    # Never past the budget by more than the final probe and one case (plus slack for setup).
    assert took < seconds + 3 * 0.5 + 1.0, took
    text = report.summary()
    assert "FINDING" in text or "ABORTED" in text


def test_a_server_that_is_not_there_is_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    report = live.fuzz(s3p_cases.Target(), "127.0.0.1", port, seconds=1, seed=1, case_timeout=0.3)
    assert not report.ok
    assert any("refused" in f.observed for f in report.findings.values())


def test_the_documented_few_line_example_runs_against_the_example_server() -> None:
    from s3p_codec import testing

    doc = testing.__doc__ or ""
    block = doc.split("Test your own S3P server in a few lines::", 1)[1].split("\n\n", 1)[1]
    code = block.split("\n\nor let the driver", 1)[0]
    source = "\n".join(line.removeprefix("    ") for line in code.splitlines())
    with example_server("s3p") as port:
        namespace: dict[str, object] = {}
        exec(source.replace("7500", str(port)), namespace)
        test = namespace["test_my_server_refuses_bad_framing"]
        assert callable(test)
        test()
