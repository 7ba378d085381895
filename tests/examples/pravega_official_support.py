"""Runs the example segment store and controller as their own process for the official Pravega
client (``pravega_client``).

The client's blocking calls keep Python's GIL while its Rust runtime waits for the network, so
a store on a thread of the test process would never get to answer: the store runs as a user
runs it, ``python -m examples.pravega_segment_store --port 0 --controller-port 0``, and the
ports are read from its log.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from s3p_codec import Role, pravega
from s3p_codec.io.asyncio import connect

ROOT = Path(__file__).resolve().parents[2]


class StoreProcess:
    """The store + controller on 127.0.0.1, killed when the ``with`` block ends."""

    def __init__(self, *flags: str, controller: bool = True) -> None:
        self.flags = ("--controller-port", "0", *flags) if controller else flags
        self.controller = controller
        self.port = 0
        self.controller_port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="pravega-store-", suffix=".log")  # noqa: SIM115

    @property
    def log(self) -> str:
        return Path(self._log.name).read_text(errors="replace")

    @property
    def controller_uri(self) -> str:
        return f"tcp://127.0.0.1:{self.controller_port}"

    def __enter__(self) -> StoreProcess:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "examples.pravega_segment_store", "--port", "0", *self.flags],
            cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            log = self.log
            store = re.search(r"listening on 127\.0\.0\.1:(\d+)", log)
            controller = re.search(r"controller listening on 127\.0\.0\.1:(\d+)", log)
            if store and (controller or not self.controller):
                self.port = int(store.group(1))
                self.controller_port = int(controller.group(1)) if controller else 0
                return self
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.__exit__()
        raise RuntimeError(f"the store did not start:\n{self.log}")

    def rss(self) -> int:
        """The store process's resident memory, in bytes (Linux)."""
        assert self.process is not None
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        assert match is not None
        return int(match.group(1)) * 1024

    def restart(self) -> None:
        """Ask the store to drop every connection and pause accepting (SIGUSR1), data kept."""
        assert self.process is not None
        self.process.send_signal(signal.SIGUSR1)

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self._log.close()

    # --- looking inside, through our own codec -----------------------------------------------

    def ask(self, request: pravega.Event) -> pravega.Event:
        """Send one request on a new connection; the store's reply."""
        return asyncio.run(self._ask(request))

    def segment_info(self, segment: str) -> pravega.StreamSegmentInfo:
        """``GetStreamSegmentInfo`` of one segment (raises if the store answers otherwise)."""
        reply = self.ask(pravega.GetStreamSegmentInfo(1, segment))
        if not isinstance(reply, pravega.StreamSegmentInfo):
            raise AssertionError(f"{segment}: {reply!r}")
        return reply

    def read_segment(self, segment: str) -> bytes:
        """Every byte of a segment from its start offset (one reply per MiB)."""

        async def read() -> bytes:
            conn: Any = await self._open()
            async with conn:
                await conn.send(pravega.GetStreamSegmentInfo(1, segment))
                info = await conn.next_event()
                offset, data = info.start_offset, bytearray()
                while offset < info.write_offset:
                    await conn.send(pravega.ReadSegment(segment, offset, 1 << 20, "", 2))
                    reply = await conn.next_event()
                    data += reply.data
                    offset += len(reply.data)
                return bytes(data)

        return asyncio.run(read())

    async def _open(self) -> Any:
        conn: Any = await connect(pravega.Connection(Role.CLIENT), "127.0.0.1", self.port)
        await conn.send(pravega.Hello())
        await conn.next_event()
        return conn

    async def _ask(self, request: pravega.Event) -> pravega.Event:
        conn = await self._open()
        async with conn:
            await conn.send(request)
            reply: pravega.Event = await conn.next_event()
            return reply


def events_of(segment_bytes: bytes) -> list[bytes]:
    """Split a segment's bytes into its Event frames' payloads."""
    events, offset = [], 0
    while offset < len(segment_bytes):
        size = int.from_bytes(segment_bytes[offset + 4 : offset + 8], "big")
        events.append(segment_bytes[offset + 8 : offset + 8 + size])
        offset += 8 + size
    return events
