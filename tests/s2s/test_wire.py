"""Frame rules of S2S, byte for byte."""

from __future__ import annotations

import json

import pytest

from s3p_codec import NEED_DATA, RemoteProtocolError, Role, s2s
from s3p_codec._core import LocalProtocolError, ReceiveBuffer
from s3p_codec.s2s._compression import Compression
from s3p_codec.s2s._wire import decode_terminal, encode_frame, encode_terminal, read_frame

TWO_MIB = 2 * 1024 * 1024


def _buffer(data: bytes) -> ReceiveBuffer:
    buffer = ReceiveBuffer()
    buffer.feed(data)
    return buffer


def test_length_is_three_bytes_big_endian_and_counts_flags_plus_payload() -> None:
    assert encode_frame(b"abc") == b"\x00\x00\x04\x00abc"
    assert encode_frame(b"x" * 0x1234)[:4] == b"\x00\x12\x35\x00"


def test_spec_example_terminal_frame_400() -> None:
    # "Flags: 0x80 (terminal bit set) Status: 0x01 0x90 (400 Bad Request)"
    body = b'{"error":"validation_error","message":"Invalid record format"}'
    frame = (1 + 2 + len(body)).to_bytes(3, "big") + b"\x80\x01\x90" + body
    terminal = decode_terminal(frame[4:])
    assert terminal.status == 400
    assert terminal.message == "Invalid record format"
    conn = s2s.Connection(Role.CLIENT, s2s.Session.READ)
    conn.receive_data(frame)
    with pytest.raises(s2s.SessionTerminated) as caught:
        conn.next_event()
    assert caught.value.code == 400


def test_spec_example_flags_for_zstd_regular_frame() -> None:
    # flags = (compression << 5) & 0x60
    assert encode_frame(b"p", Compression.ZSTD)[3] == 0x20
    assert encode_frame(b"p", Compression.GZIP)[3] == 0x40


def test_frame_length_zero_is_rejected() -> None:
    with pytest.raises(RemoteProtocolError) as caught:
        read_frame(_buffer(b"\x00\x00\x00"), TWO_MIB)
    assert caught.value.code is s2s.ErrorCode.BAD_FRAME


def test_maximum_2_mib_is_checked_from_the_header_alone() -> None:
    # Only the 3 length bytes have arrived: the error comes before any payload.
    with pytest.raises(RemoteProtocolError, match="exceeds"):
        read_frame(_buffer((TWO_MIB + 1).to_bytes(3, "big")), TWO_MIB)


def test_length_of_exactly_2_mib_is_accepted() -> None:
    frame = TWO_MIB.to_bytes(3, "big") + b"\x00" + b"z" * (TWO_MIB - 1)
    buffer = _buffer(frame[:100])
    assert read_frame(buffer, TWO_MIB) is None  # waits for the payload
    buffer.feed(frame[100:])
    raw = read_frame(buffer, TWO_MIB)
    assert raw is not None
    assert len(raw.payload) == TWO_MIB - 1


def test_we_never_send_a_frame_over_2_mib() -> None:
    with pytest.raises(LocalProtocolError):
        encode_frame(b"z" * TWO_MIB)
    assert len(encode_frame(b"z" * (TWO_MIB - 1))) == TWO_MIB + 3


def test_incomplete_frame_consumes_nothing() -> None:
    buffer = _buffer(b"\x00\x00\x05\x00ab")
    assert read_frame(buffer, TWO_MIB) is None
    assert len(buffer) == 6


def test_flag_bits_terminal_compression_reconnect() -> None:
    raw = read_frame(_buffer(b"\x00\x00\x02\x50p"), TWO_MIB)
    assert raw is not None
    assert (raw.terminal, raw.compression, raw.reconnect_advised) == (
        False,
        Compression.GZIP,
        True,
    )


def test_reserved_bits_are_ignored_on_decode() -> None:
    raw = read_frame(_buffer(b"\x00\x00\x02\x0fp"), TWO_MIB)
    assert raw is not None
    assert (raw.terminal, raw.compression, raw.reconnect_advised, raw.payload) == (
        False,
        Compression.NONE,
        False,
        b"p",
    )


def test_compression_value_3_is_an_error() -> None:
    with pytest.raises(RemoteProtocolError, match="reserved"):
        read_frame(_buffer(b"\x00\x00\x02\x60p"), TWO_MIB)


