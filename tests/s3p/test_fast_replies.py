"""Client-side READ reply decoding: the fast path (runs of whole buffered pairs) and the careful
path (element by element) must agree on every stream, valid or not, in any chunking.

Agree means: the same replies; the same error (code and message) raised at the same stream
offset, leaving the connection in the same state; the same Observer output. The streams mix
record sizes and counts (the shapes real consumers get), timestamps of every width, options that
bound the reply (COUNT, MIN_TIMESTAMP, v0.2.0's MIN_ID), and are then damaged at random.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import Direction, RemoteProtocolError, Role, s3p
from s3p_codec._core import ObservedError
from s3p_codec.s3p import ErrorCode, Read, ReadReply, Timestamp
from s3p_codec.s3p._events import MAX_U64
from s3p_codec.s3p._replies import ReplyParser
from s3p_codec.s3p._wire import Malformed, WireBuffer
from s3p_codec.s3p._writers import encode_reply, encode_request

LIMITS = ErrorCode.LIMITS
SMALL = s3p.Limits(max_record_size=20, max_count=6, default_count=6)
"""Limits that random replies cross often, so that every ERR_LIMITS check is exercised."""
limits_st = st.sampled_from([s3p.Limits(), SMALL])
versions = st.sampled_from(["0.1.0", "0.2.0"])


@contextmanager
def fast_path(enabled: bool) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ReplyParser, "fast", enabled)
        yield


# --- streams ---------------------------------------------------------------------------------


@st.composite
def read_exchange(draw: st.DrawFn, version: str) -> tuple[Read, bytes]:
    """One READ and the bytes of its reply: mostly valid, record sizes and counts varied."""
    count = draw(st.integers(0, 12))
    base = draw(st.sampled_from([0, 7, 1_700_000_000_000, 10**19 - 5, MAX_U64 - 3]))
    stamps = sorted(
        {
            Timestamp(base + draw(st.integers(0, 3)), draw(st.integers(0, 1200)))
            for _ in range(count)
        }
    )
    stamps = [stamp for stamp in stamps if stamp.is_valid and stamp > Timestamp(0, 0)]
    size = draw(st.sampled_from([1, 9, 24, 700, 5000]))
    records = tuple(
        (stamp, bytes([index % 256]) * draw(st.integers(1, size)))
        for index, stamp in enumerate(stamps)
    )
    wire = encode_reply(ReadReply(records))
    fits = min(len(records), SMALL.max_count)  # a COUNT every Limits of these tests accepts
    limit = draw(st.sampled_from([None, None, None, max(1, fits), max(1, fits - 1)]))
    floor = draw(st.sampled_from([None, None, *stamps[:2]]))
    if version == "0.1.0":
        request = Read(b"s", count=limit, min_timestamp=floor)
    else:
        request = Read(b"s", count=limit, min_id=floor)
    return request, wire


@st.composite
def damaged(draw: st.DrawFn, stream: bytes) -> bytes:
    """``stream`` with a few bytes replaced, inserted or deleted."""
    data = bytearray(stream)
    for _ in range(draw(st.integers(1, 3))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        byte = draw(st.sampled_from(b"0159-$*\r\nx"))
        how = draw(st.sampled_from(["replace", "insert", "delete"]))
        if how == "replace":
            data[at] = byte
        elif how == "insert":
            data.insert(at, byte)
        else:
            del data[at]
    return bytes(data)


@st.composite
def conversations(draw: st.DrawFn) -> tuple[str, list[Read], bytes]:
    version = draw(versions)
    exchanges = draw(st.lists(read_exchange(version), min_size=1, max_size=5))
    requests = [request for request, _ in exchanges]
    stream = b"".join(wire for _, wire in exchanges)
    if draw(st.booleans()):
        stream = draw(damaged(stream))
    return version, requests, stream


@st.composite
def chunked(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """``data`` split at random points (one byte at a time included)."""
    if draw(st.integers(0, 7)) == 0:
        return [data[at : at + 1] for at in range(len(data))]
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=8)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in pairwise(bounds) if b > a]


# --- the three ways the parser is driven ------------------------------------------------------


def parser_outcome(
    version: str, requests: list[Read], chunks: list[bytes], limits: s3p.Limits, fast: bool
) -> list[object]:
    """Each reply with where it began and ended; then the error and where it struck."""
    buffer = WireBuffer()
    parser = ReplyParser(buffer, limits, s3p.Connection(Role.CLIENT, version=version).rules)
    parser.fast = fast
    waiting = list(requests)
    out: list[object] = []
    try:
        for chunk in chunks:
            buffer.feed(chunk)
            while waiting and (reply := parser.next_reply(waiting[0], waiting)) is not None:
                waiting.pop(0)
                out.append((reply, parser.start, buffer.offset))
    except Malformed as error:
        out.append((error.code, error.message, parser.start, buffer.offset))
        return out
    out.append(("unfinished", parser.in_reply, buffer.offset))
    return out


def connection_outcome(
    version: str, requests: list[Read], chunks: list[bytes], limits: s3p.Limits, fast: bool
) -> list[object]:
    """The events, then the error (code, message) and the connection's state."""
    out: list[object] = []
    with fast_path(fast):
        conn = s3p.Connection(Role.CLIENT, limits, version=version)
        for request in requests:
            conn.send(request)
        try:
            for chunk in [*chunks, b""]:  # b"": the peer closes
                conn.receive_data(chunk)
                out.extend(conn.events())
        except RemoteProtocolError as error:
            out.append((error.code, error.message, error.fatal))
    out.append((conn.state, conn.pending, conn.finished))
    return out


