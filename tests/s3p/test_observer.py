"""The passive Observer: both directions typed and paired, byte offsets, errors and gaps
followed by resynchronisation at a plausible line start."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from s3p_codec import Direction, Role, s3p
from s3p_codec._core import Observed, ObservedError, ObservedGap
from s3p_codec._core.connection import Observer as ObserverProtocol
from s3p_codec.s3p import Append, AppendReply, Delete, ErrorCode, Ok, Read, ReadReply, Timestamp
from s3p_codec.testing.s3p import conversations
from tests.observer_support import Damage, comparable, damaged_decoding, damages, fed_in_pieces

UP = Direction.CLIENT_TO_SERVER
DOWN = Direction.SERVER_TO_CLIENT


def wire(conversation: list[tuple[s3p.Request, s3p.Reply]]) -> tuple[list[bytes], list[bytes]]:
    client = s3p.Connection(Role.CLIENT)
    server = s3p.Connection(Role.SERVER)
    up = [client.send(request) for request, _ in conversation]
    server.receive_data(b"".join(up))
    list(server.events())
    return up, [server.send(reply) for _, reply in conversation]


def test_the_observer_satisfies_the_core_protocol() -> None:
    assert isinstance(s3p.Observer(), ObserverProtocol)


def test_a_conversation_is_typed_paired_and_located() -> None:
    conversation = [
        (Append(b"s", (b"a",)), AppendReply(Timestamp(1, 0))),
        (Read(b"s"), ReadReply(((Timestamp(1, 0), b"a"),))),
        (Delete(b"s"), Ok()),
    ]
    up, down = wire(conversation)
    observer = s3p.Observer()
    seen = list(observer.observe(UP, b"".join(up)))
    seen += observer.observe(DOWN, b"".join(down))
    assert [type(item) for item in seen] == [Observed] * 6
    requests, replies = seen[:3], seen[3:]
    assert [o.event for o in requests] == [request for request, _ in conversation]
    assert [o.event for o in replies] == [reply for _, reply in conversation]
    assert [o.pair_id for o in requests] == [o.pair_id for o in replies] == [0, 1, 2]
    assert all(o.direction is UP for o in requests)
    assert all(o.direction is DOWN for o in replies)
    # Offsets are absolute byte positions in each direction's stream.
    for items, chunks in ((requests, up), (replies, down)):
        stream = b"".join(chunks)
        assert [stream[o.start : o.end] for o in items] == chunks


@given(conversations(), st.lists(st.integers(1, 9), min_size=1, max_size=20))
def test_the_observer_gives_the_same_output_in_any_chunking(
    conversation: list, sizes: list[int]
) -> None:
    up, down = wire(conversation)
    whole = s3p.Observer()
    expected = list(whole.observe(UP, b"".join(up))) + list(whole.observe(DOWN, b"".join(down)))
    observer = s3p.Observer()
    got: list[object] = []
    for direction, stream in ((UP, b"".join(up)), (DOWN, b"".join(down))):
        got += fed_in_pieces(observer, direction, stream, sizes)
    got += observer.close(UP)
    got += observer.close(DOWN)
    assert got == expected


def test_garbage_yields_an_error_then_decoding_resumes_at_the_next_command() -> None:
    up, _ = wire([(Delete(b"a"), Ok()), (Delete(b"b"), Ok())])
    junk = b"*3\r\n$6\r\nDELETE\r\n$1\r\nx\r\n+oops\r\nmore junk\r\n"
    stream = up[0] + junk + up[1]
    observer = s3p.Observer()
    seen = list(observer.observe(UP, stream))
    assert [type(item) for item in seen] == [Observed, ObservedError, Observed]
    error = seen[1]
    assert isinstance(error, ObservedError)
    assert error.error.code is ErrorCode.BAD_FORMAT
    assert error.start == len(up[0])
    assert error.resynchronized
    assert error.start + error.skipped == len(up[0]) + len(junk)
    assert seen[2].event == Delete(b"b")
    assert seen[2].start == len(up[0]) + len(junk)


def test_a_command_start_inside_a_line_is_not_taken_for_one() -> None:
    up, _ = wire([(Delete(b"a"), Ok())])
    junk = b"+x*3\r\n$6\r\nDELETE\r\n$1\r\nz\r\n*0\r\n"  # the '*' is not at a line start
    observer = s3p.Observer()
    seen = list(observer.observe(UP, junk + up[0]))
    assert [type(item) for item in seen] == [ObservedError, Observed]
    assert seen[1].event == Delete(b"a")


def test_a_gap_is_reported_and_decoding_resumes_at_a_plausible_line_start() -> None:
    up, _ = wire([(Delete(b"a"), Ok()), (Delete(b"b"), Ok()), (Delete(b"c"), Ok())])
    observer = s3p.Observer()
    seen = list(observer.observe(UP, up[0][:10]))
    assert seen == []
    lost = len(up[0]) - 10 + 5
    seen = list(observer.gap(UP, lost))
    assert seen == [ObservedGap(UP, 10, lost, resynchronized=True)]
    seen = list(observer.observe(UP, up[1][5:] + up[2]))
    assert [(o.event, o.start) for o in seen if isinstance(o, Observed)] == [
        (Delete(b"c"), len(up[0]) + len(up[1]))
    ]


def test_after_a_lost_request_replies_are_paired_by_shape() -> None:
    conversation = [
        (Read(b"s"), ReadReply(())),
        (Append(b"s", (b"a",)), AppendReply(Timestamp(1, 0))),
        (Delete(b"s"), Ok()),
    ]
    up, down = wire(conversation)
    observer = s3p.Observer()
    observer.observe(UP, up[0])
    observer.gap(UP, len(up[1]))  # the APPEND is lost
    observer.observe(UP, up[2])
    seen = [o for o in observer.observe(DOWN, b"".join(down)) if isinstance(o, Observed)]
    assert [o.event for o in seen] == [reply for _, reply in conversation]
    assert [o.pair_id for o in seen] == [0, None, 1]


def test_a_stream_ending_mid_frame_is_an_error_that_does_not_resynchronise() -> None:
    observer = s3p.Observer()
    observer.observe(UP, b"*3\r\n$6\r\nDELETE\r\n$1")
    (error,) = observer.close(UP)
    assert isinstance(error, ObservedError)
    assert not error.resynchronized
    assert error.start == 0
    assert observer.observe(UP, b"+more") == []


def test_an_error_reply_is_observed_and_pending_requests_are_dropped() -> None:
    observer = s3p.Observer()
    client = s3p.Connection(Role.CLIENT)
    observer.observe(UP, client.send(Delete(b"a")) + client.send(Delete(b"b")))
    (reply,) = observer.observe(DOWN, b"-ERR_UNKNOWN_STREAM no a\r\n")
    assert isinstance(reply, Observed)
    assert reply.event == s3p.ErrorReply(ErrorCode.UNKNOWN_STREAM, "no a")
    assert reply.pair_id == 0


@given(st.binary(max_size=300), st.binary(max_size=300), st.integers(0, 50))
def test_random_bytes_never_raise_out_of_the_observer(up: bytes, down: bytes, gap: int) -> None:
    observer = s3p.Observer()
    out = list(observer.observe(UP, up))
    out += observer.observe(DOWN, down)
    out += observer.gap(DOWN, gap)
    out += observer.observe(DOWN, down)
    out += observer.close(UP)
    out += observer.close(DOWN)
    for item in out:
        assert isinstance(item, Observed | ObservedError | ObservedGap)


def test_a_command_right_after_a_chunk_boundary_is_found_when_resynchronising() -> None:
    up, _ = wire([(Delete(b"a"), Ok())])
    observer = s3p.Observer()
    seen = list(observer.observe(UP, b"*3\r\n+broken\r\n"))
    seen += observer.observe(UP, b"junk\r\n")
    seen += observer.observe(UP, up[0])  # begins right after the LF that ended the last chunk
    assert [type(item) for item in seen] == [ObservedError, Observed]
    assert seen[1].event == Delete(b"a")
    assert seen[1].start == len(b"*3\r\n+broken\r\njunk\r\n")
    # Not after a non-LF byte: "x" then a command start is not a line start.
    observer = s3p.Observer()
    seen = list(observer.observe(UP, b"*3\r\n+broken\r\nx"))
    seen += observer.observe(UP, up[0] + up[0])
    assert [type(item) for item in seen] == [ObservedError, Observed]
    assert seen[1].start == len(b"*3\r\n+broken\r\nx") + len(up[0])


@given(
    conversations(),
    st.integers(0, 400),
    st.integers(0, 40),
    st.lists(st.integers(1, 9), min_size=1, max_size=20),
)
def test_after_a_gap_the_output_does_not_depend_on_the_chunking(
    conversation: list, cut: int, gap: int, sizes: list[int]
) -> None:
    # A capture that starts mid-stream (a zero gap) or loses bytes: the first byte after the
    # gap may start a frame, whether it arrives alone or with the bytes after it.
    up, down = wire(conversation)
    streams = ((UP, b"".join(up)[cut:]), (DOWN, b"".join(down)[cut:]))
    whole = s3p.Observer()
    expected: list[object] = []
    for direction, stream in streams:
        expected += whole.gap(direction, gap)
        expected += whole.observe(direction, stream)
        expected += whole.close(direction)
    observer = s3p.Observer()
    got: list[object] = []
    for direction, stream in streams:
        got += observer.gap(direction, gap)
        got += fed_in_pieces(observer, direction, stream, sizes)
        got += observer.close(direction)
    assert comparable(got) == comparable(expected)


_GARBAGE = st.binary(max_size=12) | st.sampled_from([b"\r\n", b"\n*2\r\n", b"$3\r\nab", b"\r"])


@given(conversations(), damages(garbage=_GARBAGE))
@example(  # a bare CR before a later CRLF: the line was consumed only when fed whole
    conversation=[(Read(b"\x00"), ReadReply(records=())), (Read(b"s", None, 100), ReadReply(()))],
    damage=Damage(cut=0, gap=None, garbage=b"\x00", at=24, sizes=(1,)),
)
def test_requests_with_garbage_decode_the_same_in_any_chunking(
    conversation: list, damage: Damage
) -> None:
    whole, split = damaged_decoding(s3p.Observer, b"".join(wire(conversation)[0]), damage)
    assert split == whole


@given(conversations(), damages(garbage=_GARBAGE | st.sampled_from([b"+OK", b"*1\r\n$3\r\n"])))
@example(  # a bad CRLF after a Bulk String: its header (and LF) were dropped when fed in pieces
    conversation=[
        (Append(b"s", (b"x",)), AppendReply(Timestamp(1000000, 1_000_000_000))),
        (Append(b"s", (b"x",)), AppendReply(Timestamp(10, 100))),
    ],
    damage=Damage(cut=0, gap=None, garbage=b"*0\r\n", at=29, sizes=(1,)),
)
@example(  # a candidate refused (not at a line start) hid the one inside it from the search
    conversation=[(Read(b"\x00"), ReadReply(records=((Timestamp(0, 1), b"\x00"),)))],
    damage=Damage(cut=0, gap=None, garbage=b"*", at=0, sizes=(1,)),
)
def test_replies_with_garbage_decode_the_same_in_any_chunking(
    conversation: list, damage: Damage
) -> None:
    whole, split = damaged_decoding(s3p.Observer, b"".join(wire(conversation)[1]), damage, DOWN)
    assert split == whole


def test_a_large_payload_with_a_bad_crlf_is_hunted_through_the_same_in_any_chunking() -> None:
    """A Bulk String of 64 KiB and more is collected aside when it comes in pieces; refused, it
    is hunted through from its start, as when it came whole (a command inside it is found)."""
    size = 1 << 17
    inside = b"\r\n*3\r\n$6\r\nDELETE\r\n$1\r\ns\r\n*0\r\n"
    payload = (b"x" * 1000 + inside).ljust(size, b"y")
    bad = b"*4\r\n$6\r\nAPPEND\r\n$1\r\ns\r\n*0\r\n*1\r\n$%d\r\n" % size + payload + b"!!\r\n"
    stream = bad + b"".join(wire([(Append(b"t", (b"hello",)), AppendReply(Timestamp(1, 0)))])[0])
    outputs = []
    for size_of_pieces in (len(stream), 1460, 7):
        observer = s3p.Observer()
        got: list[object] = []
        for at in range(0, len(stream), size_of_pieces):
            got += observer.observe(UP, stream[at : at + size_of_pieces])
        got += observer.close(UP)
        outputs.append(comparable(got))
    assert outputs[0] == outputs[1] == outputs[2]
    events = [o.event for o in outputs[0] if isinstance(o, Observed)]
    assert events == [Delete(b"s"), Append(b"t", (b"hello",))]
