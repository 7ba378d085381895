"""Captures made from the bundled samples: packets dropped (a capture started mid-stream) or
moved later in time (a client that paused), written back as pcap files with dpkt."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import dpkt


def rewrite(
    source: Path,
    target: Path,
    *,
    keep: Callable[[int], bool] = lambda number: True,
    delay: Callable[[int], float] = lambda number: 0.0,
) -> Path:
    """Copy ``source`` to ``target`` keeping packets (numbered from 1) that ``keep`` accepts,
    each ``delay(number)`` seconds later than recorded."""
    with source.open("rb") as raw, target.open("wb") as out:
        reader = dpkt.pcap.Reader(raw)
        writer = dpkt.pcap.Writer(out, snaplen=reader.snaplen, linktype=reader.datalink())
        for number, (ts, packet) in enumerate(reader, start=1):
            if keep(number):
                writer.writepkt(packet, ts=ts + delay(number))
    return target
