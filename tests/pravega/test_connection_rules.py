"""The rules of a Pravega connection, each at its edge and each refusal in its exact words.

The frames the client's block writer sends fit ``Limits.max_frame`` exactly (the block, and the
``AppendBlockEnd`` carrying the rest of a split event; another writer's queued events go out
in blocks that fit too); every refusal of ``send``,
``receive_data`` and ``next_event`` with its code and words; the owed reply after an
incompatible ``Hello`` is that very ``Hello``; acknowledgement ceilings are only ever raised;
``strict_strings`` governs what is sent; an ``AppendBlock`` shorter than its writer id is refused
by the decoder wherever it lies in a chunk.
"""

from __future__ import annotations

import re
import struct
import uuid

import pytest

from s3p_codec import LocalProtocolError, RemoteProtocolError, Role
from s3p_codec import pravega as p

A = uuid.UUID(int=0xA)
B = uuid.UUID(int=0xB)
LONG_MIN = -(1 << 63)


def exactly(words: str) -> str:
    """A ``match`` pattern for these words and nothing else."""
    return f"^{re.escape(words)}$"


def frame(code: int, payload: bytes) -> bytes:
    return struct.pack(">ii", code, len(payload)) + payload


def headers(wire: bytes) -> list[tuple[int, int]]:
    """``(type code, declared length)`` of each top-level frame of a byte stream."""
    out = []
    pos = 0
    while pos < len(wire):
        code, size = struct.unpack_from(">ii", wire, pos)
        out.append((code, size))
        pos += 8 + size
    assert pos == len(wire)
    return out


def broken(role: Role, wire: bytes) -> RemoteProtocolError:
    """The error a connection of ``role`` raises on ``wire`` (whole, then the end of stream)."""
    conn = p.Connection(role)
    conn.receive_data(wire)
    conn.receive_data(b"")
    with pytest.raises(RemoteProtocolError) as info:
        list(conn.events())
    assert conn.state is p.ConnectionState.ERROR
    return info.value


SETUP_A = p.encode(p.SetupAppend(1, A, "seg"))


# --- what the block writer sends fits the frame limit ------------------------------------------


def test_a_negative_block_size_is_refused_in_its_words() -> None:
    with pytest.raises(ValueError, match=exactly("block_size must not be negative")):
        p.Connection(Role.CLIENT, block_size=-1)


@pytest.mark.parametrize(
    ("block_size", "declared"),
    [(1000, 64), (41, 64), (40, 64), (39, 63), (0, 16 + 8 + 1)],
)
def test_a_block_is_lowered_to_fit_max_frame_and_no_further(block_size: int, declared: int) -> None:
    # 16 (writer id) + block size + 8 (the final frame's header) <= 64: a block of 40 fits.
    conn = p.Connection(Role.CLIENT, p.Limits(max_frame=64), block_size=block_size)
    conn.send(p.SetupAppend(1, A, "seg"))
    opened = conn.send(p.Append(A, 0, (b"x",)))  # the block stays open: its header only
    assert struct.unpack_from(">ii", opened) == (int(p.CommandType.APPEND_BLOCK), declared)


@pytest.mark.parametrize(("max_frame", "largest"), [(64, 13), (p.MAX_FRAME, p.MAX_FRAME - 51)])
def test_the_largest_event_sent_leaves_room_for_the_append_block_end_of_its_split(
    max_frame: int, largest: int
) -> None:
    # A split event's rest (its frame but the first byte) + 44 bytes of fields <= max_frame.
    limits = p.Limits(max_frame=max_frame, max_event_size=1 << 24)
    conn = p.Connection(Role.CLIENT, limits)
    conn.send(p.SetupAppend(1, A, "seg"))
    with pytest.raises(LocalProtocolError) as info:
        conn.send(p.Append(A, 0, (bytes(largest + 1),)))
    assert info.value.message == f"event of {largest + 1} bytes exceeds max_event_size {largest}"
    assert info.value.code is p.ErrorCode.INVALID_FIELD


