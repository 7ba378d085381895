"""Atheris harness for the Durable Streams codec: request parser, SSE parser, responses, Observer.

The first byte picks what the input feeds; the second sets the chunk size, so the fuzzer also
explores chunk boundaries. Only the codec's own typed errors may escape: anything else
(IndexError, UnicodeDecodeError, ValueError, h11's own exceptions, ...) crashes the run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

with atheris.instrument_imports():
    from s3p_codec import (
        NEED_DATA,
        Direction,
        LocalProtocolError,
        RemoteProtocolError,
        Role,
        durable,
    )

from _harness import main, step_for

_LIMITS = durable.Limits(
    max_body_size=4096, max_header_size=4096, max_sse_line=512, max_sse_event=2048
)
_ANSWER = durable.ErrorResponse(durable.ErrorCode.NOT_FOUND)


def _chunks(data: bytes, step: int) -> list[bytes]:
    return [data[at : at + step] for at in range(0, len(data), step)]


def _round_trip(request: durable.Request) -> None:
    """A request the server read, a client sends again; a fresh server reads the same."""
    client = durable.Connection(Role.CLIENT, _LIMITS)
    server = durable.Connection(Role.SERVER, _LIMITS)
    server.receive_data(client.send(request))
    again = server.next_event()
    if again != request:
        raise AssertionError(f"re-sent request read back differently: {request!r} {again!r}")


def _requests(data: bytes, step: int) -> None:
    server = durable.Connection(Role.SERVER, _LIMITS)
    for piece in [*_chunks(data, step), b""]:
        server.receive_data(piece)
        while True:
            try:
                event = server.next_event()
            except RemoteProtocolError as exc:
                if exc.reply is None:
                    raise
                server.send(exc.reply)  # type: ignore[arg-type]
                if exc.fatal:
                    return
                continue
            if event is NEED_DATA:
                break
            _round_trip(event)  # type: ignore[arg-type]
            server.send(_ANSWER)


def _sse(data: bytes, step: int, base64_encoded: bool) -> None:
    parser = durable.sse.SSEParser(max_line=512, max_event=2048)
    try:
        for piece in _chunks(data, step):
            for event in parser.feed(piece):
                if event.event == "control":
                    durable.sse.decode_control(event)
                elif event.event == "data":
                    durable.sse.decode_data(event, base64_encoded=base64_encoded)
    except RemoteProtocolError as exc:
        if exc.code != "sse":
            raise


def _responses(data: bytes, step: int, which: int) -> None:
    requests: list[durable.Request] = [
        durable.Read("/s", "-1", durable.LiveMode.SSE),
        durable.Read("/s", "-1", durable.LiveMode.LONG_POLL),
        durable.Head("/s"),
        durable.Append("/s", b"x", "a/b"),
        durable.Create("/s"),
    ]
    client = durable.Connection(Role.CLIENT, _LIMITS)
    client.send(requests[which % len(requests)])
    try:
        for piece in [*_chunks(data, step), b""]:
            client.receive_data(piece)
            while True:
                try:
                    if client.next_event() is NEED_DATA:
                        break
                except RemoteProtocolError as exc:
                    if exc.fatal:
                        return
    except LocalProtocolError:
        return


def _observe(data: bytes, step: int) -> None:
    observer = durable.Observer(_LIMITS)
    for index, piece in enumerate(_chunks(data, step)):
        direction = Direction.CLIENT_TO_SERVER if index % 3 else Direction.SERVER_TO_CLIENT
        observer.observe(direction, piece)
    for direction in Direction:
        observer.close(direction)


def TestOneInput(data: bytes) -> None:
    if len(data) < 2:
        return
    mode, choice, body = data[0] % 4, data[1], data[2:]
    step = step_for(choice, len(body), 61)
    if mode == 0:
        _requests(body, step)
    elif mode == 1:
        _sse(body, step, base64_encoded=choice % 2 == 0)
    elif mode == 2:
        # Mostly behind a valid status line, so the fuzzer reaches the headers and bodies.
        _responses(b"HTTP/1.1 200 OK\r\n" + body if choice % 3 else body, step, choice)
    else:
        _observe(body, step)


if __name__ == "__main__":
    main(TestOneInput)
