"""Decode one large rotated capture set single-process, on Spark local[1] and on a standalone
Spark cluster of two workers on 127.0.0.1, and compare the CPU each spends per GB.

::

    .venv/bin/python benchmarks/spark_bench.py                 # 1 GiB (the issue's size)
    .venv/bin/python benchmarks/spark_bench.py --size-mb 256   # quicker
    .venv/bin/python benchmarks/spark_bench.py --runs local1,cluster,local2 --datasource
    .venv/bin/python benchmarks/spark_bench.py --size-mb 256 --repeat 3   # best of 3, interleaved

The capture set is generated from the recorded sample captures (``examples/captures``): every
TCP conversation of every protocol found there is a template, replayed many times with fresh
client addresses, ``--concurrent`` conversations at a time with their packets interleaved, and
written as rotated files of ``--file-mb`` MiB (what ``tcpdump -C`` produces), so conversations
span files. The same job then runs several ways, each computing the per-protocol summary of
``s3p-codec stats`` from every decoded row:

- ``capture.decode_files`` in this process (the single-process decoder);
- ``spark.decode`` (read per file, segments packed per flow into chunk rows, shuffle by flow
  key, ``decode_flow`` per flow) on local[1] (``local1``), on a standalone cluster of two
  workers with one core each (``cluster``: a master and two workers started here with
  ``spark-class`` from the pyspark install, all on 127.0.0.1, so that the figure for more than
  one executor is a real one; every process of it is stopped by this script, on failure too),
  and optionally on local[2] (``local2``);
- optionally ``format("s3p_codec")`` (flow buckets, no shuffle) on local[1].

The summaries must be equal. Printed per run: wall seconds and MB/s, CPU seconds of the whole
process tree (the JVMs and the Python processes apart), CPU s per GB and MB/s per core (MB per
CPU second), the run's CPU over the single process's (its CPU-efficiency: the yardstick here,
since on a machine of two shared cores a local[2] over local[1] speed-up says more about the
other tenants than about Spark), the CPU the rest of the machine used meanwhile, and the peak
resident memory of this process (single-process run) and of the Spark Python workers, next to
the size of the largest conversation and of the input. The idle cluster's CPU counts only in
its own run.

Where the CPU goes (per JVM thread, from ``/proc/PID/task``; 64 MiB on local[1]): the Python
work is the single-process decoder's own (reading packets, ``decode_flow``) plus packing and
unpacking segments, a few per cent. With a row per segment the JVM added half as much again;
chunk rows cut its task threads' share, but most of the JVM's CPU was its optimising (C2) JIT
compiler, which compiled Spark's generated code again for every query (4.5 to 4.9 CPU s of
compiler threads beside 1.1 to 1.8 s of task threads, even on the third run of the same job in
one JVM). ``spark_session`` therefore runs the quick compiler only (``session.JIT_OPTIONS``):
0.3 to 0.5 s of compiler beside the same task time. Sharing the machine matters: the kernel's
autogroup scheduling shares CPU between sessions, so even a ``nice 19`` process started from
another terminal takes a whole core from a parallel run (see "other CPU s").
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from s3p_codec import capture  # noqa: E402

MiB = 1 << 20
_ETH = b"\x00\x00\x00\x00\x00\x02" + b"\x00\x00\x00\x00\x00\x01" + b"\x08\x00"
SERVER_IP = bytes([172, 16, 0, 1])


class Template:
    """One recorded conversation: (from client?, seq, ack, flags, payload) per TCP segment."""

    def __init__(self, name: str, packets: list[tuple[bool, int, int, int, bytes]]) -> None:
        self.name = name
        self.packets = packets
        self.bytes = sum(len(p[4]) for p in packets)
        self.client_port = 0
        self.server_port = 0


def load_templates(patterns: list[str]) -> list[Template]:
    """Every conversation of the sample captures, with its client side worked out."""
    templates = []
    files = (p for pat in patterns for p in glob.glob(pat) if os.path.isfile(p))
    for path in capture.capture_order(files):
        flows: dict[Any, list[capture.Segment]] = {}
        try:
            for segment in capture.read_segments(path):
                flows.setdefault(capture.flow_key(segment), []).append(segment)
        except capture.CaptureFileError:
            continue
        for key, segments in flows.items():
            syn = next((s for s in segments if s.flags & 0x12 == 0x02), None)
            if syn is not None:
                client = (syn.src, syn.sport)
            else:  # no handshake recorded: the higher (ephemeral) port is the client
                client = max((key[0], key[1]), (key[2], key[3]), key=lambda e: e[1])
            packets = [
                ((s.src, s.sport) == client, s.seq, s.ack, s.flags, s.payload) for s in segments
            ]
            t = Template(f"{Path(path).name}:{key[1]}-{key[3]}", packets)
            t.client_port = client[1]
            t.server_port = key[3] if (key[0], key[1]) == client else key[1]
            if t.bytes:
                templates.append(t)
    return templates


def _frame(src: bytes, sport: int, dst: bytes, dport: int, seq: int, ack: int, flags: int,  # noqa: PLR0917
           payload: bytes) -> bytes:  # fmt: skip
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(payload), 0, 0x4000, 64, 6, 0, src, dst)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0)
    return _ETH + ip + tcp + payload


def _replay(template: Template, replica: int) -> Iterator[bytes]:
    client_ip = bytes([10, (replica >> 16) & 255, (replica >> 8) & 255, replica & 255])
    cport, sport = template.client_port, template.server_port
    for from_client, seq, ack, flags, payload in template.packets:
        if from_client:
            yield _frame(client_ip, cport, SERVER_IP, sport, seq, ack, flags, payload)
        else:
            yield _frame(SERVER_IP, sport, client_ip, cport, seq, ack, flags, payload)


def generate(folder: Path, templates: list[Template], size: int, file_size: int,
             concurrent: int) -> tuple[list[str], int]:  # fmt: skip
    """Write the rotated set; return the file names and the largest conversation's bytes."""
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    files: list[str] = []
    out = None
    written = file_size
    total = 0
    ts = 1_700_000_000.0
    replica = 0
    active: list[Iterator[bytes]] = []
    largest = max(t.bytes for t in templates)
    while total < size or active:
        while total < size and len(active) < concurrent:
            template = templates[replica % len(templates)]
            active.append(_replay(template, replica))
            replica += 1
        for flow in list(active):
            frame = next(flow, None)
            if frame is None:
                active.remove(flow)
                continue
            if written >= file_size:
                if out is not None:
                    out.close()
                name = folder / ("cap.pcap" if not files else f"cap.pcap{len(files)}")
                files.append(str(name))
                out = name.open("wb")
                out.write(header)
                written = len(header)
            ts += 0.00001
            sec = int(ts)
            record = struct.pack("<IIII", sec, int((ts - sec) * 1e6), len(frame), len(frame))
            assert out is not None
            out.write(record)
            out.write(frame)
            written += 16 + len(frame)
            total += 16 + len(frame)
    if out is not None:
        out.close()
    return files, largest


