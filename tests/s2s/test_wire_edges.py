"""S2S frames at their edges: exact limits, the words and kinds of each refusal, terminal bodies.

"Maximum: 2 MiB (enforced limit)" on "FLAGS + PAYLOAD", checked from the 3 length bytes alone;
compression value 3 is "Reserved"; a terminal frame carries "HTTP status (2 bytes, big-endian)"
then a JSON body, whose StreamPosition fields are proto3 JSON (a zero ``uint64`` may be left out).
Refusing to send something is not fatal: the connection stays usable.
"""

from __future__ import annotations

import pytest

from s3p_codec import RemoteProtocolError, s2s
from s3p_codec._core import LocalProtocolError, ReceiveBuffer
from s3p_codec.s2s._compression import Compression
from s3p_codec.s2s._wire import (
    RawFrame,
    decode_terminal,
    encode_frame,
    encode_terminal,
    read_frame,
)

TWO_MIB = 2 * 1024 * 1024


def _buffer(data: bytes) -> ReceiveBuffer:
    buffer = ReceiveBuffer()
    buffer.feed(data)
    return buffer


def _remote(data: bytes, max_length: int = TWO_MIB) -> RemoteProtocolError:
    with pytest.raises(RemoteProtocolError) as caught:
        read_frame(_buffer(data), max_length)
    assert caught.value.code is s2s.ErrorCode.BAD_FRAME
    return caught.value


def test_length_zero_is_refused_in_words() -> None:
    err = _remote(b"\x00\x00\x00")
    assert err.message == "frame length 0: a frame has at least its flag byte"


@pytest.mark.parametrize("limit", [1, 100, TWO_MIB])
def test_one_past_the_limit_is_refused_from_the_header_and_the_limit_is_read(limit: int) -> None:
    err = _remote((limit + 1).to_bytes(3, "big"), limit)
    assert err.message == f"frame length {limit + 1} exceeds the {limit}-byte limit"
    frame = limit.to_bytes(3, "big") + b"\x00" + b"p" * (limit - 1)
    raw = read_frame(_buffer(frame), limit)
    assert raw is not None
    assert raw.payload == b"p" * (limit - 1)


@pytest.mark.parametrize("flags", [0x60, 0x70, 0x6F, 0xE0, 0xFF])
def test_compression_value_3_is_refused_in_words(flags: int) -> None:
    err = _remote(b"\x00\x00\x02" + bytes((flags,)) + b"p")
    assert err.message == "compression value 3 is reserved"


def test_a_frame_is_taken_exactly_when_its_last_byte_arrives() -> None:
    frame = b"\x00\x00\x04\x20abc" + b"\x00\x00\x01\x00"
    buffer = _buffer(frame[:6])
    assert read_frame(buffer, TWO_MIB) is None
    assert len(buffer) == 6
    buffer.feed(frame[6:7])
    raw = read_frame(buffer, TWO_MIB)
    assert raw == RawFrame(False, Compression.ZSTD, False, b"abc")
    assert len(buffer) == 0
    buffer.feed(frame[7:])
    assert read_frame(buffer, TWO_MIB) == RawFrame(False, Compression.NONE, False, b"")


def test_the_reconnect_bit_of_a_terminal_frame_is_not_a_reconnect_advice() -> None:
    raw = read_frame(_buffer(b"\x00\x00\x03\x90\x01\xf4"), TWO_MIB)
    assert raw == RawFrame(True, Compression.NONE, False, b"\x01\xf4")


@pytest.mark.parametrize("limit", [1, 10, TWO_MIB])
def test_a_frame_over_the_limit_is_not_sent_and_the_connection_survives(limit: int) -> None:
    assert len(encode_frame(b"z" * (limit - 1), max_length=limit)) == limit + 3
    with pytest.raises(LocalProtocolError) as caught:
        encode_frame(b"z" * limit, max_length=limit)
    assert caught.value.message == f"frame of {limit + 1} bytes exceeds the {limit}-byte limit"
    assert caught.value.code is s2s.ErrorCode.BAD_FRAME
    assert caught.value.fatal is False


