"""Server-side request decoding: the fast path (whole buffered commands) and the careful path
(element by element) must agree on every stream, valid or not, in any chunking.

Agree means: the same requests at the same stream offsets; the same error (code, message, the
reply to send) raised at the same offset, leaving the parser and the connection in the same
state; the same Observer output. The streams are built to reach the fast path's every branch
(any letter case, repeated option keys, leading zeros, a 2-element DELETE, option values it
does not take, lengths just over a limit) and then damaged at random.
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
from s3p_codec.s3p import Append, Delete, ErrorCode, Read, Timestamp, _readers
from s3p_codec.s3p._readers import CommandParser, scan_command
from s3p_codec.s3p._schema import COMMAND_NAMES, KNOWN_OPTIONS
from s3p_codec.s3p._wire import Malformed, WireBuffer
from s3p_codec.s3p._writers import encode_request
from s3p_codec.testing.s3p import requests

SMALL = s3p.Limits(
    max_stream_name=6,
    max_records_per_append=3,
    max_record_size=12,
    max_append_size=20,
    default_count=10,
    max_count=50,
    max_block_ms=100,
)
"""Limits that random streams cross often, so that every ERR_LIMITS check is exercised."""
LOPSIDED = s3p.Limits(max_stream_name=12, max_record_size=30, max_append_size=10)
"""A record may be larger than a whole APPEND may be: the aggregate check alone refuses it."""
limits_st = st.sampled_from([s3p.Limits(), SMALL, LOPSIDED])


@contextmanager
def fast_path(enabled: bool) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(CommandParser, "fast", enabled)
        yield


# --- streams ---------------------------------------------------------------------------------


def _flip_case(word: bytes, mask: int) -> bytes:
    return bytes(
        c ^ 0x20 if chr(c).isalpha() and (mask >> i) & 1 else c for i, c in enumerate(word)
    )


timestamps_text = st.tuples(st.integers(0, 10**20), st.integers(0, 99)).map(
    lambda pair: b"%d-%d" % pair
)
_VALUES: dict[bytes, st.SearchStrategy[bytes]] = {
    b"TIMESTAMP": timestamps_text,
    b"MIN_TIMESTAMP": timestamps_text,
    b"UNTIL": timestamps_text,
    b"TIMESTAMP_STRATEGY": st.sampled_from([b"server", b"client", b"Client", b"SERVERS"]),
    b"COUNT": st.integers(0, 20_000).map(b"%d".__mod__),
    b"BLOCK": st.integers(0, 40_000).map(b"%d".__mod__),
}
_ALL_KEYS = [*sorted(_VALUES), b"MAX_SIZE"]


def _values(key: bytes) -> st.SearchStrategy[bytes]:
    """Mostly values the key takes; sometimes any bytes (CRLF inside, over 64 bytes, ...)."""
    good = _VALUES.get(key, st.just(b"1000"))
    return st.one_of(good, good, good, st.binary(min_size=1, max_size=70))


@st.composite
def raw_commands(draw: st.DrawFn) -> bytes:
    """One command's bytes: mostly valid, in the forms a peer may legally write."""

    def number(value: int) -> bytes:
        # Leading zeros are legal decimal digits; the fast path leaves them to the careful one.
        return (b"0%d" if draw(st.integers(0, 15)) == 0 else b"%d") % value

    def bulk(value: bytes) -> bytes:
        return b"$" + number(len(value)) + b"\r\n" + value + b"\r\n"

    name = draw(st.sampled_from(COMMAND_NAMES))
    stream = draw(st.binary(min_size=1, max_size=9))
    known = KNOWN_OPTIONS[name]
    keys = (
        st.sampled_from(known) if known and draw(st.integers(0, 7)) else st.sampled_from(_ALL_KEYS)
    )
    pairs = draw(st.lists(keys.flatmap(lambda k: st.tuples(st.just(k), _values(k))), max_size=4))
    if name == b"TRIM" and draw(st.integers(0, 3)):
        pairs.append((b"UNTIL", draw(timestamps_text)))
    parts = [b""]  # the array header, filled in below
    parts.append(bulk(_flip_case(name, draw(st.integers(0, 63)))))
    parts.append(bulk(stream))
    short_delete = name == b"DELETE" and draw(st.integers(0, 5)) == 0
    if not short_delete:
        parts.append(b"*" + number(2 * len(pairs)) + b"\r\n")
        for key, value in pairs:
            parts.append(bulk(_flip_case(key, draw(st.integers(0, 1 << 20)))))
            parts.append(bulk(value))
    if name == b"APPEND":
        if draw(st.booleans()):
            records = draw(st.lists(st.binary(min_size=1, max_size=16), min_size=1, max_size=4))
        else:  # records of one size: the fast path matches them all at once
            size = draw(st.integers(1, 16))
            records = draw(
                st.lists(st.binary(min_size=size, max_size=size), min_size=1, max_size=5)
            )
        if draw(st.integers(0, 15)) == 0:
            records = []  # "records MUST contain at least 1 element"
        parts.append(b"*" + number(len(records)) + b"\r\n")
        parts.extend(bulk(record) for record in records)
    parts[0] = b"*" + number(len(parts) - 1) + b"\r\n"
    return b"".join(parts)


