"""What an open conversation costs a decoder: snapshot bytes and RSS per open flow, as a function
of the number of open flows and of the message in flight in each.

::

    .venv/bin/python benchmarks/flow_state_bench.py
    .venv/bin/python benchmarks/flow_state_bench.py --flows 1000 20000 --inflight 0 65536

For each (flows, in-flight bytes), in a fresh process: a pcap of that many S3P conversations,
each with a handshake, ``--exchanges`` complete Append/reply exchanges, then a client Append
sent but for its last byte (so each conversation holds that message in flight), none closed.
Its segments go through one ``FlowTable`` (the executor's decoding state), then the table's
``snapshot()`` is taken (what the streaming query writes per capture set and micro-batch).
Printed: the snapshot's bytes per flow, the process's RSS growth per flow (current RSS after
the segments, minus before: Python objects of the reassembly and Observers, and the bytes in
flight), and the time per flow of taking the snapshot.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_CHILD = """
import gc, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[4])
from benchmarks.flow_state_bench import write_capture
from s3p_codec.capture import FlowTable, read_segments
import s3p_codec.s3p

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

path, flows, inflight = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
write_capture(path, flows, inflight, int(sys.argv[5]))
segments = list(read_segments(str(path)))   # read first: the segments are not the state
gc.collect()
before = rss()
table = FlowTable.with_limits()
for segment in segments:
    table.add(segment)
del segments
gc.collect()
grown = rss() - before
start = time.perf_counter()
blob = table.snapshot()
took = time.perf_counter() - start
assert len(table.flows) == flows, len(table.flows)
print(len(blob), grown, took)
"""


def write_capture(path: Path, flows: int, inflight: int, exchanges: int) -> None:
    """``flows`` S3P conversations left open, each with ``inflight`` bytes of a message."""
    import random

    from benchmarks.capture_bench import _PCAP_HEADER, MSS, _Writer
    from s3p_codec import Role, s3p

    rng = random.Random(1)
    client, server = s3p.Connection(Role.CLIENT), s3p.Connection(Role.SERVER)
    pairs = []
    for i in range(exchanges):
        wire = client.send(s3p.Append(b"bench", (rng.randbytes(1000),)))
        server.receive_data(wire)
        list(server.events())
        reply = server.send(s3p.AppendReply(s3p.Timestamp(1_700_000_000_000 + i, 0)))
        client.receive_data(reply)
        list(client.events())
        pairs.append((wire, reply))
    tail = b""
    if inflight:
        tail = client.send(s3p.Append(b"bench", (rng.randbytes(inflight),)))[: inflight - 1]
    with path.open("wb") as f:
        f.write(_PCAP_HEADER)
        w = _Writer(f)
        for conn in range(flows):
            c = (bytes([10, 1, (conn >> 8) & 255, conn & 255]), 20000 + conn % 40000)
            s = (bytes([10, 2, 0, 1]), 7500)
            cseq, sseq = rng.randrange(1 << 31), rng.randrange(1 << 31)
            w.packet(c, s, (cseq, 0), 0x02)
            w.packet(s, c, (sseq, cseq + 1), 0x12)
            cseq, sseq = cseq + 1, sseq + 1
            w.packet(c, s, (cseq, sseq), 0x10)
            for request, reply in [*pairs, (tail, b"")]:
                for i in range(0, len(request), MSS):
                    w.packet(c, s, (cseq + i, sseq), 0x18, request[i : i + MSS])
                cseq += len(request)
                for i in range(0, len(reply), MSS):
                    w.packet(s, c, (sseq + i, cseq), 0x18, reply[i : i + MSS])
                sseq += len(reply)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--inflight", type=int, nargs="+", default=[0, 16384, 262144])
    parser.add_argument("--exchanges", type=int, default=5)
    args = parser.parse_args()
    print(f"{'open flows':>10} {'in flight':>10} {'snapshot/flow':>14} {'RSS/flow':>10} "
          f"{'snapshot total':>15} {'snapshot time':>14}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for flows in args.flows:
            for inflight in args.inflight:
                out = subprocess.run(
                    [sys.executable, "-c", _CHILD, str(Path(tmp) / "open.pcap"), str(flows),
                     str(inflight), str(ROOT), str(args.exchanges)],
                    capture_output=True, text=True, check=True, cwd=ROOT,
                ).stdout.split()  # fmt: skip
                blob, grown, took = int(out[0]), int(out[1]), float(out[2])
                print(f"{flows:>10} {inflight:>10} {blob / flows:>12.0f} B "
                      f"{grown / flows / 1024:>7.1f} KiB {blob / 2**20:>11.1f} MiB "
                      f"{took:>12.2f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
