"""Live and streaming capture decoding: pipe throughput and delay, an hour-long stream's memory,
and the decoder's bounds under hostile captures.

::

    .venv/bin/python benchmarks/live_bench.py pipe              # rows/s, p50/p99 delay at 10 MB/s
    .venv/bin/python benchmarks/live_bench.py hour              # memory over 1 h of capture time
    .venv/bin/python benchmarks/live_bench.py limits [--code DIR]  # time and memory per attack
    .venv/bin/python benchmarks/live_bench.py stream            # Spark streaming MB/s, delay

``pipe`` writes a generated capture (``capture_bench.generate``) into ``s3p-codec decode -
--format jsonl`` as fast as the pipe takes it (rows/s, next to ``decode FILE``), then again paced
at ``--rate`` MB/s, noting when each packet was written; each printed row's delay is the time
from its last packet being written to the row being read from the decoder's stdout.

``hour`` feeds ``capture.decode_stream`` an endless-style stream generated on the fly (never held
in memory): one hour of capture time, a new conversation every 50 ms, a fifth of them never
closed (left for the idle timeout), SYN-only probes between them. It prints the decoder's RSS and
open conversations every ten minutes of capture time.

``stream`` runs the Spark Structured Streaming query (``s3p-codec spark stream``) on local[1]:
the generated capture is split into a rotated set; moved into the watched directory all at
once, the query's MB/s on one core (next to the single-process decoder on the same files); then,
in a fresh query, one file at a time, the delay from a file appearing to its first rows being in
a committed Parquet file (target: trigger + 0.5 s) and the cost of such a micro-batch; last, one
long S3P conversation (48 MB) over 12 files, one per micro-batch: the mean cost of the last
third of the batches against the first third (flat: the conversation resumes from its snapshot).

``limits`` runs each attack in a child process and prints its wall time and peak RSS growth;
``--code DIR`` imports ``s3p_codec`` from DIR instead (an older checkout, for before/after).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
_ETH = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00"


def _frame(src: tuple[bytes, int], dst: tuple[bytes, int], seq: int, ack: int,  # noqa: PLR0917
           flags: int, data: bytes = b"") -> bytes:  # fmt: skip
    tcp = struct.pack("!HHIIBBHHH", src[1], dst[1], seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      5 << 4, flags, 65535, 0, 0)  # fmt: skip
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(data), 0, 0x4000, 64, 6, 0,
                     src[0], dst[0])  # fmt: skip
    return _ETH + ip + tcp + data


def _record(ts: float, frame: bytes) -> bytes:
    sec = int(ts)
    return struct.pack("<IIII", sec, int((ts - sec) * 1e6), len(frame), len(frame)) + frame


def _rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- pipe ------------------------------------------------------------------------------------


def _packets(path: Path) -> list[bytes]:
    data = path.read_bytes()
    out, at = [], 24
    while at < len(data):
        (caplen,) = struct.unpack_from("<I", data, at + 8)
        out.append(data[at : at + 16 + caplen])
        at += 16 + caplen
    return out


def _decoder(args: list[str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "s3p_codec", *args], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, env=env,
    )  # fmt: skip


def _pipe(path: Path, records: list[bytes], rate: float | None) -> tuple[float, int, list[float]]:
    """Feed ``records`` through ``decode -``; return (seconds, rows, delays in ms)."""
    proc = _decoder(["decode", "-", "--format", "jsonl"])
    assert proc.stdin is not None
    assert proc.stdout is not None
    written: list[float] = [0.0] * (len(records) + 1)
    delays: list[float] = []
    rows = 0

    def reader() -> None:
        nonlocal rows
        assert proc.stdout is not None
        for line in proc.stdout:
            now = time.perf_counter()
            rows += 1
            row = json.loads(line)
            at = written[row["last_packet"]]
            if at:
                delays.append((now - at) * 1000)

    thread = threading.Thread(target=reader)
    thread.start()
    start = time.perf_counter()
    proc.stdin.write(_PCAP_HEADER)
    sent = 0
    for number, record in enumerate(records, 1):
        if rate is not None:
            due = start + sent / (rate * 1e6)
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
        written[number] = time.perf_counter()
        proc.stdin.write(record)
        if rate is not None:
            proc.stdin.flush()
        sent += len(record)
    proc.stdin.close()
    proc.wait()
    thread.join()
    return time.perf_counter() - start, rows, delays


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * q / 100) - 1)] if ordered else float("nan")


def run_pipe(mb: int, rate: float, seconds: float) -> None:
    from benchmarks.capture_bench import generate

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.pcap"
        size = generate(path, mb, 200)
        records = _packets(path)
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "s3p_codec", "decode", str(path), "--format", "jsonl"],
            env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, check=True,
        )  # fmt: skip
        batch = time.perf_counter() - start
        batch_rows = done.stdout.count(b"\n")
        took, rows, _ = _pipe(path, records, None)
        print(f"capture   : {size / 1e6:.1f} MB, {len(records)} packets")
        print(f"batch     : {batch_rows / batch:9.0f} rows/s  ({batch:.2f} s, decode FILE)")
        print(f"pipe      : {rows / took:9.0f} rows/s  ({took:.2f} s, decode -)")
        paced = records[: int(len(records) * min(1.0, rate * 1e6 * seconds / size))]
        took, rows, delays = _pipe(path, paced, rate)
        print(
            f"paced     : {rate} MB/s for {took:.1f} s, {rows} rows; delay packet written -> "
            f"row printed p50 {_pct(delays, 50):.2f} ms, p99 {_pct(delays, 99):.2f} ms, "
            f"max {max(delays):.2f} ms"
        )


# -- hour ------------------------------------------------------------------------------------


class _HourStream:
    """A pcap stream generated as it is read: ``hours`` of capture time of S3P conversations."""

    def __init__(self, hours: float, report: list[tuple[float, int]]) -> None:
        self._chunks = self._generate(hours)
        self._buffer = b""
        self.report = report

    def _generate(self, hours: float) -> Iterator[bytes]:
        from tests.capture.conftest import s3p_exchanges

        yield _PCAP_HEADER
        exchanges = s3p_exchanges()
        server = (bytes([10, 2, 0, 1]), 7500)
        ts = 1_700_000_000.0
        end = ts + hours * 3600
        conn = 0
        while ts < end:
            conn += 1
            client = (bytes([10, 1, (conn >> 8) & 255, conn & 255]), 20000 + conn % 40000)
            cseq, sseq = conn * 7919, conn * 104729
            parts = [_frame(client, server, cseq, 0, 0x02),
                     _frame(server, client, sseq, cseq + 1, 0x12),
                     _frame(client, server, cseq + 1, sseq + 1, 0x10)]  # fmt: skip
            cseq += 1
            sseq += 1
            for request, reply in exchanges:
                parts.append(_frame(client, server, cseq, sseq, 0x18, request))
                cseq += len(request)
                parts.append(_frame(server, client, sseq, cseq, 0x18, reply))
                sseq += len(reply)
            if conn % 5:  # four in five close; the fifth is left for the idle timeout
                parts += [_frame(client, server, cseq, sseq, 0x11),
                          _frame(server, client, sseq, cseq + 1, 0x11),
                          _frame(client, server, cseq + 1, sseq + 1, 0x10)]  # fmt: skip
            probe = (bytes([10, 9, (conn >> 8) & 255, conn & 255]), 30000 + conn % 30000)
            parts.append(_frame(probe, server, conn, 0, 0x02))  # a SYN nobody answers
            for frame in parts:
                ts += 0.05 / len(parts)
                yield _record(ts, frame)

    def read(self, size: int = -1) -> bytes:
        while len(self._buffer) < size:
            chunk = next(self._chunks, b"")
            if not chunk:
                break
            self._buffer += chunk
        out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out

    def seekable(self) -> bool:
        return False


def run_hour(hours: float) -> None:
    from s3p_codec.capture import decode_stream

    stream = _HourStream(hours, [])
    start = time.perf_counter()
    rows = evicted = 0
    next_mark = 0.0
    base = None
    print(f"{'capture time':>12}  {'rows':>9}  {'idle-closed':>11}  {'RSS MiB':>8}")
    for row in decode_stream(stream):  # type: ignore[arg-type]
        rows += 1
        evicted += row.kind == "evicted"
        base = base if base is not None else row.ts
        if row.ts - base >= next_mark:
            print(f"{next_mark / 60:10.0f} m  {rows:9}  {evicted:11}  {_rss_mib():8.1f}")
            next_mark += 600
    took = time.perf_counter() - start
    print(f"{hours * 60:10.0f} m  {rows:9}  {evicted:11}  {_rss_mib():8.1f}  "
          f"(peak {_peak_mib():.1f} MiB, {took:.0f} s wall)")  # fmt: skip


# -- limits ----------------------------------------------------------------------------------

_CASES = """
import os, resource, struct, sys, time
sys.path.insert(0, {code!r})
from s3p_codec.capture import Segment, decode_segments, decode_files

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def seg(n, src, dst, seq, flags, payload=b"", ts=None):
    return Segment("x", 0, n, ts if ts is not None else 1.7e9 + n * 1e-5, src[0], src[1],
                   dst[0], dst[1], seq, 0, flags, payload, len(payload))

