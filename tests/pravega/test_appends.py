"""Append blocks: the client's block writer, the server's reader, and every append-block rule."""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import LocalProtocolError, RemoteProtocolError, Role
from s3p_codec import pravega as p

A = uuid.UUID(int=0xA)
B = uuid.UUID(int=0xB)


def frame(code: int, payload: bytes) -> bytes:
    return struct.pack(">ii", code, len(payload)) + payload


def ev(data: bytes) -> bytes:
    return frame(0, data)


def frames(wire: bytes) -> list[tuple[int, bytes]]:
    """Top-level frames of a byte stream (code, payload)."""
    out = []
    pos = 0
    while pos < len(wire):
        code, size = struct.unpack_from(">ii", wire, pos)
        out.append((code, wire[pos + 8 : pos + 8 + size]))
        pos += 8 + size
    assert pos == len(wire)
    return out


def writer(block_size: int, *writers: uuid.UUID) -> tuple[p.Connection, bytes]:
    conn = p.Connection(Role.CLIENT, block_size=block_size)
    wire = b"".join(conn.send(p.SetupAppend(i, w, f"seg-{i}")) for i, w in enumerate(writers))
    return conn, wire


def server(wire: bytes) -> list[Any]:
    conn = p.Connection(Role.SERVER)
    conn.receive_data(wire)
    return list(conn.events())


def appends(events: list[Any], writer_id: uuid.UUID | None = None) -> list[bytes]:
    return [
        data
        for event in events
        if isinstance(event, p.Append) and writer_id in (None, event.writer_id)
        for data in event.events
    ]


def send_all(conn: p.Connection, writer_id: uuid.UUID, datas: list[bytes], first: int = 0) -> bytes:
    return b"".join(
        conn.send(p.Append(writer_id, first + i, (data,))) for i, data in enumerate(datas)
    ) + conn.send(p.FlushAppends())


# --- the writer's framing, byte for byte ------------------------------------------------------


def test_block_is_sized_block_size_plus_8_and_the_next_event_is_split_into_partial_event() -> None:
    conn, _ = writer(32, A)
    one = conn.send(p.Append(A, 0, (b"a" * 10,)))
    assert one == frame(3, A.bytes)[:4] + struct.pack(">i", 16 + 40) + A.bytes + ev(b"a" * 10)
    two = conn.send(p.Append(A, 1, (b"b" * 10,)))
    second = ev(b"b" * 10)
    assert two == (frame(-2, second[:14]) + p.encode(p.AppendBlockEnd(A, 18, second[14:], 2, 1, 0)))
    three = conn.send(p.Append(A, 2, (b"c" * 10,))) + conn.send(p.FlushAppends())
    assert three == (
        struct.pack(">ii", 3, 56)
        + A.bytes
        + ev(b"c" * 10)
        + frame(-1, bytes(14))
        + p.encode(p.AppendBlockEnd(A, 18, b"", 1, 2, 0))
    )
    assert appends(server(writer(32, A)[1] + one + two + three)) == [
        b"a" * 10,
        b"b" * 10,
        b"c" * 10,
    ]


def test_split_inside_the_events_own_8_byte_header() -> None:
    conn, wire = writer(32, A)
    wire += conn.send(p.Append(A, 0, (b"x" * 20,)))  # 28 bytes framed: 4 left
    tail = conn.send(p.Append(A, 1, (b"y" * 5,)))
    (partial, end) = frames(tail)
    assert partial == (-2, ev(b"y" * 5)[:4])  # half of the i32 type code
    assert end[0] == 4
    assert appends(server(wire + tail)) == [b"x" * 20, b"y" * 5]


def test_event_exactly_filling_the_rest_goes_whole_into_partial_event() -> None:
    conn, wire = writer(32, A)
    wire += conn.send(p.Append(A, 0, (b"x" * 10,)))  # 18 of 32: 14 left
    tail = conn.send(p.Append(A, 1, (b"y" * 6,)))  # exactly 14 framed
    assert frames(tail)[0] == (-2, ev(b"y" * 6))
    assert p.AppendBlockEnd(A, 18, b"", 2, 1, 0) == _decode_end(frames(tail)[1][1])
    assert appends(server(wire + tail)) == [b"x" * 10, b"y" * 6]