def test_terminal_frames_are_never_compressed_flag_is_0x80_exactly() -> None:
    frame = encode_terminal(s2s.Terminal(status=503, code="server_draining"))
    assert frame[3] == 0x80
    assert frame[4:6] == b"\x01\xf7"
    assert json.loads(frame[6:]) == {"code": "server_draining"}


def test_terminal_shorter_than_two_bytes_is_an_error() -> None:
    with pytest.raises(RemoteProtocolError) as caught:
        decode_terminal(b"\x01")
    assert caught.value.code is s2s.ErrorCode.BAD_FRAME


def test_terminal_412_seq_num_mismatch_body() -> None:
    frame = encode_terminal(s2s.Terminal(status=412, seq_num_mismatch=7))
    assert frame[6:] == b'{"seq_num_mismatch":7}'
    conn = s2s.Connection(Role.CLIENT, s2s.Session.APPEND)
    conn.receive_data(frame)
    with pytest.raises(s2s.AppendConditionFailed) as caught:
        conn.next_event()
    assert caught.value.expected_seq_num == 7
    assert caught.value.expected_fencing_token is None


def test_terminal_412_fencing_token_mismatch_body() -> None:
    payload = b"\x01\x9c" + b'{"fencing_token_mismatch":"abc"}'
    terminal = decode_terminal(payload)
    assert terminal == s2s.Terminal(status=412, fencing_token_mismatch="abc")
    nested = decode_terminal(b"\x01\x9c" + b'{"seq_num_mismatch":{"expected_seq_num":9}}')
    assert nested.seq_num_mismatch == 9


def test_terminal_416_tail_body() -> None:
    body = b'{"code":"range_not_satisfiable","tail":{"seq_num":5,"timestamp":99}}'
    conn = s2s.Connection(Role.CLIENT, s2s.Session.READ)
    conn.receive_data((3 + len(body)).to_bytes(3, "big") + b"\x80\x01\xa0" + body)
    with pytest.raises(s2s.ReadUnwritten) as caught:
        conn.next_event()
    assert caught.value.tail == s2s.StreamPosition(5, 99)
    assert caught.value.terminal.code == "range_not_satisfiable"


def test_terminal_body_that_is_not_json_keeps_its_text() -> None:
    assert decode_terminal(b"\x01\xf4oops\xff") == s2s.Terminal(status=500, message="oops\ufffd")
    assert decode_terminal(b"\x01\xf4") == s2s.Terminal(status=500)
    assert decode_terminal(b"\x01\xf4[1]").message == "[1]"


def test_terminal_round_trip_of_every_field() -> None:
    terminal = s2s.Terminal(
        status=416,
        code="x",
        message="m",
        seq_num_mismatch=1,
        fencing_token_mismatch="t",
        tail=s2s.StreamPosition(2, 3),
    )
    assert decode_terminal(encode_terminal(terminal)[4:]) == terminal


def test_terminal_status_must_fit_two_bytes() -> None:
    with pytest.raises(LocalProtocolError):
        encode_terminal(s2s.Terminal(status=70000))


def test_nothing_is_accepted_after_a_terminal_frame() -> None:
    conn = s2s.Connection(Role.CLIENT, s2s.Session.READ)
    heartbeat = s2s.Connection(Role.SERVER, s2s.Session.READ).send(
        s2s.Heartbeat(s2s.StreamPosition(1, 1))
    )
    conn.receive_data(encode_terminal(s2s.Terminal(status=500)) + heartbeat)
    with pytest.raises(s2s.SessionTerminated):
        conn.next_event()
    assert conn.state is s2s.ConnectionState.TERMINATED
    assert conn.finished
    assert conn.next_event() is NEED_DATA  # the heartbeat behind it is never decoded


def test_leftover_bytes_at_end_of_body_are_an_error() -> None:
    conn = s2s.Connection(Role.CLIENT, s2s.Session.READ)
    conn.receive_data(b"\x00\x00\x05\x00ab")
    conn.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match="left over") as caught:
        conn.next_event()
    assert caught.value.code is s2s.ErrorCode.BAD_FRAME
    assert conn.state is s2s.ConnectionState.ERROR


def test_normal_end_of_session_has_no_terminal_frame() -> None:
    conn = s2s.Connection(Role.CLIENT, s2s.Session.READ)
    conn.receive_data(b"")
    assert conn.next_event() is NEED_DATA
    assert conn.state is s2s.ConnectionState.CLOSED
    assert conn.finished
