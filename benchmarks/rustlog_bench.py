"""Typed RustLog decoding against the bare minimum, for the stdlib and orjson JSON paths.

    python benchmarks/rustlog_bench.py [--frames 1000] [--repeat 7]

For each case, the same wire bytes (``--frames`` frames back to back) are decoded two ways:

- ours: a ``rustlog.Connection`` fed the bytes in one call and drained to typed events (frame
  headers checked against the limits, UTF-8 and JSON checked, every field validated, records
  base64-decoded into ``bytes``, responses paired with the requests in flight);
- bare: ``struct.unpack_from(">I")`` + ``loads`` + ``base64.b64decode`` of every record: the
  least any Python decoder of these frames does, and no checking at all.

Cases: Produce requests (10 and 100 records of 100 bytes), Fetch requests (all alike, and
varied over groups, topics, partitions and offsets), and FetchResponses of 100 records of 100
bytes and of 1 to 200 bytes (the client side, with the Fetch requests sent beforehand, not
timed). The varied rows are the general case beside any path that favours repeated shapes.
The last row feeds FetchResponses of about 1.4 MB (1000 records of 1 KiB; one per 100
``--frames``) in 64 KiB chunks, draining events after each, as a socket loop does: each frame
spans many chunks.
Best of ``--repeat`` interleaved runs, timed in CPU time of this thread (``time.thread_time``),
so that other processes on a busy machine distort the figures less; the table gives
microseconds per frame, what ours adds per frame (``extra us``: framing, state, validation,
building the event) and the ratio ours / bare (target: <= 1.5x).
"""

from __future__ import annotations

import argparse
import base64
import json
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from s3p_codec import Role, rustlog

try:
    import orjson
except ImportError:  # pragma: no cover - optional extra
    orjson = None  # type: ignore[assignment]

_HEADER = struct.Struct(">I")
FETCH = rustlog.Fetch("analytics-consumer", "user-events", 0, 100, 1048576)


def produce_case(frames: int, count: int = 10) -> tuple[bytes, list[rustlog.Request]]:
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    records = tuple(bytes([n % 256]) * 100 for n in range(count))
    events = [rustlog.Produce("user-events", n % 8, records) for n in range(frames)]
    return b"".join(client.send(e) for e in events), []


def fetch_case(frames: int, vary: bool = False) -> tuple[bytes, list[rustlog.Request]]:
    """Fetch requests: all alike, or (``vary``) over 8 groups, 16 topics, moving offsets."""
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    if not vary:
        return b"".join(client.send(FETCH) for _ in range(frames)), []
    events = [
        rustlog.Fetch(f"consumer-{n % 8}", f"topic-{n % 16}", n % 4, n * 37, 1024 << (n % 11))
        for n in range(frames)
    ]
    return b"".join(client.send(e) for e in events), []


def fetch_response_case(frames: int, vary: bool = False) -> tuple[bytes, list[rustlog.Request]]:
    """FetchResponses of 100 records: 100 bytes each, or (``vary``) 1 to 200 bytes."""
    server = rustlog.Connection(Role.SERVER)
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    server.receive_data(b"".join(client.send(FETCH) for _ in range(frames)))
    list(server.events())
    wire = []
    for n in range(frames):
        base = n * 100
        records = tuple(
            rustlog.Record(
                base + i,
                1641024000000000 + base + i,
                bytes([i]) * (1 + (n * 7 + i * 13) % 200 if vary else 100),
            )
            for i in range(100)
        )
        wire.append(server.send(rustlog.FetchResponse(records, base + 100)))
    return b"".join(wire), [FETCH] * frames


def big_fetch_response_case(frames: int) -> tuple[bytes, list[rustlog.Request]]:
    """FetchResponses of 1000 records of 1 KiB: each spans many receive chunks."""
    server = rustlog.Connection(Role.SERVER)
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    server.receive_data(b"".join(client.send(FETCH) for _ in range(frames)))
    list(server.events())
    wire = []
    for n in range(frames):
        base = n * 1000
        records = tuple(
            rustlog.Record(base + i, 1641024000000000 + i, bytes([i % 256]) * 1024)
            for i in range(1000)
        )
        wire.append(server.send(rustlog.FetchResponse(records, base + 1000)))
    return b"".join(wire), [FETCH] * frames


