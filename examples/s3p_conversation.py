"""An S3P client codec and server codec talking to each other in memory.

    python -m examples.s3p_conversation

No sockets: the bytes one codec emits are handed straight to the other, so every step of the
conversation can be printed: the typed request, its wire bytes, what the server codec parsed,
the reply from a tiny in-memory store, its wire bytes, and what the client codec parsed.

The store (``Store``) is the part of a server that the codec cannot be: it knows which streams
exist and their timestamp strategy, so it enforces the spec's rules about stream state
("TIMESTAMP ... MUST be present if and only if the stream's TIMESTAMP_STRATEGY is client", "The
provided timestamp MUST be strictly greater than the last appended timestamp", server
timestamps "strictly increasing"). Its clock is simulated, so the output is the same every run.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence

import attrs

from s3p_codec import RemoteProtocolError, Role, s3p
from s3p_codec.s3p import (
    Append,
    AppendReply,
    Create,
    Delete,
    ErrorCode,
    ErrorReply,
    Ok,
    Read,
    ReadReply,
    Timestamp,
    TimestampStrategy,
    Trim,
)

__all__ = ["Store", "main"]


_ORIGIN = Timestamp(0, 0)


@attrs.define
class _Stream:
    strategy: TimestampStrategy
    records: list[tuple[Timestamp, bytes]] = attrs.Factory(list)
    last: Timestamp = _ORIGIN


class Store:
    """The streams behind a server: answers each typed request with a typed reply."""

    def __init__(self, limits: s3p.Limits | None = None, clock_ms: Iterator[int] | None = None):
        self.limits = limits or s3p.Limits()
        self._streams: dict[bytes, _Stream] = {}
        self._clock = clock_ms or iter(range(1_700_000_001_234, 1 << 62, 7))

    def handle(self, request: s3p.Event) -> s3p.Reply:
        """The reply to one request (a server-role connection yields requests only)."""
        if not isinstance(request, Create | Append | Read | Trim | Delete):
            raise TypeError(f"not a request: {request!r}")
        if isinstance(request, Create):
            if request.stream in self._streams:
                return _error(ErrorCode.STREAM_EXISTS, "stream already exists", request.stream)
            strategy = request.timestamp_strategy or TimestampStrategy.SERVER
            self._streams[request.stream] = _Stream(strategy)
            return Ok()
        stream = self._streams.get(request.stream)
        if stream is None:
            return _error(ErrorCode.UNKNOWN_STREAM, "no such stream", request.stream)
        if isinstance(request, Append):
            return self._append(stream, request)
        if isinstance(request, Read):
            after = request.min_timestamp or _ORIGIN
            count = request.count or self.limits.default_count
            found = [pair for pair in stream.records if pair[0] > after][:count]
            return ReadReply(tuple(found))  # in memory, BLOCK has nothing to wait for
        if isinstance(request, Trim):
            stream.records = [pair for pair in stream.records if pair[0] >= request.until]
            return Ok()
        del self._streams[request.stream]
        return Ok()

    def _append(self, stream: _Stream, request: Append) -> s3p.Reply:
        if stream.strategy is TimestampStrategy.CLIENT:
            if request.timestamp is None:
                return _error(ErrorCode.BAD_FORMAT, "missing timestamp option when required")
            first = request.timestamp
            if first <= stream.last:
                return _error(
                    ErrorCode.BAD_FORMAT,
                    f"provided timestamp {first} is not after the tail {stream.last}",
                )
        else:
            if request.timestamp is not None:
                return _error(
                    ErrorCode.BAD_FORMAT, "timestamp option present when strategy is server"
                )
            first = Timestamp(max(next(self._clock), stream.last.ms), 0)
            if first <= stream.last:
                first = Timestamp(stream.last.ms, stream.last.seq + 1)
        # One timestamp per record: the first one given, then the same ms with seq + 1.
        stamps = [Timestamp(first.ms, first.seq + index) for index in range(len(request.records))]
        stream.records.extend(zip(stamps, request.records, strict=True))
        stream.last = stamps[-1]
        return AppendReply(stream.last)


def _error(code: ErrorCode, message: str, stream: bytes | None = None) -> ErrorReply:
    if stream is not None:
        message = f"{message}: {stream.decode('ascii', 'backslashreplace')}"
    return ErrorReply(code, message)


# --- printing ---------------------------------------------------------------------------------

_WIDTH = 92
_INDENT = " " * 17


def _wire(data: bytes) -> str:
    text = repr(data)[2:-1]
    if len(text) > _WIDTH:
        text = f"{text[: _WIDTH - 16]}... ({len(data)} bytes)"
    return _INDENT + text


def _describe(event: s3p.Event) -> str:
    """One readable line per typed event (the attrs repr is exact but long)."""
    name = type(event).__name__
    if isinstance(event, ErrorReply):
        return f"{name} {event.code} {event.message!r}"
    if isinstance(event, AppendReply):
        return f"{name} {event.timestamp}"
    if isinstance(event, ReadReply):
        pairs = ", ".join(f"{stamp}={record!r}" for stamp, record in event.records)
        return f"{name} [{pairs}]"
    if isinstance(event, Ok):
        return name
    parts = [name, event.stream.decode("ascii", "backslashreplace")]
    for field in attrs.fields(type(event))[1:]:
        value = getattr(event, field.name)
        if value is None:
            continue
        if isinstance(value, TimestampStrategy):
            value = value.value
        elif isinstance(value, tuple) and not isinstance(value, Timestamp):
            value = "[" + ", ".join(repr(item) for item in value) + "]"
        parts.append(f"{field.name}={value}")
    return " ".join(parts)


def _say(who: str, verb: str, text: str) -> None:
    print(f"  {who:<7}{verb:<8}{text}")


def _show(who: str, verb: str, event: s3p.Event, wire: bytes | None = None) -> None:
    _say(who, verb, _describe(event))
    if wire is not None:
        print(_wire(wire))


def _converse(
    client: s3p.Connection,
    server: s3p.Connection,
    store: Store,
    requests: Sequence[s3p.Request],
) -> None:
    """Send ``requests`` pipelined in one write; the server answers all it read in one write."""
    up = b""
    for request in requests:
        data = client.send(request)
        _show("client", "sends", request, data)
        up += data
    server.receive_data(up)  # one write: the requests arrive together
    down = b""
    for read, event in enumerate(server.events(), 1):
        _show("server", "reads", event)
        reply = store.handle(event)
        data = server.send(reply)
        _show("server", "sends", reply, data)
        down += data
        if server.finished:
            # "After sending any Error reply, servers MUST close the connection immediately."
            unread = len(requests) - read
            _say("server", "closes", f"the connection: {unread} pipelined request(s) never read")
            break
    client.receive_data(down)
    if server.finished:
        client.receive_data(b"")  # the close reaches the client after the reply
    for event in client.events():
        _show("client", "reads", event)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    print("S3P v0.1.0: a client codec and a server codec in one process, no sockets.\n")

    store = Store()
    client = s3p.Connection(Role.CLIENT)
    server = s3p.Connection(Role.SERVER)
    steps: list[tuple[str, list[s3p.Request]]] = [
        (
            "Create two streams: client-chosen and server-chosen timestamps",
            [
                Create(b"orders", TimestampStrategy.CLIENT),
                Create(b"events"),
            ],
        ),
        (
            "Append: the client names the timestamp on 'orders', the server on 'events'",
            [
                Append(b"orders", (b"payload",), Timestamp(1700000001235, 0)),
                Append(b"events", (b"hello", b"world")),
            ],
        ),
        (
            "Pipelined: read both streams and trim one, three requests in one write",
            [
                Read(b"orders", count=10, min_timestamp=Timestamp(0, 0)),
                Read(b"events", count=10),
                Trim(b"events", until=Timestamp(1700000001234, 1)),
            ],
        ),
        (
            "An error: a timestamp that goes back in time; the server closes after the Error",
            [
                Append(b"orders", (b"late",), Timestamp(1700000000000, 0)),
                Delete(b"orders"),  # pipelined behind the error: never read, never answered
            ],
        ),
    ]
    for number, (title, requests) in enumerate(steps, 1):
        print(f"{number}. {title}")
        _converse(client, server, store, requests)
        print()
    _say("client", "is", f"{client.state.name}, finished={client.finished}")
    _say("server", "is", f"{server.state.name}, finished={server.finished}")
    print()

    print(f"{len(steps) + 1}. A client that breaks the protocol: an unknown option (spec 8.1)")
    server = s3p.Connection(Role.SERVER)
    raw = b"*3\r\n$6\r\nCREATE\r\n$6\r\norders\r\n*2\r\n$8\r\nMAX_SIZE\r\n$4\r\n1000\r\n"
    _say("client", "sends", "raw bytes")
    print(_wire(raw))
    server.receive_data(raw)
    try:
        server.next_event()
    except RemoteProtocolError as error:
        _say("server", "raises", f"RemoteProtocolError({error.code}, {error.message!r})")
        if isinstance(error.reply, ErrorReply):  # always, on a server-role connection
            _show("server", "sends", error.reply, server.send(error.reply))
    _say("server", "is", f"{server.state.name}, finished={server.finished}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
