"""Pipelined APPENDs per second against the example S3P server, next to XADD on a real Redis.

::

    python benchmarks/s3p_server_bench.py                      # both backends, 200,000 records
    python benchmarks/s3p_server_bench.py --records 50000 --backend asyncio
    python benchmarks/s3p_server_bench.py --profile            # cProfile of the server, top 25

Both servers run in their own process on 127.0.0.1 and are driven the same way from this one:
``--connections`` connections (threads), each sending windows of ``--pipeline`` one-record
appends before reading that window's replies. The S3P client is this library's codec over the
blocking adapter; the Redis client is redis-py with hiredis (``XADD <key> * r <payload>`` in a
``pipeline(transaction=False)``). The same payloads go to both. Redis is Debian's
``redis-server``, started here with persistence off; if it is missing the script says how to
install it (``--install-redis`` runs ``apt-get install -y redis-server`` itself).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from s3p_codec import Role, s3p  # noqa: E402
from s3p_codec.io.sync import connect  # noqa: E402


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used (Linux ``/proc``); steadier than wall time
    on a shared machine, and it charges the server alone, not the client."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def s3p_server(
    backend: str, profile: Path | None, flags: Sequence[str] = ()
) -> Iterator[tuple[int, int]]:
    """The example server in its own process; yields (port, pid). SIGINT lets cProfile write."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        command = [sys.executable]
        if profile is not None:
            command += ["-m", "cProfile", "-o", str(profile)]
        command += ["-m", "examples.s3p_server", "--port=0", f"--backend={backend}"]
        command += flags
        with log.open("wb") as sink:
            process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)
        try:
            deadline = time.monotonic() + 30
            while not (found := re.search(rb":(\d+)\n", log.read_bytes())):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the S3P server did not start: {log.read_text()}")
                time.sleep(0.05)
            yield int(found.group(1)), process.pid
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def find_redis(install: bool) -> str | None:
    path = shutil.which("redis-server")
    if path is None and install:
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run([*sudo, "apt-get", "install", "-y", "redis-server"], check=False)
        path = shutil.which("redis-server")
    if path is None:
        print(
            "redis-server not found: install Debian's package with\n"
            "    sudo apt-get install -y redis-server\n"
            "or run this script with --install-redis. Skipping the Redis comparison.",
            file=sys.stderr,
        )
    return path


@contextlib.contextmanager
def redis_server(binary: str) -> Iterator[tuple[int, int]]:
    import redis

    port = free_port()
    process = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                redis.Redis(port=port).ping()
                break
            except redis.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        yield port, process.pid
    finally:
        process.terminate()
        process.wait(30)


def payloads(count: int, size: int, connection: int) -> list[bytes]:
    return [(b"c%d-r%d-" % (connection, n)).ljust(size, b"x") for n in range(count)]


def run_clients(connections: int, work: Callable[[int], None]) -> float:
    """Run ``work(index)`` on each connection in parallel; seconds from start to last end."""
    errors: list[BaseException] = []

    def guarded(index: int) -> None:
        try:
            work(index)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(connections)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise errors[0]
    return elapsed


def bench_s3p(port: int, records: int, connections: int, window: int, size: int) -> float:
    per = records // connections
    stream = b"bench-%d" % time.monotonic_ns()
    with connect(s3p.Connection(Role.CLIENT), "127.0.0.1", port, timeout=60) as setup:
        setup.send(s3p.Create(stream))
        assert setup.next_event() == s3p.Ok()

    def work(index: int) -> None:
        data = payloads(per, size, index)
        with connect(s3p.Connection(Role.CLIENT), "127.0.0.1", port, timeout=60) as conn:
            for start in range(0, per, window):
                chunk = data[start : start + window]
                # One write per window, as a pipelining client does: encode, then send at once.
                wire = b"".join(conn.conn.send(s3p.Append(stream, (p,))) for p in chunk)
                conn.socket.sendall(wire)
                for _ in chunk:
                    reply = conn.next_event()
                    assert type(reply) is s3p.AppendReply, reply

    elapsed = run_clients(connections, work)
    with connect(s3p.Connection(Role.CLIENT), "127.0.0.1", port, timeout=60) as check:
        check.send(s3p.Read(stream, count=1, min_timestamp=s3p.Timestamp(0, 0)))
        assert isinstance(check.next_event(), s3p.ReadReply)
    return per * connections / elapsed