def _encoded(request: s3p.Request) -> bytes:
    return encode_request(request, s3p.Limits(), validate=False)


pipelines = st.lists(
    st.one_of(raw_commands(), requests().map(_encoded)), min_size=1, max_size=6
).map(b"".join)


@st.composite
def damaged(draw: st.DrawFn, stream: bytes) -> bytes:
    """``stream`` with a few bytes replaced, inserted or deleted, or cut short."""
    data = bytearray(stream)
    for _ in range(draw(st.integers(1, 3))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        byte = draw(st.sampled_from(b"0159$*+-\r\nAa_ \x00\xff"))
        how = draw(st.sampled_from(["replace", "insert", "delete", "cut"]))
        if how == "replace":
            data[at] = byte
        elif how == "insert":
            data.insert(at, byte)
        elif how == "delete":
            del data[at]
        else:
            del data[at:]
    return bytes(data)


@st.composite
def chunked(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """``data`` split at random points (one byte at a time included)."""
    if draw(st.integers(0, 7)) == 0:
        return [data[at : at + 1] for at in range(len(data))]
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=8)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in pairwise(bounds) if b > a]


any_stream = pipelines.flatmap(lambda s: st.one_of(st.just(s), damaged(s)))


# --- the three ways the parser is driven ------------------------------------------------------


def parser_outcome(chunks: list[bytes], limits: s3p.Limits, fast: bool) -> list[object]:
    """Each request with where it began and ended; then the error and where it struck, or
    whether a command is left unfinished."""
    buffer = WireBuffer()
    parser = CommandParser(buffer, limits)
    parser.fast = fast
    out: list[object] = []
    try:
        for chunk in chunks:
            buffer.feed(chunk)
            while (request := parser.next_command()) is not None:
                out.append((request, parser.start, buffer.offset))
    except Malformed as error:
        out.append((error.code, error.message, parser.start, buffer.offset))
        return out
    out.append(("unfinished", parser.in_command, buffer.offset))
    return out


def connection_outcome(chunks: list[bytes], limits: s3p.Limits, fast: bool) -> list[object]:
    """The events, then the error (code, message, reply) and the connection's state."""
    out: list[object] = []
    with fast_path(fast):
        conn = s3p.Connection(Role.SERVER, limits)
        try:
            for chunk in [*chunks, b""]:  # b"": the peer closes
                conn.receive_data(chunk)
                out.extend(conn.events())
        except RemoteProtocolError as error:
            out.append((error.code, error.message, error.fatal, error.reply))
    out.append((conn.state, conn.pending, conn.finished))
    return out


def observer_outcome(chunks: list[bytes], limits: s3p.Limits, fast: bool) -> list[object]:
    out: list[object] = []
    with fast_path(fast):
        observer = s3p.Observer(limits)
        for chunk in chunks:
            out.extend(observer.observe(Direction.CLIENT_TO_SERVER, chunk))
        out.extend(observer.close(Direction.CLIENT_TO_SERVER))
    return [
        (item.error.code, item.error.message, item.start, item.skipped, item.resynchronized)
        if isinstance(item, ObservedError)
        else item
        for item in out
    ]


Outcome = Callable[[list[bytes], s3p.Limits, bool], list[object]]
OUTCOMES: list[Outcome] = [parser_outcome, connection_outcome, observer_outcome]


# --- the properties ---------------------------------------------------------------------------


@given(st.lists(requests(), min_size=1, max_size=6), st.data())
def test_valid_pipelines_give_the_requests_sent_on_both_paths_in_any_chunking(
    asked: list[s3p.Request], data: st.DataObject
) -> None:
    stream = b"".join(map(_encoded, asked))
    chunks = data.draw(chunked(stream))
    for fast in (True, False):
        outcome = connection_outcome(chunks, s3p.Limits(), fast)
        assert outcome == [*asked, (s3p.ConnectionState.CLOSED, len(asked), False)]