def test_an_event_split_one_byte_into_a_block_ends_in_a_frame_exactly_at_the_limit() -> None:
    limits = p.Limits(max_frame=64)
    client = p.Connection(Role.CLIENT, limits)  # block size lowered to 40
    wire = client.send(p.SetupAppend(1, A, "seg"))
    # Event frames of 21 and 18 bytes leave 1 byte of the block; a 13-byte event then splits.
    wire += client.send(p.Append(A, 1, (b"a" * 13, b"b" * 10)))
    wire += client.send(p.Append(A, 2, (b"c" * 13,)))
    assert headers(wire)[1:] == [
        (int(p.CommandType.APPEND_BLOCK), 64),
        (int(p.CommandType.APPEND_BLOCK_END), 64),  # 44 + 20 bytes of the split event's rest
    ]
    server = p.Connection(Role.SERVER, limits)
    server.receive_data(wire)
    assert list(server.events()) == [
        p.SetupAppend(1, A, "seg"),
        p.Append(A, 2, (b"a" * 13, b"b" * 10, b"c" * 13), 1),
    ]


def test_every_split_of_the_largest_events_fits_and_is_read_with_the_same_limits() -> None:
    limits = p.Limits(max_frame=64)
    for first in range(14):  # every fill of the block before the splits
        client = p.Connection(Role.CLIENT, limits)
        wire = client.send(p.SetupAppend(1, A, "seg"))
        sent = [bytes([first]) * first] + [bytes([n]) * 13 for n in range(1, 8)]
        for number, data in enumerate(sent):
            wire += client.send(p.Append(A, number, (data,)))
        wire += client.send(p.FlushAppends())
        assert max(size for _, size in headers(wire)) <= 64
        server = p.Connection(Role.SERVER, limits)
        server.receive_data(wire)
        got = [
            data
            for event in server.events()
            if isinstance(event, p.Append)
            for data in event.events
        ]
        assert got == sent


@pytest.mark.parametrize("sizes", [(10, 10, 10), (13, 1, 1, 13, 13), (13,) * 5, (0,) * 12])
def test_queued_events_of_another_writer_go_out_in_blocks_that_fit_max_frame(
    sizes: tuple[int, ...],
) -> None:
    limits = p.Limits(max_frame=64)
    client = p.Connection(Role.CLIENT, limits)
    wire = client.send(p.SetupAppend(1, A, "seg")) + client.send(p.SetupAppend(2, B, "seg"))
    wire += client.send(p.Append(A, 0, (b"",)))  # opens a block: B's events wait
    sent = [bytes([n + 1]) * size for n, size in enumerate(sizes)]
    for number, data in enumerate(sent):
        wire += client.send(p.Append(B, number, (data,)))
    wire += client.send(p.FlushAppends())
    assert max(size for _, size in headers(wire)) <= 64
    server = p.Connection(Role.SERVER, limits)
    server.receive_data(wire)
    appends = [event for event in server.events() if isinstance(event, p.Append)]
    got = [data for event in appends if event.writer_id == B for data in event.events]
    assert got == sent
    # Each block's AppendBlockEnd carries the number of its own last event.
    numbers = [event.event_number for event in appends if event.writer_id == B]
    assert numbers == sorted(numbers)
    assert numbers[-1] == len(sent) - 1


def test_queued_events_that_fill_a_frame_exactly_go_out_as_one_block() -> None:
    limits = p.Limits(max_frame=64)
    client = p.Connection(Role.CLIENT, limits)
    wire = client.send(p.SetupAppend(1, A, "seg")) + client.send(p.SetupAppend(2, B, "seg"))
    wire += client.send(p.Append(A, 0, (b"",)))  # opens a block: B's events wait
    tail = len(wire)
    for number in range(3):  # three Event frames of 16 bytes: 48, all a 64-byte frame holds
        wire += client.send(p.Append(B, number, (b"e" * 8,)))
    assert len(wire) == tail  # still waiting
    wire += client.send(p.FlushAppends())
    blocks = [size for code, size in headers(wire[tail:]) if code == p.CommandType.APPEND_BLOCK]
    assert blocks == [64]