@pytest.mark.parametrize("status", [0, 1, 400, 0xFFFF])
def test_every_two_byte_status_is_written(status: int) -> None:
    frame = encode_terminal(s2s.Terminal(status=status))
    assert frame == b"\x00\x00\x05\x80" + status.to_bytes(2, "big") + b"{}"


@pytest.mark.parametrize("status", [-1, 0x10000, 0x1FFFF, True, 400.0, "400"])
def test_a_status_outside_two_bytes_is_refused_in_words(status: object) -> None:
    with pytest.raises(LocalProtocolError) as caught:
        encode_terminal(s2s.Terminal(status=status))  # type: ignore[arg-type]
    assert caught.value.message == "Terminal.status must be an int in [0, 65535]"
    assert caught.value.code is s2s.ErrorCode.INVALID
    assert caught.value.fatal is False


def test_a_body_that_is_not_json_is_refused_in_words() -> None:
    with pytest.raises(LocalProtocolError) as caught:
        encode_terminal(s2s.Terminal(status=400, code={1, 2}))  # type: ignore[arg-type]
    assert caught.value.message == (
        "Terminal body is not JSON-encodable: Object of type set is not JSON serializable"
    )
    assert caught.value.code is s2s.ErrorCode.INVALID
    assert caught.value.fatal is False


def test_a_terminal_frame_of_exactly_the_limit_is_written_and_one_more_is_refused() -> None:
    terminal = s2s.Terminal(status=500, message="m")
    frame = encode_terminal(terminal)
    limit = len(frame) - 3
    assert encode_terminal(terminal, max_length=limit) == frame
    with pytest.raises(LocalProtocolError) as caught:
        encode_terminal(terminal, max_length=limit - 1)
    assert caught.value.message == "terminal frame too long"
    assert caught.value.code is s2s.ErrorCode.BAD_FRAME
    assert caught.value.fatal is False


@pytest.mark.parametrize("payload", [b"", b"\x01"])
def test_a_terminal_without_its_status_is_refused_in_words(payload: bytes) -> None:
    with pytest.raises(RemoteProtocolError) as caught:
        decode_terminal(payload)
    assert caught.value.code is s2s.ErrorCode.BAD_FRAME
    assert caught.value.message == "terminal frame shorter than its 2-byte status"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"seq_num_mismatch":18446744073709551615}', {"seq_num_mismatch": (1 << 64) - 1}),
        (b'{"seq_num_mismatch":18446744073709551616}', {}),
        (b'{"seq_num_mismatch":-1}', {}),
        (b'{"seq_num_mismatch":"7"}', {}),
        (b'{"seq_num_mismatch":true}', {}),
        (b'{"seq_num_mismatch":{"expected_seq_num":9}}', {"seq_num_mismatch": 9}),
        (b'{"fencing_token_mismatch":{"expected_fencing_token":"abc"}}',
         {"fencing_token_mismatch": "abc"}),
        (b'{"fencing_token_mismatch":{"other":"abc"}}', {}),
        (b'{"fencing_token_mismatch":5}', {}),
        (b'{"code":5,"message":["m"]}', {}),
        (b'{"tail":{}}', {"tail": s2s.StreamPosition(0, 0)}),
        (b'{"tail":{"timestamp":7}}', {"tail": s2s.StreamPosition(0, 7)}),
        (b'{"tail":{"seq_num":5}}', {"tail": s2s.StreamPosition(5, 0)}),
        (b'{"tail":{"seq_num":-1,"timestamp":7}}', {}),
        (b'{"tail":{"seq_num":5,"timestamp":18446744073709551616}}', {}),
        (b'{"tail":{"seq_num":5,"timestamp":null}}', {}),
        (b'{"tail":[5,7]}', {}),
    ],
)  # fmt: skip
def test_terminal_body_fields_are_read_as_s2_writes_them(
    body: bytes, expected: dict[str, object]
) -> None:
    assert decode_terminal(b"\x01\x9c" + body) == s2s.Terminal(status=412, **expected)  # type: ignore[arg-type]
