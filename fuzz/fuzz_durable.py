"""Atheris harness for the Durable Streams codec: request parser, SSE parser, responses, Observer,
and the reserved ``__ds`` control API with its webhooks.

The first byte picks what the input feeds; the second sets the chunk size, so the fuzzer also
explores chunk boundaries. Only the codec's own typed errors may escape: anything else
(IndexError, UnicodeDecodeError, ValueError, h11's own exceptions, ...) crashes the run.

Modes 0-3 are those of the first ten million executions; 4-7 came after them, for the control
API (subscriptions, wakes, webhooks) and the JSON-mode and offset helpers, which an input of
modes 0-3 reaches only by spelling a ``__ds`` path by chance.
"""

from __future__ import annotations

import contextlib
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
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

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
    _read_answers(client, data, step)


def _read_answers(client: durable.Connection, data: bytes, step: int) -> None:
    """Feed ``data`` to a client that sent a request, reading every event, until a fatal error."""
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


# A request line's start for each control route, so that mode 4 reaches the routes' bodies.
_CONTROL_STARTS = (
    b"PUT /r/__ds/subscriptions/",
    b"GET /r/__ds/",
    b"POST /r/__ds/subscriptions/s/",
    b"DELETE /r/__ds/subscriptions/s",
)

_ACK = durable.StreamAck("a", "0_0")
_CONTROL_REQUESTS: tuple[durable.SubscriptionRequest, ...] = (
    durable.PutSubscription(
        "/r/",
        "s",
        durable.SubscriptionConfig(
            durable.SubscriptionType.WEBHOOK, pattern="a/*", webhook_url="https://example.com/hook"
        ),
    ),
    durable.GetSubscription("/r/", "s"),
    durable.DeleteSubscription("/r/", "s"),
    durable.AddSubscriptionStreams("/r/", "s", ("a",)),
    durable.RemoveSubscriptionStream("/r/", "s", "a"),
    durable.GetJwks("/r/"),
    durable.ClaimSubscription("/r/", "s", "w", "t"),
    durable.AckSubscription("/r/", "s", "t", "w1", 1, (_ACK,), done=True),
    durable.SubscriptionCallback("/r/", "s", "t", "w1", 1, (_ACK,)),
    durable.ReleaseSubscription("/r/", "s", "t", "w1", 1),
)

# One fixed key, so that the harness is deterministic and a seed can carry a valid signature:
# from it the fuzzer explores verified deliveries, not only refused ones.
_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
_JWKS = durable.Jwks((durable.public_jwk(_KEY),))


def _control_responses(data: bytes, step: int, which: int) -> None:
    """A client's control request, then whatever answers it."""
    client = durable.Connection(Role.CLIENT, _LIMITS, spans=durable.EventSpans())
    client.send(_CONTROL_REQUESTS[which % len(_CONTROL_REQUESTS)])
    _read_answers(client, data, step)


def _webhook(data: bytes) -> None:
    """A ``Webhook-Signature`` line, then a body: verified, then read as each JSON message of
    the subscription flow. A body that parses is encoded again and must read back the same."""
    header, _, body = data.partition(b"\n")
    try:
        signature = durable.WebhookSignature.parse(header)
    except RemoteProtocolError:
        pass
    else:
        with contextlib.suppress(RemoteProtocolError):
            durable.verify_webhook(header, body, _JWKS, now=signature.timestamp)
    with contextlib.suppress(RemoteProtocolError):
        notification = durable.parse_notification(body, max_streams=8)
        again = durable.parse_notification(durable.encode_notification(notification), 8)
        if again != notification:
            raise AssertionError(f"notification read back differently: {notification!r}")
    with contextlib.suppress(RemoteProtocolError):
        wake = durable.parse_wake_event(body)
        if durable.parse_wake_event(durable.encode_wake_event(wake)) != wake:
            raise AssertionError(f"wake event read back differently: {wake!r}")
    durable.parse_webhook_reply(body)
    durable.webhook_url_error(body.decode("utf-8", errors="replace"))


def _helpers(data: bytes, initial: bool) -> None:
    """JSON-mode flattening (its messages, formatted again, flatten to the same) and offsets."""
    with contextlib.suppress(RemoteProtocolError):
        messages = durable.jsonmode.flatten(data, initial=initial)
        formatted = durable.jsonmode.format_messages(messages)
        if messages and durable.jsonmode.flatten(formatted) != messages:
            raise AssertionError(f"JSON messages read back differently: {messages!r}")
    text = data.decode("utf-8", errors="replace")
    if durable.offsets.offset_error(text) is None and not durable.offsets.is_sentinel(text):
        parsed = durable.offsets.parse_offset(text)
        if (
            parsed is not None
            and durable.offsets.parse_offset(durable.offsets.format_offset(*parsed)) != parsed
        ):
            raise AssertionError(f"offset read back differently: {text!r}")


def TestOneInput(data: bytes) -> None:
    if len(data) < 2:
        return
    mode, choice, body = data[0] % 8, data[1], data[2:]
    step = step_for(choice, len(body), 61)
    if mode == 0:
        _requests(body, step)
    elif mode == 1:
        _sse(body, step, base64_encoded=choice % 2 == 0)
    elif mode == 2:
        # Mostly behind a valid status line, so the fuzzer reaches the headers and bodies.
        _responses(b"HTTP/1.1 200 OK\r\n" + body if choice % 3 else body, step, choice)
    elif mode == 3:
        _observe(body, step)
    elif mode == 4:
        _requests(_CONTROL_STARTS[choice % len(_CONTROL_STARTS)] + body, step)
    elif mode == 5:
        # As mode 2, mostly behind a success with a JSON body, so the fuzzer reaches the fields.
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        _control_responses(head + body if choice % 3 else body, step, choice >> 2)
    elif mode == 6:
        _webhook(body)
    else:
        _helpers(body, initial=choice % 2 == 0)


if __name__ == "__main__":
    main(TestOneInput)
