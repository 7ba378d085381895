"""Atheris harness for the Pravega codec: both roles, the Observer and the block writer.

The first byte picks what the input feeds; the rest is split into chunks by later bytes, so the
fuzzer also explores chunk boundaries. Any exception other than the codec's own typed errors is
a bug and crashes the run. Mode 5 decodes one payload as the command the second byte names and
checks that what was decoded encodes again and decodes to the same command.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

with atheris.instrument_imports():
    from s3p_codec import Direction, LocalProtocolError, RemoteProtocolError, Role, pravega
    from s3p_codec.pravega._wire import decode_payload, encode_payload

from _harness import main, step_for

_SETUP = pravega.encode(pravega.SetupAppend(0, uuid.UUID(int=0), "segment"))


def _feed_connection(role: Role, data: bytes, chunk: int, prefix: bytes) -> None:
    conn = pravega.Connection(role, strict_strings=chunk % 2 == 0, check_acks=chunk % 4 < 2)
    if prefix:
        conn.receive_data(prefix)
    step = step_for(chunk, len(data), 37)
    try:
        for at in range(0, len(data), step):
            conn.receive_data(data[at : at + step])
            for _ in conn.events():
                pass
        conn.receive_data(b"")
        for _ in conn.events():
            pass
    except RemoteProtocolError as exc:
        if not isinstance(exc.code, pravega.ErrorCode):
            raise


def _observe(data: bytes, chunk: int) -> None:
    obs = pravega.Observer()
    step = step_for(chunk, len(data), 53)
    for at in range(0, len(data), step):
        direction = Direction.CLIENT_TO_SERVER if (at // step) % 3 else Direction.SERVER_TO_CLIENT
        obs.observe(direction, data[at : at + step])
        if at % 7 == 3:
            obs.gap(direction, data[at] if data[at:] else 1)
    for direction in Direction:
        obs.close(direction)


def _write_blocks(data: bytes, chunk: int) -> None:
    # Event sizes from the input; the server must get back exactly what was sent.
    client = pravega.Connection(Role.CLIENT, block_size=chunk * 3)
    server = pravega.Connection(Role.SERVER)
    writer = uuid.UUID(int=chunk)
    wire = client.send(pravega.SetupAppend(1, writer, "s"))
    events = [bytes(size) for size in data[:64]]
    for number, event in enumerate(events):
        wire += client.send(pravega.Append(writer, number, (event,)))
        if event and event[0] % 5 == 0:
            wire += client.send(pravega.KeepAlive())
    wire += client.send(pravega.FlushAppends())
    server.receive_data(wire)
    got = [d for e in server.events() if isinstance(e, pravega.Append) for d in e.events]
    assert got == events, (len(got), len(events))


_TYPES = list(pravega.CommandType)


def _decode_again(data: bytes, chunk: int) -> None:
    code = _TYPES[chunk % len(_TYPES)]
    try:
        command = decode_payload(code, data)
    except RemoteProtocolError as exc:
        if not isinstance(exc.code, pravega.ErrorCode):
            raise
        return
    if isinstance(command, pravega.Opaque):
        return
    again = decode_payload(code, encode_payload(command))
    if again != command:
        raise AssertionError(f"re-encoding changed {command!r} into {again!r}")


def TestOneInput(data: bytes) -> None:
    if len(data) < 2:
        return
    mode, chunk, body = data[0] % 6, data[1], data[2:]
    try:
        if mode == 0:
            _feed_connection(Role.SERVER, body, chunk, b"")
        elif mode == 1:
            _feed_connection(Role.SERVER, body, chunk, _SETUP)
        elif mode == 2:
            _feed_connection(Role.CLIENT, body, chunk, b"")
        elif mode == 3:
            _observe(body, chunk)
        elif mode == 4:
            _write_blocks(body, chunk)
        else:
            _decode_again(body, chunk)
    except LocalProtocolError:
        pass


if __name__ == "__main__":
    main(TestOneInput)
