"""Frames and layouts: exact bytes, round trips, forward compatibility, limits, bad input."""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role
from s3p_codec import pravega as p
from s3p_codec.pravega._wire import decode_payload, encode_frame, parse_events
from s3p_codec.testing.pravega import commands
from tests.pravega.strategies import ALL_TYPED, opaque_reply

W = uuid.UUID("01234567-89ab-cdef-fedc-ba9876543210")


def receive(role: Role, data: bytes, **kwargs: Any) -> list[object]:
    conn = p.Connection(role, **kwargs)
    if role is Role.CLIENT:
        # Acknowledgements for W must answer something sent: set W up, send up to event 2^40.
        conn.send(p.SetupAppend(0, W, "seg"))
        conn.send(p.ConditionalAppend(W, 1 << 40, 0, b"", -1))
    conn.receive_data(data)
    return list(conn.events())


def frame(code: int, payload: bytes) -> bytes:
    return struct.pack(">ii", code, len(payload)) + payload


def s(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">H", len(raw)) + raw


# --- exact bytes -------------------------------------------------------------------------------


def test_hello_is_code_minus_127_with_versions_17_and_5() -> None:
    assert p.encode(p.Hello()) == bytes.fromhex("ffffff81 00000008 00000011 00000005")


def test_keep_alive_is_code_100_with_an_empty_payload() -> None:
    assert p.encode(p.KeepAlive()) == bytes.fromhex("00000064 00000000")


def test_setup_append_layout() -> None:
    wire = p.encode(p.SetupAppend(7, W, "sc/st/0", "tok"))
    expected = frame(1, struct.pack(">q", 7) + W.bytes + s("sc/st/0") + s("tok"))
    assert wire == expected


def test_uuid_is_most_significant_long_first() -> None:
    wire = p.encode(p.ConditionalCheckFailed(W, 3, 4))
    msb, lsb = struct.unpack_from(">qq", wire, 8)
    assert uuid.UUID(int=((msb & (2**64 - 1)) << 64) | (lsb & (2**64 - 1))) == W


def test_conditional_append_nests_an_event_frame() -> None:
    wire = p.encode(p.ConditionalAppend(W, 5, 100, b"abc", 9))
    payload = W.bytes + struct.pack(">qq", 5, 100) + frame(0, b"abc") + struct.pack(">q", 9)
    assert wire == frame(5, payload)


def test_segment_read_booleans_are_one_byte_each() -> None:
    wire = p.encode(p.SegmentRead("s", 10, True, False, b"xy", 3))
    payload = s("s") + struct.pack(">q??i", 10, True, False, 2) + b"xy" + struct.pack(">q", 3)
    assert wire == frame(10, payload)


def test_create_segment_writes_target_rate_before_scale_type() -> None:
    wire = p.encode(p.CreateSegment(1, "s", 10, 2, "", 0))
    payload = struct.pack(">q", 1) + s("s") + struct.pack(">ib", 10, 2) + s("") + bytes(8)
    assert wire == frame(20, payload)


def test_data_appended_layout() -> None:
    wire = p.encode(p.DataAppended(W, 10, 5, 77, 1000))
    assert wire == frame(7, W.bytes + struct.pack(">qqqq", 10, 5, 77, 1000))


def test_append_block_end_layout() -> None:
    wire = p.encode(p.AppendBlockEnd(W, 12, b"tail", 3, 42, 8))
    payload = W.bytes + struct.pack(">ii", 12, 4) + b"tail" + struct.pack(">iqq", 3, 42, 8)
    assert wire == frame(4, payload)


def test_padding_is_zero_bytes() -> None:
    assert p.encode(p.Padding(5)) == frame(-1, bytes(5))


def test_strings_use_modified_utf8_on_the_wire() -> None:
    wire = p.encode(p.SegmentCreated(1, "a\x00\U0001f600"))
    assert wire.endswith(struct.pack(">H", 9) + b"a\xc0\x80\xed\xa0\xbd\xed\xb8\x80")


# --- round trips -----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ALL_TYPED, ids=lambda c: c.__name__)
@settings(max_examples=30)  # 35 classes: keep the suite short
@given(data=st.data())
def test_round_trip_of_every_command(cls: type[Any], data: Any) -> None:
    event = data.draw(commands(cls))
    wire = p.encode(event)
    code, length = struct.unpack_from(">ii", wire)
    assert code == int(cls.TYPE)
    assert length == len(wire) - 8
    assert decode_payload(p.CommandType(code), wire[8:]) == event


@given(commands())
def test_decoded_events_have_exact_field_types(event: Any) -> None:
    decoded = decode_payload(event.TYPE, p.encode(event)[8:])
    for name in (f[0] for f in type(event).FIELDS):
        assert type(getattr(decoded, name)) is type(getattr(event, name))


