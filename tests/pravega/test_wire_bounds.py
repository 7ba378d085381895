"""Decoding at the edges of a payload: every cut of every layout, lengths that do not fit.

"A reader treats a missing trailing field as absent (-1 / "" defaults) and skips unread trailing
bytes inside a frame": a field is optional exactly where the real reader checks ``available()``
first (strings when ``available() > 0``, numbers when ``available() >= size``); a required field
the payload ends inside is a ``MALFORMED`` frame that names the field, and a length prefix that
promises more than the frame holds is ``MALFORMED`` too. Each expectation here is worked out from
the layout alone (``FIELDS``), then compared with what ``decode_payload`` does with the payload
cut at every byte.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest

from s3p_codec import RemoteProtocolError
from s3p_codec import pravega as p
from s3p_codec.pravega import _mutf8
from s3p_codec.pravega._events import TYPED
from s3p_codec.pravega._wire import decode_payload, encode_payload

W = uuid.UUID("01234567-89ab-cdef-fedc-ba9876543210")
_WIDTH = {"long": 8, "int": 4, "byte": 1, "bool": 1, "uuid": 16}
_PREFIX = {"str": 2, "data": 4, "event": 8}
_FULL = {
    "long": 0x0102030405060708,
    "int": 0x0A0B0C0D,
    "byte": 5,
    "bool": True,
    "uuid": W,
    "str": "seg\x00é",  # NUL and a 2-byte form: 2 + 6 bytes of modified UTF-8
    "data": b"abcde",
    "event": b"ev",
    "rest": b"xyz",
}
_EMPTY = {**_FULL, "str": "", "data": b"", "event": b"", "rest": b""}
LAYOUTS = sorted(
    (cls for cls in TYPED.values() if cls is not p.Padding), key=lambda cls: int(cls.TYPE)
)


def _sample(cls: type[Any], values: dict[str, Any]) -> Any:
    return cls(*(values[field[1]] for field in cls.FIELDS))


def _size(kind: str, value: Any) -> int:
    if kind in _WIDTH:
        return _WIDTH[kind]
    if kind == "str":
        return 2 + len(_mutf8.encode(value))
    return _PREFIX.get(kind, 0) + len(value)


def _expected(cls: type[Any], event: Any, cut: int) -> tuple[Any, str | None]:
    """What the layout says a payload of ``cut`` bytes decodes to: (event, None) or
    (None, the MALFORMED message)."""
    values: list[Any] = []
    pos = 0
    for field in cls.FIELDS:
        name, kind = field[0], field[1]
        value = getattr(event, name)
        size = _size(kind, value)
        remaining = cut - pos
        if len(field) == 3:
            present = remaining > 0 if kind == "str" else remaining >= _WIDTH[kind]
            if not present:
                values.append(field[2])
                continue
        if kind == "rest":
            values.append(value[:remaining])
            pos = cut
            continue
        if remaining >= size:
            values.append(value)
            pos += size
            continue
        # A string cut anywhere is cut short; data and events once their length prefix is whole
        # promise more than the frame holds.
        if kind not in ("data", "event") or remaining < _PREFIX[kind]:
            name_of = p.CommandType(cls.TYPE).name
            return None, f"{name_of} payload of {cut} bytes ends inside field {name!r}"
        if kind == "data":
            return None, f"data length {len(value)} at {pos} does not fit the frame"
        assert kind == "event"
        return None, f"nested event length {len(value)} does not fit the frame"
    return cls(*values), None


@pytest.mark.parametrize("values", [_FULL, _EMPTY], ids=["full", "empty"])
@pytest.mark.parametrize("cls", LAYOUTS, ids=lambda cls: cls.__name__)
def test_every_cut_of_every_layout_decodes_as_the_layout_says(
    cls: type[Any], values: dict[str, Any]
) -> None:
    event = _sample(cls, values)
    payload = encode_payload(event)
    code = p.CommandType(cls.TYPE)
    assert decode_payload(code, payload) == event  # the whole payload, fields exactly at its end
    for cut in range(len(payload)):
        expected, message = _expected(cls, event, cut)
        if message is None:
            assert decode_payload(code, payload[:cut]) == expected, cut
            continue
        with pytest.raises(RemoteProtocolError) as info:
            decode_payload(code, payload[:cut])
        assert info.value.code is p.ErrorCode.MALFORMED, cut
        assert str(info.value) == message, cut


def test_a_partial_optional_number_is_absent_and_its_bytes_skipped() -> None:
    # DataAppended: uuid, long, then three optional longs; 1 to 7 bytes of one are not enough.
    head = W.bytes + struct.pack(">q", 10)
    for extra in range(1, 8):
        got = decode_payload(p.CommandType.DATA_APPENDED, head + b"\x7f" * extra)
        assert got == p.DataAppended(W, 10, -1, -1, -1), extra
    # AuthTokenCheckFailed: long, optional string, optional int.
    head = struct.pack(">q", 4) + struct.pack(">H", 1) + b"t"
    for extra in range(1, 4):
        got = decode_payload(p.CommandType.AUTH_TOKEN_CHECK_FAILED, head + b"\x7f" * extra)
        assert got == p.AuthTokenCheckFailed(4, "t", -1), extra
    got = decode_payload(p.CommandType.AUTH_TOKEN_CHECK_FAILED, head + struct.pack(">i", 9))
    assert got == p.AuthTokenCheckFailed(4, "t", 9)


def test_one_byte_where_an_optional_string_starts_is_a_string_cut_short() -> None:
    # available() > 0, so the real reader reads the string, and its length is cut.
    payload = struct.pack(">q", 1) + struct.pack(">H", 3) + b"seg" + struct.pack(">H", 4)
    payload += b"host" + b"\x00"
    with pytest.raises(RemoteProtocolError) as info:
        decode_payload(p.CommandType.WRONG_HOST, payload)
    assert info.value.code is p.ErrorCode.MALFORMED
    expected = "WRONG_HOST payload of 20 bytes ends inside field 'server_stack_trace'"
    assert str(info.value) == expected


@pytest.mark.parametrize("count", [-1, -(1 << 31), 2, 3, 9, 10, 1 << 30])
def test_a_data_length_that_does_not_fit_is_malformed(count: int) -> None:
    # SegmentRead: "seg", offset, two booleans, then data with one byte of room.
    head = struct.pack(">H", 3) + b"seg" + struct.pack(">q??", 0, True, False)
    payload = head + struct.pack(">i", count) + b"x"
    with pytest.raises(RemoteProtocolError) as info:
        decode_payload(p.CommandType.SEGMENT_READ, payload)
    assert info.value.code is p.ErrorCode.MALFORMED
    assert str(info.value) == f"data length {count} at {len(head)} does not fit the frame"
    fits = head + struct.pack(">i", 1) + b"x"
    assert decode_payload(p.CommandType.SEGMENT_READ, fits) == p.SegmentRead(
        "seg", 0, True, False, b"x", -1
    )


@pytest.mark.parametrize("count", [-1, -(1 << 31), 2, 3, 9, 10, 1 << 30])
def test_a_nested_event_length_that_does_not_fit_is_malformed(count: int) -> None:
    head = W.bytes + struct.pack(">qq", 1, 0)
    payload = head + struct.pack(">ii", 0, count) + b"e"
    with pytest.raises(RemoteProtocolError) as info:
        decode_payload(p.CommandType.CONDITIONAL_APPEND, payload)
    assert info.value.code is p.ErrorCode.MALFORMED
    assert str(info.value) == f"nested event length {count} does not fit the frame"
    fits = head + struct.pack(">ii", 0, 1) + b"e"
    assert decode_payload(p.CommandType.CONDITIONAL_APPEND, fits) == p.ConditionalAppend(
        W, 1, 0, b"e", -1
    )


def test_a_nested_frame_of_another_type_names_the_type_found() -> None:
    payload = W.bytes + struct.pack(">qq", 1, 0) + struct.pack(">ii", 3, 1) + b"e"
    with pytest.raises(RemoteProtocolError) as info:
        decode_payload(p.CommandType.CONDITIONAL_APPEND, payload)
    assert info.value.code is p.ErrorCode.MALFORMED
    assert str(info.value) == "was expecting EVENT but found type 3"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\xc1\x81", "invalid modified UTF-8 at 0"),  # overlong 'A'
        (b"a\x00", "raw NUL byte at 1"),
        (b"\xf0\x9f\x98\x80", "byte 0xF0 at 0"),  # a 4-byte form
    ],
)
def test_a_string_that_is_not_modified_utf8_names_where_it_starts(raw: bytes, reason: str) -> None:
    payload = struct.pack(">q", 1) + struct.pack(">H", len(raw)) + raw
    for kwargs in ({}, {"strict": True}):  # strict by default
        with pytest.raises(RemoteProtocolError) as info:
            decode_payload(p.CommandType.SEGMENT_CREATED, payload, **kwargs)
        assert info.value.code is p.ErrorCode.BAD_STRING
        assert str(info.value).startswith(f"string at 8: {reason}")


def test_lenient_decoding_reads_what_java_reads() -> None:
    payload = struct.pack(">q", 1) + struct.pack(">H", 2) + b"\xc1\x81"
    got = decode_payload(p.CommandType.SEGMENT_CREATED, payload, strict=False)
    assert got == p.SegmentCreated(1, "A")


def test_a_string_length_past_the_frame_is_a_field_cut_short() -> None:
    payload = struct.pack(">q", 1) + struct.pack(">H", 4) + b"seg"
    with pytest.raises(RemoteProtocolError) as info:
        decode_payload(p.CommandType.SEGMENT_CREATED, payload)
    assert info.value.code is p.ErrorCode.MALFORMED
    assert str(info.value) == "SEGMENT_CREATED payload of 13 bytes ends inside field 'segment'"
