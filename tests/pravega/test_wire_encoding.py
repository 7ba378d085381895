"""Encoding what the user built: exact ranges, the words of each refusal, strict strings, limits.

``encode`` "validates what the user built (ranges of every integer, writable strings)" and refuses
"an invalid field, something that is not one wire command, or a payload over ``MAX_FRAME``"
("Max payload 0xFFFFFF") with a ``LocalProtocolError`` that names the field and the value.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from s3p_codec import LocalProtocolError
from s3p_codec import pravega as p
from s3p_codec.pravega._wire import (
    HEADER,
    MAX_FRAME,
    encode_payload,
    event_frame,
    known_type,
)

W = uuid.UUID("01234567-89ab-cdef-fedc-ba9876543210")


def _refused(event: Any, **kwargs: Any) -> LocalProtocolError:
    with pytest.raises(LocalProtocolError) as info:
        p.encode(event, **kwargs)
    return info.value


@pytest.mark.parametrize(
    ("build", "name", "bits"),
    [
        (lambda v: p.SegmentCreated(v, "s"), "request_id", 64),
        (lambda v: p.Hello(v, 5), "high_version", 32),
        (lambda v: p.CreateSegment(1, "s", 0, v), "scale_type", 8),
    ],
)
def test_signed_integers_take_exactly_their_range(build: Any, name: str, bits: int) -> None:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    for value in (low, high):
        p.encode(build(value))
    for value in (low - 1, high + 1, -(1 << bits), 1 << bits, -(1 << (bits + 1))):
        err = _refused(build(value))
        assert err.code is p.ErrorCode.INVALID_FIELD
        assert str(err) == f"{name}={value!r} is not a signed {bits}-bit integer"


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (p.SegmentCreated(True, "s"), "request_id=True is not a signed 64-bit integer"),
        (p.SegmentRead("s", 0, 1, False, b""), "at_tail=1 is not a bool"),  # type: ignore[arg-type]
        (p.DataAppended("w", 1), "writer_id='w' is not a uuid.UUID"),  # type: ignore[arg-type]
        (p.SegmentCreated(1, b"s"), "segment=b's' is not a str"),  # type: ignore[arg-type]
        (p.SegmentRead("s", 0, True, False, bytearray(b"x")), "data must be bytes, not bytearray"),  # type: ignore[arg-type]
        (p.ConditionalAppend(W, 1, 0, "e"), "data must be bytes, not str"),  # type: ignore[arg-type]
        (p.AppendBlock(W, memoryview(b"x")), "data must be bytes, not memoryview"),  # type: ignore[arg-type]
        (p.Padding(-1), "Padding length -1 out of range"),
        (p.Padding(MAX_FRAME + 1), f"Padding length {MAX_FRAME + 1} out of range"),
        (p.Padding(1.0), "Padding length 1.0 out of range"),  # type: ignore[arg-type]
        (p.Opaque(58, b""), "Opaque needs a CommandType and bytes"),  # type: ignore[arg-type]
        (p.Opaque(p.CommandType.MERGE_SEGMENTS, "x"), "Opaque needs a CommandType and bytes"),  # type: ignore[arg-type]
        (p.FlushAppends(), "FlushAppends is not a single wire command"),
        (p.Append(W, 1, [b"e"]), "Append is not a single wire command"),
    ],
)
def test_an_invalid_field_is_refused_with_its_name_and_value(event: Any, message: str) -> None:
    err = _refused(event)
    assert err.code is p.ErrorCode.INVALID_FIELD
    assert str(err) == message


def test_a_lone_surrogate_is_refused_by_default_and_when_strict() -> None:
    event = p.SegmentCreated(1, "a\ud800")
    for kwargs in ({}, {"strict": True}):
        err = _refused(event, **kwargs)
        assert err.code is p.ErrorCode.BAD_STRING
        assert str(err) == (
            "segment: broken surrogate at index 1: strict mode writes only valid text"
        )
    with pytest.raises(LocalProtocolError) as info:
        encode_payload(event)
    assert info.value.code is p.ErrorCode.BAD_STRING


def test_lenient_encoding_writes_a_lone_surrogate_as_java_does() -> None:
    event = p.SegmentCreated(1, "a\ud800")
    payload = encode_payload(event, strict=False)
    assert payload == (1).to_bytes(8, "big") + b"\x00\x04a\xed\xa0\x80"
    assert p.encode(event, strict=False) == HEADER.pack(21, len(payload)) + payload


def test_a_string_over_65535_bytes_names_the_field() -> None:
    err = _refused(p.SegmentCreated(1, "x" * 65536))
    assert err.code is p.ErrorCode.BAD_STRING
    assert str(err) == "segment: encoded string is 65536 bytes; the limit is 65535"


def test_a_payload_of_exactly_max_frame_is_sent_and_one_more_is_refused() -> None:
    wire = p.encode(p.Padding(MAX_FRAME))
    assert wire[:8] == HEADER.pack(-1, MAX_FRAME)
    assert len(wire) == 8 + MAX_FRAME
    # SegmentRead: string "s" (3), offset (8), two booleans (2), data length (4), request id (8).
    room = MAX_FRAME - 25
    wire = p.encode(p.SegmentRead("s", 0, False, False, bytes(room), 1))
    assert wire[:8] == HEADER.pack(10, MAX_FRAME)
    err = _refused(p.SegmentRead("s", 0, False, False, bytes(room + 1), 1))
    assert err.code is p.ErrorCode.INVALID_FIELD
    assert str(err) == f"payload of {MAX_FRAME + 1} bytes exceeds the frame limit {MAX_FRAME}"
    err = _refused(p.Opaque(p.CommandType.MERGE_SEGMENTS, bytes(MAX_FRAME + 1)))
    assert err.code is p.ErrorCode.INVALID_FIELD


def test_known_type_maps_wire_codes_to_command_types() -> None:
    assert known_type(58) is p.CommandType.MERGE_SEGMENTS
    assert known_type(-127) is p.CommandType.HELLO
    assert known_type(6) is None


def test_event_frame_is_type_zero_length_then_data() -> None:
    assert event_frame(b"abc") == b"\x00\x00\x00\x00\x00\x00\x00\x03abc"
    assert event_frame(b"") == bytes(8)