def _decode_end(payload: bytes) -> p.AppendBlockEnd:
    from s3p_codec.pravega._wire import decode_payload

    event = decode_payload(p.CommandType.APPEND_BLOCK_END, payload)
    assert isinstance(event, p.AppendBlockEnd)
    return event


BLOCK = 64


@pytest.mark.parametrize(
    "size",
    [BLOCK - 1, BLOCK - 8, BLOCK - 16, BLOCK, BLOCK + 1, BLOCK - 9, 0, 1, 10 * BLOCK],
    ids=lambda n: f"event{n - BLOCK:+d}" if n else "empty",
)
def test_events_around_the_block_size_reassemble(size: int) -> None:
    conn, wire = writer(BLOCK, A)
    datas = [bytes([i]) * size for i in range(7)]
    wire += send_all(conn, A, datas)
    got = server(wire)
    assert appends(got) == datas
    assert [e.event_number for e in got if isinstance(e, p.Append)][-1] == 6


def test_an_event_at_least_the_block_size_gets_a_block_of_its_own_size() -> None:
    conn, _ = writer(BLOCK, A)
    wire = conn.send(p.Append(A, 0, (b"z" * (BLOCK - 8),)))  # framed size == block size
    (block, end) = frames(wire)
    assert block == (3, A.bytes + ev(b"z" * (BLOCK - 8)))
    assert _decode_end(end[1]) == p.AppendBlockEnd(A, BLOCK, b"", 1, 0, 0)


def test_events_spanning_blocks_and_ten_times_the_block_size() -> None:
    conn, wire = writer(BLOCK, A)
    datas = [b"s" * 5, b"L" * (10 * BLOCK), b"m" * 40, b"n" * 40, b"o" * 40, b"t" * 3]
    wire += send_all(conn, A, datas)
    assert appends(server(wire)) == datas


def test_ten_thousand_small_events_in_default_blocks() -> None:
    conn, wire = writer(p.DEFAULT_BLOCK_SIZE, A)
    datas = [i.to_bytes(4, "big") * 3 for i in range(10_000)]
    body = b"".join(conn.send(p.Append(A, i, (d,))) for i, d in enumerate(datas))
    body += conn.send(p.FlushAppends())
    blocks = [f for f in frames(body) if f[0] == 3]
    assert len(blocks) == 1  # 200,000 bytes fit one block
    assert len(blocks[0][1]) == 16 + p.DEFAULT_BLOCK_SIZE + 8
    got = server(wire + body)
    assert appends(got) == datas
    assert [(e.event_number, len(e.events)) for e in got if isinstance(e, p.Append)] == [
        (9999, 10_000)
    ]


@pytest.mark.parametrize("block_size", [0, 3])
def test_block_size_3_or_0_sends_each_event_in_its_own_block(block_size: int) -> None:
    conn, wire = writer(block_size, A)
    datas = [b"", b"a", b"bcd", b"x" * 100]
    body = send_all(conn, A, datas)
    codes = [code for code, _ in frames(body)]
    assert codes == [3, 4] * 4  # no PARTIAL_EVENT, no PADDING
    assert appends(server(wire + body)) == datas


def test_several_events_in_one_append_are_numbered_up_to_event_number() -> None:
    conn, wire = writer(BLOCK, A)
    wire += conn.send(p.Append(A, 12, (b"a", b"b", b"c"))) + conn.send(p.FlushAppends())
    (got,) = [e for e in server(wire) if isinstance(e, p.Append)]
    assert got == p.Append(A, 12, (b"a", b"b", b"c"), 0)


# --- other commands and other writers break or wait ------------------------------------------


