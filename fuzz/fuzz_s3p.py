"""Atheris harness for the S3P codec: both roles and the Observer, in both versions.

Every input runs through v0.1.0 and then v0.2.0 (the Observer: detecting, then strict v0.2.0),
so each seed of the corpus covers both. The first byte picks the target (server, client,
Observer, or the fast paths against the careful parsers), the limits, which requests a
client has pending and the chunk size; the rest is the peer's byte stream. One target per
input keeps each execution short, so a campaign tries more inputs. Invariant: the codec yields
events, ``NEED_DATA`` or a ``RemoteProtocolError`` carrying an S3P ``ErrorCode`` (and, server
side, the ``ErrorReply`` to send, which must then be sendable); requests read can be sent again
and read back the same; the two request parsers agree, and so do the two reply parsers.
Anything else is a bug and crashes the run.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

with atheris.instrument_imports():
    from s3p_codec import NEED_DATA, Direction, RemoteProtocolError, Role, s3p
    from s3p_codec.s3p._readers import CommandParser
    from s3p_codec.s3p._replies import ReplyParser
    from s3p_codec.s3p._version import RULES, Version
    from s3p_codec.s3p._wire import ErrorString, Malformed, WireBuffer, WireReader

# hiredis, the oracle of RESP framing, is not instrumented: it is not ours.
import hiredis
from _harness import main

_PENDING: tuple[s3p.Request, ...] = (
    s3p.Read(b"s"),
    s3p.Append(b"s", (b"r",)),
    s3p.Delete(b"s"),
    s3p.Read(b"s", count=2, min_timestamp=s3p.Timestamp(1, 0)),
    s3p.Create(b"s"),
    s3p.Trim(b"s", s3p.Timestamp(1, 0)),
)
_PENDING_V020: tuple[s3p.Request, ...] = (
    s3p.Read(b"s"),
    s3p.Append(b"s", (b"r",), id=5),
    s3p.Delete(b"s"),
    s3p.Read(b"s", count=2, min_id=s3p.Timestamp(1, 0)),
    s3p.Create(b"s"),
    s3p.Trim(b"s", min_id=s3p.Timestamp(1, 0)),
)
_VERSIONS = ("0.1.0", "0.2.0")
_SMALL = s3p.Limits(max_stream_name=8, max_record_size=64, max_append_size=128, max_count=4,
                    default_count=2, max_records_per_append=4, max_block_ms=10)  # fmt: skip


def _limits(selector: int) -> s3p.Limits:
    return _SMALL if selector & 0x80 else s3p.Limits()


def _step(selector: int, data: bytes) -> int:
    # Small pieces explore chunk boundaries; the whole input at once takes the batched paths.
    return max(1, len(data)) if selector & 0x40 else (selector >> 2) % 17 + 1


def _connection(role: Role, selector: int, version: str) -> s3p.Connection:
    conn = s3p.Connection(role, _limits(selector), version=version)
    pending = _PENDING if version == "0.1.0" else _PENDING_V020
    if role is Role.CLIENT:
        for index in range(selector % 7 + 1 + (selector & 0x40) // 2):
            conn.send(pending[(selector + index) % len(pending)])
    return conn


def _feed(role: Role, selector: int, data: bytes, version: str) -> list[s3p.Event]:
    conn = _connection(role, selector, version)
    step = _step(selector, data)
    got: list[s3p.Event] = []
    try:
        for at in range(0, len(data), step):
            conn.receive_data(data[at : at + step])
            got.extend(conn.events())
        conn.receive_data(b"")
        assert conn.next_event() is NEED_DATA
        assert conn.state is s3p.ConnectionState.CLOSED
    except RemoteProtocolError as error:
        if not isinstance(error.code, s3p.ErrorCode):
            raise
        reply = error.reply
        if role is Role.SERVER:
            # The reply the server must send is there, and sending it closes the connection.
            if not isinstance(reply, s3p.ErrorReply):
                raise
            conn.send(reply)
            if not conn.finished:
                raise
    return got


def _round_trip(selector: int, requests: list[s3p.Event], version: str) -> None:
    """Every request a server read, a client can send (the validator agrees with the parser),
    and a fresh server reads back the same requests from those bytes."""
    limits = _limits(selector)
    client = s3p.Connection(Role.CLIENT, limits, version=version)
    wire = b"".join(client.send(request) for request in requests)
    server = s3p.Connection(Role.SERVER, limits, version=version)
    server.receive_data(wire)
    again = list(server.events())
    if again != requests:
        raise AssertionError(f"re-sent requests read back differently: {requests!r} {again!r}")


def _parse(selector: int, data: bytes, fast: bool, version: str) -> list[object]:
    buffer = WireBuffer()
    parser = CommandParser(buffer, _limits(selector), RULES[Version(version)])
    parser.fast = fast
    step = _step(selector, data)
    out: list[object] = []
    try:
        for at in range(0, len(data), step):
            buffer.feed(data[at : at + step])
            while (request := parser.next_command()) is not None:
                out.append((request, parser.start, buffer.offset))
    except Malformed as error:
        out.append((error.code, error.message, parser.start, buffer.offset))
        return out
    out.append(("unfinished", parser.in_command, buffer.offset))
    return out


def _parse_replies(selector: int, data: bytes, fast: bool, version: str) -> list[object]:
    buffer = WireBuffer()
    parser = ReplyParser(buffer, _limits(selector), RULES[Version(version)])
    parser.fast = fast
    pending = list((_PENDING if version == "0.1.0" else _PENDING_V020) * 4)
    step = _step(selector, data)
    out: list[object] = []
    try:
        for at in range(0, len(data), step):
            buffer.feed(data[at : at + step])
            while pending and (reply := parser.next_reply(pending[0], pending)) is not None:
                out.append((reply, parser.start, buffer.offset))
                del pending[0]
    except Malformed as error:
        out.append((error.code, error.message, parser.start, buffer.offset))
        return out
    out.append(("unfinished", parser.in_reply, buffer.offset))
    return out


def _both_paths(selector: int, data: bytes, version: str) -> None:
    """The fast paths (server: whole commands; client: runs of READ reply pairs) read exactly
    what the careful parsers read, or leave it; and every RESP value the generic wire reader
    reads, hiredis reads the same."""
    fast = _parse(selector, data, True, version)
    careful = _parse(selector, data, False, version)
    if fast != careful:
        raise AssertionError(f"fast path {fast!r} != careful parser {careful!r}")
    fast = _parse_replies(selector, data, True, version)
    careful = _parse_replies(selector, data, False, version)
    if fast != careful:
        raise AssertionError(f"fast reply path {fast!r} != careful reply parser {careful!r}")
    if version == "0.1.0":  # the framing is the same in both versions: once is enough
        _like_hiredis(data)


_LEADING_ZERO = re.compile(rb"[*$]0[0-9]")
"""S3P's ABNF (``1*DIGIT``) allows a length with a leading zero; hiredis, like Redis, refuses it."""


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, ErrorString):
        return ("error", bytes(value).decode())
    if isinstance(value, hiredis.ReplyError):
        return ("error", str(value))
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return bytes(value) if isinstance(value, bytes) else value  # Simple and Bulk alike