Prepare = Callable[[], rustlog.Connection]


def ours(
    wire: bytes, sent: list[rustlog.Request], backend: str, chunk: int = 0
) -> tuple[Prepare, Callable[[rustlog.Connection], int]]:
    """(make a connection with the requests in flight, decode ``wire`` on it, fed in one call
    or in chunks of ``chunk`` bytes)."""
    role = Role.CLIENT if sent else Role.SERVER

    def prepare() -> rustlog.Connection:
        conn = rustlog.Connection(role, json=backend, pipelining=True)
        for request in sent:
            conn.send(request)
        return conn

    def run(conn: rustlog.Connection) -> int:
        conn.receive_data(wire)
        return sum(1 for _ in conn.events())

    def run_chunks(conn: rustlog.Connection) -> int:
        view = memoryview(wire)
        count = 0
        for at in range(0, len(wire), chunk):
            conn.receive_data(bytes(view[at : at + chunk]))  # a socket hands out bytes
            count += sum(1 for _ in conn.events())
        return count

    return prepare, run_chunks if chunk else run


def bare(wire: bytes, loads: Callable[[bytes], Any]) -> Callable[[], int]:
    b64decode = base64.b64decode
    unpack_from = _HEADER.unpack_from

    def run() -> int:
        at = 0
        count = 0
        end = len(wire)
        while at < end:
            (length,) = unpack_from(wire, at)
            obj = loads(wire[at + 4 : at + 4 + length])
            at += 4 + length
            for record in obj.get("records", ()):
                b64decode(record["payload"] if type(record) is dict else record)
            count += 1
        return count

    return run


def measure(
    prepare: Prepare,
    run: Callable[[rustlog.Connection], int],
    floor: Callable[[], int],
    repeat: int,
) -> tuple[float, float]:
    """Best times (ours, bare) in seconds, runs interleaved so both see the same load."""
    ours_s = bare_s = float("inf")
    for _ in range(repeat):
        conn = prepare()
        began = time.thread_time()
        run(conn)
        ours_s = min(ours_s, time.thread_time() - began)
        began = time.thread_time()
        floor()
        bare_s = min(bare_s, time.thread_time() - began)
    return ours_s, bare_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    backends: list[tuple[str, Callable[[bytes], Any]]] = [("json", json.loads)]
    if orjson is not None:
        backends.append(("orjson", orjson.loads))
    cases: dict[str, Callable[[int], tuple[bytes, list[rustlog.Request]]]] = {
        "Produce (10 x 100 B)": produce_case,
        "Produce (100 x 100 B)": lambda frames: produce_case(frames, 100),
        "Fetch": fetch_case,
        "Fetch (varied fields)": lambda frames: fetch_case(frames, vary=True),
        "FetchResponse (100 x 100 B)": fetch_response_case,
        "FetchResponse (100 x 1-200 B)": lambda frames: fetch_response_case(frames, vary=True),
        "FetchResponse 1.4 MB, chunks": lambda frames: big_fetch_response_case(frames // 100 or 1),
    }
    chunks = {"FetchResponse 1.4 MB, chunks": 65536}
    print(f"{'case':<30}{'json':<8}{'bare us':>10}{'ours us':>10}{'extra us':>10}{'ratio':>8}")
    worst = 0.0
    for name, build in cases.items():
        wire, sent = build(args.frames)
        frames = len(sent) if sent else args.frames
        for backend, loads in backends:
            prepare, run = ours(wire, sent, backend, chunks.get(name, 0))
            floor = bare(wire, loads)
            assert run(prepare()) == floor() == frames
            ours_s, bare_s = measure(prepare, run, floor, args.repeat)
            ratio = ours_s / bare_s
            worst = max(worst, ratio)
            per_ours = ours_s / frames * 1e6
            per_bare = bare_s / frames * 1e6
            extra = per_ours - per_bare
            print(
                f"{name:<30}{backend:<8}{per_bare:>10.2f}{per_ours:>10.2f}{extra:>10.2f}"
                f"{ratio:>7.2f}x"
            )
    print(f"worst ratio: {worst:.2f}x (target <= 1.5x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
