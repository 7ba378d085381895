"""Example servers started as users start them (``python -m examples.NAME --port 0``), one per
test, each stopped at the end of its test whatever happened; and captures cut or stretched
from the bundled samples."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "examples" / "captures"

StartServer = Callable[..., str]
"""``start(module, *flags) -> "127.0.0.1:PORT"``."""

_LISTENING = re.compile(rb"listening on (?:http://)?127\.0\.0\.1:(\d+)")


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    """Start example servers on OS-chosen ports; all are stopped when the test ends."""
    started: list[subprocess.Popen[bytes]] = []

    def start(module: str, *flags: str) -> str:
        log = tmp_path / f"{module}-{len(started)}.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [sys.executable, "-m", f"examples.{module}", "--port", "0", *flags],
                cwd=ROOT, stdout=sink, stderr=sink,
            )  # fmt: skip
        started.append(process)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = _LISTENING.search(log.read_bytes())
            if found:
                return f"127.0.0.1:{int(found.group(1))}"
            if process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"{module} did not start: {log.read_text()}")

    yield start
    for process in started:
        process.terminate()
    for process in started:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
