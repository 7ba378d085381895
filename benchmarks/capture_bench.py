"""Capture decoding throughput, end to end (file to rows), next to tshark on the same file.

::

    .venv/bin/python benchmarks/capture_bench.py                 # ~64 MB capture
    .venv/bin/python benchmarks/capture_bench.py --mb 256 --flows 400
    .venv/bin/python benchmarks/capture_bench.py --split 3       # and where the CPU goes
    .venv/bin/python benchmarks/capture_bench.py --url --mb 75   # from s3:// next to local

Generates a pcap of many TCP conversations (S3P, RustLog and Pravega, real codec bytes, MSS-sized
segments, with handshakes and FINs), then in one run:

- decodes it with ``s3p_codec.capture.decode_files`` in a child process, counting rows, and
  reports MB/s (of wall time, and of the child's CPU time, which other work on the machine
  disturbs less) and that process's peak RSS; the file is read in place and its in-order
  packets go straight to their Observer (``capture/_lanes.py``);
- decodes the same packets written as pcapng: the general way, record by record, a ``Segment``
  per packet through ``FlowTable.add``, which every capture the in-place classic-pcap reader
  does not take goes (pcapng, gzip, pipes), so the figure above is never read without this one;
- runs ``tshark -r FILE -q -z follow,tcp,raw,N`` for every TCP stream (one tshark process, all
  streams), the reassembly a reader would otherwise use, and reports its MB/s;
- prints the ratio (ours / tshark; above 1 means faster than tshark);
- with ``--split N``: where the CPU goes, best of N fresh processes per part: the whole
  decode, the time inside the protocol Observers (timed in place), the capture machinery alone
  (reading, reassembly, lanes, flows: a run whose Observers decode nothing, so no events and no
  rows), and the rest, which is building the rows. The protocol packages are imported before
  the clock starts here (the figures above include importing them).

With ``--url``: the same capture is also put in a bucket of an S3-compatible server started
on 127.0.0.1 (moto's standalone server; ``pip install 'moto[server]' s3fs`` for it and the
upload), and ``s3p-codec decode FILE --format jsonl`` and ``s3p-codec decode s3://...
--format jsonl`` (and ``decode_files`` of each) run in fresh processes, interleaved, best of
``--rounds``: their times, the ratio (target: 1.3x at most) and each peak RSS (target: the
same). The server runs in this process, so its CPU
is counted by neither child but shares the machine with them, as a store's network would not.

Memory is meant to follow the largest open flow, not the file: the peak RSS is printed for two
file sizes so the difference can be seen.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from s3p_codec import Role, pravega, s3p  # noqa: E402

_PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
_ETH = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00"
MSS = 1448


class _Writer:
    def __init__(self, out) -> None:  # type: ignore[no-untyped-def]
        self.out = out
        self.ts = 1_700_000_000.0
        self.bytes = 0

    def packet(self, src: tuple[bytes, int], dst: tuple[bytes, int], numbers: tuple[int, int],
               flags: int, data: bytes = b"") -> None:  # fmt: skip
        seq, ack = numbers
        tcp = struct.pack("!HHIIBBHHH", src[1], dst[1], seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                          5 << 4, flags, 65535, 0, 0)  # fmt: skip
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(data), 0, 0x4000, 64, 6,
                         0, src[0], dst[0])  # fmt: skip
        frame = _ETH + ip + tcp + data
        self.ts += 0.00001
        sec = int(self.ts)
        usec = int((self.ts - sec) * 1e6)
        self.out.write(struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame)
        self.bytes += 16 + len(frame)


def _s3p_exchanges(n: int, rng: random.Random) -> list[tuple[bytes, bytes]]:
    client, server = s3p.Connection(Role.CLIENT), s3p.Connection(Role.SERVER)
    out = []
    for i in range(n):
        records = tuple(rng.randbytes(rng.randint(100, 4000)) for _ in range(rng.randint(1, 8)))
        wire = client.send(s3p.Append(b"bench-stream", records))
        server.receive_data(wire)
        list(server.events())
        reply = server.send(s3p.AppendReply(s3p.Timestamp(1_700_000_000_000 + i, 0)))
        client.receive_data(reply)
        list(client.events())
        out.append((wire, reply))
    return out


def _rustlog_exchanges(n: int, rng: random.Random) -> list[tuple[bytes, bytes]]:
    import base64

    out = []
    for i in range(n):
        records = [base64.b64encode(rng.randbytes(rng.randint(100, 3000))).decode()
                   for _ in range(rng.randint(1, 8))]  # fmt: skip
        req = json.dumps({"type": "Produce", "topic": "bench", "partition": 0, "records": records})
        rep = json.dumps(
            {"type": "ProduceResponse", "base_offset": i * 8, "record_count": len(records)}
        )
        out.append((struct.pack(">I", len(req)) + req.encode(),
                    struct.pack(">I", len(rep)) + rep.encode()))  # fmt: skip
    return out


def _pravega_exchanges(n: int, rng: random.Random) -> list[tuple[bytes, bytes]]:
    client, server = pravega.Connection(Role.CLIENT), pravega.Connection(Role.SERVER)
    out = [(client.send(pravega.Hello()), server.send(pravega.Hello()))]
    for i in range(1, n):
        req = client.send(pravega.ReadSegment("scope/stream/0", i * 4096, 4096, "", i))
        data = rng.randbytes(rng.randint(500, 8000))
        rep = server.send(pravega.SegmentRead("scope/stream/0", i * 4096, False, False, data, i))
        out.append((req, rep))
    return out


GENERATORS = {7500: _s3p_exchanges, 9092: _rustlog_exchanges, 12345: _pravega_exchanges}


def generate(path: Path, target_mb: int, flows: int, seed: int = 1) -> int:
    """Write a capture of about ``target_mb`` MB; return its size in bytes."""
    rng = random.Random(seed)
    target = target_mb * 1_000_000
    templates = {port: gen(10, rng) for port, gen in GENERATORS.items()}
    with open(path, "wb") as f:
        f.write(_PCAP_HEADER)
        w = _Writer(f)
        conn = 0
        while w.bytes < target:
            # A batch of ``flows`` conversations open at once, their packets interleaved.
            states = []
            for _ in range(flows):
                conn += 1
                port = list(GENERATORS)[conn % len(GENERATORS)]
                client = (bytes([10, 1, (conn >> 8) & 255, conn & 255]), 20000 + conn % 40000)
                server = (bytes([10, 2, 0, 1]), port)
                states.append([client, server, rng.randrange(1 << 32), rng.randrange(1 << 32),
                               list(templates[port]), True])  # fmt: skip
            for client, server, cseq, sseq, _, _ in states:
                w.packet(client, server, (cseq, 0), 0x02)
                w.packet(server, client, (sseq, cseq + 1), 0x12)
                w.packet(client, server, (cseq + 1, sseq + 1), 0x10)
            for s in states:
                s[2] += 1
                s[3] += 1
            live = states[:]
            while live:
                for s in live[:]:
                    client, server, cseq, sseq, todo, _ = s
                    if not todo:
                        w.packet(client, server, (cseq, sseq), 0x11)
                        w.packet(server, client, (sseq, cseq + 1), 0x11)
                        w.packet(client, server, (cseq + 1, sseq + 1), 0x10)
                        live.remove(s)
                        continue
                    request, reply = todo.pop(0)
                    for i in range(0, len(request), MSS):
                        w.packet(client, server, (cseq + i, sseq), 0x18, request[i : i + MSS])
                    cseq += len(request)
                    for i in range(0, len(reply), MSS):
                        w.packet(server, client, (sseq + i, cseq), 0x18, reply[i : i + MSS])
                    sseq += len(reply)
                    s[2], s[3] = cseq, sseq
    return path.stat().st_size


def to_pcapng(source: Path, target: Path) -> int:
    """Write ``source``'s packets (a classic pcap of ``generate``) as pcapng; return its size.

    Record by record: this process stays small, since the decoding children it forks start
    with its peak RSS as their own."""
    with open(source, "rb") as src, open(target, "wb") as f:
        src.read(24)
        f.write(struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 28))  # section
        f.write(struct.pack("<IIHHII", 1, 20, 1, 0, 65535, 20))  # interface: Ethernet, microseconds
        while head := src.read(16):
            sec, usec, caplen, length = struct.unpack("<IIII", head)
            frame = src.read(caplen)
            padded = frame + bytes(-len(frame) % 4)
            size = 32 + len(padded)
            stamp = sec * 1_000_000 + usec
            f.write(struct.pack("<IIIIIII", 6, size, 0, stamp >> 32, stamp & 0xFFFFFFFF, caplen,
                                length) + padded + struct.pack("<I", size))  # fmt: skip
    return target.stat().st_size


_CHILD = """
import resource, sys, time
from s3p_codec.capture import decode_files
start = time.perf_counter()
cpu = time.process_time()
rows = errors = 0
for row in decode_files([sys.argv[1]]):
    rows += 1
    errors += row.kind != "event"