def syn_only(count):
    for i in range(count):
        yield seg(i + 1, ("10.1.%d.%d" % (i >> 8 & 255, i & 255), 20000 + i % 40000),
                  ("10.2.0.1", 7500), i, 0x02)

def tiny(count):
    n = 0
    for i in range(count):
        c, s = ("10.1.%d.%d" % (i >> 8 & 255, i & 255), 20000 + i % 40000), ("10.2.0.1", 7500)
        n += 1; yield seg(n, c, s, 100, 0x02)
        n += 1; yield seg(n, c, s, 101, 0x18, b"*2\\r\\n$6\\r\\ncreate\\r\\n$1\\r\\nx\\r\\n")

def behind_hole(count, reverse):
    c, s = ("10.0.0.1", 40000), ("10.0.0.2", 9999)
    yield seg(1, c, s, 0, 0x02)
    order = range(count, 0, -1) if reverse else range(1, count + 1)
    for n, i in enumerate(order, 2):
        yield seg(n, c, s, 1 + i, 0x18, b"x")   # byte 0 never comes: all held

def abandoned(megabytes, port, first):
    c, s = ("10.0.0.1", 40000), ("10.0.0.2", port)
    yield seg(1, c, s, 0, 0x02)
    yield seg(2, c, s, 1, 0x18, first)
    at = 1 + len(first)
    for n in range(megabytes * 1_000_000 // 1448):
        yield seg(n + 3, c, s, at, 0x18, bytes(1448))  # a new object each, as a capture has
        at += 1448

def claim(tmp):
    path = os.path.join(tmp, "claim.pcap")
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 0xFFFFFFFF, 1))
        f.write(struct.pack("<IIII", 0, 0, 0xFFFFFFF0, 0xFFFFFFF0) + bytes(1000))
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    return decode_files([path])

