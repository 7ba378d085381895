"""The example S3P server, started as a user starts it: ``python -m examples.s3p_server``.

Each backend runs in its own process on a port the OS chose (``--port 0``); the port is read
from the server's log. The process is killed at the end of the module, whatever happened.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[2]

# Limits well below the defaults, so that every limit flag is visibly in force.
FLAGS = (
    "--max-stream-name", "32",
    "--max-records-per-append", "100",
    "--max-record-size", "4096",
    "--max-append-size", "65536",
    "--default-count", "7",
    "--max-count", "5000",
    "--max-block-ms", "3000",
    "--idle-timeout", "0",
    "--max-connections", "0",
)  # fmt: skip


@attrs.frozen
class RunningServer:
    backend: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def address(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)


StartServer = Callable[..., RunningServer]


@pytest.fixture(scope="session")
def start_server() -> Iterator[StartServer]:
    """A function that starts a server with extra flags; every one is stopped at the end."""
    started: list[RunningServer] = []
    folder = tempfile.TemporaryDirectory()

    def start(backend: str, *flags: str) -> RunningServer:
        log = Path(folder.name) / f"server-{len(started)}.log"
        argv = [sys.executable, "-m", "examples.s3p_server", "--port=0", f"--backend={backend}"]
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [*argv, *flags],
                cwd=ROOT,
                stdout=sink,
                stderr=sink,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = re.search(rb"listening on 127\.0\.0\.1:(\d+)", log.read_bytes())
            if found:
                server = RunningServer(backend, int(found.group(1)), process, log)
                started.append(server)
                return server
            if process.poll() is not None:
                break
            time.sleep(0.05)
        process.kill()
        raise RuntimeError(f"the server did not start: {log.read_text()}")

    yield start
    for server in started:
        server.process.terminate()
    for server in started:
        try:
            server.process.wait(10)
        except subprocess.TimeoutExpired:
            server.process.kill()
    folder.cleanup()


@pytest.fixture(scope="session", params=["asyncio", "trio"])
def server(request: pytest.FixtureRequest, start_server: StartServer) -> RunningServer:
    """The example server on each backend, with the limits of ``FLAGS``."""
    return start_server(request.param, *FLAGS)