def test_keep_alive_in_the_middle_of_a_block_breaks_it_with_padding() -> None:
    conn, wire = writer(BLOCK, A)
    wire += conn.send(p.Append(A, 0, (b"a" * 10,)))
    ka = conn.send(p.KeepAlive())
    # The PADDING frame completes the AppendBlock frame's content, so it comes first raw.
    assert ka[:8] == struct.pack(">ii", -1, BLOCK - 18)
    assert ka[8 : 8 + BLOCK - 18] == bytes(BLOCK - 18)
    rest = frames(ka[8 + BLOCK - 18 :])
    assert [code for code, _ in rest] == [4, 100]
    assert _decode_end(rest[0][1]).size_of_whole_events == 18
    got = server(wire + ka)
    assert [type(e).__name__ for e in got] == ["SetupAppend", "Append", "KeepAlive"]


def test_writer_switch_in_the_middle_of_a_block_waits_for_the_block_end() -> None:
    conn, wire = writer(BLOCK, A, B)
    body = conn.send(p.Append(A, 0, (b"a" * 10,)))
    queued = conn.send(p.Append(B, 0, (b"b" * 10,)))
    assert queued == b""  # the open block belongs to A
    body += queued + conn.send(p.Append(A, 1, (b"A" * 60,)))  # fills A's block
    kinds = [(code, payload[:16]) for code, payload in frames(body) if code in (3, 4)]
    assert kinds == [(3, A.bytes), (4, A.bytes), (3, B.bytes), (4, B.bytes)]
    got = server(wire + body)
    assert appends(got, A) == [b"a" * 10, b"A" * 60]
    assert appends(got, B) == [b"b" * 10]


def test_a_waiting_writer_over_500_events_breaks_the_open_block() -> None:
    conn, wire = writer(p.DEFAULT_BLOCK_SIZE, A, B)
    wire += conn.send(p.Append(A, 0, (b"a",)))
    for i in range(501):
        wire += conn.send(p.Append(B, i, (b"b",)))
    first_block = next(payload for code, payload in frames(wire) if code == 3)
    assert first_block[:16] == A.bytes
    # A's block was padded out: its content is one event, then PADDING filling the rest.
    assert first_block[16:25] == ev(b"a")
    assert first_block[25:33] == struct.pack(">ii", -1, p.DEFAULT_BLOCK_SIZE - 9)
    wire += conn.send(p.FlushAppends())
    got = server(wire)
    assert appends(got, A) == [b"a"]
    assert appends(got, B) == [b"b"] * 501


def test_setup_append_in_the_middle_of_a_block_breaks_it() -> None:
    conn, wire = writer(BLOCK, A)
    wire += conn.send(p.Append(A, 0, (b"a",)))
    wire += conn.send(p.SetupAppend(9, B, "other"))
    wire += conn.send(p.Append(B, 0, (b"b",))) + conn.send(p.FlushAppends())
    got = server(wire)
    assert appends(got) == [b"a", b"b"]


# --- writer refusals ---------------------------------------------------------------------------


def test_append_without_setup_append_is_refused() -> None:
    conn = p.Connection(Role.CLIENT)
    with pytest.raises(LocalProtocolError, match="without setting up") as info:
        conn.send(p.Append(A, 0, (b"x",)))
    assert info.value.code is p.ErrorCode.INVALID_APPEND


def test_event_numbers_must_increase() -> None:
    conn, wire = writer(BLOCK, A)
    wire += conn.send(p.Append(A, 5, (b"x",)))
    for number, events in ((5, (b"y",)), (4, (b"y",)), (7, (b"a", b"b", b"c"))):
        with pytest.raises(LocalProtocolError, match="out of order"):
            conn.send(p.Append(A, number, events))
    wire += conn.send(p.Append(A, 8, (b"a", b"b", b"c"))) + conn.send(p.FlushAppends())
    assert appends(server(wire)) == [b"x", b"a", b"b", b"c"]


@pytest.mark.parametrize(
    "append",
    [
        p.Append(A, 0, ()),
        p.Append(A, 0, b"x"),  # one bytes value, not events (a list is accepted)
        p.Append(A, 0, ("text",)),  # type: ignore[arg-type]
        p.Append(A, 1 << 63, (b"x",)),
        p.Append("A", 0, (b"x",)),  # type: ignore[arg-type]
    ],
)
def test_malformed_appends_are_refused_with_nothing_emitted(append: p.Append) -> None:
    conn, _ = writer(BLOCK, A)
    with pytest.raises(LocalProtocolError):
        conn.send(append)
    assert conn.send(p.Append(A, 0, (b"ok",))) != b""


