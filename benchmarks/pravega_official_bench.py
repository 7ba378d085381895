"""The official Pravega writer (PyPI ``pravega``) through the example store: speed and store CPU.

    python benchmarks/pravega_official_bench.py [--small 50000] [--large 5000] [--inflight 1000]

For events of 100 B and of 10 KiB, the official ``StreamWriter`` (the Rust client) writes to a
one-segment stream and flushes; the example store and controller run as their own process (the
client's blocking calls hold Python's GIL, so they cannot share one). Reported per size:

- events/s and MB/s the writer reached, from the first write to the end of ``flush()``, with
  ``--inflight`` events in flight (``create_writer``'s ``max_inflight_events``);
- the store process's CPU seconds (user + system, from ``/proc``) per GB of event payload;
- the codec's share of the store's time: a second run under pyinstrument, the time spent in
  ``s3p_codec`` protocol code (``pravega/`` and ``_core/``) and in the asyncio adapter
  (``s3p_codec/io``), as fractions of the store's sampled time (idle waiting excluded).

Linux only (``/proc``). Keep the counts modest: this is a measurement, not a soak.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CODEC_DIRS = (f"s3p_codec{os.sep}pravega{os.sep}", f"s3p_codec{os.sep}_core{os.sep}")
ADAPTER_DIR = f"s3p_codec{os.sep}io{os.sep}"


def _store(profile_to: str | None) -> tuple[subprocess.Popen[bytes], int, Any]:
    """Start store + controller (optionally profiled); return the process, controller port, log."""
    log = tempfile.NamedTemporaryFile(prefix="pravega-bench-", suffix=".log")  # noqa: SIM115
    argv = [sys.executable, str(Path(__file__).resolve())]
    argv += ["--serve-profiled", profile_to] if profile_to else ["--serve"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = re.search(r"controller listening on 127\.0\.0\.1:(\d+)", Path(log.name).read_text())
        if found:
            return process, int(found.group(1)), log
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("the store did not start:\n" + Path(log.name).read_text())


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _write(controller_port: int, stream: str, count: int, size: int, inflight: int) -> float:
    """Write ``count`` events of ``size`` bytes and flush; the seconds it took."""
    import pravega_client

    manager = pravega_client.StreamManager(f"tcp://127.0.0.1:{controller_port}")
    manager.create_scope("bench")
    manager.create_stream("bench", stream, 1)
    writer = manager.create_writer("bench", stream, inflight)
    payload = bytes(range(256)) * (size // 256 + 1)
    event = payload[:size]
    start = time.perf_counter()
    for _ in range(count):
        writer.write_event_bytes(event)
    writer.flush()
    return time.perf_counter() - start


def _stored_bytes(log: str, segment: str) -> int:
    """The segment's length, asked of the store with our codec (a check the writes all landed)."""
    import asyncio

    from s3p_codec import Role, pravega
    from s3p_codec.io.asyncio import connect

    found = re.search(r"listening on 127\.0\.0\.1:(\d+)", log)
    assert found is not None

    async def ask() -> int:
        conn: Any = await connect(pravega.Connection(Role.CLIENT), "127.0.0.1", int(found[1]))
        async with conn:
            await conn.send(pravega.Hello())
            await conn.next_event()
            await conn.send(pravega.GetStreamSegmentInfo(1, segment))
            info = await conn.next_event()
            return int(info.write_offset)

    return asyncio.run(ask())


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