case = sys.argv[1]
base = peak()
start = time.perf_counter()
try:
    if case == "claim":
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            rows = list(claim(tmp))
    else:
        rows = list(decode_segments(eval(case)))
    outcome = f"{{len(rows)}} rows"
    kinds = {{}}
    for r in rows:
        kinds[r.kind] = kinds.get(r.kind, 0) + 1
    outcome += " " + ",".join(f"{{k}}={{v}}" for k, v in sorted(kinds.items()))
except BaseException as exc:
    outcome = f"raised {{type(exc).__name__}}"
print(f"{{time.perf_counter() - start:8.2f}} s  +{{peak() - base:7.1f}} MiB  {{outcome}}")
"""

LIMIT_CASES = {
    "15 record claiming 4 GiB, 1 GiB address space": "claim",
    "16 100k SYN-only flows": "syn_only(100_000)",
    "16 200k tiny unclosed flows": "tiny(200_000)",
    "17 320k one-byte segments behind a hole": "behind_hole(320_000, False)",
    "17 the same, arriving in reverse": "behind_hole(320_000, True)",
    "18 100 MB after an unknown protocol": "abandoned(100, 5555, b'hello')",
    "18 100 MB after a fatal Durable error": (
        "abandoned(100, 4437, b'BREW / HTCPCP/1.0\\r\\n\\r\\n')"
    ),
}


def run_limits(code: str, only: str | None, timeout: float) -> None:
    script = _CASES.format(code=code)
    for title, case in LIMIT_CASES.items():
        if only and only not in title:
            continue
        try:
            done = subprocess.run(
                [sys.executable, "-c", script, case], capture_output=True, text=True,
                timeout=timeout, check=False,
            )  # fmt: skip
            result = done.stdout.strip() or done.stderr.strip().splitlines()[-1]
        except subprocess.TimeoutExpired:
            result = f"> {timeout:.0f} s (stopped)"
        print(f"{title:48} {result}", flush=True)


# -- stream ----------------------------------------------------------------------------------


def _rotate(path: Path, folder: Path, files: int) -> list[Path]:
    """Split the capture at ``path`` into ``files`` files named like ``tcpdump -C``'s."""
    records = _packets(path)
    per = -(-len(records) // files)
    out = []
    for i in range(files):
        target = folder / ("cap.pcap" if i == 0 else f"cap.pcap{i}")
        target.write_bytes(_PCAP_HEADER + b"".join(records[i * per : (i + 1) * per]))
        out.append(target)
    return out


def _committed_rows(out: Path, seen: dict[str, float]) -> int:
    """Rows in committed Parquet files; notes when each capture file's first row was seen."""
    import pyarrow.parquet as pq

    from s3p_codec.spark import committed_files

    rows = 0
    now = time.perf_counter()
    for part in committed_files(out):
        table = pq.read_table(part, columns=["file"])
        rows += table.num_rows
        for name in set(table.column("file").to_pylist()):
            seen.setdefault(name, now)
    return rows


def _stream_query(
    tmp: Path, tag: str, trigger: float, max_files: int | None = None
) -> tuple[Any, Path, Path]:
    from s3p_codec.spark import spark_session, start_stream

    spark = spark_session("local[1]")
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")  # as the CLI does
    watch, out = tmp / f"watch-{tag}", tmp / f"out-{tag}"
    watch.mkdir()
    query = start_stream(spark, str(watch / "cap.pcap*"), str(out), str(tmp / f"ckpt-{tag}"),
                         trigger_seconds=trigger, max_files_per_trigger=max_files)  # fmt: skip
    while not query.recentProgress:  # the first (empty) micro-batch: the JVM is warm
        time.sleep(0.2)
    return query, watch, out


def run_stream(mb: int, files: int, trigger: float) -> None:
    from benchmarks.capture_bench import generate
    from s3p_codec import capture

    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        size = generate(tmp / "whole.pcap", mb, 200)
        (stage := tmp / "stage").mkdir()
        rotated = _rotate(tmp / "whole.pcap", stage, files)
        start = time.process_time()
        single_rows = sum(1 for _ in capture.decode_files([str(p) for p in rotated]))
        single = time.process_time() - start
        print(f"capture     : {size / 1e6:.1f} MB in {files} rotated files, {single_rows} rows")
        print(f"single      : {size / 1e6 / single:6.1f} MB/s  (capture.decode_files, CPU s)")

        query, watch, out = _stream_query(tmp, "all", trigger)
        # A running query: one small file of another capture set first (its own micro-batch),
        # so that the backlog's is not the query's first (reported apart, below).
        (watch / "cap.pcapwarm").write_bytes(_PCAP_HEADER + b"".join(_packets(rotated[0])[:50]))
        while not _batch_seconds(query):
            time.sleep(0.1)
        first_batch = _batch_seconds(query)[0]
        warm_rows = _committed_rows(out, {})
        start = time.perf_counter()
        for path in rotated:
            os.link(path, watch / path.name)
        rows, last_change, seen = warm_rows, start, {}
        give_up = start + 900
        while time.perf_counter() < give_up and query.exception() is None:
            time.sleep(0.25)
            now_rows = _committed_rows(out, seen)
            if now_rows != rows:
                rows, last_change = now_rows, time.perf_counter()
            busy = query.status["isTriggerActive"] or query.status["isDataAvailable"]
            if rows and not busy and time.perf_counter() - last_change > 3 * trigger:
                break
        if query.exception() is not None:
            raise SystemExit(f"the query failed: {query.exception()}")
        busy = sum(_batch_seconds(query)[1:])
        query.stop()
        took = last_change - start
        print(f"stream      : {size / 1e6 / took:6.1f} MB/s on local[1] (wall from the files "
              f"appearing, trigger wait included), {rows - warm_rows} rows in {took:.1f} s")
        print(f"backlog     : {size / 1e6 / busy:6.1f} MB/s in the micro-batches that read "
              f"the files ({busy:.2f} s), {100 * single / busy:.0f}% of the single process "
              "(target >= 50%)")
        print(f"first batch : {first_batch:.2f} s (a query's first micro-batch, one small file)")

        query, watch, out = _stream_query(tmp, "one", trigger)
        appeared: dict[str, float] = {}
        seen = {}
        for path in rotated:
            target = watch / path.name
            os.link(path, target)
            appeared[str(target)] = time.perf_counter()
            deadline = time.perf_counter() + 2 * trigger
            while time.perf_counter() < deadline:
                time.sleep(0.05)
                _committed_rows(out, seen)
        end = time.perf_counter() + 4 * trigger + 5
        while len(seen) < len(appeared) and time.perf_counter() < end:
            time.sleep(0.05)
            _committed_rows(out, seen)
        batches = _batch_seconds(query)
        query.stop()
        delays = [seen[f] - t for f, t in appeared.items() if f in seen]
        print(f"delay       : file appears -> first rows committed: p50 {_pct(delays, 50):.2f} s, "
              f"max {max(delays):.2f} s, trigger {trigger:g} s "
              f"({len(delays)}/{len(appeared)} files seen)")  # fmt: skip
        print(f"batch cost  : one {size / files / 1e6:.1f} MB file per micro-batch: p50 "
              f"{_pct(batches, 50):.2f} s, max {max(batches):.2f} s (triggerExecution)")
        run_small_files(tmp, rotated[0], trigger)
        run_long_conversation(tmp, trigger)


def run_small_files(tmp: Path, source: Path, trigger: float, count: int = 8) -> None:
    """The fixed cost of a micro-batch: one small file (100 packets) at a time."""
    records = _packets(source)[:100]
    query, watch, _out = _stream_query(tmp, "small", trigger)
    for n in range(count):
        (watch / f"cap.pcap{n}").write_bytes(_PCAP_HEADER + b"".join(records))
        end = time.perf_counter() + 4 * trigger + 5
        while len(_batch_seconds(query)) <= n and time.perf_counter() < end:
            time.sleep(0.05)
    batches = _batch_seconds(query)
    query.stop()
    size = len(_PCAP_HEADER) + sum(map(len, records))
    print(f"fixed cost  : one {size / 1e3:.0f} kB file per micro-batch: p50 "
          f"{_pct(batches, 50):.2f} s, max {max(batches):.2f} s over {len(batches)} batches "
          "(target <= 0.5 s)")


def _batch_seconds(query: Any) -> list[float]:
    """Seconds of each micro-batch that read files (Spark's ``triggerExecution``)."""
    return [
        p["durationMs"]["triggerExecution"] / 1000
        for p in query.recentProgress
        if sum(s.get("numInputRows") or 0 for s in p["sources"])
    ]


def _long_conversation(path: Path, appends: int, record: int) -> int:
    """One S3P connection: ``appends`` appends of ``record`` bytes, each answered."""
    from s3p_codec import Role, s3p

    client, server = s3p.Connection(Role.CLIENT), s3p.Connection(Role.SERVER)
    c, s = (bytes([10, 0, 0, 1]), 40000), (bytes([10, 0, 0, 2]), 7500)
    cseq, sseq, ts = 1000, 5000, 1_700_000_000.0
    with path.open("wb") as out:
        out.write(_PCAP_HEADER)
        out.write(_record(ts, _frame(c, s, cseq, 0, 0x02)))
        out.write(_record(ts, _frame(s, c, sseq, cseq + 1, 0x12)))
        cseq, sseq = cseq + 1, sseq + 1
        for n in range(appends):
            request = client.send(s3p.Append(b"orders", (b"r" * record,)))
            server.receive_data(request)
            list(server.events())
            reply = server.send(s3p.AppendReply(s3p.Timestamp(1_700_000_000_000 + n, 0)))
            client.receive_data(reply)
            list(client.events())
            for at in range(0, len(request), 1460):
                piece = request[at : at + 1460]
                ts += 0.0001
                out.write(_record(ts, _frame(c, s, cseq, sseq, 0x18, piece)))
                cseq += len(piece)
            out.write(_record(ts, _frame(s, c, sseq, cseq, 0x18, reply)))
            sseq += len(reply)
    return path.stat().st_size


def run_long_conversation(tmp: Path, trigger: float, files: int = 12) -> None:
    """One conversation across ``files`` files, one file per micro-batch: the cost of a batch
    must not grow with the conversation's age."""
    size = _long_conversation(tmp / "long.pcap", 12_000, 4096)
    (stage := tmp / "stage-long").mkdir()
    rotated = _rotate(tmp / "long.pcap", stage, files)
    from s3p_codec import capture

    single_rows = sum(1 for _ in capture.decode_files([str(p) for p in rotated]))
    query, watch, out = _stream_query(tmp, "long", trigger, max_files=1)
    for path in rotated:
        os.link(path, watch / path.name)
    end = time.perf_counter() + 600
    seen: dict[str, float] = {}
    while len(_batch_seconds(query)) < files and time.perf_counter() < end:
        time.sleep(0.25)
    rows = _committed_rows(out, seen)
    batches = _batch_seconds(query)
    query.stop()
    third = max(1, len(batches) // 3)
    first, last = sum(batches[:third]) / third, sum(batches[-third:]) / third
    print(f"long conv.  : {size / 1e6:.1f} MB, one conversation over {files} files, "
          f"{rows} rows (decode: {single_rows}); batch mean first third {first:.2f} s, "
          f"last third {last:.2f} s, ratio {last / first:.2f} (target <= 1.2)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    pipe = sub.add_parser("pipe")
    pipe.add_argument("--mb", type=int, default=16, help="size of the generated capture")
    pipe.add_argument("--rate", type=float, default=10.0, help="paced write rate, MB/s")
    pipe.add_argument("--seconds", type=float, default=3.0, help="length of the paced run")
    hour = sub.add_parser("hour")
    hour.add_argument("--hours", type=float, default=1.0)
    limits = sub.add_parser("limits")
    limits.add_argument("--code", default=str(ROOT), help="directory holding s3p_codec")
    limits.add_argument("--only", help="run the cases whose title contains this")
    limits.add_argument("--timeout", type=float, default=120.0)
    stream = sub.add_parser("stream")
    stream.add_argument("--mb", type=int, default=32, help="size of the generated capture")
    stream.add_argument("--files", type=int, default=16, help="files of the rotated set")
    stream.add_argument("--trigger", type=float, default=2.0, help="seconds between batches")
    args = parser.parse_args()
    if args.mode == "stream":
        run_stream(args.mb, args.files, args.trigger)
    elif args.mode == "pipe":
        run_pipe(args.mb, args.rate, args.seconds)
    elif args.mode == "hour":
        run_hour(args.hours)
    else:
        run_limits(args.code, args.only, args.timeout)


if __name__ == "__main__":
    main()
