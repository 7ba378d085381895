"""Atheris harness for the RustLog codec: both roles, both JSON backends, and the Observer.

The first byte picks the mode, the second the chunk size; the rest is the stream. Any exception
other than the codec's own typed errors (with a RustLog ``ErrorCode``) is a bug and crashes the
run. Mode 4 also checks that the two JSON backends agree on the input; modes 0 and 3 that every
request the server read, a client can send again and a fresh server reads back the same.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

with atheris.instrument_imports():
    from s3p_codec import NEED_DATA, Direction, RemoteProtocolError, Role, rustlog

from _harness import main, step_for

BACKENDS = ["json"] + (["orjson"] if rustlog.ORJSON is not None else [])


def _run(role: Role, data: bytes, chunk: int, backend: str) -> list[object]:
    conn = rustlog.Connection(role, json=backend, pipelining=True)
    if conn.role is Role.CLIENT:
        for request in (rustlog.Ping(), rustlog.Fetch("g", "t", 0, 0, 1), rustlog.MetricsFetch()):
            conn.send(request)
    out: list[object] = []
    step = step_for(chunk, len(data), 41)
    pieces = [data[at : at + step] for at in range(0, len(data), step)] + [b""]
    for piece in pieces:
        conn.receive_data(piece)
        while True:
            try:
                event = conn.next_event()
            except RemoteProtocolError as exc:
                if not isinstance(exc.code, rustlog.ErrorCode):
                    raise
                out.append((int(exc.code), exc.fatal))
                if exc.fatal:
                    return out
                if conn.role is Role.SERVER:
                    if not isinstance(exc.reply, rustlog.Error):
                        raise AssertionError(f"no Error reply on {exc!r}") from exc
                    conn.send(exc.reply)
                continue
            if event is NEED_DATA:
                break
            out.append(event)
    return out


def _round_trip(read: list[object], backend: str) -> None:
    requests = [event for event in read if isinstance(event, rustlog.Request)]
    client = rustlog.Connection(Role.CLIENT, json=backend, pipelining=True)
    wire = b"".join(client.send(request) for request in requests)
    server = rustlog.Connection(Role.SERVER, json=backend, pipelining=True)
    server.receive_data(wire)
    again = list(server.events())
    if again != requests:
        raise AssertionError(f"re-sent requests read back differently: {requests!r} {again!r}")


def _observe(data: bytes, chunk: int) -> None:
    observer = rustlog.Observer()
    step = step_for(chunk, len(data), 53)
    for at in range(0, len(data), step):
        direction = Direction.CLIENT_TO_SERVER if (at // step) % 3 else Direction.SERVER_TO_CLIENT
        observer.observe(direction, data[at : at + step])
        if at % 7 == 3:
            observer.gap(direction, data[at] + 1)
    for direction in Direction:
        observer.close(direction)


def TestOneInput(data: bytes) -> None:
    if len(data) < 2:
        return
    mode, chunk, body = data[0] % 5, data[1], data[2:]
    backend = BACKENDS[chunk % len(BACKENDS)]
    if mode == 0:
        _round_trip(_run(Role.SERVER, body, chunk, backend), backend)
    elif mode == 1:
        _run(Role.CLIENT, body, chunk, backend)
    elif mode == 2:
        _observe(body, chunk)
    elif mode == 3:
        # Wrap the body in a valid frame header so the fuzzer reaches the JSON and field layers.
        framed = len(body).to_bytes(4, "big") + body
        _round_trip(_run(Role.SERVER, framed, chunk, backend), backend)
        _run(Role.CLIENT, framed, chunk, backend)
    else:
        framed = len(body).to_bytes(4, "big") + body
        for role in Role:
            results = [_run(role, framed, chunk, name) for name in BACKENDS]
            assert all(r == results[0] for r in results), results


if __name__ == "__main__":
    main(TestOneInput)