elapsed = time.perf_counter() - start
cpu = time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(rows, errors, elapsed, cpu, peak)
"""


_SPLIT_CHILD = """
import sys, time
from s3p_codec.capture import decode_files
from s3p_codec.capture import default_observer
import s3p_codec.pravega, s3p_codec.rustlog, s3p_codec.s3p  # imported before the clock starts
mode, path = sys.argv[1], sys.argv[2]
clock = time.process_time
inside = 0.0

class Timed:
    \"\"\"A protocol's Observer, the CPU spent inside it counted (all three resynchronize).\"\"\"
    resynchronizes = True
    def __init__(self, protocol):
        self.observer = default_observer(protocol)
    def observe(self, direction, data):
        global inside
        start = clock(); out = self.observer.observe(direction, data); inside += clock() - start
        return out
    def gap(self, direction, size):
        global inside
        start = clock(); out = self.observer.gap(direction, size); inside += clock() - start
        return out
    def close(self, direction):
        global inside
        start = clock(); out = self.observer.close(direction); inside += clock() - start
        return out

class Silent:
    \"\"\"An Observer that decodes nothing: no events, no rows; what is left is the capture.\"\"\"
    resynchronizes = True
    def observe(self, direction, data): return []
    def gap(self, direction, size): return []
    def close(self, direction): return []

