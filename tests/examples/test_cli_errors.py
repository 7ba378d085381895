"""Ordinary mistakes with the example programs end in one line on stderr, never a traceback."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.network, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]

SERVERS = [
    ["examples.s3p_server"],
    ["examples.s3p_server", "--backend", "trio"],
    ["examples.rustlog_broker"],
    ["examples.s2_server"],
    ["examples.durable_server"],
    ["examples.pravega_segment_store"],
]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _one_line(result: subprocess.CompletedProcess[str], program: str, words: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1, result.stderr
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"python -m {program}: ")
    assert words in lines[0]


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("server", SERVERS, ids=" ".join)
def test_a_server_on_a_port_in_use_says_so_in_one_line(server: list[str], busy_port: int) -> None:
    _one_line(_run(*server, "--port", str(busy_port)), server[0], "address already in use")


def test_a_port_out_of_range_is_one_line() -> None:
    _one_line(_run("examples.rustlog_broker", "--port", "70000"), "examples.rustlog_broker", "port")


@pytest.mark.parametrize(
    "client",
    [
        ["examples.rustlog_client", "--port", "{port}", "list"],
        ["examples.pravega_client", "--port", "{port}", "read", "demo"],
        ["examples.durable_client", "http://127.0.0.1:{port}"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_client_refused_says_so_in_one_line(client: list[str], closed_port: int) -> None:
    argv = [part.format(port=closed_port) for part in client]
    result = _run(*argv)
    _one_line(result, argv[0], "refused" if "rustlog" in argv[0] else "connect")


@pytest.mark.parametrize(
    ("program", "port", "server"),
    [
        ("s3p_server", 7500, True),
        ("s3p_client", 7500, False),
        ("rustlog_broker", 9092, True),
        ("rustlog_client", 9092, False),
        ("s2_server", 8080, True),
        ("durable_server", 4437, True),
        ("pravega_segment_store", 12345, True),
        ("pravega_client", 12345, False),
    ],
)
def test_every_example_has_the_same_address_options_and_usage_line(
    program: str, port: int, server: bool
) -> None:
    result = _run(f"examples.{program}", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert text.startswith(f"usage: python -m examples.{program} ")
    assert "--host HOST" in text
    assert "(127.0.0.1)" in text
    assert f"TCP port ({port}" in text
    # -v means the same in every server: log each connection and protocol error.
    assert ("-v, --verbose log each connection and protocol error" in text) is server