def observer_outcome(
    version: str, requests: list[Read], chunks: list[bytes], limits: s3p.Limits, fast: bool
) -> list[object]:
    out: list[object] = []
    up = b"".join(encode_request(request, limits, validate=False) for request in requests)
    with fast_path(fast):
        observer = s3p.Observer(limits, version=version)
        out.extend(observer.observe(Direction.CLIENT_TO_SERVER, up))
        for chunk in chunks:
            out.extend(observer.observe(Direction.SERVER_TO_CLIENT, chunk))
        out.extend(observer.close(Direction.SERVER_TO_CLIENT))
    return [
        (item.error.code, item.error.message, item.start, item.skipped, item.resynchronized)
        if isinstance(item, ObservedError)
        else item
        for item in out
    ]


Outcome = Callable[[str, list[Read], list[bytes], s3p.Limits, bool], list[object]]
OUTCOMES: list[Outcome] = [parser_outcome, connection_outcome, observer_outcome]


# --- the properties ---------------------------------------------------------------------------


@given(conversations(), limits_st, st.data())
def test_replies_decode_the_same_on_both_paths_in_any_chunking(
    case: tuple[str, list[Read], bytes], limits: s3p.Limits, data: st.DataObject
) -> None:
    version, requests, stream = case
    chunks = data.draw(chunked(stream))
    for outcome in OUTCOMES:
        assert outcome(version, requests, chunks, limits, True) == outcome(
            version, requests, chunks, limits, False
        )


@given(st.lists(read_exchange("0.1.0"), min_size=1, max_size=6), st.data())
def test_valid_replies_give_the_replies_sent_in_any_chunking(
    exchanges: list[tuple[Read, bytes]], data: st.DataObject
) -> None:
    requests = [Read(b"s")] * len(exchanges)  # no COUNT or MIN_TIMESTAMP to break
    stream = b"".join(wire for _, wire in exchanges)
    chunks = data.draw(chunked(stream))
    with fast_path(False):
        conn = s3p.Connection(Role.CLIENT)
        for request in requests:
            conn.send(request)
        conn.receive_data(stream)
        expected = list(conn.events())
    got = connection_outcome("0.1.0", requests, chunks, s3p.Limits(), True)
    assert got[:-1] == expected
    assert len(expected) == len(requests)


def test_ordinary_replies_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Otherwise the properties above would compare the careful path with itself.
    def careful(*args: object) -> bool:
        raise AssertionError("a whole, ordinary reply went element by element")

    monkeypatch.setattr(ReplyParser, "_slow_element", careful)
    replies = [
        ReadReply(
            tuple(
                (Timestamp(1_700_000_000_000 + index, seq), b"r" * (1 + (seq * 37) % 300))
                for seq in range(index % 7 + 1)
            )
        )
        for index in range(50)
    ]
    conn = s3p.Connection(Role.CLIENT)
    for _ in replies:
        conn.send(Read(b"s"))
    conn.receive_data(b"".join(map(encode_reply, replies)))
    assert list(conn.events()) == replies


def test_a_record_containing_crlf_and_headers_is_taken_whole() -> None:
    # The payload looks like the next pair: only its declared length says where it ends.
    fake = b"x\r\n$3\r\n9-9\r\n$1\r\ny"
    reply = ReadReply(((Timestamp(1, 0), fake), (Timestamp(1, 1), b"z")))
    for fast in (True, False):
        assert (
            connection_outcome("0.1.0", [Read(b"s")], [encode_reply(reply)], s3p.Limits(), fast)[0]
            == reply
        )


@pytest.mark.parametrize(
    ("wire", "code"),
    [
        (b"*4\r\n$3\r\n1-1\r\n$1\r\na\r\n$3\r\n1-1\r\n$1\r\nb\r\n", ErrorCode.BAD_FORMAT),  # order
        (b"*4\r\n$3\r\n1-1\r\n$1\r\na\r\n$4\r\n1-2\r\n$1\r\nb\r\n", ErrorCode.BAD_FORMAT),  # ts len
        (b"*4\r\n$3\r\n1-1\r\n$1\r\na\r\n$3\r\n1-2\r\n$21\r\n%b\r\n" % (b"b" * 21), LIMITS),
        (b"*4\r\n$3\r\n1-1\r\n$1\r\nab\r\n$3\r\n1-2\r\n$1\r\nb\r\n", ErrorCode.BAD_FORMAT),  # CRLF
        (b"*4\r\n$3\r\n1-1\r\n$1\r\na\r\n$3\r\n1-2\r\n$1\r\nbc\r\n", ErrorCode.BAD_FORMAT),  # last
        (b"*4\r\n$3\r\n1-1\r\n$1\r\na\r\n$3\r\n1-2\r\n$0\r\n\r\n", ErrorCode.BAD_FORMAT),  # $0
        (b"*4\r\n$3\r\n1-1\r\n$01\r\na\r\n$3\r\n1-2\r\n$1\r\nb\r\n", None),  # leading zero: valid
    ],
)
def test_the_fast_path_leaves_what_it_does_not_verify_to_the_careful_path(
    wire: bytes, code: ErrorCode | None
) -> None:
    outcomes = {
        fast: connection_outcome("0.1.0", [Read(b"s")], [wire], SMALL, fast)
        for fast in (True, False)
    }
    assert outcomes[True] == outcomes[False]
    first = outcomes[True][0]
    if code is None:
        assert isinstance(first, ReadReply)
    else:
        assert isinstance(first, tuple)
        assert first[0] is code
