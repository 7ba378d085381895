"""Tail the output of ``s3p-codec spark stream``: request-to-reply latency per protocol, per
minute of capture time, printed as new micro-batches commit.

::

    s3p-codec spark stream 'captures/cap-*.pcap' --out events --checkpoint events.ckpt &
    python -m examples.stream_latency events                 # Ctrl-C to stop
    python -m examples.stream_latency events --once          # what is committed now, then exit

Only the Parquet files of committed micro-batches are read (``committed_files``), each once;
a minute's line is printed again when later rows change it. Needs the ``capture`` extra (pyarrow)
but not Spark.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import defaultdict
from collections.abc import Sequence

import pyarrow.parquet as pq

from examples import _cli
from s3p_codec.spark import committed_files

__all__ = ["LatencyTable", "main"]


class LatencyTable:
    """Latencies (ms) by (minute of capture time, protocol), fed Parquet files one by one."""

    def __init__(self) -> None:
        self.latencies: dict[tuple[int, str], list[float]] = defaultdict(list)
        self.read: set[str] = set()

    def add_file(self, path: str) -> set[tuple[int, str]]:
        """Read one Parquet file (once); return the (minute, protocol) cells it changed."""
        if path in self.read:
            return set()
        self.read.add(path)
        table = pq.read_table(path, columns=["ts", "protocol", "latency_ms"])
        changed = set()
        for ts, protocol, latency in zip(*(c.to_pylist() for c in table.columns), strict=True):
            if latency is None or ts is None:
                continue
            cell = (int(ts // 60), str(protocol))
            self.latencies[cell].append(float(latency))
            changed.add(cell)
        return changed

    def line(self, cell: tuple[int, str]) -> str:
        minute, protocol = cell
        values = sorted(self.latencies[cell])
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(minute * 60))
        return (
            f"{when}  {protocol:8} replies {len(values):6}  p50 {_rank(values, 50):8.3f} ms  "
            f"p99 {_rank(values, 99):8.3f} ms"
        )


def _rank(ordered: Sequence[float], q: int) -> float:
    """Nearest-rank percentile, as ``capture.summarize`` computes it."""
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1] if ordered else math.nan


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=_cli.prog("stream_latency"), description=__doc__.split("\n")[0]
    )
    parser.add_argument("out", help="the --out directory of s3p-codec spark stream")
    parser.add_argument("--every", type=float, default=5.0, help="seconds between looks (5)")
    parser.add_argument("--once", action="store_true", help="print what is committed, then exit")
    args = parser.parse_args(argv)
    table = LatencyTable()
    try:
        while True:
            changed: set[tuple[int, str]] = set()
            for path in committed_files(args.out):
                changed |= table.add_file(path)
            for cell in sorted(changed):
                print(table.line(cell), flush=True)
            if args.once:
                return 0
            time.sleep(args.every)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    from examples._cli import run as run_cli

    sys.exit(run_cli(main, "python -m examples.stream_latency"))