def bench_redis(port: int, records: int, connections: int, window: int, size: int) -> float:
    import redis

    per = records // connections
    key = f"bench-{time.monotonic_ns()}"

    def work(index: int) -> None:
        data = payloads(per, size, index)
        client = redis.Redis(port=port, protocol=2)
        for start in range(0, per, window):
            pipe = client.pipeline(transaction=False)
            for payload in data[start : start + window]:
                pipe.xadd(key, {"r": payload})
            replies = pipe.execute()
            assert len(replies) == len(data[start : start + window])
        client.close()

    elapsed = run_clients(connections, work)
    assert redis.Redis(port=port).xlen(key) == per * connections
    return per * connections / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--pipeline", type=int, default=1000, help="appends per window")
    parser.add_argument("--size", type=int, default=32, help="payload bytes per record")
    parser.add_argument("--backend", choices=("asyncio", "trio", "both"), default="both")
    parser.add_argument("--profile", action="store_true", help="cProfile the S3P server")
    parser.add_argument("--install-redis", action="store_true")
    parser.add_argument(
        "--server-flags",
        default="",
        help="extra flags for the S3P server, e.g. '--idle-timeout=0 --max-connections=0'",
    )
    args = parser.parse_args()
    import hiredis  # noqa: F401  (redis-py uses it when present; make its absence loud)

    backends = ["asyncio", "trio"] if args.backend == "both" else [args.backend]
    shape = (args.records, args.connections, args.pipeline, args.size)
    print(
        f"{args.records:,} one-record appends, {args.connections} connections, "
        f"windows of {args.pipeline}, {args.size}-byte payloads, loopback"
    )
    redis_binary = find_redis(args.install_redis)
    redis_rate = redis_cpu = None
    if redis_binary is not None:
        with redis_server(redis_binary) as (port, pid):
            bench_redis(port, min(args.records, 20_000), *shape[1:])  # warm-up
            before = cpu_seconds(pid)
            redis_rate = bench_redis(port, *shape)
            redis_cpu = (cpu_seconds(pid) - before) / args.records * 1e6
    print(f"{'server':<24}{'appends/s':>11}{'ratio':>7}{'server CPU us/append':>22}{'ratio':>7}")
    if redis_rate is not None and redis_cpu is not None:
        print(
            f"{'redis-server XADD':<24}{redis_rate:>11,.0f}{'1.00':>7}{redis_cpu:>22.2f}{'1.00':>7}"
        )
    for backend in backends:
        profile = Path(tempfile.mkdtemp()) / "server.prof" if args.profile else None
        with s3p_server(backend, profile, args.server_flags.split()) as (port, pid):
            bench_s3p(port, min(args.records, 20_000), *shape[1:])  # warm-up
            before = cpu_seconds(pid)
            rate = bench_s3p(port, *shape)
            cpu = (cpu_seconds(pid) - before) / args.records * 1e6
        ratio = f"{rate / redis_rate:.2f}" if redis_rate else "n/a"
        cpu_ratio = f"{redis_cpu / cpu:.2f}" if redis_cpu else "n/a"
        print(f"{'S3P (' + backend + ')':<24}{rate:>11,.0f}{ratio:>7}{cpu:>22.2f}{cpu_ratio:>7}")
        if profile is not None:
            import pstats

            print(f"\n-- server profile ({backend}), top 25 by own time --")
            pstats.Stats(str(profile)).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