@given(opaque_reply)
def test_other_real_codes_decode_to_opaque_with_their_name(event: p.Opaque) -> None:
    (got,) = receive(Role.CLIENT, p.encode(event))
    assert got == event
    assert isinstance(got, p.Opaque)
    assert got.name == event.type.name


def test_opaque_request_keeps_its_raw_payload() -> None:
    raw = frame(58, b"\x00\x01merge")
    (got,) = receive(Role.SERVER, raw)
    assert got == p.Opaque(p.CommandType.MERGE_SEGMENTS, b"\x00\x01merge")
    assert got.name == "MERGE_SEGMENTS"


# --- forward compatibility -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "code", "payload", "expected"),
    [
        (Role.CLIENT, 7, W.bytes + struct.pack(">q", 10), p.DataAppended(W, 10, -1, -1, -1)),
        (
            Role.CLIENT,
            7,
            W.bytes + struct.pack(">qq", 10, 9),
            p.DataAppended(W, 10, 9, -1, -1),
        ),
        (
            Role.SERVER,
            9,
            s("seg") + struct.pack(">qi", 5, 100) + s(""),
            p.ReadSegment("seg", 5, 100),
        ),
        (
            Role.CLIENT,
            10,
            s("seg") + struct.pack(">q??i", 0, True, True, 1) + b"x",
            p.SegmentRead("seg", 0, True, True, b"x", -1),
        ),
        (
            Role.CLIENT,
            12,
            struct.pack(">q", 1) + s("seg") + struct.pack(">???qq", 1, 0, 0, 5, 6),
            p.StreamSegmentInfo(1, "seg", True, False, False, 5, 6, 0),
        ),
        (
            Role.SERVER,
            20,
            struct.pack(">q", 1) + s("seg") + struct.pack(">ib", 0, 0) + s(""),
            p.CreateSegment(1, "seg", 0, 0, "", 0),
        ),
        (Role.CLIENT, 51, struct.pack(">q", 1) + s("seg"), p.SegmentIsSealed(1, "seg", "", -1)),
        (
            Role.CLIENT,
            53,
            struct.pack(">q", 1) + s("seg") + s("trace"),
            p.NoSuchSegment(1, "seg", "trace", -1),
        ),
        (Role.CLIENT, 60, struct.pack(">q", 4), p.AuthTokenCheckFailed(4, "", -1)),
        (Role.CLIENT, 55, W.bytes + struct.pack(">q", 4), p.InvalidEventNumber(W, 4, "", -1)),
        (Role.CLIENT, 8, W.bytes + struct.pack(">q", 4), p.ConditionalCheckFailed(W, 4, -1)),
        (
            Role.CLIENT,
            50,
            struct.pack(">q", 1) + s("seg") + s("host"),
            p.WrongHost(1, "seg", "host", ""),
        ),
        (
            Role.SERVER,
            5,
            W.bytes + struct.pack(">qq", 1, 0) + frame(0, b"e"),
            p.ConditionalAppend(W, 1, 0, b"e", -1),
        ),
    ],
)
def test_a_frame_with_fewer_trailing_fields_decodes_to_defaults(
    role: Role, code: int, payload: bytes, expected: object
) -> None:
    if role is Role.SERVER and code == 5:
        setup = p.encode(p.SetupAppend(1, W, "seg"))
        assert receive(role, setup + frame(code, payload))[1] == expected
        return
    assert receive(role, frame(code, payload)) == [expected]


@pytest.mark.parametrize(
    ("role", "event"),
    [
        (Role.CLIENT, p.Hello(17, 5)),
        (Role.SERVER, p.KeepAlive()),
        (Role.CLIENT, p.SegmentCreated(1, "seg")),
        (Role.CLIENT, p.DataAppended(W, 1, 0, 2, 3)),
        (Role.SERVER, p.ReadSegment("seg", 0, 10, "", 4)),
        (Role.CLIENT, p.SegmentRead("seg", 0, False, False, b"abc", 5)),
        (Role.CLIENT, p.ErrorMessage(1, "seg", "boom", 0)),
    ],
)
def test_extra_trailing_bytes_are_skipped(role: Role, event: Any) -> None:
    wire = p.encode(event)
    extended = frame(int(event.TYPE), wire[8:] + b"\x07future-field") + p.encode(p.KeepAlive())
    assert receive(role, extended) == [event, p.KeepAlive()]


def test_keep_alive_payload_is_skipped() -> None:
    assert receive(Role.SERVER, frame(100, b"ignored")) == [p.KeepAlive()]


