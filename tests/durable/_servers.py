"""Start the Durable Streams peers the tests talk to, each in its own process on 127.0.0.1.

- our example server: ``python -m examples.durable_server --port 0``;
- the Node reference server (npm ``@durable-streams/server``): ``node reference-server.mjs``.

Both print ``listening on http://127.0.0.1:PORT`` once ready; the port is chosen by the OS.
Node packages live in ``tests/durable/conformance/node_modules`` (``npm ci`` from the lock file,
run by ``.ci/setup``; ``ensure_node_modules`` runs it too when they are missing).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = Path(__file__).resolve().parent / "conformance"
_LISTENING = re.compile(rb"listening on (http://127\.0\.0\.1:\d+)")


def ensure_node_modules() -> None:
    """Skip without Node; install the locked npm packages when they are missing."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js is not installed (bash .ci/setup installs it)")
    if (CONFORMANCE / "node_modules" / ".package-lock.json").exists():
        return
    # As .ci/setup: `npm ci`, or `npm install` when npm 11 refuses its own lock file.
    ci = ["npm", "ci", "--no-audit", "--no-fund", "--silent"]
    if subprocess.run(ci, cwd=CONFORMANCE, check=False, timeout=300).returncode != 0:
        install = ["npm", "install", "--no-audit", "--no-fund", "--silent"]
        subprocess.run(install, cwd=CONFORMANCE, check=True, timeout=300)


def _wait_for_url(process: subprocess.Popen[bytes], timeout: float) -> str:
    assert process.stdout is not None
    found: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in iter(process.stdout.readline, b""):
            match = _LISTENING.search(line)
            if match:
                found.append(match.group(1).decode())
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    if not found:
        process.kill()
        raise RuntimeError("the server did not report its address in time")
    return found[0]


@contextlib.contextmanager
def running(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run a server process; yield its base URL; stop it (terminate, then kill) at the end."""
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield _wait_for_url(process, timeout=30)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()


def example_server(*flags: str) -> contextlib.AbstractContextManager[str]:
    """Our example server with a short long-poll timeout (so timeouts cost half a second)."""
    argv = [sys.executable, "-m", "examples.durable_server", "--port", "0"]
    argv += ["--long-poll-timeout", "0.5", *flags]
    return running(argv, cwd=ROOT)


def reference_server() -> contextlib.AbstractContextManager[str]:
    """The Node reference server (long-poll timeout 500 ms)."""
    ensure_node_modules()
    return running(
        ["node", "reference-server.mjs"], cwd=CONFORMANCE, env={"LONG_POLL_TIMEOUT_MS": "500"}
    )