def test_an_event_over_max_event_size_is_refused() -> None:
    conn = p.Connection(Role.CLIENT, limits=p.Limits(max_event_size=100))
    conn.send(p.SetupAppend(1, A, "s"))
    with pytest.raises(LocalProtocolError, match="max_event_size"):
        conn.send(p.Append(A, 0, (bytes(101),)))


@pytest.mark.parametrize(
    "event",
    [
        p.AppendBlock(A, b""),
        p.AppendBlockEnd(A, 0, b"", 1, 0),
        p.PartialEvent(b""),
        p.Padding(0),
        p.EventCommand(b""),
    ],
)
def test_block_frames_are_written_only_by_the_block_writer(event: Any) -> None:
    with pytest.raises(LocalProtocolError, match="send Append"):
        p.Connection(Role.CLIENT).send(event)


def test_a_server_cannot_send_appends() -> None:
    with pytest.raises(LocalProtocolError):
        p.Connection(Role.SERVER).send(p.Append(A, 0, (b"x",)))
    with pytest.raises(LocalProtocolError):
        p.Connection(Role.SERVER).send(p.FlushAppends())


# --- the reader's rules ----------------------------------------------------------------------

SETUP = p.encode(p.SetupAppend(1, A, "seg"))


def block(content: bytes, writer_id: uuid.UUID = A) -> bytes:
    return p.encode(p.AppendBlock(writer_id, content))


def end(
    whole: int, data: bytes = b"", num: int = 1, last: int = 0, writer_id: uuid.UUID = A
) -> bytes:
    return p.encode(p.AppendBlockEnd(writer_id, whole, data, num, last, 1))


def refused(wire: bytes, match: str) -> RemoteProtocolError:
    conn = p.Connection(Role.SERVER)
    conn.receive_data(wire)
    with pytest.raises(RemoteProtocolError, match=match) as info:
        list(conn.events())
    assert info.value.code is p.ErrorCode.INVALID_APPEND
    assert info.value.fatal
    assert conn.state is p.ConnectionState.ERROR
    return info.value


def test_valid_block_with_partial_event_is_accepted() -> None:
    first, second = ev(b"one"), ev(b"two!")
    wire = SETUP + block(first + frame(-2, second[:5])) + end(len(first), second[5:], 2, 1)
    assert server(wire)[1] == p.Append(A, 1, (b"one", b"two!"), 1)


def test_rule_writer_did_setup_append_first() -> None:
    refused(block(ev(b"x")) + end(11), "before SetupAppend")


def test_rule_block_end_of_unknown_writer() -> None:
    refused(SETUP + end(0, ev(b"x"), writer_id=B), "before SetupAppend")


def test_rule_append_block_is_followed_directly_by_append_block_end() -> None:
    refused(SETUP + block(ev(b"x")) + p.encode(p.KeepAlive()) + end(11), "followed directly")
    refused(SETUP + block(ev(b"x")) + block(ev(b"y")) + end(11), "followed directly")


def test_rule_append_block_end_of_the_same_writer() -> None:
    setup_b = p.encode(p.SetupAppend(2, B, "seg"))
    refused(SETUP + setup_b + block(ev(b"x")) + end(11, writer_id=B), "mismatch")


@pytest.mark.parametrize("num", [0, -1])
def test_rule_num_events_greater_than_zero(num: int) -> None:
    refused(SETUP + block(ev(b"x")) + end(11, num=num), "numEvents")


def test_rule_last_event_number_never_goes_back() -> None:
    ok = block(ev(b"x")) + end(9, last=5)
    assert appends(server(SETUP + ok + block(ev(b"y")) + end(9, last=5))) == [b"x", b"y"]
    refused(SETUP + ok + block(ev(b"y")) + end(9, last=4), "went backwards")


