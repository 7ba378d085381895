"""An S3P client codec and server codec talking to each other in memory.

    python -m examples.s3p_conversation
    python -m examples.s3p_conversation --s3p-version 0.2.0    # IDs, recoverable errors

No sockets: the bytes one codec emits are handed straight to the other, so every step of the
conversation can be printed: the typed request, its wire bytes, what the server codec parsed,
the reply from a tiny in-memory store, its wire bytes, and what the client codec parsed.

The store (``Store``) is the part of a server that the codec cannot be: it knows which streams
exist and their timestamp strategy, so it enforces the spec's rules about stream state
("TIMESTAMP ... MUST be present if and only if the stream's TIMESTAMP_STRATEGY is client", "The
provided timestamp MUST be strictly greater than the last appended timestamp", server
timestamps "strictly increasing"). Its clock is simulated, so the output is the same every run.
In v0.2.0 mode (``Store(version="0.2.0")``) it keeps v0.2.0's rules instead: an ``ID`` below the
last ID's ms is ``ERR_NON_MONOTONIC_ID``, an equal one continues the seq, READ's ``MIN_ID`` is
inclusive, and the recoverable errors leave both codecs open.
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

    def __init__(
        self,
        limits: s3p.Limits | None = None,
        clock_ms: Iterator[int] | None = None,
        version: str = "0.1.0",
    ):
        self.limits = limits or s3p.Limits()
        self.v020 = s3p.Version(version) is s3p.Version.V0_2_0
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
            count = request.count or self.limits.default_count
            if self.v020:  # MIN_ID is inclusive, 0-0 by default
                start = request.min_id or _ORIGIN
                found = [pair for pair in stream.records if pair[0] >= start][:count]
            else:
                after = request.min_timestamp or _ORIGIN
                found = [pair for pair in stream.records if pair[0] > after][:count]
            return ReadReply(tuple(found))  # in memory, BLOCK has nothing to wait for
        if isinstance(request, Trim):
            bound = request.min_id if request.until is None else request.until
            assert bound is not None  # the codec requires UNTIL (v0.1.0) or MIN_ID (v0.2.0)
            stream.records = [pair for pair in stream.records if pair[0] >= bound]
            return Ok()
        del self._streams[request.stream]
        return Ok()

    def _append(self, stream: _Stream, request: Append) -> s3p.Reply:
        if self.v020:
            return self._append_v020(stream, request)
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

    def _append_v020(self, stream: _Stream, request: Append) -> s3p.Reply:
        """v0.2.0: IDs from the ``ID`` option or the clock; the seq continues on the same ms."""
        last = stream.last if stream.records else None
        ms = next(self._clock) if request.id is None else request.id
        if last is not None and ms < last.ms:
            if request.id is not None:
                return _error(ErrorCode.NON_MONOTONIC_ID, f"ID {ms} is below the last ID {last}")
            ms = last.ms  # the clock went back: keep the last ms
        seq = last.seq + 1 if last is not None and ms == last.ms else 0
        stamps = [Timestamp(ms, seq + index) for index in range(len(request.records))]
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


def _main_v020() -> int:
    """The same conversation in v0.2.0: IDs, and errors that leave the connection open."""
    print("S3P v0.2.0: a client codec and a server codec in one process, no sockets.\n")
    store = Store(version="0.2.0")
    client = s3p.Connection(Role.CLIENT, version="0.2.0")
    server = s3p.Connection(Role.SERVER, version="0.2.0")
    steps: list[tuple[str, list[s3p.Request]]] = [
        (
            "Create a stream, then create it again: ERR_STREAM_EXISTS is recoverable",
            [Create(b"orders"), Create(b"orders"), Append(b"orders", (b"hello",))],
        ),
        (
            "Append with an ID (the <ms> only); a lower one is ERR_NON_MONOTONIC_ID",
            [
                Append(b"orders", (b"a", b"b"), id=1700000009000),
                Append(b"orders", (b"late",), id=1700000000000),
                Append(b"orders", (b"c",), id=1700000009000),
            ],
        ),
        (
            "Read from MIN_ID (inclusive), trim before an ID, delete",
            [
                Read(b"orders", count=10, min_id=Timestamp(1700000009000, 1)),
                Trim(b"orders", min_id=Timestamp(1700000009000, 2)),
                Read(b"orders"),
                Delete(b"orders"),
                Read(b"orders"),  # ERR_UNKNOWN_STREAM, recoverable too
            ],
        ),
    ]
    for number, (title, requests) in enumerate(steps, 1):
        print(f"{number}. {title}")
        _converse(client, server, store, requests)
        print()
    _say("client", "is", f"{client.state.name}, finished={client.finished}")
    _say("server", "is", f"{server.state.name}, finished={server.finished}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--s3p-version", choices=[v.value for v in s3p.Version], default="0.1.0")
    args = parser.parse_args(argv)
    if args.s3p_version == "0.2.0":
        return _main_v020()
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
