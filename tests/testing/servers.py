"""Example servers started as a user starts them (``python -m examples.<name> --port 0``).

The port is read from the server's log; every process is stopped by the fixture that started
it, whatever happened.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

EXAMPLES = {
    "s3p": ["examples.s3p_server"],
    "rustlog": ["examples.rustlog_broker"],
    "pravega": ["examples.pravega_segment_store", "--tail-wait", "0.2"],
    "s2s": ["examples.s2_server", "--heartbeat", "1"],
    "durable": ["examples.durable_server", "--long-poll-timeout", "0.5"],
}


@contextmanager
def example_server(protocol: str, *flags: str) -> Iterator[int]:
    """Start the example server of ``protocol`` (with ``flags``) on an OS-chosen port."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [sys.executable, "-m", *EXAMPLES[protocol], "--port", "0", *flags],
                cwd=ROOT,
                stdout=sink,
                stderr=sink,
            )
        try:
            deadline = time.monotonic() + 30
            port = None
            while port is None and time.monotonic() < deadline:
                found = re.search(rb"listening on \S*?:(\d+)", log.read_bytes())
                if found:
                    port = int(found.group(1))
                elif process.poll() is not None:
                    break
                else:
                    time.sleep(0.05)
            if port is None:
                raise RuntimeError(f"{protocol} example did not start: {log.read_text()}")
            yield port
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
