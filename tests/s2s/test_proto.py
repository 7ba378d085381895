"""The hand-written s2.v1 wire code against the official protobuf runtime.

Both directions on random messages: what we write, the runtime parses to the same values (and
the bytes equal the runtime's own serialization); what the runtime writes, we parse to the same
event. ``tests/s2s/s2_pb.py`` builds the runtime classes from the schema at import time.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import LocalProtocolError, RemoteProtocolError, s2s
from s3p_codec.s2s import _proto as proto
from s3p_codec.testing import s2s as cases
from s3p_codec.testing.s2s import (
    append_inputs,
    headers,
    positions,
    read_batches,
    sequenced_records,
)
from tests.s2s import s2_pb as pb

U64 = st.integers(0, cases.U64)

# -- conversions between our events and runtime messages -----------------------------------------


def _pos_to_pb(target: Any, position: s2s.StreamPosition) -> None:
    target.SetInParent()
    target.seq_num = position.seq_num
    target.timestamp = position.timestamp


def _pos_from_pb(message: Any) -> s2s.StreamPosition:
    return s2s.StreamPosition(message.seq_num, message.timestamp)


def _headers_to_pb(target: Any, items: tuple[s2s.Header, ...]) -> None:
    for header in items:
        target.add(name=header.name, value=header.value)


def _headers_from_pb(items: Any) -> tuple[s2s.Header, ...]:
    return tuple(s2s.Header(h.name, h.value) for h in items)


def input_to_pb(event: s2s.AppendInput) -> Any:
    message = pb.AppendInput()
    for record in event.records:
        out = message.records.add(body=record.body)
        if record.timestamp is not None:
            out.timestamp = record.timestamp
        _headers_to_pb(out.headers, record.headers)
    if event.match_seq_num is not None:
        message.match_seq_num = event.match_seq_num
    if event.fencing_token is not None:
        message.fencing_token = event.fencing_token
    return message


def input_from_pb(message: Any) -> s2s.AppendInput:
    return s2s.AppendInput(
        tuple(
            s2s.AppendRecord(
                r.body,
                _headers_from_pb(r.headers),
                r.timestamp if r.HasField("timestamp") else None,
            )
            for r in message.records
        ),
        message.match_seq_num if message.HasField("match_seq_num") else None,
        message.fencing_token if message.HasField("fencing_token") else None,
    )


def ack_to_pb(event: s2s.AppendAck) -> Any:
    message = pb.AppendAck()
    _pos_to_pb(message.start, event.start)
    _pos_to_pb(message.end, event.end)
    _pos_to_pb(message.tail, event.tail)
    return message


def ack_from_pb(message: Any) -> s2s.AppendAck:
    return s2s.AppendAck(
        _pos_from_pb(message.start), _pos_from_pb(message.end), _pos_from_pb(message.tail)
    )


def batch_to_pb(event: s2s.ReadBatch) -> Any:
    message = pb.ReadBatch()
    for record in event.records:
        out = message.records.add(
            seq_num=record.seq_num, timestamp=record.timestamp, body=record.body
        )
        _headers_to_pb(out.headers, record.headers)
    if event.tail is not None:
        _pos_to_pb(message.tail, event.tail)
    return message


def batch_from_pb(message: Any) -> s2s.ReadBatch:
    return s2s.ReadBatch(
        tuple(
            s2s.SequencedRecord(r.seq_num, r.timestamp, r.body, _headers_from_pb(r.headers))
            for r in message.records
        ),
        _pos_from_pb(message.tail) if message.HasField("tail") else None,
    )


def _serialize(message: Any) -> bytes:
    return bytes(message.SerializeToString(deterministic=True))


acks = st.builds(s2s.AppendAck, positions(), positions(), positions())
empty_or_not_batches = read_batches() | st.builds(
    s2s.ReadBatch, st.just(()), st.none() | positions()
)

CASES = [
    ("AppendInput", proto.encode_append_input, proto.decode_append_input, input_to_pb,
     input_from_pb, pb.AppendInput),
    ("AppendAck", proto.encode_append_ack, proto.decode_append_ack, ack_to_pb, ack_from_pb,
     pb.AppendAck),
    ("ReadBatch", proto.encode_read_batch, proto.decode_read_batch, batch_to_pb, batch_from_pb,
     pb.ReadBatch),
]  # fmt: skip


# -- differential tests: both directions --------------------------------------------------------


@given(event=append_inputs())
def test_append_input_agrees_with_the_runtime_both_ways(event: s2s.AppendInput) -> None:
    ours = proto.encode_append_input(event)
    assert ours == _serialize(input_to_pb(event))
    parsed = pb.AppendInput()
    parsed.ParseFromString(ours)
    assert input_from_pb(parsed) == event
    assert proto.decode_append_input(_serialize(input_to_pb(event))) == event


@given(event=acks)
def test_append_ack_agrees_with_the_runtime_both_ways(event: s2s.AppendAck) -> None:
    ours = proto.encode_append_ack(event)
    assert ours == _serialize(ack_to_pb(event))
    parsed = pb.AppendAck()
    parsed.ParseFromString(ours)
    assert ack_from_pb(parsed) == event
    assert proto.decode_append_ack(_serialize(ack_to_pb(event))) == event


@given(event=empty_or_not_batches)
def test_read_batch_agrees_with_the_runtime_both_ways(event: s2s.ReadBatch) -> None:
    ours = proto.encode_read_batch(event)
    assert ours == _serialize(batch_to_pb(event))
    parsed = pb.ReadBatch()
    parsed.ParseFromString(ours)
    assert batch_from_pb(parsed) == event
    assert proto.decode_read_batch(_serialize(batch_to_pb(event))) == event


@given(position=positions())
def test_stream_position_agrees_with_the_runtime_both_ways(
    position: s2s.StreamPosition,
) -> None:
    ours = proto._position(position)
    runtime = pb.StreamPosition(seq_num=position.seq_num, timestamp=position.timestamp)
    assert ours == _serialize(runtime)
    assert proto._decode_position(_serialize(runtime), 0, len(ours)) == position


@given(header=headers())
def test_header_agrees_with_the_runtime_both_ways(header: s2s.Header) -> None:
    ours = proto._header(header)
    runtime = pb.Header(name=header.name, value=header.value)
    assert ours == _serialize(runtime)
    assert proto._decode_header(_serialize(runtime), 0, len(ours)) == header


@given(record=sequenced_records())
def test_sequenced_record_agrees_with_the_runtime_both_ways(
    record: s2s.SequencedRecord,
) -> None:
    ours = proto._sequenced_record(record)
    runtime = batch_to_pb(s2s.ReadBatch((record,))).records[0]
    assert ours == _serialize(runtime)
    assert proto._decode_sequenced_record(ours, 0, len(ours)) == record


@given(event=append_inputs())
def test_append_record_agrees_with_the_runtime_both_ways(event: s2s.AppendInput) -> None:
    record = event.records[0]
    ours = proto._append_record(record)
    runtime = input_to_pb(event).records[0]
    assert ours == _serialize(runtime)
    assert proto._decode_append_record(ours, 0, len(ours)) == record


# -- optional presence, unknown fields, merging ---------------------------------------------------


def test_optional_presence_match_seq_num_of_0_is_written() -> None:
    event = s2s.AppendInput((s2s.AppendRecord(b"x", timestamp=0),), match_seq_num=0)
    data = proto.encode_append_input(event)
    assert data == b"\x0a\x05\x08\x00\x1a\x01x\x10\x00"
    parsed = pb.AppendInput()
    parsed.ParseFromString(data)
    assert parsed.HasField("match_seq_num")
    assert parsed.records[0].HasField("timestamp")
    assert proto.decode_append_input(data) == event


def test_unset_optional_fields_are_not_written() -> None:
    data = proto.encode_append_input(s2s.AppendInput((s2s.AppendRecord(b""),)))
    assert data == b"\x0a\x00"
    assert proto.decode_append_input(data) == s2s.AppendInput((s2s.AppendRecord(b""),))


def test_empty_fencing_token_is_present() -> None:
    event = s2s.AppendInput((s2s.AppendRecord(b"x"),), fencing_token="")
    assert proto.encode_append_input(event).endswith(b"\x1a\x00")
    assert proto.decode_append_input(proto.encode_append_input(event)) == event


UNKNOWN_FIELDS = (
    b"\x78\x96\x01"  # field 15, varint
    + b"\x81\x01" + b"\x01" * 8  # field 16, fixed64
    + b"\x8a\x01\x03abc"  # field 17, length-delimited
    + b"\x95\x01" + b"\x02" * 4  # field 18, fixed32
    + b"\x9b\x01\x08\x01\x9c\x01"  # field 19, group holding a varint
)  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_unknown_fields_are_skipped(case: tuple[Any, ...]) -> None:
    name, encode, decode, _, from_pb, cls = case
    samples = {
        "AppendInput": s2s.AppendInput((s2s.AppendRecord(b"b", (s2s.Header(b"n", b"v"),), 3),)),
        "AppendAck": s2s.AppendAck(*(s2s.StreamPosition(i, i + 1) for i in range(3))),
        "ReadBatch": s2s.ReadBatch(
            (s2s.SequencedRecord(1, 2, b"b", (s2s.Header(b"n", b"v"),)),),
            s2s.StreamPosition(2, 2),
        ),
    }
    event = samples[name]
    data = UNKNOWN_FIELDS + encode(event) + UNKNOWN_FIELDS
    runtime = cls()
    runtime.ParseFromString(data)
    assert from_pb(runtime) == event
    assert decode(data) == event


def test_unknown_fields_inside_nested_messages_are_skipped() -> None:
    header = b"\x0a\x01n" + UNKNOWN_FIELDS[:3]
    record = b"\x08\x05" + UNKNOWN_FIELDS + b"\x1a\x06" + header + b"\x22\x01b"
    data = b"\x0a" + bytes([len(record)]) + record
    expected = s2s.ReadBatch((s2s.SequencedRecord(5, 0, b"b", (s2s.Header(b"n", b""),)),))
    runtime = pb.ReadBatch()
    runtime.ParseFromString(data)
    assert batch_from_pb(runtime) == expected
    assert proto.decode_read_batch(data) == expected


def test_field_with_unexpected_wire_type_is_skipped_like_the_runtime() -> None:
    data = b"\x08\x07" + proto.encode_read_batch(s2s.ReadBatch((), s2s.StreamPosition(1, 2)))
    runtime = pb.ReadBatch()
    runtime.ParseFromString(data)
    assert proto.decode_read_batch(data) == batch_from_pb(runtime)


def test_a_message_field_seen_twice_is_merged() -> None:
    data = b"\x12\x02\x08\x05" + b"\x12\x02\x10\x09"
    runtime = pb.ReadBatch()
    runtime.ParseFromString(data)
    assert proto.decode_read_batch(data) == batch_from_pb(runtime)
    assert proto.decode_read_batch(data).tail == s2s.StreamPosition(5, 9)


def test_last_scalar_wins() -> None:
    data = b"\x0a\x00\x10\x01\x10\x02"
    assert proto.decode_append_input(data).match_seq_num == 2


def test_non_minimal_varints_and_tags_are_accepted() -> None:
    data = b"\x8a\x00\x00" + b"\x10\x80\x00"  # tag 1/LEN in 2 bytes, match_seq_num 0 in 2 bytes
    assert proto.decode_append_input(data) == s2s.AppendInput((s2s.AppendRecord(b""),), 0)


def test_max_u64_round_trips() -> None:
    top = (1 << 64) - 1
    ack = s2s.AppendAck(*(s2s.StreamPosition(top, top),) * 3)
    assert proto.decode_append_ack(proto.encode_append_ack(ack)) == ack


# -- malformed input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decode", "data"),
    [
        (proto.decode_read_batch, b"\x0a"),  # length missing
        (proto.decode_read_batch, b"\x0a\x05abc"),  # runs past the end
        (proto.decode_read_batch, b"\x0a\x02\x22\x05"),  # body runs past the record
        (proto.decode_read_batch, b"\x00\x01"),  # field number 0
        (proto.decode_read_batch, b"\x12\x0b\x08" + b"\xff" * 9 + b"\x7f"),  # varint > 2**64-1
        (proto.decode_read_batch, b"\x12\x0c\x08" + b"\x80" * 10 + b"\x00"),  # 11-byte varint
        (proto.decode_read_batch, b"\x12\x02\x08\x80"),  # truncated varint
        (proto.decode_read_batch, b"\x0a\x02\x08\x80"),  # record seq_num cut at the end
        (proto.decode_read_batch, b"\x0a\x02\x08\x80\x0a\x00"),  # runs into the next record
        (proto.decode_read_batch, b"\x0a\x0c\x10" + b"\x80" * 10 + b"\x01"),  # 11-byte varint
        (proto.decode_read_batch, b"\x0a\x0b\x10" + b"\xff" * 9 + b"\x7f"),  # above 2**64-1
        (proto.decode_read_batch, b"\x79"),  # fixed64 runs past the end
        (proto.decode_read_batch, b"\x7d\x00"),  # fixed32 runs past the end
        (proto.decode_read_batch, b"\x7b\x08\x01"),  # unterminated group
        (proto.decode_read_batch, b"\x7c"),  # end-group without a start
        (proto.decode_read_batch, b"\x7e"),  # wire type 6
        (proto.decode_append_input, b"\x1a\x01\xff"),  # fencing_token not UTF-8
        (proto.decode_append_ack, b"\x0a\x01\x08"),
    ],
)
def test_malformed_protobuf_is_bad_proto(decode: Any, data: bytes) -> None:
    with pytest.raises(RemoteProtocolError) as caught:
        decode(data)
    assert caught.value.code is s2s.ErrorCode.BAD_PROTO


@pytest.mark.parametrize(
    "decode", [proto.decode_append_input, proto.decode_append_ack, proto.decode_read_batch]
)
@given(data=st.binary(max_size=120))
def test_random_bytes_give_events_or_bad_proto_only(decode: Any, data: bytes) -> None:
    try:
        decode(data)
    except RemoteProtocolError as exc:
        code = exc.code
    else:
        code = s2s.ErrorCode.BAD_PROTO
    assert code is s2s.ErrorCode.BAD_PROTO


def test_an_overflowing_ten_byte_varint_is_refused_where_upb_truncates_it() -> None:
    """The one known divergence from the runtime: prost and protobuf-go refuse it too."""
    data = b"\x12\x0b\x08" + b"\xff" * 9 + b"\x7f"  # tail.seq_num: bits above 2**64 - 1
    runtime = pb.ReadBatch()
    runtime.ParseFromString(data)  # upb keeps the low 64 bits
    assert runtime.tail.seq_num == (1 << 64) - 1
    with pytest.raises(RemoteProtocolError, match=r"varint above 2\*\*64 - 1") as info:
        proto.decode_read_batch(data)
    assert info.value.code is s2s.ErrorCode.BAD_PROTO


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@given(data=st.binary(max_size=80))
def test_where_both_accept_random_bytes_they_agree(case: tuple[Any, ...], data: bytes) -> None:
    _, _, decode, _, from_pb, cls = case
    try:
        ours = decode(data)
    except RemoteProtocolError:
        return
    runtime = cls()
    try:
        runtime.ParseFromString(data)
    except Exception:  # the runtime's DecodeError
        return
    assert ours == from_pb(runtime)


# -- validation of user-built events -------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        s2s.AppendInput(b"x"),  # one bytes value, not records (a list of records is accepted)
        s2s.AppendInput((s2s.AppendRecord("x"),)),  # type: ignore[arg-type]
        s2s.AppendInput((s2s.AppendRecord(b"x", timestamp=-1),)),
        s2s.AppendInput((s2s.AppendRecord(b"x", timestamp=True),)),
        s2s.AppendInput((s2s.AppendRecord(b"x", headers=b"k"),)),
        s2s.AppendInput((s2s.AppendRecord(b"x", headers=(s2s.Header("n", b""),)),)),  # type: ignore[arg-type]
        s2s.AppendInput((s2s.AppendRecord(b"x"),), match_seq_num=1 << 64),
        s2s.AppendInput((s2s.AppendRecord(b"x"),), fencing_token=b"t"),  # type: ignore[arg-type]
        s2s.AppendInput((s2s.AppendRecord(b"x"),), fencing_token="\ud800"),
        s2s.AppendInput(("x",)),  # type: ignore[arg-type]
    ],
)
def test_user_built_bad_append_input_is_refused(event: s2s.AppendInput) -> None:
    with pytest.raises(LocalProtocolError):
        proto.validate_append_input(event)


def test_user_built_bad_positions_are_refused() -> None:
    with pytest.raises(LocalProtocolError):
        proto.validate_append_ack(
            s2s.AppendAck(s2s.StreamPosition(-1, 0), *(s2s.StreamPosition(0, 0),) * 2)
        )
    with pytest.raises(LocalProtocolError):
        proto.validate_read_batch(s2s.ReadBatch((), (1, 2)))  # type: ignore[arg-type]
    listed = s2s.SequencedRecord(0, 0, b"", b"k")  # bytes, not headers
    with pytest.raises(LocalProtocolError):
        proto.validate_read_batch(s2s.ReadBatch((listed,)))


@given(value=U64)
def test_varints_round_trip(value: int) -> None:
    encoded = proto._varint(value)
    assert proto._read_varint(encoded, 0, len(encoded)) == (value, len(encoded))


@given(
    record=st.binary(max_size=40) | sequenced_records().map(proto._sequenced_record),
    suffix=st.binary(max_size=12),
)
def test_the_fast_record_path_agrees_with_the_general_loop(record: bytes, suffix: bytes) -> None:
    # The straight-line path may look past the record's end (into ``suffix``); it must never
    # decide differently from the general loop, which stays inside the record.
    data = record + suffix

    def outcome(decode: Any) -> object:
        try:
            return decode(data, 0, len(record))
        except (RemoteProtocolError, IndexError):
            return "error"

    assert outcome(proto._decode_sequenced_record) == outcome(proto._decode_sequenced_record_any)


_long_headers = st.builds(
    s2s.Header, st.binary(min_size=100, max_size=200), st.binary(max_size=200)
)


_records_with_long_headers = st.builds(
    s2s.SequencedRecord,
    seq_num=U64,
    timestamp=U64,
    body=st.binary(max_size=40),
    headers=st.lists(headers() | _long_headers, max_size=3).map(tuple),
)


@given(
    record=sequenced_records() | _records_with_long_headers,
    flip=st.integers(min_value=0, max_value=1 << 16),
    byte=st.integers(min_value=0, max_value=255),
    suffix=st.binary(max_size=12),
)
def test_the_fast_record_path_agrees_on_damaged_records_with_headers(
    record: s2s.SequencedRecord, flip: int, byte: int, suffix: bytes
) -> None:
    # Records with headers, long ones included, one byte overwritten: the straight-line path
    # reads header lengths and field tags; whatever the damage, it decides like the general loop.
    encoded = bytearray(proto._sequenced_record(record))
    if encoded:
        encoded[flip % len(encoded)] = byte
    data = bytes(encoded) + suffix

    def outcome(decode: Any) -> object:
        try:
            return decode(data, 0, len(encoded))
        except (RemoteProtocolError, IndexError):
            return "error"

    assert outcome(proto._decode_sequenced_record) == outcome(proto._decode_sequenced_record_any)


def test_the_fast_record_path_refuses_what_the_runtime_refuses() -> None:
    too_long = b"\x08" + b"\x80" * 10 + b"\x00" + b"\x10\x01\x22\x00"  # 11-byte seq_num varint
    too_big = b"\x08" + b"\xff" * 9 + b"\x7f" + b"\x10\x01\x22\x00"  # above 2**64 - 1
    for record in (too_long, too_big):
        with pytest.raises(RemoteProtocolError):
            proto.decode_read_batch(b"\x0a" + bytes([len(record)]) + record)