# --- refusals of send --------------------------------------------------------------------------


@pytest.mark.parametrize("event", [p.Append(A, 0, (b"x",)), p.FlushAppends()])
def test_only_a_client_sends_appends(event: p.Event) -> None:
    with pytest.raises(LocalProtocolError) as info:
        p.Connection(Role.SERVER).send(event)
    assert info.value.message == f"only a client sends {type(event).__name__}"
    assert info.value.code is p.ErrorCode.INVALID_FIELD


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
def test_block_frames_are_refused_in_words_that_name_them(event: p.Event) -> None:
    with pytest.raises(LocalProtocolError) as info:
        p.Connection(Role.CLIENT).send(event)
    assert info.value.message == (
        f"{type(event).__name__} frames are written by the block writer: send Append"
    )
    assert info.value.code is p.ErrorCode.INVALID_FIELD


def test_something_that_is_no_pravega_event_is_refused_by_its_type_name() -> None:
    with pytest.raises(LocalProtocolError) as info:
        p.Connection(Role.CLIENT).send(b"hello")  # type: ignore[arg-type]
    assert info.value.message == "bytes is not a Pravega event"
    assert info.value.code is p.ErrorCode.INVALID_FIELD


@pytest.mark.parametrize(
    ("role", "event", "words"),
    [
        (Role.CLIENT, p.DataAppended(A, 1), "a client does not send DATA_APPENDED"),
        (Role.SERVER, p.ReadSegment("s", 0, 10), "a server does not send READ_SEGMENT"),
        (
            Role.SERVER,
            p.Opaque(p.CommandType.MERGE_SEGMENTS, b""),
            "a server does not send MERGE_SEGMENTS",
        ),
    ],
)
def test_a_command_sent_the_wrong_way_is_refused_in_words(
    role: Role, event: p.Event, words: str
) -> None:
    with pytest.raises(LocalProtocolError) as info:
        p.Connection(role).send(event)
    assert info.value.message == words
    assert info.value.code is p.ErrorCode.UNEXPECTED_COMMAND


def test_strings_are_sent_strict_by_default_and_as_java_writes_them_when_lenient() -> None:
    setup = p.SetupAppend(1, A, "a\ud800b")  # a lone surrogate
    with pytest.raises(LocalProtocolError) as info:
        p.Connection(Role.CLIENT).send(setup)
    assert info.value.code is p.ErrorCode.BAD_STRING
    lenient = p.Connection(Role.CLIENT, strict_strings=False).send(setup)
    assert b"\x00\x05a\xed\xa0\x80b" in lenient


# --- the ERROR state and the owed reply --------------------------------------------------------


def test_the_owed_reply_is_that_very_hello_and_nothing_else() -> None:
    server = p.Connection(Role.SERVER)
    server.receive_data(p.encode(p.Hello(30, 18)))
    with pytest.raises(RemoteProtocolError) as info:
        server.next_event()
    assert info.value.message == "Incompatible wire protocol versions: peer 18..30, we 5..17"
    # Another Hello, of the same type but not the reply owed, is refused and owes it still.
    with pytest.raises(LocalProtocolError) as refused:
        server.send(p.Hello(20, 3))
    assert refused.value.message == "the connection is broken"
    assert refused.value.code is p.ErrorCode.STATE
    assert not server.finished
    assert server.send(p.Hello(17, 5)) == p.encode(p.Hello(17, 5))
    assert server.finished


