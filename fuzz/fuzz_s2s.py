"""Atheris harness for the S2S codec: both session kinds at both ends, the protobuf decoders,
decompression, the HTTP/1.1 session connection and the Observer.

The first byte picks the target (``which % 5``) and its variant (``which // 5``), the second
a chunk size; the rest is fed in chunks, so the fuzzer also explores frame boundaries. Any
exception other than the codec's own typed errors is a bug and crashes the run; so is a
decompressed payload over its cap, a decoded message that encodes to something else or that
the protobuf runtime reads differently (or refuses), or an AppendInput a server read that a
client cannot send again identically.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

with atheris.instrument_imports():
    from s3p_codec import Direction, RemoteProtocolError, Role, s2s
    from s3p_codec.s2s import _proto as proto
    from s3p_codec.s2s._compression import Compression, decompress

from _harness import main, step_for

# The protobuf runtime as the oracle of the message decoders (not instrumented: not ours).
from tests.s2s.test_proto import CASES as RUNTIME_CASES

_SESSIONS = [(r, s) for r in Role for s in s2s.Session]
_DECODERS = [proto.decode_append_input, proto.decode_append_ack, proto.decode_read_batch]
_CAP = 64 * 1024
_OVERFLOW = "varint above 2**64 - 1"
_LIMITS = s2s.Limits(max_frame_length=1 << 16)


def _check(exc: RemoteProtocolError) -> None:
    if not isinstance(exc.code, s2s.ErrorCode | int):
        raise AssertionError(f"untyped error code {exc.code!r}")


def _session(data: bytes, which: int, step: int) -> None:
    role, session = _SESSIONS[which % 4]
    conn = s2s.Connection(role, session, limits=_LIMITS)
    read: list[object] = []
    try:
        for at in range(0, len(data), step):
            conn.receive_data(data[at : at + step])
            read.extend(conn.events())
            conn.check_heartbeat(float(at))
        conn.receive_data(b"")
        read.extend(conn.events())
    except RemoteProtocolError as exc:
        _check(exc)
    if role is Role.SERVER and session is s2s.Session.APPEND:
        _send_again([event for event in read if type(event) is s2s.AppendInput], which)


def _send_again(inputs: list[s2s.AppendInput], which: int) -> None:
    compression = list(Compression)[(which >> 2) % 3]
    client = s2s.Connection(Role.CLIENT, s2s.Session.APPEND, compression=compression)
    wire = b"".join(client.send(event) for event in inputs)
    server = s2s.Connection(Role.SERVER, s2s.Session.APPEND, limits=_LIMITS)
    server.receive_data(wire)
    again = list(server.events())
    if again != inputs:
        raise AssertionError(f"re-sent inputs read back differently: {inputs!r} {again!r}")


def _decode(data: bytes, which: int) -> None:
    decoder = _DECODERS[which % 3]
    _, _, _, _, from_runtime, runtime_class = RUNTIME_CASES[which % 3]
    runtime = runtime_class()
    try:
        runtime.ParseFromString(data)
    except Exception:  # the runtime's DecodeError
        runtime = None
    try:
        message = decoder(data)
    except RemoteProtocolError as exc:
        _check(exc)
        # The one known divergence (see s2s._proto): upb keeps the low 64 bits of an
        # overflowing 10-byte varint; we refuse it, as prost and protobuf-go do.
        if runtime is not None and _OVERFLOW not in exc.message:
            raise AssertionError(f"the protobuf runtime accepts what we refuse: {exc}") from exc
        return
    if runtime is None:
        raise AssertionError("the protobuf runtime refuses what we accept")
    if from_runtime(runtime) != message:
        raise AssertionError("the protobuf runtime reads other values")
    # What we decoded we can encode, and it decodes to the same event.
    encoders = {
        s2s.AppendInput: proto.encode_append_input,
        s2s.AppendAck: proto.encode_append_ack,
        s2s.ReadBatch: proto.encode_read_batch,
    }
    again = decoder(encoders[type(message)](message))  # type: ignore[index, arg-type]
    if again != message:
        raise AssertionError("re-encoding changed the message")


def _decompress(data: bytes, which: int) -> None:
    compression = Compression.ZSTD if which % 2 else Compression.GZIP
    try:
        out = decompress(data, compression, _CAP)
    except RemoteProtocolError as exc:
        _check(exc)
        return
    if len(out) > _CAP:
        raise AssertionError("decompressed past the cap")


def _http1(data: bytes, which: int, step: int) -> None:
    role = Role.CLIENT if which % 2 else Role.SERVER
    conn = s2s.Http1Connection(role, host="h")
    if role is Role.CLIENT:
        kind = s2s.Session.READ if which % 4 == 1 else s2s.Session.APPEND
        conn.send(s2s.SessionRequest(kind, "s"))
    try:
        for at in range(0, len(data), step):
            conn.receive_data(data[at : at + step])
            for _ in conn.events():
                pass
    except RemoteProtocolError as exc:
        _check(exc)


def _observe(data: bytes, step: int, variant: int) -> None:
    observer = s2s.Observer()
    if variant % 2:
        # Two streams: [2-byte length][client bytes][server bytes], interleaved piece by piece
        # (a captured HTTP/1.1 or HTTP/2 connection, each direction whole).
        split = 2 + int.from_bytes(data[:2], "big")
        sides = (data[2:split], data[split:])
        for at in range(0, max(map(len, sides)), step):
            for direction, side in zip(Direction, sides, strict=True):
                if side[at : at + step]:
                    observer.observe(direction, side[at : at + step])
        for direction in Direction:
            observer.close(direction)
        return
    for at in range(0, len(data), step):
        direction = Direction.CLIENT_TO_SERVER if (at // step) % 3 else Direction.SERVER_TO_CLIENT
        observer.observe(direction, data[at : at + step])
    for direction in Direction:
        observer.close(direction)


def TestOneInput(data: bytes) -> None:
    if len(data) < 2:
        return
    which, rest = data[0], data[2:]
    step = step_for(data[1], len(rest), 61)
    variant, target = divmod(which, 5)
    if target == 0:
        _session(rest, variant, step)
    elif target == 1:
        _decode(rest, variant)
    elif target == 2:
        _decompress(rest, variant)
    elif target == 3:
        _http1(rest, variant, step)
    else:
        _observe(rest, step, variant)


if __name__ == "__main__":
    main(TestOneInput)