observers = {"whole": default_observer, "timed": Timed, "machinery": lambda protocol: Silent()}
cpu = clock()
count = sum(1 for _ in decode_files([path], observers=observers[mode]))
print(clock() - cpu, inside, count)
"""


def split(path: Path, rounds: int) -> None:
    """Print where decoding ``path`` spends its CPU: the whole decode; inside the protocol
    Observers (timed in place, in a run of its own); the capture machinery alone (Observers
    that decode nothing, so there are no events and no rows); and the rest, which is building
    the rows. Best of ``rounds``, each part in a fresh process, interleaved."""
    modes = ("whole", "timed", "machinery")
    best = dict.fromkeys(modes, (1e9, 1e9))
    for _ in range(rounds):
        for mode in modes:
            out = subprocess.run([sys.executable, "-c", _SPLIT_CHILD, mode, str(path)],
                                 capture_output=True, text=True, check=True,
                                 cwd=ROOT).stdout.split()  # fmt: skip
            best[mode] = min(best[mode], (float(out[0]), float(out[1])))
    size = path.stat().st_size
    whole = best["whole"][0]
    observers = best["timed"][1]
    machinery = best["machinery"][0]
    print(f"where the CPU goes (best of {rounds}, a fresh process each):")
    for label, cpu in (
        ("whole decode", whole),
        ("inside the Observers", observers),
        ("capture machinery", machinery),
        ("rows (the rest)", whole - observers - machinery),
    ):
        print(f"  {label:21s}: {cpu:6.2f} s  {100 * cpu / whole:4.0f}%  "
              f"(alone: {size / cpu / 1e6:6.1f} MB/s)")  # fmt: skip


def ours(path: Path) -> tuple[int, int, float, float, int]:
    """(rows, non-event rows, seconds, CPU seconds, peak RSS in KiB) of decoding in a fresh
    process."""
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout.split()  # fmt: skip
    return int(out[0]), int(out[1]), float(out[2]), float(out[3]), int(out[4])


_CLI_CHILD = """
import os, resource, sys, time
start = time.perf_counter()
cpu = time.process_time()
from s3p_codec.cli import main
code = main(["decode", sys.argv[1], "--format", "jsonl"])
sys.stdout.flush()
elapsed = time.perf_counter() - start
cpu = time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(code, elapsed, cpu, peak, file=sys.stderr)
"""


def _cli(target: str, env: dict[str, str]) -> tuple[float, float, int]:
    """(seconds, CPU seconds, peak RSS in KiB) of ``s3p-codec decode TARGET --format jsonl``
    in a fresh process, its output thrown away."""
    done = subprocess.run([sys.executable, "-c", _CLI_CHILD, target], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
                          check=False)  # fmt: skip
    last = done.stderr.strip().splitlines()[-1].split()
    if last[0] != "0":
        raise SystemExit(f"s3p-codec decode {target} failed: {done.stderr.strip()}")
    return float(last[1]), float(last[2]), int(last[3])


def _decode_files(target: str, env: dict[str, str]) -> tuple[int, float, float, int]:
    """(rows, seconds, CPU seconds, peak RSS in KiB) of ``decode_files([TARGET])``."""
    out = subprocess.run([sys.executable, "-c", _CHILD, target], capture_output=True, text=True,
                         check=True, cwd=ROOT, env=env).stdout.split()  # fmt: skip
    return int(out[0]), float(out[2]), float(out[3]), int(out[4])


_SERVER_CHILD = """
import logging, sys
logging.getLogger("werkzeug").setLevel(logging.ERROR)
import s3fs
from moto.server import ThreadedMotoServer
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
host, port = server.get_host_and_port()
fs = s3fs.S3FileSystem(key="bench", secret="bench", endpoint_url=f"http://{host}:{port}")
fs.mkdir("bench")
fs.put_file(sys.argv[1], "bench/large.pcap")
print(port, flush=True)
sys.stdin.read()  # until the bench closes it
server.stop()
"""

_OPEN_CHILD = """
import resource, sys, time
start = time.perf_counter()
from s3p_codec.capture._remote import input_size
size = input_size(sys.argv[1])
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, size)
"""


_GETS_CHILD = """
import sys, time
from s3p_codec.capture._remote import BLOCK_SIZE, _store
store = _store(sys.argv[1])
handle = store.fs.open_input_file(store.path)
size = handle.size()
start = time.perf_counter()
for at in range(0, size, BLOCK_SIZE):
    handle.read_at(min(BLOCK_SIZE, size - at), at)