def _processes() -> dict[int, tuple[int, float, bool]]:
    """Every process: pid -> (parent pid, CPU seconds, is a JVM), read from /proc (Linux).

    A process's CPU seconds are its own plus what its reaped children used, so a worker that
    exited still counts through its parent.
    """
    tick = os.sysconf("SC_CLK_TCK")
    found: dict[int, tuple[int, float, bool]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                name, rest = f.read().rsplit(")", 1)
        except OSError:
            continue
        fields = rest.split()
        cpu = sum(int(x) for x in fields[11:15]) / tick
        found[int(entry)] = (int(fields[1]), cpu, name.endswith("(java"))
    return found


def descendants(roots: set[int], table: dict[int, tuple[int, float, bool]] | None = None,
                ) -> set[int]:  # fmt: skip
    """``roots`` and every process below them."""
    table = _processes() if table is None else table
    mine = set(roots)
    grew = True
    while grew:
        below = {pid for pid, (ppid, _, _) in table.items() if ppid in mine} - mine
        grew = bool(below)
        mine |= below
    return mine


def _cpu_seconds(exclude: frozenset[int] = frozenset()) -> tuple[float, float]:
    """CPU seconds of this process tree, (JVMs, the rest): the JVM, its Python workers, and a
    standalone cluster's master, workers and executors when this process started them; the
    processes ``exclude`` and those below them left out."""
    table = _processes()
    jvm = other = 0.0
    for pid in descendants({os.getpid()}, table) - descendants(set(exclude), table):
        _, cpu, is_jvm = table[pid]
        if is_jvm:
            jvm += cpu
        else:
            other += cpu
    return jvm, other


def _machine_busy_seconds() -> float:
    """CPU seconds every process on the machine has used since boot (``/proc/stat``)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


class Measured(NamedTuple):
    """One timed run: wall seconds, CPU seconds (JVMs, Python), other processes' CPU seconds."""

    seconds: float
    jvm_cpu: float
    python_cpu: float
    other: float

    @property
    def cpu(self) -> float:
        return self.jvm_cpu + self.python_cpu


class Meter:
    """Wall time, CPU of this process tree (JVMs and Python apart), and CPU of everything else.

    The last figure shows contention: a niced process in another session still takes a full
    core from a parallel run (the kernel's autogroup scheduling shares CPU between sessions
    first, so ``nice`` only ranks processes within one session).
    """

    def __init__(self, exclude: frozenset[int] = frozenset()) -> None:
        """``exclude``: processes (and those below them) this run does not use, left out."""
        self.exclude = exclude
        self.start = time.perf_counter()
        self.jvm, self.python = _cpu_seconds(exclude)
        self.busy = _machine_busy_seconds()

    def stop(self) -> Measured:
        elapsed = time.perf_counter() - self.start
        jvm, python = _cpu_seconds(self.exclude)
        jvm -= self.jvm
        python -= self.python
        other = max(0.0, _machine_busy_seconds() - self.busy - jvm - python)
        return Measured(elapsed, max(0.0, jvm), max(0.0, python), other)


_TIMED = "spark-bench-timed"


def _stage_report(log_dir: str) -> list[str]:
    """Per Spark stage of the timed job: tasks, wall span, task seconds (from the event log)."""
    stages: dict[int, list[tuple[int, int]]] = {}
    names: dict[int, str] = {}
    timed: set[int] = set()
    for path in glob.glob(os.path.join(log_dir, "**", "*"), recursive=True):
        if not os.path.isfile(path) or "appstatus" in path:
            continue
        with open(path) as f:
            for line in f:
                event = json.loads(line)
                if event["Event"] == "SparkListenerJobStart":
                    if event.get("Properties", {}).get("spark.jobGroup.id") == _TIMED:
                        timed.update(event["Stage IDs"])
                elif event["Event"] == "SparkListenerTaskEnd":
                    info = event["Task Info"]
                    span = (info["Launch Time"], info["Finish Time"])
                    stages.setdefault(event["Stage ID"], []).append(span)
                elif event["Event"] == "SparkListenerStageSubmitted":
                    info = event["Stage Info"]
                    names[info["Stage ID"]] = info["Stage Name"].split(" at ")[0]
    lines = []
    for stage, spans in sorted(stages.items()):
        if stage not in timed:
            continue
        wall = (max(e for _, e in spans) - min(s for s, _ in spans)) / 1000
        busy = sum(e - s for s, e in spans) / 1000
        longest = max(e - s for s, e in spans) / 1000
        lines.append(
            f"  stage {stage:>3} {names.get(stage, ''):<10} {len(spans):>4} tasks "
            f"{wall:6.1f} s wall {busy:7.1f} task-s (longest task {longest:.1f} s)"
        )
    return lines


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _worker_peak_mb(spark: Any) -> float:
    """The largest peak RSS among the Spark Python workers (reused across tasks)."""

    def probe(_: Any) -> Iterator[tuple[int, float]]:
        import os as _os
        import resource as _resource

        yield _os.getpid(), _resource.getrusage(_resource.RUSAGE_SELF).ru_maxrss / 1024

    sc = spark.sparkContext
    peaks = sc.parallelize(range(64), 64).mapPartitions(probe).collect()
    return float(max(peak for _, peak in peaks))


class StandaloneCluster:
    """A Spark standalone cluster on 127.0.0.1: one master and ``workers`` workers of ``cores``
    cores each, started with ``spark-class`` from the pyspark install, all stopped on exit.

    Every process it started is stopped by its process id, whatever happened: the master and
    workers (and, below them, the executors and their Python daemons, which put themselves in
    a process group of their own) get SIGTERM, then SIGKILL if still there after a few seconds.
    """

    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "1g") -> None:
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.folder = Path(tempfile.mkdtemp(prefix="spark-bench-cluster-"))
        self.processes: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []
        self.url = ""

    def __enter__(self) -> StandaloneCluster:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, name: str, args: list[str], env: dict[str, str]) -> None:
        import pyspark

        spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
        log = self.folder / f"{name}.log"
        self.logs.append(log)
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(spark_class), *args], stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, env=env, start_new_session=True,
            )  # fmt: skip
        self.processes.append(process)

    def _start(self) -> None:
        import pyspark

        with socket.socket() as probe:  # a free port for the master
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"spark://127.0.0.1:{port}"
        env = dict(os.environ)
        env |= {
            "SPARK_HOME": str(Path(pyspark.__file__).parent),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            # Executors import the s3p_codec of this checkout, as the driver does.
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p),
        }
        host = ["--host", "127.0.0.1", "--webui-port", "0"]
        self._spawn("master", ["org.apache.spark.deploy.master.Master", *host, "--port",
                               str(port)], env)  # fmt: skip
        self._wait(0, "Starting Spark master at")
        for i in range(self.workers):
            work = self.folder / f"work-{i}"
            self._spawn(f"worker-{i}", [
                "org.apache.spark.deploy.worker.Worker", self.url, *host, "--cores",
                str(self.cores), "--memory", self.memory, "--work-dir", str(work),
            ], env)  # fmt: skip
        for i in range(self.workers):
            self._wait(i + 1, "Successfully registered with master")

    def _wait(self, index: int, line: str, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        log = self.logs[index]
        while time.monotonic() < deadline:
            if line in log.read_text(errors="replace"):
                return
            if self.processes[index].poll() is not None:
                break
            time.sleep(0.2)
        tail = "".join(log.read_text(errors="replace").splitlines(True)[-20:])
        raise RuntimeError(f"{log.stem} did not start ({line!r} not logged):\n{tail}")

    def pids(self) -> frozenset[int]:
        """The process ids of the master and the workers."""
        return frozenset(p.pid for p in self.processes)

    def session_conf(self) -> dict[str, str]:
        """What the driver needs to run the job here, every executor on 127.0.0.1."""
        total = self.workers * self.cores
        return {
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.executor.cores": str(self.cores),
            "spark.executor.memory": "512m",
            "spark.cores.max": str(total),
            "spark.default.parallelism": str(total),
            "spark.sql.shuffle.partitions": str(total),
            "spark.pyspark.python": sys.executable,
            "spark.executorEnv.PYTHONPATH": str(ROOT),
            # Start the job only once every executor is there, so both take tasks.
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "60s",
        }

    def stop(self) -> None:
        """Stop every process started here, and everything below them, by process id."""
        alive = [p for p in self.processes if p.poll() is None]
        below = descendants({p.pid for p in alive}) - {p.pid for p in alive}
        for process in reversed(alive):  # workers first, then the master
            process.terminate()
        deadline = time.monotonic() + 15
        for process in alive:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        time.sleep(0.5)
        still = descendants(below) & below  # executors and Python workers left behind
        for pid in still:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.processes = []
        shutil.rmtree(self.folder, ignore_errors=True)


def _run_spark(
    master: str,
    files: list[str],
    warm_up: list[str],
    datasource: bool = False,
    *,
    stages: bool = False,
    conf: dict[str, str] | None = None,
    exclude: frozenset[int] = frozenset(),
) -> tuple[Measured, Any, float, list[str]]:
    from s3p_codec.spark import decode, spark_session, summarize

    log_dir = tempfile.mkdtemp(prefix="spark-bench-events-") if stages else None
    extra = dict(conf or {})
    if log_dir is not None:
        extra |= {
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": Path(log_dir).as_uri(),
            "spark.eventLog.compress": "false",
        }
    spark = spark_session(master, "spark-bench", extra_conf=extra)
    try:
        # Warm up as a long-running cluster would be: Python workers started with the codecs
        # imported, the JVM's query planning and code paths compiled, by one small job of the
        # same kind (the template captures, a few MiB). Not timed.
        spark.sparkContext.parallelize(range(8), 8).count()
        summarize(decode(spark, warm_up))
        spark.sparkContext.setJobGroup(_TIMED, "the timed decode and summary")
        meter = Meter(exclude)
        if datasource:
            events = spark.read.format("s3p_codec").option("paths", json.dumps(files)).load()
        else:
            events = decode(spark, files)
        table = summarize(events)
        measured = meter.stop()
        spark.sparkContext.setJobGroup("spark-bench-probe", "worker memory probe")
        peak = _worker_peak_mb(spark)
    finally:
        spark.stop()
    report: list[str] = []
    if log_dir is not None:
        report = _stage_report(log_dir)
        shutil.rmtree(log_dir, ignore_errors=True)
    return measured, table, peak, report


RUNS = {
    "local1": ("spark local[1]", "local[1]", False),
    "cluster": ("spark cluster 2 workers x 1 core", "cluster", False),
    "local2": ("spark local[2]", "local[2]", False),
    "datasource": ('format("s3p_codec") local[1]', "local[1]", True),
}


def _interrupted(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)  # so that ``finally`` stops the cluster


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1024, help="capture set size (MiB)")
    parser.add_argument("--file-mb", type=int, default=64, help="size of each rotated file")
    parser.add_argument("--concurrent", type=int, default=256, help="conversations at a time")
    parser.add_argument("--templates", nargs="*", default=[str(ROOT / "examples/captures/*")])
    parser.add_argument(
        "--runs", default="local1,cluster",
        help=f"Spark runs next to the single process, in order (of {', '.join(RUNS)})",
    )  # fmt: skip
    parser.add_argument("--datasource", action="store_true", help='also time format("s3p_codec")')
    parser.add_argument("--repeat", type=int, default=1, help="interleaved repeats (best kept)")
    parser.add_argument("--keep", metavar="DIR", help="write the captures here and keep them")
    parser.add_argument(
        "--stages", action="store_true", help="print tasks and times per Spark stage (event log)"
    )
    args = parser.parse_args()
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    if args.datasource and "datasource" not in runs:
        runs.append("datasource")
    if unknown := [r for r in runs if r not in RUNS]:
        parser.error(f"unknown runs {unknown}; choose from {', '.join(RUNS)}")
    signal.signal(signal.SIGTERM, _interrupted)

    templates = load_templates(args.templates)
    warm_up = capture.capture_order(p for pat in args.templates for p in glob.glob(pat))
    if not templates:
        parser.error("no conversation found in the template captures")
    folder = Path(args.keep or tempfile.mkdtemp(prefix="spark-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    best: dict[str, list[Measured]] = {}
    peaks: dict[str, float] = {}
    stage_reports: list[tuple[str, list[str]]] = []
    cluster: StandaloneCluster | None = None
    try:
        start = time.perf_counter()
        files, largest = generate(
            folder, templates, args.size_mb * MiB, args.file_mb * MiB, args.concurrent
        )
        size = sum(os.path.getsize(f) for f in files)
        print(
            f"generated {size / MiB:.0f} MiB in {len(files)} rotated files from "
            f"{len(templates)} recorded conversations in {time.perf_counter() - start:.0f} s; "
            f"largest conversation {largest / 1024:.0f} KiB",
            file=sys.stderr,
        )
        if "cluster" in runs:
            cluster = StandaloneCluster(workers=2, cores=1).__enter__()
        expected: Any = None
        for repeat in range(args.repeat):
            idle = cluster.pids() if cluster is not None else frozenset()
            meter = Meter(exclude=idle)
            table = capture.summarize(capture.decode_files(files))
            best.setdefault("single", []).append(meter.stop())
            peaks["single"] = _maxrss_mb()
            expected = table if expected is None else expected
            for run in runs:
                label, master, datasource = RUNS[run]
                conf = None
                unused = idle  # the cluster's processes count only in its own run
                if master == "cluster":
                    assert cluster is not None
                    master, conf = cluster.url, cluster.session_conf()
                    unused = frozenset()
                stages = args.stages and repeat == 0
                measured, table, peak, report = _run_spark(
                    master, files, warm_up, datasource, stages=stages, conf=conf, exclude=unused
                )
                if report:
                    stage_reports.append((label, report))
                if table != expected:
                    print(f"{label}: summary differs from the single-process one", file=sys.stderr)
                    print(json.dumps([table, expected], indent=1, default=str), file=sys.stderr)
                    return 1
                best.setdefault(run, []).append(measured)
                peaks[run] = max(peaks.get(run, 0.0), peak)
            print(f"repeat {repeat + 1} of {args.repeat} done", file=sys.stderr)
    finally:
        if cluster is not None:
            cluster.stop()
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)

    print()
    for line in capture.format_summary(expected):
        print(line)
    print()
    _print_table(size, len(files), largest, args.repeat, runs=runs, best=best, peaks=peaks)
    for label, report in stage_reports:
        print(f"{label}: Spark stages of the timed job (first repeat)")
        for line in report:
            print(line)
    return 0


def _print_table(size: int, files: int, largest: int, repeats: int, *, runs: list[str],
                 best: dict[str, list[Measured]], peaks: dict[str, float]) -> None:  # fmt: skip
    """The side-by-side table: each figure is its best (lowest) over the repeats."""
    gb = size / 1e9
    print(f"input: {size / MiB:.0f} MiB in {files} files; largest conversation "
          f"{largest / MiB:.2f} MiB; best of {repeats} interleaved repeat(s)")  # fmt: skip
    print(f"{'run':<34} {'seconds':>7} {'MB/s':>6} {'CPU s':>6} {'JVM':>6} {'Python':>6} "
          f"{'CPU s/GB':>8} {'MB/s/core':>9} {'CPU vs single':>13} {'other CPU s':>11} "
          f"{'peak RSS MiB':>12}")  # fmt: skip
    single_cpu = min(m.cpu for m in best["single"])
    for run in ["single", *runs]:
        label = "single process" if run == "single" else RUNS[run][0]
        measured = best[run]
        seconds = min(m.seconds for m in measured)
        cpu = min(m.cpu for m in measured)
        jvm = min(m.jvm_cpu for m in measured)
        python = min(m.python_cpu for m in measured)
        other = min(m.other for m in measured)
        print(
            f"{label:<34} {seconds:7.1f} {size / 1e6 / seconds:6.2f} {cpu:6.1f} {jvm:6.1f} "
            f"{python:6.1f} {cpu / gb:8.1f} {size / 1e6 / cpu:9.2f} {cpu / single_cpu:12.2f}x "
            f"{other:11.1f} {peaks[run]:12.0f}"
        )
    print("(CPU s: this process and every process below it: the JVMs (driver; on the cluster also "
          "master, workers, executors) and the Python workers)")  # fmt: skip
    print("(MB/s/core: MB of capture per CPU second, what one fully busy core decodes;")
    print(" CPU vs single: CPU s of the run over the single process's, the job's CPU-efficiency)")
    print("(other CPU s: what every other process on the machine used meanwhile; a parallel run "
          "only gets the cores left over)")  # fmt: skip
    print("(peak RSS: this process for the single-process run, the largest Spark Python worker "
          "otherwise)")  # fmt: skip
    loads = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs; load average at the end {loads} (1/5/15 min); other work "
          "on the machine slows the parallel runs most")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