def measure(count: int, size: int, inflight: int) -> dict[str, float]:
    """One unprofiled run: writer speed and store CPU per GB."""
    process, port, log = _store(None)
    try:
        _write(port, "warmup", 200, size, inflight)  # connections, imports
        cpu_before = _cpu_seconds(process.pid)
        seconds = _write(port, f"s{size}", count, size, inflight)
        time.sleep(0.2)  # the last acknowledgements are already in: flush() waited for them
        cpu = _cpu_seconds(process.pid) - cpu_before
        stored = _stored_bytes(Path(log.name).read_text(), f"bench/s{size}/0.#epoch.0")
        if stored != count * (size + 8):
            raise RuntimeError(f"the store holds {stored} bytes, not {count * (size + 8)}")
    finally:
        _stop(process)
        log.close()
    megabytes = count * size / 1e6
    return {
        "events_per_s": count / seconds,
        "mb_per_s": megabytes / seconds,
        "cpu_s_per_gb": cpu / (megabytes / 1000),
    }


def codec_share(count: int, size: int, inflight: int) -> tuple[float, float]:
    """(codec, adapter) fractions of the store's sampled time, from a pyinstrument run."""
    from pyinstrument.session import Session

    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "store.pyisession")
        process, port, log = _store(out)
        try:
            _write(port, f"p{size}", count, size, inflight)
        finally:
            _stop(process)
            log.close()
        session = Session.load(out)
    root = session.root_frame()
    if root is None:
        return 0.0, 0.0
    totals = {"codec": 0.0, "adapter": 0.0, "codec_in_adapter": 0.0, "idle": 0.0}

    def walk(frame: Any, in_adapter: bool) -> None:
        path = frame.file_path or ""
        if any(d in path for d in CODEC_DIRS):
            totals["codec"] += frame.time
            if in_adapter:
                totals["codec_in_adapter"] += frame.time
            return
        if path.endswith("selectors.py") and frame.function == "select":
            totals["idle"] += frame.time  # the event loop waiting for the network
            return
        if ADAPTER_DIR in path and not in_adapter:
            totals["adapter"] += frame.time
            in_adapter = True
        for child in frame.children:
            walk(child, in_adapter)

    walk(root, False)
    busy = root.time - totals["idle"]
    adapter_own = totals["adapter"] - totals["codec_in_adapter"]
    return totals["codec"] / busy, adapter_own / busy


def _serve(profile_to: str | None) -> None:
    """The store process: the example store + controller, profiled if asked."""
    from examples import pravega_segment_store

    argv = ["--port", "0", "--controller-port", "0"]
    if profile_to is None:
        pravega_segment_store.main(argv)
        return
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0005, async_mode="disabled")
    profiler.start()
    try:
        pravega_segment_store.main(argv)
    finally:
        profiler.stop()
        profiler.last_session.save(profile_to)  # type: ignore[union-attr]


def _share(fraction: float) -> str:
    return "-" if math.isnan(fraction) else f"{fraction:.0%}"  # NaN: not profiled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", type=int, default=50_000, help="count of 100-byte events")
    parser.add_argument("--large", type=int, default=5_000, help="count of 10 KiB events")
    parser.add_argument(
        "--inflight",
        type=int,
        default=1000,
        help="the writer's max_inflight_events (the client's default, 0, waits for each "
        "acknowledgement before the next write; default %(default)s)",
    )
    parser.add_argument("--no-profile", action="store_true", help="skip the pyinstrument runs")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-profiled", metavar="OUT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve or args.serve_profiled:
        _serve(args.serve_profiled)
        return
    print(f"{'event':>8} {'count':>7} {'events/s':>10} {'MB/s':>8} {'store CPU s/GB':>15} "
          f"{'codec share':>12} {'adapter share':>14}")  # fmt: skip
    for size, count in ((100, args.small), (10 * 1024, args.large)):
        result = measure(count, size, args.inflight)
        codec, adapter = (float("nan"), float("nan"))
        if not args.no_profile:
            codec, adapter = codec_share(count, size, args.inflight)
        print(
            f"{size:>7}B {count:>7} {result['events_per_s']:>10,.0f} {result['mb_per_s']:>8.1f} "
            f"{result['cpu_s_per_gb']:>15.1f} {_share(codec):>12} {_share(adapter):>14}"
        )


if __name__ == "__main__":
    main()
