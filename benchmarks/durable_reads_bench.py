"""What a Durable Streams read costs on deep fork chains and with parked long polls.

    python benchmarks/durable_reads_bench.py                 # the example server's store
    python benchmarks/durable_reads_bench.py --depth 1200 --entries 100000 --polls 200

Drives ``examples.durable_server.App`` in process (no sockets), so the figures are the
store's own cost: one GET at the end of a fork chain ``--depth`` deep (``--per-fork`` entries
appended to each fork), and the time from one 1-byte append to the answer of ``--polls`` long
polls parked at the tail of a stream of ``--entries`` entries. Put an older
``examples/durable_server.py`` first on ``PYTHONPATH`` to measure it the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import attrs

from examples import durable_server
from s3p_codec import durable


def _app(depth: int) -> durable_server.App:
    settings = durable_server.Settings(long_poll_timeout=60.0)
    if any(f.name == "max_fork_depth" for f in attrs.fields(durable_server.Settings)):
        settings = attrs.evolve(settings, max_fork_depth=depth)
    return durable_server.App(settings)


def fork_chain(depth: int, per_fork: int) -> str:
    """Seconds for one catch-up GET at the end of the chain (or what went wrong)."""
    app = _app(depth)
    ct = "application/octet-stream"
    app.respond(durable.Create("/c0", content_type=ct))
    for level in range(depth + 1):
        path = f"/c{level}"
        if level:
            answer = app.respond(durable.Create(path, forked_from=f"/c{level - 1}"))
            if isinstance(answer, durable.ErrorResponse):
                return f"fork {level} refused: {answer.status} {answer.message}"
        for _ in range(per_fork):
            app.respond(durable.Append(path, body=b"x" * 16, content_type=ct))
    began = time.perf_counter()
    try:
        answer = asyncio.run(app.read(durable.Read(f"/c{depth}", offset="-1")))
    except RecursionError:
        return f"RecursionError after {time.perf_counter() - began:.2f} s"
    assert isinstance(answer, durable.Chunk)
    return f"{time.perf_counter() - began:.3f} s for {len(answer.data)} bytes"


def long_polls(entries: int, polls: int) -> str:
    """Seconds from one 1-byte append to the answer of every parked long poll."""
    app = _app(8)
    ct = "application/octet-stream"
    app.respond(durable.Create("/s", content_type=ct))
    for _ in range(entries):
        app.respond(durable.Append("/s", body=b"y", content_type=ct))
    tail = app.store.streams["/s"].tail

    async def main() -> float:
        live = durable.LiveMode.LONG_POLL
        tasks = [
            asyncio.create_task(app.read(durable.Read("/s", offset=tail, live=live)))
            for _ in range(polls)
        ]
        await asyncio.sleep(0.5)  # every poll parked
        began = time.perf_counter()
        app.respond(durable.Append("/s", body=b"z", content_type=ct))
        answers = await asyncio.gather(*tasks)
        assert all(isinstance(a, durable.Chunk) and a.data == b"z" for a in answers)
        return time.perf_counter() - began

    return f"{asyncio.run(main()):.3f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=900)
    parser.add_argument("--per-fork", type=int, default=10)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--polls", type=int, default=200)
    args = parser.parse_args()
    print(f"GET at fork depth {args.depth} ({args.per_fork} entries per fork):", end=" ")
    print(fork_chain(args.depth, args.per_fork), flush=True)
    print(f"{args.polls} long polls woken by one append ({args.entries} entries):", end=" ")
    print(long_polls(args.entries, args.polls), flush=True)


if __name__ == "__main__":
    main()
