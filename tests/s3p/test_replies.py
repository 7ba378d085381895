"""READ replies: the fast paths (whole uniform reply, pair at a time) and the element-by-element
path must agree on every stream, valid or not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, RemoteProtocolError, Role, s3p
from s3p_codec.s3p import ErrorCode, Read, ReadReply, Timestamp
from s3p_codec.s3p._events import MAX_U64
from s3p_codec.s3p._wire import BIG_BULK
from s3p_codec.s3p._writers import encode_reply

from .support import client_for


def outcome(data: bytes, request: Read, chunk: int) -> object:
    """The events, or the error code, for ``data`` fed in ``chunk``-byte pieces."""
    client = client_for(request)
    events: list[object] = []
    try:
        for at in range(0, len(data), chunk):
            client.receive_data(data[at : at + chunk])
            events.extend(client.events())
    except RemoteProtocolError as error:
        return error.code
    return events


@st.composite
def read_replies(draw: st.DrawFn) -> ReadReply:
    size = draw(st.sampled_from([1, 16, 600, 5000]))
    vary = draw(st.booleans())
    count = draw(st.integers(0, 8))
    ms = draw(st.sampled_from([0, 9, 1_700_000_000_000, MAX_U64 - 10]))
    stamps = sorted(
        {Timestamp(ms + draw(st.integers(0, 3)), draw(st.integers(0, 12))) for _ in range(count)}
    )
    stamps = [s for s in stamps if s > Timestamp(0, 0)]
    records = tuple(
        (stamp, bytes([index % 256]) * (draw(st.integers(1, size)) if vary else size))
        for index, stamp in enumerate(stamps)
    )
    return ReadReply(records)


@given(read_replies(), st.sampled_from([1, 3, 64, 1 << 20]))
def test_read_replies_decode_the_same_in_any_chunking(reply: ReadReply, chunk: int) -> None:
    data = encode_reply(reply)
    assert outcome(data, Read(b"s"), chunk) == [reply]


@given(read_replies(), st.data())
def test_damaged_read_replies_get_the_same_verdict_on_every_path(
    reply: ReadReply, data: st.DataObject
) -> None:
    raw = bytearray(encode_reply(reply) * 2)
    if not raw:
        return
    for _ in range(data.draw(st.integers(1, 3))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.sampled_from(b"0159-$\r\nx"))
    request = Read(b"s")
    whole = outcome(bytes(raw), request, 1 << 20)
    assert outcome(bytes(raw), request, 1) == whole
    assert outcome(bytes(raw), request, 7) == whole


def test_a_uniform_reply_with_one_pair_out_of_order_is_refused() -> None:
    stamps = [Timestamp(1, n) for n in (1, 2, 3, 5, 4, 6)]
    data = b"*12\r\n" + b"".join(b"$3\r\n%b\r\n$2\r\nab\r\n" % bytes(s) for s in stamps)
    assert outcome(data, Read(b"s"), 1 << 20) == ErrorCode.BAD_FORMAT


def test_a_reply_that_looks_uniform_but_lies_about_a_length_is_refused() -> None:
    pair = b"$3\r\n1-%d\r\n$2\r\nab\r\n"
    data = b"*6\r\n" + pair % 1 + b"$3\r\n1-2\r\n$2\r\nabc\r\n" + pair % 3
    assert outcome(data, Read(b"s"), 1 << 20) == ErrorCode.BAD_FORMAT


def test_timestamps_at_the_u64_bound_take_the_careful_path() -> None:
    top = Timestamp(MAX_U64, MAX_U64)
    reply = ReadReply(((Timestamp(MAX_U64, 0), b"a"), (top, b"b")))
    assert outcome(encode_reply(reply), Read(b"s"), 1 << 20) == [reply]
    over = b"*2\r\n$22\r\n18446744073709551616-0\r\n$1\r\na\r\n"
    assert outcome(over, Read(b"s"), 1 << 20) == ErrorCode.BAD_FORMAT


def test_a_record_over_the_limit_is_err_limits_from_its_header() -> None:
    client = s3p.Connection(Role.CLIENT, s3p.Limits(max_record_size=4))
    client.send(Read(b"s"))
    client.receive_data(b"*2\r\n$3\r\n1-0\r\n$5\r\n")
    with pytest.raises(RemoteProtocolError) as caught:
        client.next_event()
    assert caught.value.code is ErrorCode.LIMITS


def test_one_byte_feeds_of_a_large_record_cost_constant_time_each() -> None:
    client = client_for(Read(b"s"))
    client.receive_data(b"*2\r\n$3\r\n1-0\r\n$100000\r\n")
    assert client.next_event() is NEED_DATA
    for _ in range(99_999):
        client.receive_data(b"x")
        assert client.next_event() is NEED_DATA
    client.receive_data(b"x\r\n")
    assert client.next_event() == ReadReply(((Timestamp(1, 0), b"x" * 100_000),))


@pytest.mark.parametrize("chunk", [1, 1000, 65536, 70000, 1 << 20])
def test_large_records_spanning_chunks_are_assembled_exactly(chunk: int) -> None:
    # Payloads of BIG_BULK bytes and more that arrive in pieces are collected aside and
    # joined once; the bytes after them, and the offsets, must come out unchanged.
    records = tuple(
        (Timestamp(7, index), bytes([index]) * size + b"\r\n$1\r\n")
        for index, size in enumerate((BIG_BULK - 1, BIG_BULK, 3 * BIG_BULK + 5, 10))
    )
    replies = [ReadReply(records), ReadReply(((Timestamp(8, 0), b"tail"),))]
    data = b"".join(encode_reply(reply) for reply in replies)
    client = client_for(Read(b"s"), Read(b"s"))
    got: list[object] = []
    for at in range(0, len(data), chunk):
        client.receive_data(data[at : at + chunk])
        got.extend(client.events())
    assert got == replies


def test_a_large_record_not_followed_by_crlf_is_refused() -> None:
    client = client_for(Read(b"s"))
    head = b"*2\r\n$3\r\n1-0\r\n$%d\r\n" % BIG_BULK
    client.receive_data(head + b"x" * 100)
    assert client.next_event() is NEED_DATA
    client.receive_data(b"x" * (BIG_BULK - 100))
    assert client.next_event() is NEED_DATA
    client.receive_data(b"!!")
    with pytest.raises(RemoteProtocolError) as caught:
        client.next_event()
    assert caught.value.code is ErrorCode.BAD_FORMAT


def test_large_records_keep_observer_offsets_exact() -> None:
    from s3p_codec import Direction
    from s3p_codec._core import Observed

    client = s3p.Connection(Role.CLIENT)
    requests = [s3p.Append(b"s", (b"a" * (2 * BIG_BULK),)), s3p.Delete(b"s")]
    wire = [client.send(request) for request in requests]
    stream = b"".join(wire)
    observer = s3p.Observer()
    seen: list[object] = []
    for at in range(0, len(stream), 50_000):
        seen.extend(observer.observe(Direction.CLIENT_TO_SERVER, stream[at : at + 50_000]))
    assert all(isinstance(item, Observed) for item in seen)
    assert [item.event for item in seen] == requests  # type: ignore[attr-defined]
    assert [(item.start, item.end) for item in seen] == [  # type: ignore[attr-defined]
        (0, len(wire[0])),
        (len(wire[0]), len(stream)),
    ]


def outcome_many(data: bytes, requests: list[Read], chunk: int) -> object:
    """The events, and the error code if one came, for ``data`` in ``chunk``-byte pieces."""
    client = client_for(*requests)
    events: list[object] = []
    try:
        for at in range(0, len(data), chunk):
            client.receive_data(data[at : at + chunk])
            events.extend(client.events())
    except RemoteProtocolError as error:
        events.append(error.code)
    return events


@st.composite
def pipelined_reads(draw: st.DrawFn) -> tuple[list[Read], bytes]:
    """Many READ requests and their replies, mostly of one shape (the batched fast path)."""
    size = draw(st.sampled_from([1, 16]))
    pairs = draw(st.integers(1, 4))
    requests: list[Read] = []
    wire = b""
    for index in range(draw(st.integers(2, 45))):
        odd = draw(st.integers(0, 15)) == 0  # now and then a reply of another shape
        count = pairs + 1 if odd else pairs
        stamps = [Timestamp(1000 + index, seq) for seq in range(count)]
        if draw(st.integers(0, 20)) == 0:
            stamps.reverse()  # out of order
        reply = ReadReply(tuple((stamp, b"r" * size) for stamp in stamps))
        wire += encode_reply(reply) if not odd or count else b"*0\r\n"
        limit = draw(st.sampled_from([None] * 6 + [count, max(1, count - 1)]))
        after = draw(st.sampled_from([None] * 6 + [Timestamp(1000 + index, 0)]))
        requests.append(Read(b"s", count=limit, min_timestamp=after))
    if draw(st.integers(0, 2)) == 0:
        raw = bytearray(wire)
        raw[draw(st.integers(0, len(raw) - 1))] = draw(st.sampled_from(b"0123456789$*-\r\nx"))
        wire = bytes(raw)
    return requests, wire


@given(pipelined_reads())
def test_pipelined_read_replies_decode_alike_whatever_the_chunking(
    case: tuple[list[Read], bytes],
) -> None:
    requests, wire = case
    whole = outcome_many(wire, requests, 1 << 20)
    assert outcome_many(wire, requests, 1) == whole
    assert outcome_many(wire, requests, 61) == whole


@pytest.mark.parametrize(
    "third",
    [
        Read(b"s", count=1),  # the third reply holds more records than asked for
        Read(b"s", min_timestamp=Timestamp(3, 0)),  # ...or one not after MIN_TIMESTAMP
    ],
)
def test_a_batch_of_pipelined_replies_stops_at_the_first_that_breaks_its_request(
    third: Read,
) -> None:
    replies = [
        ReadReply(((Timestamp(index, 0), b"x" * 16), (Timestamp(index, 1), b"y" * 16)))
        for index in range(1, 6)
    ]
    requests = [Read(b"s"), Read(b"s"), third, Read(b"s"), Read(b"s")]
    got = outcome_many(b"".join(map(encode_reply, replies)), requests, 1 << 20)
    assert got == [replies[0], replies[1], ErrorCode.BAD_FORMAT]


def test_a_batch_stops_at_a_reply_out_of_order() -> None:
    good = [
        ReadReply(((Timestamp(index, 0), b"x" * 16), (Timestamp(index, 1), b"y" * 16)))
        for index in range(1, 6)
    ]
    wire = b"".join(map(encode_reply, good[:2]))
    # A third reply of exactly the same shape, its two timestamps in decreasing order.
    wire += b"*4\r\n$3\r\n9-1\r\n$16\r\n" + b"x" * 16 + b"\r\n$3\r\n9-0\r\n$16\r\n" + b"y" * 16
    wire += b"\r\n" + b"".join(map(encode_reply, good[3:]))
    got = outcome_many(wire, [Read(b"s")] * 5, 1 << 20)
    assert got == [good[0], good[1], ErrorCode.BAD_FORMAT]
