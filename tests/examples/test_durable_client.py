"""The example client's demo, run as a user runs it, against the example server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.durable._servers import example_server

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.network
def test_the_demo_creates_appends_reads_and_follows_to_eof() -> None:
    with example_server() as url:
        done = subprocess.run(
            [sys.executable, "-m", "examples.durable_client", url],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("create: Created(")
    assert lines[1].startswith("append: Appended(")
    assert "producer_epoch=0" in lines[1]
    assert lines[2].startswith('catch-up: [{"order":1},{"order":2}]')
    assert any(line.startswith("append and close: Appended(") for line in lines)
    assert 'live: [{"order":3}]' in lines
    assert lines[-1] == "EOF: the stream is closed"