def test_booleans_read_any_non_zero_byte_as_true() -> None:
    payload = s("seg") + struct.pack(">qBBi", 0, 7, 0x80, 0) + struct.pack(">q", 1)
    (got,) = receive(Role.CLIENT, frame(10, payload))
    assert isinstance(got, p.SegmentRead)
    assert got.at_tail is True
    assert got.end_of_segment is True


# --- frames and limits -----------------------------------------------------------------------


def _error(role: Role, data: bytes, **kwargs: Any) -> RemoteProtocolError:
    conn = p.Connection(role, **kwargs)
    conn.receive_data(data)
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    assert conn.state is p.ConnectionState.ERROR
    return info.value


def test_a_code_pravega_does_not_define_is_an_error_from_the_header_alone() -> None:
    for code in (6, 13, 54, 99, 101, 127, -128, 1 << 20):
        assert (
            _error(Role.SERVER, struct.pack(">ii", code, 100)).code is p.ErrorCode.UNKNOWN_COMMAND
        )


def test_negative_length_is_an_error() -> None:
    assert _error(Role.SERVER, struct.pack(">ii", 100, -1)).code is p.ErrorCode.BAD_FRAME


def test_max_payload_0xffffff_is_checked_before_the_payload_arrives() -> None:
    err = _error(Role.SERVER, struct.pack(">ii", 3, 0x1000000))
    assert err.code is p.ErrorCode.BAD_FRAME
    conn = p.Connection(Role.SERVER)
    conn.receive_data(struct.pack(">ii", 1, 0xFFFFFF))
    assert conn.next_event() is NEED_DATA  # exactly at the limit: waits for the payload


def test_a_lower_configured_limit_is_enforced() -> None:
    limits = p.Limits(max_frame=1000)
    err = _error(Role.CLIENT, struct.pack(">ii", 10, 1001), limits=limits)
    assert err.code is p.ErrorCode.BAD_FRAME


def test_a_server_never_receives_a_reply() -> None:
    err = _error(Role.SERVER, p.encode(p.DataAppended(W, 1)))
    assert err.code is p.ErrorCode.UNEXPECTED_COMMAND


def test_a_client_never_receives_a_request() -> None:
    err = _error(Role.CLIENT, p.encode(p.CreateSegment(1, "s")))
    assert err.code is p.ErrorCode.UNEXPECTED_COMMAND


def test_event_appears_only_nested() -> None:
    assert _error(Role.SERVER, frame(0, b"x")).code is p.ErrorCode.UNEXPECTED_COMMAND


def test_a_required_field_cut_short_is_malformed() -> None:
    err = _error(Role.SERVER, frame(1, struct.pack(">q", 1) + W.bytes))
    assert err.code is p.ErrorCode.MALFORMED
    assert "segment" in str(err)


def test_a_data_length_past_the_frame_is_malformed() -> None:
    payload = s("seg") + struct.pack(">q??i", 0, True, True, 50) + b"x"
    assert _error(Role.CLIENT, frame(10, payload)).code is p.ErrorCode.MALFORMED


def test_a_nested_frame_that_is_not_an_event_is_malformed() -> None:
    setup = p.encode(p.SetupAppend(1, W, "seg"))
    payload = W.bytes + struct.pack(">qq", 1, 0) + frame(3, b"e")
    conn = p.Connection(Role.SERVER)
    conn.receive_data(setup + frame(5, payload))
    assert conn.next_event() == p.SetupAppend(1, W, "seg")
    with pytest.raises(RemoteProtocolError, match="EVENT") as info:
        conn.next_event()
    assert info.value.code is p.ErrorCode.MALFORMED


def test_bad_modified_utf8_is_a_bad_string_unless_lenient() -> None:
    payload = struct.pack(">q", 1) + struct.pack(">H", 2) + b"\xc1\x81"
    assert _error(Role.CLIENT, frame(21, payload)).code is p.ErrorCode.BAD_STRING
    assert receive(Role.CLIENT, frame(21, payload), strict_strings=False) == [
        p.SegmentCreated(1, "A")
    ]


# --- encoding validation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        p.SegmentCreated(1 << 63, "s"),
        p.Hello(1 << 31, 5),
        p.CreateSegment(1, "s", 0, 128),
        p.SegmentCreated(1, b"s"),  # type: ignore[arg-type]
        p.SegmentRead("s", 0, 1, False, b""),  # type: ignore[arg-type]
        p.DataAppended("not-a-uuid", 1),  # type: ignore[arg-type]
        p.SegmentRead("s", 0, True, False, bytearray(b"x")),  # type: ignore[arg-type]
        p.Padding(-1),
        p.Opaque(58, b""),  # type: ignore[arg-type]
    ],
)
def test_user_built_events_are_validated_on_send(event: Any) -> None:
    with pytest.raises(LocalProtocolError) as info:
        p.encode(event)
    assert info.value.code is p.ErrorCode.INVALID_FIELD


