"""Framing, the fatal/recoverable split, and the spec's examples byte for byte."""

from __future__ import annotations

import base64
import json
import struct
from collections import deque
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, rustlog
from s3p_codec.rustlog import _schema as schema
from s3p_codec.rustlog import _wire as wire
from s3p_codec.testing.rustlog import json_values, requests, responses
from tests.rustlog.frames import BACKENDS, frame, parse_request, parse_response, request_error

SPEC_FRAME_PAYLOAD = (
    b'{"type":"Produce","topic":"logs","partition":0,"records":["SGVsbG8gV29ybGQ="]}'
)


def compact(text: str) -> bytes:
    """The spec's pretty-printed JSON as one compact line, keys in the spec's order."""
    return json.dumps(json.loads(text), separators=(",", ":")).encode()


# --- the spec's examples ------------------------------------------------------------------


def test_spec_example_frame_length_is_78_not_74() -> None:
    # The spec labels this payload "Length: [0x00, 0x00, 0x00, 0x4A] (74 bytes)"; it is 78.
    assert len(SPEC_FRAME_PAYLOAD) == 78
    event = rustlog.Produce(topic="logs", partition=0, records=(b"Hello World",))
    wire_bytes = rustlog.Connection(Role.CLIENT).send(event)
    assert wire_bytes == b"\x00\x00\x00\x4e" + SPEC_FRAME_PAYLOAD


def test_spec_example_frame_with_its_printed_length_is_malformed() -> None:
    # Read with the printed 74, the frame ends inside the JSON: malformed, hence fatal.
    error = request_error(b"\x00\x00\x00\x4a" + SPEC_FRAME_PAYLOAD)
    assert error.fatal
    assert error.code == rustlog.ErrorCode.INVALID_REQUEST


def test_spec_example_frame_decodes() -> None:
    event = parse_request(SPEC_FRAME_PAYLOAD)
    assert event == rustlog.Produce("logs", 0, (b"Hello World",))


SPEC_PRODUCE = """{
  "type": "Produce",
  "topic": "user-events",
  "partition": 0,
  "records": [
    "eyJ1c2VyIjoiYWxpY2UiLCJhY3Rpb24iOiJsb2dpbiJ9",
    "eyJ1c2VyIjoiYm9iIiwiYWN0aW9uIjoic2lnbnVwIn0="
  ]
}"""
SPEC_PRODUCE_RESPONSE = '{"type": "ProduceResponse", "base_offset": 42, "record_count": 2}'
SPEC_FETCH = """{
  "type": "Fetch",
  "group_id": "analytics-consumer",
  "topic": "user-events",
  "partition": 0,
  "offset": 100,
  "max_bytes": 1048576
}"""
SPEC_FETCH_RESPONSE = """{
  "type": "FetchResponse",
  "records": [
    {"offset": 100, "timestamp": 1641024000000000, "payload": "eyJ1c2VyIjoiYWxpY2UifQ=="},
    {"offset": 101, "timestamp": 1641024001000000, "payload": "eyJ1c2VyIjoiYm9iIn0="}
  ],
  "next_offset": 102
}"""
SPEC_OFFSET_COMMIT = """{
  "type": "OffsetCommit",
  "group": "analytics-pipeline",
  "topic": "user-events",
  "partition": 0,
  "offset": 150
}"""
SPEC_ERROR_404 = """{
  "type": "Error",
  "code": 404,
  "message": "Topic 'nonexistent' not found",
  "details": {"available_topics": ["logs", "metrics", "events"]}
}"""
SPEC_ERROR_416 = """{
  "type": "Error",
  "code": 416,
  "message": "Offset 5000 out of range",
  "details": {"valid_range": {"start": 0, "end": 1250}, "high_watermark": 1250}
}"""

