"""Append-block reassembly speed against the pure-Python floor.

    python benchmarks/pravega_bench.py [--events 10000] [--size 100] [--repeat 50] [--clock cpu]

The wire: one writer's SetupAppend, then 10,000 events of 100 bytes framed by the client block
writer in blocks of 523,264 bytes (the real client's largest block), closed with FlushAppends.

- ours: a server-role ``pravega.Connection`` fed those bytes, drained to typed ``Append`` events
  (frame headers, AppendBlock/AppendBlockEnd checks, PARTIAL_EVENT/PADDING, every Event frame
  sliced out);
- floor: a bare loop of ``struct.unpack_from(">ii", ...)`` walking the same Event frames and
  slicing nothing: the least pure Python can do to find the events.

Best of ``--repeat`` interleaved runs each; events per second and the ratio ours / floor
(target: <= 2x). Runs are timed in CPU time of this thread by default (``--clock cpu``): on a
shared machine, wall time (``--clock wall``) also counts the time other processes held the CPU,
which hits a longer run more often than a shorter one and so inflates the ratio.

A second case, sizes varying around the same mean, shows the cost when no run of equal-sized
events can be sliced at once (real writers' events vary); the last two feed the same bytes in
64 KiB chunks, as socket reads would (a block then spans several chunks instead of being parsed
in place).
"""

from __future__ import annotations

import argparse
import struct
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from s3p_codec import Role, pravega


def build(events: int, size: int, mixed: bool = False) -> tuple[bytes, bytes]:
    """(the wire a client writes, the same Event frames back to back).

    ``mixed``: sizes vary from size/2 to 3*size/2 (same mean), so no two neighbours match.
    """
    writer = uuid.UUID(int=1)
    client = pravega.Connection(Role.CLIENT)
    wire = client.send(pravega.SetupAppend(1, writer, "scope/stream/0.#epoch.0"))
    payload = bytes(range(256)) * (size // 128 + 2)
    sizes = [size // 2 + i * 37 % (size + 1) for i in range(events)] if mixed else [size] * events
    datas = [payload[:n] for n in sizes]
    for number, data in enumerate(datas):
        wire += client.send(pravega.Append(writer, number, (data,)))
    wire += client.send(pravega.FlushAppends())
    frames = b"".join(struct.pack(">ii", 0, len(d)) + d for d in datas)
    return wire, frames


def ours(wire: bytes, expected: int, chunk: int = 0) -> Callable[[], None]:
    """Feed ``wire`` at once (``chunk`` 0) or in chunks of that size, as a socket would."""
    chunks = [wire[at : at + chunk] for at in range(0, len(wire), chunk)] if chunk else [wire]

    def run() -> None:
        conn = pravega.Connection(Role.SERVER)
        count = 0
        for data in chunks:
            conn.receive_data(data)
            for event in conn.events():
                if type(event) is pravega.Append:
                    count += len(event.events)
        assert count == expected, count

    return run


def floor(frames: bytes, expected: int) -> Callable[[], None]:
    unpack = struct.Struct(">ii").unpack_from

    def run() -> None:
        pos = 0
        end = len(frames)
        count = 0
        while pos < end:
            _code, length = unpack(frames, pos)
            pos += 8 + length
            count += 1
        assert count == expected, count

    return run


def best(
    fns: list[Callable[[], None]], repeat: int, clock: Callable[[], float] = time.thread_time
) -> list[float]:
    """Best time of each, runs interleaved so that machine noise hits all alike."""
    times = [float("inf")] * len(fns)
    for _ in range(repeat):
        for index, fn in enumerate(fns):
            began = clock()
            fn()
            times[index] = min(times[index], clock() - began)
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args(argv)
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    print(
        f"{args.events} events, blocks of {pravega.DEFAULT_BLOCK_SIZE} bytes, best of {args.repeat}"
        f" ({args.clock} time)"
    )
    print(f"{'case':<22} {'decoder':<42} {'events/s':>12} {'ms':>7} {'ratio':>6}")
    cases = (
        (f"{args.size} bytes each", False, 0),
        (f"mean {args.size} bytes", True, 0),
        (f"{args.size} B, 64 KiB reads", False, 65536),
        (f"mean {args.size}, 64 KiB reads", True, 65536),
    )
    for label, mixed, chunk in cases:
        wire, frames = build(args.events, args.size, mixed)
        ours_s, floor_s = best(
            [ours(wire, args.events, chunk), floor(frames, args.events)], args.repeat, clock
        )
        for name, seconds in (
            ("pravega.Connection (server, typed Append)", ours_s),
            ("bare struct.unpack_from loop (floor)", floor_s),
        ):
            rate = args.events / seconds
            print(
                f"{label:<22} {name:<42} {rate:>12,.0f} {seconds * 1000:>7.2f} "
                f"{seconds / floor_s:>5.2f}x"
            )


if __name__ == "__main__":
    main()