def test_a_broken_connection_refuses_to_send_and_to_read_in_words() -> None:
    conn = p.Connection(Role.SERVER)
    conn.receive_data(frame(99, b""))
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
    with pytest.raises(RemoteProtocolError) as read:
        conn.next_event()
    assert read.value.message == "the connection is broken"
    assert read.value.code is p.ErrorCode.STATE
    with pytest.raises(LocalProtocolError) as sent:
        conn.send(p.KeepAlive())
    assert sent.value.message == "the connection is broken"
    assert sent.value.code is p.ErrorCode.STATE


def test_data_after_the_end_of_stream_is_refused_in_words() -> None:
    conn = p.Connection(Role.CLIENT)
    conn.receive_data(b"")
    with pytest.raises(LocalProtocolError) as info:
        conn.receive_data(b"x")
    assert info.value.message == "data after end of stream"
    assert info.value.code is p.ErrorCode.STATE


# --- Hello -------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", [Role.CLIENT, Role.SERVER])
def test_no_version_is_negotiated_before_a_compatible_hello(role: Role) -> None:
    conn = p.Connection(role)
    assert conn.negotiated_version is None
    conn.receive_data(p.encode(p.Hello(4, 2)))
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    assert info.value.message == "Incompatible wire protocol versions: peer 2..4, we 5..17"
    assert info.value.code is p.ErrorCode.INCOMPATIBLE_VERSION
    assert conn.negotiated_version is None


# --- headers, checked before their payload -----------------------------------------------------


@pytest.mark.parametrize(
    ("role", "header", "code", "words"),
    [
        (Role.SERVER, struct.pack(">ii", 99, 0), "UNKNOWN_COMMAND", "Unknown wire command: 99"),
        (
            Role.CLIENT,
            struct.pack(">ii", 100, -1),
            "BAD_FRAME",
            "KEEP_ALIVE declares -1 bytes; the limit is 16777215",
        ),
        (
            Role.SERVER,
            struct.pack(">ii", 100, p.MAX_FRAME + 1),
            "BAD_FRAME",
            "KEEP_ALIVE declares 16777216 bytes; the limit is 16777215",
        ),
        (
            Role.SERVER,
            struct.pack(">ii", 7, 0),
            "UNEXPECTED_COMMAND",
            "a server never receives DATA_APPENDED",
        ),
        (
            Role.CLIENT,
            struct.pack(">ii", 9, 0),
            "UNEXPECTED_COMMAND",
            "a client never receives READ_SEGMENT",
        ),
    ],
)
def test_a_header_is_refused_in_words_before_its_payload(
    role: Role, header: bytes, code: str, words: str
) -> None:
    conn = p.Connection(role)
    conn.receive_data(header)  # no payload yet
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    assert info.value.message == words
    assert info.value.code is p.ErrorCode[code]
    assert info.value.reply is None


def test_the_frame_limit_in_the_words_is_the_configured_one() -> None:
    conn = p.Connection(Role.SERVER, p.Limits(max_frame=64))
    conn.receive_data(struct.pack(">ii", 100, 65))
    with pytest.raises(
        RemoteProtocolError, match=exactly("KEEP_ALIVE declares 65 bytes; the limit is 64")
    ):
        conn.next_event()


# --- the end of the stream ---------------------------------------------------------------------


def test_the_end_of_stream_inside_a_frame_says_how_many_bytes_are_left() -> None:
    error = broken(Role.SERVER, p.encode(p.KeepAlive()) + p.encode(p.KeepAlive())[:5])
    assert error.message == "the peer closed inside a frame (5 bytes left)"
    assert error.code is p.ErrorCode.BAD_FRAME


def test_the_end_of_stream_inside_an_append_block_is_refused_in_words() -> None:
    error = broken(Role.SERVER, SETUP_A + frame(3, A.bytes + frame(0, b"e")))
    assert error.message == "the peer closed inside an append block"
    assert error.code is p.ErrorCode.BAD_FRAME


# --- append blocks on a server -----------------------------------------------------------------