def test_a_string_over_65535_bytes_cannot_be_sent() -> None:
    with pytest.raises(LocalProtocolError) as info:
        p.encode(p.SegmentCreated(1, "x" * 65536))
    assert info.value.code is p.ErrorCode.BAD_STRING


def test_a_payload_over_the_frame_limit_cannot_be_sent() -> None:
    with pytest.raises(LocalProtocolError, match="frame limit"):
        p.encode(p.SegmentRead("s", 0, False, False, bytes(0xFFFFFF)))


def test_encode_frame_prefixes_the_header() -> None:
    assert encode_frame(100, b"") == p.encode(p.KeepAlive())


# --- the Event-frame splitter of append reassembly ---------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 7, 8, 100])
@pytest.mark.parametrize("count", [1, 7, 8, 9, 64])
def test_runs_of_equal_sized_events_are_split_exactly(size: int, count: int) -> None:
    events = [bytes([i % 256]) * size for i in range(count)]
    data = b"xx" + b"".join(frame(0, e) for e in events) + frame(0, b"tail")[:5]
    out: list[bytes] = []
    stop = parse_events(data, 2, len(data), out)
    assert out == events
    assert stop == len(data) - 5  # the incomplete frame is left for later


@given(
    st.lists(st.sampled_from([0, 1, 3, 8, 20]), max_size=60),
    st.integers(0, 12),
)
def test_parse_events_finds_every_frame_whatever_the_runs(sizes: list[int], cut: int) -> None:
    events = [bytes([n]) * n for n in sizes]
    data = b"".join(frame(0, e) for e in events)
    out: list[bytes] = []
    end = max(0, len(data) - cut)
    stop = parse_events(data, 0, end, out)
    whole = []
    pos = 0
    for e in events:
        if pos + 8 + len(e) > end:
            break
        whole.append(e)
        pos += 8 + len(e)
    assert out == whole
    assert stop == pos


def test_parse_events_rejects_a_non_event_frame_inside_a_run() -> None:
    data = b"".join(frame(0, b"ab") for _ in range(9)) + frame(5, b"ab")
    with pytest.raises(ValueError, match="type 5"):
        parse_events(data, 0, len(data), [])


@pytest.mark.parametrize("run", [7, 8, 9, 15, 16, 17, 1000])
def test_a_run_followed_by_other_sizes_splits_at_the_first_difference(run: int) -> None:
    events = [b"r" * 3] * run + [b"x" * 4, b"r" * 3] + [b"y"] * 9
    data = b"".join(frame(0, e) for e in events)
    out: list[bytes] = []
    assert parse_events(data, 0, len(data), out) == len(data)
    assert out == events


def _split_one_by_one(data: bytes, end: int) -> tuple[list[bytes], int]:
    """The reference splitter: one header at a time, stopping at the first incomplete frame."""
    out, pos = [], 0
    while pos + 8 <= end:
        _code, size = struct.unpack_from(">ii", data, pos)
        if pos + 8 + size > end:
            break
        out.append(data[pos + 8 : pos + 8 + size])
        pos += 8 + size
    return out, pos


@pytest.mark.parametrize("cut", [0, 3, 8, 9, 5000])
def test_many_events_of_varied_sizes_are_split_exactly(cut: int) -> None:
    # Past one batch of the walked events, sizes above the format cache, empty events.
    sizes = [(i * 37) % 101 for i in range(9000)] + [4095, 4096, 70_000, 0, 1, 0]
    events = [bytes([n % 256]) * n for n in sizes]
    data = b"".join(frame(0, e) for e in events)
    end = len(data) - cut
    out: list[bytes] = []
    stop = parse_events(data, 0, end, out)
    assert (out, stop) == _split_one_by_one(data, end)


@pytest.mark.parametrize("count", [0, 1, 3, 4, 5000])
@pytest.mark.parametrize(
    ("header", "message"),
    [((5, 2), "type 5"), ((-2, 2), "type -2"), ((-1, 0), "type -1"), ((0, -3), "negative")],
)
def test_a_bad_header_after_varied_events_is_reported(
    count: int, header: tuple[int, int], message: str
) -> None:
    data = b"".join(frame(0, b"e" * (i % 7)) for i in range(count))
    data += struct.pack(">ii", *header) + b"zz"
    with pytest.raises(ValueError, match=message):
        parse_events(data, 0, len(data), [])