ranged = time.perf_counter() - start
start = time.perf_counter()
handle.read_at(size, 0)
print(ranged, time.perf_counter() - start)
"""


def _child_figures(code: str, url: str, env: dict[str, str]) -> list[str]:
    """The words a measuring child process (``python -c code url``) prints."""
    return subprocess.run(
        [sys.executable, "-c", code, url],
        capture_output=True, text=True, check=True, cwd=ROOT, env=env,
    ).stdout.split()  # fmt: skip


def url_mode(path: Path, rounds: int) -> None:
    """Decode ``path`` from local disk and from ``s3://`` on a moto server on 127.0.0.1,
    interleaved, best of ``rounds``; print times, their ratio and peak RSS. The server (and the
    upload) run in a child of their own: a child's peak RSS starts at its parent's."""
    server = subprocess.Popen([sys.executable, "-c", _SERVER_CHILD, str(path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        env = dict(os.environ)
        env.update({
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        })  # fmt: skip
        url = "s3://bench/large.pcap"
        size = path.stat().st_size
        cli = {"file": (1e9, 1e9, 0), "s3": (1e9, 1e9, 0)}
        plain = {"file": (0, 1e9, 1e9, 0), "s3": (0, 1e9, 1e9, 0)}
        opening = (1e9, 0)
        gets = (1e9, 1e9)
        for _ in range(rounds):
            for where, target in (("file", str(path)), ("s3", url)):
                seconds, cpu, peak = _cli(target, env)
                best = cli[where]
                cli[where] = (min(best[0], seconds), min(best[1], cpu), max(best[2], peak))
                rows, seconds, cpu, peak = _decode_files(target, env)
                best2 = plain[where]
                plain[where] = (rows, min(best2[1], seconds), min(best2[2], cpu),
                                max(best2[3], peak))  # fmt: skip
            out = _child_figures(_OPEN_CHILD, url, env)
            opening = (min(opening[0], float(out[0])), max(opening[1], int(out[1])))
            out = _child_figures(_GETS_CHILD, url, env)
            gets = (min(gets[0], float(out[0])), min(gets[1], float(out[1])))
        if plain["file"][0] != plain["s3"][0]:
            raise SystemExit(f"rows differ: {plain['file'][0]} local, {plain['s3'][0]} s3://")
        print(f"from s3:// ({size / 1e6:.1f} MB object on a moto server on 127.0.0.1, "
              f"best of {rounds}, blocks of {_block_size() >> 20} MiB):")  # fmt: skip
        for label, file_fig, s3_fig in (
            ("s3p-codec decode --format jsonl", cli["file"], cli["s3"]),
            (f"decode_files ({plain['file'][0]} rows)", plain["file"][1:], plain["s3"][1:]),
        ):
            print(f"  {label}:")
            for where, (seconds, cpu, peak) in (("local file", file_fig), ("s3://", s3_fig)):
                print(f"    {where:10s}: {seconds:6.2f} s  {size / seconds / 1e6:6.1f} MB/s  "
                      f"cpu {cpu:6.2f} s  peak RSS {peak / 1024:5.0f} MiB")  # fmt: skip
            print(f"    ratio     : {s3_fig[0] / file_fig[0]:.2f}x the local time (target <= 1.3x),"
                  f" peak RSS {(s3_fig[2] - file_fig[2]) / 1024:+.0f} MiB")  # fmt: skip
        print(f"  opening the store alone (import pyarrow.fs, make the client, one HEAD): "
              f"{opening[0]:.2f} s, peak RSS {opening[1] / 1024:.0f} MiB")  # fmt: skip
        print(f"  the server alone: the object in {_block_size() >> 20} MiB ranged GETs one after "
              f"the other {gets[0]:.2f} s, in one GET {gets[1]:.2f} s")  # fmt: skip
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=60)


def _block_size() -> int:
    from s3p_codec.capture._remote import BLOCK_SIZE

    return BLOCK_SIZE


def tshark(path: Path) -> tuple[float, int] | None:
    """(seconds, streams) for tshark following every TCP stream raw, or None without tshark."""
    exe = shutil.which("tshark")
    if exe is None:
        return None
    listing = subprocess.run([exe, "-r", str(path), "-T", "fields", "-e", "tcp.stream",
                              "-Y", "tcp.flags.syn == 1 && tcp.flags.ack == 0"],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
    streams = sorted({int(s) for s in listing.split()})
    args = [a for n in streams for a in ("-z", f"follow,tcp,raw,{n}")]
    start = time.perf_counter()
    subprocess.run([exe, "-r", str(path), "-q", *args], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)  # fmt: skip
    return time.perf_counter() - start, len(streams)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=64, help="size of the large capture (MB)")
    parser.add_argument("--flows", type=int, default=200, help="conversations open at once")
    parser.add_argument(
        "--split",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="also print where the CPU goes (best of ROUNDS runs of each part)",
    )
    parser.add_argument(
        "--url",
        action="store_true",
        help="only: decode from s3:// on a local moto server next to local files",
    )
    parser.add_argument("--rounds", type=int, default=2, help="best of ROUNDS (--url)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.url:
            large = Path(tmp) / "large.pcap"
            generate(large, args.mb, args.flows)
            url_mode(large, args.rounds)
            return 0
        small = Path(tmp) / "small.pcap"
        large = Path(tmp) / "large.pcap"
        small_size = generate(small, max(1, args.mb // 8), args.flows)
        size = generate(large, args.mb, args.flows)
        general = Path(tmp) / "large.pcapng"
        to_pcapng(large, general)
        rows, errors, seconds, cpu, peak = ours(large)
        g_rows, _, g_seconds, g_cpu, g_peak = ours(general)
        _, _, _, _, small_peak = ours(small)
        ours_mbs = size / seconds / 1e6
        print(f"capture: {size / 1e6:.1f} MB, {args.flows} flows open at a time")
        print(f"s3p-codec : {seconds:7.2f} s  {ours_mbs:7.1f} MB/s  {rows} rows "
              f"({errors} not events)  [pcap]")  # fmt: skip
        print(f"  cpu     : {cpu:7.2f} s  {size / cpu / 1e6:7.1f} MB/s")
        print(f"  general : {g_seconds:7.2f} s  {size / g_seconds / 1e6:7.1f} MB/s  {g_rows} rows  "
              f"[same packets as pcapng, read record by record; cpu {g_cpu:.2f} s, "
              f"{size / g_cpu / 1e6:.1f} MB/s]")  # fmt: skip
        print(f"peak RSS  : {peak / 1024:.0f} MiB for {size / 1e6:.0f} MB, "
              f"{small_peak / 1024:.0f} MiB for {small_size / 1e6:.0f} MB "
              f"(pcapng: {g_peak / 1024:.0f} MiB)")  # fmt: skip
        if args.split:
            split(large, args.split)
        result = tshark(large)
        if result is None:
            print("tshark    : not installed (apt-get install tshark)")
            return 0
        t_seconds, streams = result
        t_mbs = size / t_seconds / 1e6
        print(f"tshark    : {t_seconds:7.2f} s  {t_mbs:7.1f} MB/s  (-z follow,tcp,raw x {streams})")
        print(f"ratio     : {ours_mbs / t_mbs:.2f}x tshark's throughput "
              f"(general: {size / g_seconds / 1e6 / t_mbs:.2f}x)")  # fmt: skip
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.exit(main())