@given(pipelines, limits_st, st.data())
def test_pipelines_in_every_legal_form_decode_the_same_on_both_paths_in_any_chunking(
    stream: bytes, limits: s3p.Limits, data: st.DataObject
) -> None:
    chunks = data.draw(chunked(stream))
    for outcome in OUTCOMES:
        assert outcome(chunks, limits, True) == outcome(chunks, limits, False)
    # ...and the chunking changes nothing: the same requests, the same error code if any.
    assert _verdict(connection_outcome(chunks, limits, True)) == _verdict(
        connection_outcome([stream], limits, True)
    )


def _verdict(outcome: list[object]) -> list[object]:
    """The requests and the error code, without the message (which may say how much of an
    over-long line was buffered when it was refused) or the final state."""
    return [item[0] if isinstance(item, tuple) else item for item in outcome[:-1]]


@given(any_stream, limits_st, st.data())
def test_damaged_pipelines_get_the_same_verdict_on_both_paths(
    stream: bytes, limits: s3p.Limits, data: st.DataObject
) -> None:
    chunks = data.draw(chunked(stream))
    for outcome in OUTCOMES:
        assert outcome(chunks, limits, True) == outcome(chunks, limits, False)


@given(st.lists(requests(), min_size=1, max_size=8))
def test_ordinary_requests_take_the_fast_path(asked: list[s3p.Request]) -> None:
    # Otherwise the properties above would compare the careful path with itself.
    stream = b"".join(map(_encoded, asked))
    at = 0
    for request in asked:
        found = scan_command(stream, at, s3p.Limits())
        assert found is not None
        event, at = found
        assert event == request
    assert at == len(stream)


@pytest.mark.parametrize(
    "data",
    [
        b"*4\r\n$06\r\nAPPEND\r\n$1\r\ns\r\n*0\r\n*1\r\n$1\r\nx\r\n",  # leading zero
        b"*2\r\n$6\r\nDELETE\r\n$1\r\ns\r\n",  # the appendix's 2-element DELETE
        b"*3\r\n$4\r\nREAD\r\n$1\r\ns\r\n*2\r\n$5\r\nCOUNT\r\n$2\r\n1\n\r\n",  # not a token
        b"*3\r\n$4\r\nREAD\r\n$1\r\ns\r\n*2\r\n$5\r\nCOUNT\r\n$5\r\n10000\r\n",  # > max_count
        b"*3\r\n$4\r\nTRIM\r\n$1\r\ns\r\n*0\r\n",  # no UNTIL
        b"*4\r\n$6\r\nAPPEND\r\n$1\r\ns\r\n*0\r\n*1\r\n$13\r\n0123456789abc\r\n",  # > record
        b"*4\r\n$6\r\nAPPEND\r\n$7\r\nstreams\r\n*0\r\n*1\r\n$1\r\nx\r\n",  # > name
        b"*4\r\n$6\r\nAPPEND\r\n$1\r\ns\r\n*0\r\n*4\r\n" + b"$1\r\nx\r\n" * 4,  # > count
        b"*3\r\n$4\r\nREAD\r\n$1\r\ns\r\n*2\r\n$4\r\nCOUNT\r\n$1\r\n5\r\n",  # key length
        b"*3\r\n$4\r\nREAD\r\n$1\r\ns\r\n*2\r\n$5\r\nCOUNT\r\n$2\r\n5\r\n",  # value length
        b"*3\r\n$4\r\nREAD\r\n$1\r\ns\r\n*2\r\n$5\r\nCOUNT\r\n$1\r\n5\r\r\n",  # CRLF
        b"*3\r\n$6\r\nDELETE\r\n$1\r\nsXY*0\r\n",  # no CRLF after the name
        b"*4\r\n$6\r\nAPPEND\r\n$1\r\ns\r\n*0\r\n*1\r\n$1\r\nxyz\r\n",  # no CRLF after it
        b"*4\r\n$6\r\nAPPEND\r\n$1\r\ns\r\n*0\r\n*2\r\n$1\r\nx\r\n$13\r\n0123456789abc\r\n",
        b"*4\r\n$6\r\nAPPEND\r\n$1\r\ns\r\n*0\r\n*2\r\n$11\r\n01234567890\r\n$11\r\n01234567890\r\n",
        b"*4\r\n$6\r\nAPPEND\r\n$1\r\ns\r\n*0\r\n*1\r\n$1\r\nx\r",  # incomplete
        b"*3\r\n$4\r\nREAD\r\n$1\r\ns\r\n*2\r\n$8\r\nMAX_SIZE\r\n$1\r\n1\r\n",  # unknown key
        b"*3\r\n$4\r\nREAD\r\n$1\r\ns\r\n*1\r\n$5\r\nCOUNT\r\n",  # odd options
    ],
)
def test_the_fast_path_leaves_anything_unusual_to_the_careful_path(data: bytes) -> None:
    assert scan_command(data, 0, SMALL) is None
    chunks = [data]
    for outcome in OUTCOMES:
        assert outcome(chunks, SMALL, True) == outcome(chunks, SMALL, False)