def _like_hiredis(data: bytes) -> None:
    ours: list[object] = []
    reader = WireReader()
    reader.feed(data)
    try:
        while (value := reader.next_value()) is not None:
            ours.append(_plain(value))
    except Malformed:
        pass
    if not ours or _LEADING_ZERO.search(data):
        return
    theirs: list[object] = []
    oracle = hiredis.Reader()
    oracle.feed(data)
    try:
        while len(theirs) < len(ours) and (value := oracle.gets()) is not False:
            theirs.append(_plain(value))
    except hiredis.ProtocolError as exc:
        raise AssertionError(f"hiredis refuses what we read: {exc}") from exc
    if theirs != ours:
        raise AssertionError(f"hiredis reads {theirs!r}, we read {ours!r}")


def _observe(selector: int, data: bytes, version: str) -> None:
    observer = s3p.Observer(version=None if version == "0.1.0" else version)
    step = max(1, len(data)) if selector & 0x40 else selector % 29 + 1
    for index, at in enumerate(range(0, len(data), step)):
        direction = Direction.CLIENT_TO_SERVER if index % 3 else Direction.SERVER_TO_CLIENT
        observer.observe(direction, data[at : at + step])
        if index % 11 == 10:
            observer.gap(direction, data[at] + 1)
    for direction in Direction:
        observer.close(direction)


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    selector, body = data[0], data[1:]
    target = selector % 4
    for version in _VERSIONS:
        if target == 0:
            _round_trip(selector, _feed(Role.SERVER, selector, body, version), version)
        elif target == 1:
            _feed(Role.CLIENT, selector, body, version)
        elif target == 2:
            _observe(selector, body, version)
        else:
            _both_paths(selector, body, version)


if __name__ == "__main__":
    main(TestOneInput)