SPEC_REQUESTS = [
    (
        SPEC_PRODUCE,
        rustlog.Produce(
            "user-events",
            0,
            (b'{"user":"alice","action":"login"}', b'{"user":"bob","action":"signup"}'),
        ),
    ),
    (SPEC_FETCH, rustlog.Fetch("analytics-consumer", "user-events", 0, 100, 1048576)),
    (SPEC_OFFSET_COMMIT, rustlog.OffsetCommit("analytics-pipeline", "user-events", 0, 150)),
    ('{"type": "ListTopics"}', rustlog.ListTopics()),
]
SPEC_RESPONSES = [
    (SPEC_PRODUCE_RESPONSE, rustlog.Produce("t", 0, (b"a", b"b")), rustlog.ProduceResponse(42, 2)),
    (
        SPEC_FETCH_RESPONSE,
        rustlog.Fetch("g", "user-events", 0, 100, 1048576),
        rustlog.FetchResponse(
            (
                rustlog.Record(100, 1641024000000000, b'{"user":"alice"}'),
                rustlog.Record(101, 1641024001000000, b'{"user":"bob"}'),
            ),
            102,
        ),
    ),
    (
        SPEC_ERROR_404,
        rustlog.Ping(),
        rustlog.Error(
            rustlog.ErrorCode.TOPIC_NOT_FOUND,
            "Topic 'nonexistent' not found",
            {"available_topics": ["logs", "metrics", "events"]},
        ),
    ),
    (
        SPEC_ERROR_416,
        rustlog.Ping(),
        rustlog.Error(
            rustlog.ErrorCode.OFFSET_OUT_OF_RANGE,
            "Offset 5000 out of range",
            {"valid_range": {"start": 0, "end": 1250}, "high_watermark": 1250},
        ),
    ),
]


@pytest.mark.parametrize("json_backend", BACKENDS)
@pytest.mark.parametrize(("text", "event"), SPEC_REQUESTS, ids=lambda v: str(v)[:20])
def test_spec_request_examples_byte_for_byte(
    text: str, event: rustlog.Request, json_backend: str
) -> None:
    # As printed (pretty JSON) they decode to the event...
    assert parse_request(text.encode(), json_backend) == event
    # ...and the event encodes to the same JSON, compact, keys in the spec's order.
    assert rustlog.Connection(Role.CLIENT, json=json_backend).send(event) == frame(compact(text))


@pytest.mark.parametrize("json_backend", BACKENDS)
@pytest.mark.parametrize(("text", "request_", "event"), SPEC_RESPONSES, ids=lambda v: str(v)[:20])
def test_spec_response_examples_byte_for_byte(
    text: str, request_: rustlog.Request, event: rustlog.Response, json_backend: str
) -> None:
    assert parse_response(text.encode(), request_, json_backend) == event
    server = rustlog.Connection(Role.SERVER, json=json_backend)
    server.receive_data(rustlog.Connection(Role.CLIENT).send(request_))
    server.next_event()
    assert server.send(event) == frame(compact(text))


def test_spec_record_payloads_are_the_base64_of_the_raw_bytes() -> None:
    event = parse_request(SPEC_PRODUCE.encode())
    assert isinstance(event, rustlog.Produce)
    assert [base64.b64encode(r).decode() for r in event.records] == json.loads(SPEC_PRODUCE)[
        "records"
    ]


# --- framing --------------------------------------------------------------------------------


def test_length_header_is_u32_big_endian() -> None:
    data = rustlog.Connection(Role.CLIENT).send(rustlog.Ping())
    assert data[:4] == struct.pack(">I", len(data) - 4)
    assert data[4:] == b'{"type":"Ping"}'


def test_frame_length_exceeding_max_frame_size_is_fatal_from_the_header_alone() -> None:
    conn = rustlog.Connection(Role.SERVER)
    conn.receive_data(struct.pack(">I", rustlog.MAX_FRAME_SIZE + 1))  # no payload at all
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    assert info.value.fatal
    assert info.value.code == rustlog.ErrorCode.RECORD_TOO_LARGE
    assert conn.state is rustlog.State.ERROR