def test_rule_conditional_appends_never_go_back_either() -> None:
    first = p.encode(p.ConditionalAppend(A, 5, 0, b"x", 2))
    back = p.encode(p.ConditionalAppend(A, 4, 1, b"y", 3))
    refused(SETUP + first + back, "went backwards")
    refused(p.encode(p.ConditionalBlockEnd(A, 1, 0, b"x", 2)), "before SetupAppend")


@pytest.mark.parametrize("whole", [-1, 10, 100])
def test_rule_size_of_whole_events_within_the_block_content(whole: int) -> None:
    refused(SETUP + block(ev(b"x")) + end(whole), "sizeOfWholeEvents")


def test_rule_rest_of_block_is_a_partial_event_or_padding() -> None:
    refused(SETUP + block(ev(b"x") + ev(b"y")) + end(9, num=2), "expecting a PARTIAL_EVENT")


def test_rule_rest_of_block_is_exactly_one_frame() -> None:
    rest = frame(-1, bytes(4)) + b"\x00\x00"
    refused(SETUP + block(ev(b"x") + rest) + end(9), "exactly one frame")
    refused(SETUP + block(ev(b"x") + b"\x00\x00\x00") + end(9), "not a frame")


def test_rule_padding_requires_empty_end_data() -> None:
    ok = SETUP + block(ev(b"x") + frame(-1, bytes(6))) + end(9)
    assert appends(server(ok)) == [b"x"]
    refused(SETUP + block(ev(b"x") + frame(-1, bytes(6))) + end(9, ev(b"y"), 2), "PADDING")


def test_rule_reassembled_data_must_be_whole_event_frames() -> None:
    second = ev(b"two")
    refused(
        SETUP + block(ev(b"x") + frame(-2, second[:5])) + end(9, second[5:-1], 2),
        "whole Event frames",
    )
    refused(
        SETUP + block(ev(b"x") + frame(-2, second[:5])) + end(9, second[5:] + b"!", 2),
        "whole Event frames",
    )
    refused(SETUP + block(frame(7, b"x")) + end(9), "EVENT frame was expected")
    refused(SETUP + block(struct.pack(">ii", 0, -5)) + end(8), "negative")


def test_num_events_must_match_the_events_carried() -> None:
    refused(SETUP + block(ev(b"x") + ev(b"y")) + end(18, num=3, last=3), "carries 2 events")


def test_a_lone_append_block_end_carries_its_events_in_its_data() -> None:
    got = server(SETUP + end(0, ev(b"x") + ev(b"y"), 2, 1))
    assert got[1] == p.Append(A, 1, (b"x", b"y"), 1)
    refused(SETUP + end(0, ev(b"x") + b"\x00\x00"), "not whole Event frames")


def test_a_lone_append_block_end_ignores_size_of_whole_events_like_the_java_decoder() -> None:
    # The official Rust client sends each batch as one AppendBlockEnd with no AppendBlock, and
    # puts the data's length in sizeOfWholeEvents (here 11: one 3-byte event). The Java
    # AppendDecoder takes all of blockEnd.getData() when no block is open and never looks at
    # sizeOfWholeEvents; we refused it ("the block holds 0 bytes").
    writer_id = uuid.UUID("b0732f58-3533-f106-9ab6-7b347a2460f9")
    setup = bytes.fromhex(
        "00000001" "0000002c" "0000000000000001" "b0732f583533f1069ab67b347a2460f9"
        "0010" + b"sc/st/0.#epoch.0".hex() + "0000"
    )  # fmt: skip
    rust_block_end = bytes.fromhex(
        "00000004" "00000037"                   # APPEND_BLOCK_END, 55 bytes
        "b0732f583533f1069ab67b347a2460f9"      # writerId
        "0000000b"                              # sizeOfWholeEvents = 11 (Java: 0)
        "0000000b" "0000000000000003" "657630"  # data: one Event frame, "ev0"
        "00000001"                              # numEvents
        "0000000000000000"                      # lastEventNumber
        "0000000000000001"                      # requestId
    )  # fmt: skip
    got = server(setup + rust_block_end)
    assert got == [
        p.SetupAppend(1, writer_id, "sc/st/0.#epoch.0"),
        p.Append(writer_id, 0, (b"ev0",), 1),
    ]
    # any value is ignored, as in Java, negative included
    assert server(SETUP + end(-5, ev(b"x")))[1] == p.Append(A, 0, (b"x",), 1)