def test_a_single_record_over_the_aggregate_limit_is_left_to_the_careful_path() -> None:
    data = b"*4\r\n$6\r\nAPPEND\r\n$1\r\ns\r\n*0\r\n*1\r\n$11\r\n01234567890\r\n"
    assert scan_command(data, 0, LOPSIDED) is None
    assert connection_outcome([data], LOPSIDED, True)[0][0] is ErrorCode.LIMITS


def test_records_of_one_size_are_matched_all_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    request = Append(b"s", tuple(b"record-%d" % index for index in range(5)))
    data = _encoded(request)
    assert scan_command(data, 0, s3p.Limits()) == (request, len(data))  # the size is noted

    def record_by_record(*args: object) -> None:
        raise AssertionError("records of one size were read one at a time")

    monkeypatch.setattr(_readers, "_scan_records", record_by_record)
    assert scan_command(data, 0, s3p.Limits()) == (request, len(data))


def test_the_fast_path_reads_any_letter_case_and_the_last_option_value() -> None:
    data = (
        b"*3\r\n$4\r\nrEaD\r\n$1\r\ns\r\n*6\r\n$5\r\ncount\r\n$1\r\n5\r\n"
        b"$13\r\nmin_Timestamp\r\n$3\r\n1-2\r\n$5\r\nCOUNT\r\n$1\r\n7\r\n"
    )
    assert scan_command(data, 0, s3p.Limits()) == (
        Read(b"s", count=7, min_timestamp=Timestamp(1, 2)),
        len(data),
    )


def test_over_limit_lengths_are_still_refused_from_their_header_line() -> None:
    # The payload never arrives: the header alone is refused, with the code of its position.
    head = b"*4\r\n$6\r\nAPPEND\r\n$1\r\ns\r\n*0\r\n*1\r\n$99999999999\r\n"
    conn = s3p.Connection(Role.SERVER)
    conn.receive_data(head)
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.code is ErrorCode.LIMITS
    conn = s3p.Connection(Role.SERVER)
    conn.receive_data(b"*3\r\n$6\r\nDELETE\r\n$99999999999\r\n")
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.code is ErrorCode.BAD_FORMAT


def test_the_fast_path_is_tried_once_per_command_start_not_per_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A large command trickling in must not be rescanned from its start at every chunk.
    calls: list[int] = []

    def counting(data: bytes | bytearray, pos: int, limits: s3p.Limits) -> object:
        calls.append(pos)
        return scan_command(data, pos, limits)

    monkeypatch.setattr("s3p_codec.s3p._readers.scan_command", counting)
    request = Append(b"s", tuple(b"%03d" % index for index in range(1000)))
    data = _encoded(request) + _encoded(Delete(b"s"))
    conn = s3p.Connection(Role.SERVER)
    events = []
    for at in range(len(data)):
        conn.receive_data(data[at : at + 1])
        events.extend(conn.events())
    assert events == [request, Delete(b"s")]
    # Tried while a command's first line ("*4\r\n") is incomplete (once per byte of it, once
    # on the empty buffer), then never until the next command: not once per byte received.
    assert len(data) > 6000
    assert len(calls) <= 2 * 5


def test_a_long_pipeline_in_64_kib_chunks_gives_every_append_in_order() -> None:
    # Chunk boundaries cut commands anywhere: the careful path finishes those, the fast path
    # takes the next ones.
    asked = [Append(b"orders", (b"%032d" % index,)) for index in range(3000)]
    data = b"".join(map(_encoded, asked))
    conn = s3p.Connection(Role.SERVER)
    events = []
    for at in range(0, len(data), 65536):
        conn.receive_data(data[at : at + 65536])
        events.extend(conn.events())
    assert events == asked
    assert conn.pending == 3000