def test_frame_of_exactly_max_frame_size_is_accepted() -> None:
    overhead = len(b'{"type":"Produce","topic":"t","partition":0,"records":[""]}')
    b64_size = rustlog.MAX_FRAME_SIZE - overhead
    raw = bytes(b64_size // 4 * 3)
    record = base64.b64encode(raw).decode()
    payload = json.dumps(
        {"type": "Produce", "topic": "t", "partition": 0, "records": [record]},
        separators=(",", ":"),
    ).encode()
    payload = payload[:-2] + b" " * (rustlog.MAX_FRAME_SIZE - len(payload)) + payload[-2:]
    assert len(payload) == rustlog.MAX_FRAME_SIZE
    event = parse_request(payload)
    assert isinstance(event, rustlog.Produce)
    assert event.records == (raw,)


def test_a_length_over_a_configured_limit_is_rejected_before_its_payload() -> None:
    conn = rustlog.Connection(Role.SERVER, rustlog.Limits(max_frame_size=100))
    conn.receive_data(struct.pack(">I", 101) + b"{")
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    assert info.value.fatal


def test_empty_frame_is_fatal() -> None:
    # "MIN_FRAME_SIZE: 1 byte"; the spec's reader returns FrameError::EmptyFrame.
    error = request_error(b"\x00\x00\x00\x00")
    assert error.fatal
    assert error.code == rustlog.ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize("json_backend", BACKENDS)
def test_invalid_utf8_in_payload_is_fatal(json_backend: str) -> None:
    error = request_error(frame(b'{"type":"Ping","x":"\xff"}'), json_backend)
    assert error.fatal
    assert "UTF-8" in error.message


@pytest.mark.parametrize("json_backend", BACKENDS)
@pytest.mark.parametrize(
    "payload",
    [b"{", b'{"type":"Ping",}', b"not json", b'{"type":"Ping"} x', b'{"type":NaN}',
     b'\xef\xbb\xbf{"type":"Ping"}', b'{"type":"Ping","x":Infinity}'],
)  # fmt: skip
def test_malformed_json_structure_is_fatal(payload: bytes, json_backend: str) -> None:
    error = request_error(frame(payload), json_backend)
    assert error.fatal


@pytest.mark.parametrize("json_backend", BACKENDS)
@pytest.mark.parametrize("payload", [b"[]", b'"Ping"', b"1", b"null", b'[{"type":"Ping"}]'])
def test_top_level_must_be_a_json_object(payload: bytes, json_backend: str) -> None:
    error = request_error(frame(payload), json_backend)
    assert error.fatal
    assert "Object root" in error.message


@pytest.mark.parametrize(
    "payload", [b"{}", b'{"type":null}', b'{"type":1}', b'{"type":["Ping"]}', b'{"kind":"Ping"}']
)
def test_type_field_must_be_present_and_a_string(payload: bytes) -> None:
    error = request_error(frame(payload))
    assert error.fatal
    assert "Type field" in error.message


def test_unknown_request_type_is_recoverable() -> None:
    error = request_error(frame({"type": "Compact", "topic": "t"}))
    assert not error.fatal
    assert error.code == rustlog.ErrorCode.INVALID_REQUEST
    assert error.reply == rustlog.Error(400, "Unknown request type 'Compact'")


def test_a_response_type_sent_to_a_server_is_an_unknown_request_type() -> None:
    error = request_error(frame({"type": "Pong"}))
    assert not error.fatal
    assert "Unknown request type" in error.message


def test_invalid_request_fields_are_recoverable() -> None:
    error = request_error(frame({"type": "Fetch", "topic": "t"}))
    assert not error.fatal
    assert isinstance(error.reply, rustlog.Error)
    assert error.reply.code == rustlog.ErrorCode.INVALID_REQUEST


def test_a_frame_too_large_to_send_is_a_local_error_and_nothing_is_emitted() -> None:
    conn = rustlog.Connection(Role.CLIENT, rustlog.Limits(max_frame_size=64))
    with pytest.raises(LocalProtocolError) as info:
        conn.send(rustlog.Produce("t", 0, (bytes(100),)))
    assert info.value.code == rustlog.ErrorCode.RECORD_TOO_LARGE
    assert conn.state is rustlog.State.CONNECTED
    assert conn.in_flight == 0


def test_frames_split_anywhere_reassemble() -> None:
    data = frame({"type": "Ping"}) + frame({"type": "ListTopics"})
    conn = rustlog.Connection(Role.SERVER)
    events = []
    for byte in data:
        conn.receive_data(bytes([byte]))
        events.extend(conn.events())
    assert events == [rustlog.Ping(), rustlog.ListTopics()]


def test_check_length_accepts_one_byte_and_max() -> None:
    limits = rustlog.Limits()
    wire.check_length(1, limits)
    wire.check_length(rustlog.MAX_FRAME_SIZE, limits)
    assert rustlog.Connection(Role.SERVER).next_event() is NEED_DATA


# --- the frame loop (FrameDecoder) gives what decode_payload gives, frame by frame ---------


def loop_outcome(data: bytes, json_backend: str, *, requests: bool) -> list[object]:
    """Every event or error (as code, fatal, message) of ``FrameDecoder`` over ``data``."""
    backend = rustlog._json_backend.backend(json_backend)
    context = schema.Context(rustlog.Limits(), backend.exact_integers)
    decoder = wire.FrameDecoder(context, backend, requests=requests)
    out: deque[rustlog.Event | RemoteProtocolError] = deque()
    at = 0
    while True:
        used = decoder.decode(bytearray(data), at, len(data), out)
        if used == at or (out and isinstance(out[-1], RemoteProtocolError) and out[-1].fatal):
            break  # nothing more to read, or nothing after a fatal error may be read
        at = used
    return [
        (item.code, item.fatal, item.message) if isinstance(item, RemoteProtocolError) else item
        for item in out
    ]


def payload_outcome(payload: bytes, json_backend: str, *, requests: bool) -> object:
    backend = rustlog._json_backend.backend(json_backend)
    context = schema.Context(rustlog.Limits(), backend.exact_integers)
    decoders: Any = schema.REQUEST_DECODERS if requests else schema.RESPONSE_DECODERS
    kind = "request" if requests else "response"
    try:
        return wire.decode_payload(payload, decoders, context, backend, kind)
    except RemoteProtocolError as exc:
        return (exc.code, exc.fatal, exc.message)


def _dumps(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


payloads = st.one_of(
    requests().map(lambda e: _dumps(schema.encode(e, rustlog.Limits()))),
    responses().map(lambda e: _dumps(schema.encode(e, rustlog.Limits()))),
    st.tuples(requests() | responses(), st.text(max_size=8), json_values()).map(
        lambda t: _dumps({**schema.encode(t[0], rustlog.Limits()), t[1]: _plain(t[2])})
    ),
    st.binary(min_size=1, max_size=60),
    st.sampled_from(
        [b"[]", b'"Ping"', b"{}", b'{"type":1}', b'{"type":["Ping"]}', b'{"type":{"a":1}}']
    ),
)


def _plain(value: object) -> object:
    if isinstance(value, rustlog.JsonObject):
        return value.to_python()
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


@pytest.mark.parametrize("json_backend", BACKENDS)
@given(st.lists(payloads, min_size=1, max_size=6))
def test_frame_loop_gives_exactly_what_decode_payload_gives(
    json_backend: str, batch: list[bytes]
) -> None:
    data = b"".join(frame(payload) for payload in batch)
    for requests_side in (True, False):
        expected = []
        for payload in batch:
            result = payload_outcome(payload, json_backend, requests=requests_side)
            expected.append(result)
            if isinstance(result, tuple) and result[1]:
                break  # a fatal error ends the pass: nothing after it is decoded
        assert loop_outcome(data, json_backend, requests=requests_side) == expected


def test_frame_loop_stops_before_a_header_the_limits_refuse_and_a_partial_frame() -> None:
    backend = rustlog._json_backend.STDLIB
    decoder = wire.FrameDecoder(schema.Context(rustlog.Limits()), backend, requests=True)
    ping = frame({"type": "Ping"})
    zero = b"\x00\x00\x00\x00" + ping
    for tail in (zero, struct.pack(">I", rustlog.MAX_FRAME_SIZE + 1), ping[:-1], ping[:3]):
        out: deque[rustlog.Event | RemoteProtocolError] = deque()
        data = bytearray(ping + tail)
        assert decoder.decode(data, 0, len(data), out) == len(ping)
        assert list(out) == [rustlog.Ping()]


def test_a_frame_longer_than_one_pass_is_decoded_whole() -> None:
    big = rustlog.Produce("t", 0, (bytes(40_000),))
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    data = client.send(rustlog.Ping()) + client.send(big) + client.send(rustlog.Ping())
    conn = rustlog.Connection(Role.SERVER)
    conn.receive_data(data)
    assert list(conn.events()) == [rustlog.Ping(), big, rustlog.Ping()]
    assert conn.in_flight == 3


@pytest.mark.parametrize("chunk", [1000, 7_000, 65_536, 70_001])
def test_a_big_frame_cut_into_chunks_is_taken_whole_with_its_neighbours(chunk: int) -> None:
    # Payloads of 64 KiB and more still arriving are collected aside by the receive buffer.
    records = tuple(rustlog.Record(n, n, bytes([n]) * 30_000) for n in range(6))
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    server = rustlog.Connection(Role.SERVER)
    fetch = rustlog.Fetch("g", "t", 0, 0, 1 << 20)
    server.receive_data(b"".join(client.send(e) for e in (rustlog.Ping(), fetch, rustlog.Ping())))
    list(server.events())
    big = rustlog.FetchResponse(records, 6)
    data = server.send(rustlog.Pong()) + server.send(big) + server.send(rustlog.Pong())
    events = []
    for at in range(0, len(data), chunk):
        client.receive_data(data[at : at + chunk])
        events.extend(client.events())
    assert events == [rustlog.Pong(), big, rustlog.Pong()]
    assert client.in_flight == 0


def test_the_end_of_the_stream_inside_a_big_frame_is_fatal_and_counts_its_bytes() -> None:
    big = rustlog.Produce("t", 0, (bytes(100_000),))
    data = rustlog.Connection(Role.CLIENT).send(big)
    conn = rustlog.Connection(Role.SERVER)
    conn.receive_data(data[:50_000])
    assert conn.next_event() is NEED_DATA
    conn.receive_data(data[50_000:90_000])
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"")
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    assert info.value.fatal
    assert "90000 bytes of a frame left" in info.value.message