def test_partial_event_outside_a_block_is_refused() -> None:
    conn = p.Connection(Role.SERVER)
    conn.receive_data(SETUP + frame(-2, b"abc"))
    with pytest.raises(RemoteProtocolError, match="PARTIAL_EVENT") as info:
        list(conn.events())
    assert info.value.code is p.ErrorCode.UNEXPECTED_COMMAND


def test_standalone_padding_is_swallowed() -> None:
    assert server(frame(-1, bytes(10)) + p.encode(p.KeepAlive())) == [p.KeepAlive()]


def test_closing_inside_an_append_block_is_an_error() -> None:
    conn = p.Connection(Role.SERVER)
    conn.receive_data(SETUP + block(ev(b"x")))
    conn.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match="inside an append block") as info:
        list(conn.events())
    assert info.value.code is p.ErrorCode.BAD_FRAME


def test_max_writers_bounds_the_writers_of_one_connection() -> None:
    conn = p.Connection(Role.SERVER, limits=p.Limits(max_writers=2))
    conn.receive_data(b"".join(p.encode(p.SetupAppend(i, uuid.UUID(int=i), "s")) for i in range(3)))
    with pytest.raises(RemoteProtocolError, match="writers"):
        list(conn.events())


def test_setup_append_again_resets_the_writers_event_numbers() -> None:
    wire = SETUP + block(ev(b"x")) + end(9, last=10) + SETUP + block(ev(b"y")) + end(9, last=1)
    assert appends(server(wire)) == [b"x", b"y"]


# --- properties ------------------------------------------------------------------------------

ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("append"),
            st.integers(0, 2),
            st.lists(st.integers(0, 300), min_size=1, max_size=4),
        ),
        st.tuples(  # a burst of equal-sized events: the reader's fast path for runs
            st.just("append"),
            st.integers(0, 2),
            st.tuples(st.integers(8, 40), st.sampled_from([0, 1, 9, 60])).map(
                lambda burst: [burst[1]] * burst[0]
            ),
        ),
        st.tuples(st.just("flush"), st.just(0), st.just([])),
        st.tuples(st.just("keepalive"), st.just(0), st.just([])),
    ),
    max_size=25,
)


@given(block_size=st.integers(0, 400), script=ops, data=st.data())
def test_block_writer_and_reader_round_trip(block_size: int, script: list[Any], data: Any) -> None:
    writers = [uuid.UUID(int=i + 1) for i in range(3)]
    conn, wire = writer(block_size, *writers)
    sent: dict[uuid.UUID, list[bytes]] = {w: [] for w in writers}
    numbers = dict.fromkeys(writers, -1)
    for op, who, sizes in script:
        if op == "append":
            w = writers[who]
            events = tuple(bytes([len(sent[w]) % 256]) * n for n in sizes)
            numbers[w] += len(events)
            wire += conn.send(p.Append(w, numbers[w], events))
            sent[w].extend(events)
        elif op == "flush":
            wire += conn.send(p.FlushAppends())
        else:
            wire += conn.send(p.KeepAlive())
    wire += conn.send(p.FlushAppends())
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=6)))
    receiver = p.Connection(Role.SERVER)
    got: list[Any] = []
    last = 0
    for cut in [*cuts, len(wire)]:
        if cut > last:
            receiver.receive_data(wire[last:cut])
        got.extend(receiver.events())
        last = cut
    for w in writers:
        assert appends(got, w) == sent[w]
        numbered = [e.event_number for e in got if isinstance(e, p.Append) and e.writer_id == w]
        assert numbered == sorted(numbered)
        if sent[w]:
            assert numbered[-1] == numbers[w]