FOLLOWS = "AppendBlock is followed directly by AppendBlockEnd"


def test_an_append_block_after_an_append_block_is_refused_in_words() -> None:
    block = frame(3, A.bytes + frame(0, b"e"))
    error = broken(Role.SERVER, SETUP_A + block + block)
    assert error.message == f"Unexpected AppendBlock following an AppendBlock: {FOLLOWS}"
    assert error.code is p.ErrorCode.INVALID_APPEND


def test_another_command_after_an_append_block_is_refused_by_its_name() -> None:
    error = broken(Role.SERVER, SETUP_A + frame(3, A.bytes) + p.encode(p.KeepAlive()))
    assert error.message == f"Unexpected KeepAlive following an AppendBlock: {FOLLOWS}"
    assert error.code is p.ErrorCode.INVALID_APPEND


def test_a_partial_event_outside_a_block_is_refused_in_words() -> None:
    error = broken(Role.SERVER, p.encode(p.PartialEvent(b"ab")))
    assert error.message == "PARTIAL_EVENT outside an append block"
    assert error.code is p.ErrorCode.UNEXPECTED_COMMAND


@pytest.mark.parametrize("after", [b"", p.encode(p.KeepAlive())])
def test_an_append_block_shorter_than_its_writer_id_is_malformed_wherever_it_lies(
    after: bytes,
) -> None:
    # Inside a chunk, behind SetupAppend: the bytes after the frame are no part of a writer id.
    error = broken(Role.SERVER, SETUP_A + frame(3, b"abcde") + after)
    assert error.message == "APPEND_BLOCK payload of 5 bytes ends inside field 'writer_id'"
    assert error.code is p.ErrorCode.MALFORMED


# --- acknowledgements on a client --------------------------------------------------------------


def _client() -> p.Connection:
    """A client that set up A and sent its events 0..1, and set up B with nothing sent."""
    client = p.Connection(Role.CLIENT, block_size=0)
    client.send(p.SetupAppend(1, A, "seg"))
    client.send(p.SetupAppend(2, B, "seg"))
    client.send(p.Append(A, 1, (b"a", b"b")))
    return client


@pytest.mark.parametrize(
    "reply", [p.DataAppended(uuid.UUID(int=9), 0, -1), p.AppendSetup(1, "seg", uuid.UUID(int=9), 0)]
)
def test_an_acknowledgement_for_a_writer_never_set_up_is_refused_by_its_name(
    reply: p.DataAppended | p.AppendSetup,
) -> None:
    client = _client()
    client.receive_data(p.encode(reply))
    with pytest.raises(RemoteProtocolError) as info:
        client.next_event()
    assert info.value.message == (
        f"{type(reply).__name__} for writer {uuid.UUID(int=9)}, which this connection never set up"
    )
    assert info.value.code is p.ErrorCode.INVALID_APPEND


def test_a_lower_conditional_append_does_not_lower_what_may_be_acknowledged() -> None:
    client = _client()
    client.send(p.ConditionalAppend(B, 7, 0, b"x", 3))
    client.send(p.ConditionalAppend(B, 3, 0, b"y", 4))
    setup, ack = p.AppendSetup(2, "seg", B, LONG_MIN), p.DataAppended(B, 7, -1)
    client.receive_data(p.encode(setup) + p.encode(ack))
    assert list(client.events()) == [setup, ack]


def test_a_conditional_append_does_not_lower_what_append_setup_allowed() -> None:
    client = _client()
    setup = p.AppendSetup(1, "seg", A, 20)  # the store holds events of A up to 20
    client.receive_data(p.encode(setup))
    assert client.next_event() == setup
    client.send(p.ConditionalAppend(A, 5, 0, b"x", 3))
    client.receive_data(p.encode(p.DataAppended(A, 20, 1)))
    assert client.next_event() == p.DataAppended(A, 20, 1)
