"""SSE: the encoder (injection-proof, lossless line by line) and the incremental parser."""

from __future__ import annotations

import base64
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import RemoteProtocolError
from s3p_codec.durable import SSEControl, SSEData, sse

SPEC_JSON_EXAMPLE = (
    b"event: data\n"
    b"data: [\n"
    b'data: {"k":"v"},\n'
    b'data: {"k":"w"},\n'
    b"data: ]\n"
    b"\n"
    b"event: control\n"
    b'data: {"streamNextOffset":"123456_789","streamCursor":"abc"}\n'
    b"\n"
)
SPEC_BINARY_EXAMPLE = (
    b"event: data\n"
    b"data: AQIDBAUG\n"
    b"data: BwgJCg==\n"
    b"\n"
    b"event: control\n"
    b'data: {"streamNextOffset":"123456_789","streamCursor":"abc"}\n'
    b"\n"
)


def parse_all(chunks: list[bytes]) -> list[sse.ServerSentEvent]:
    parser = sse.SSEParser()
    events: list[sse.ServerSentEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    return events


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    pieces, start = [], 0
    for point in points:
        pieces.append(data[start:point])
        start = point
    pieces.append(data[start:])
    return pieces


def test_the_spec_json_example_parses_to_a_batched_array_and_a_control_event() -> None:
    data_event, control_event = parse_all([SPEC_JSON_EXAMPLE])
    assert data_event.event == "data"
    # (The example's trailing comma makes its batch invalid JSON; the parse is still exact.)
    assert data_event.data == '[\n{"k":"v"},\n{"k":"w"},\n]'
    assert sse.decode_control(control_event) == SSEControl("123456_789", cursor="abc")


def test_the_spec_binary_example_decodes_its_base64_lines() -> None:
    data_event, _ = parse_all([SPEC_BINARY_EXAMPLE])
    decoded = sse.decode_data(data_event, base64_encoded=True)
    assert decoded == SSEData(bytes(range(1, 11)))


def test_each_payload_line_becomes_its_own_data_line() -> None:
    assert sse.encode_event("data", "line1\nline2\r\nline3\rline4") == (
        b"event: data\ndata:line1\ndata:line2\ndata:line3\ndata:line4\n\n"
    )


@pytest.mark.parametrize(
    "payload",
    [
        'safe\r\n\r\nevent: control\r\ndata: {"injected":true}\r\n\r\nmore',
        "start\n\nevent: data\ndata: fake-event\n\nend",
        'start\r\revent: control\rdata: {"cr_injected":true}\r\rend',
    ],
)
def test_embedded_event_boundaries_become_literal_data_crlf_injection(payload: str) -> None:
    wire = sse.encode_event("data", payload) + sse.encode_control(SSEControl("1_1", cursor="7"))
    events = parse_all([wire])
    assert [e.event for e in events] == ["data", "control"]
    assert events[0].data == re.sub(r"\r\n|\r", "\n", payload)
    assert json.loads(events[1].data) == {"streamNextOffset": "1_1", "streamCursor": "7"}


def test_a_line_starting_with_a_space_keeps_it() -> None:
    wire = sse.encode_event("data", " indented\n  twice")
    assert wire == b"event: data\ndata:  indented\ndata:   twice\n\n"
    assert parse_all([wire])[0].data == " indented\n  twice"


def test_no_id_or_retry_fields_are_written() -> None:
    wire = sse.encode_data(b"x", base64_encoded=False) + sse.encode_control(
        SSEControl("1_1", cursor="2", up_to_date=True)
    )
    assert b"id:" not in wire
    assert b"retry:" not in wire


def test_control_events_use_camel_case_and_omit_unset_fields() -> None:
    open_event = sse.encode_control(SSEControl("1_1", cursor="9", up_to_date=True))
    assert open_event == (
        b'event: control\ndata:{"streamNextOffset":"1_1","streamCursor":"9","upToDate":true}\n\n'
    )
    closed = sse.encode_control(SSEControl("1_1", closed=True))
    assert closed == b'event: control\ndata:{"streamNextOffset":"1_1","streamClosed":true}\n\n'


def test_an_empty_binary_payload_is_the_empty_base64_string() -> None:
    wire = sse.encode_data(b"", base64_encoded=True)
    assert wire == b"event: data\ndata:\n\n"
    (event,) = parse_all([wire])
    assert sse.decode_data(event, base64_encoded=True) == SSEData(b"")


def test_base64_text_must_be_a_multiple_of_4_and_valid() -> None:
    with pytest.raises(RemoteProtocolError, match="multiple of 4"):
        sse.decode_data(sse.ServerSentEvent("data", "abc"), base64_encoded=True)
    with pytest.raises(RemoteProtocolError, match="base64"):
        sse.decode_data(sse.ServerSentEvent("data", "ab!="), base64_encoded=True)


@pytest.mark.parametrize(
    "data",
    [
        "not json",
        "[1]",
        '{"streamCursor":"1"}',
        '{"streamNextOffset":1}',
        '{"streamNextOffset":"1","streamCursor":2}',
        '{"streamNextOffset":"1","upToDate":"yes"}',
        '{"streamNextOffset":"1","streamClosed":1}',
    ],
)
def test_control_events_must_carry_a_string_offset_and_typed_fields(data: str) -> None:
    with pytest.raises(RemoteProtocolError):
        sse.decode_control(sse.ServerSentEvent("control", data))


def test_cr_lf_and_crlf_all_end_lines_even_across_chunks() -> None:
    wire = b"event: a\rdata: 1\r\n\r\nevent: b\ndata: 2\n\n"
    assert parse_all([wire]) == [sse.ServerSentEvent("a", "1"), sse.ServerSentEvent("b", "2")]
    # A CR ending one chunk and an LF starting the next are one terminator, not two.
    assert parse_all([b"data: x\r", b"\ndata: y\r", b"\n\r", b"\n"]) == [
        sse.ServerSentEvent("message", "x\ny")
    ]


def test_comments_fields_without_colon_and_unknown_fields() -> None:
    wire = b": keep-alive\nevent: data\nid: 5\nretry: 10\nfoo: bar\ndata\ndata:x\n\n"
    assert parse_all([wire]) == [sse.ServerSentEvent("data", "\nx")]


def test_a_blank_line_without_data_dispatches_nothing() -> None:
    assert parse_all([b"event: control\n\n\n\ndata: a\n\n"]) == [
        sse.ServerSentEvent("message", "a")
    ]


def test_a_leading_byte_order_mark_is_skipped_even_split() -> None:
    assert parse_all([b"\xef", b"\xbb", b"\xbfdata: a\n\n"]) == [
        sse.ServerSentEvent("message", "a")
    ]


def test_invalid_utf8_is_an_sse_error() -> None:
    with pytest.raises(RemoteProtocolError) as caught:
        parse_all([b"data: \xff\n\n"])
    assert caught.value.code == "sse"


def test_line_and_event_limits_are_enforced_before_the_terminator() -> None:
    parser = sse.SSEParser(max_line=10, max_event=25)
    with pytest.raises(RemoteProtocolError, match="line longer"):
        parser.feed(b"data: " + b"x" * 20)
    parser = sse.SSEParser(max_line=20, max_event=25)
    with pytest.raises(RemoteProtocolError, match="event larger"):
        parser.feed(b"data:123456\n" * 5)


def test_pending_reports_a_partial_event() -> None:
    parser = sse.SSEParser()
    assert not parser.pending
    parser.feed(b"data: x\n")
    assert parser.pending
    parser.feed(b"\n")
    assert not parser.pending


TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=60)


@given(st.lists(TEXT, min_size=1, max_size=5), st.lists(st.integers(0, 400), max_size=12))
def test_any_chunking_gives_the_same_events(payloads: list[str], cuts: list[int]) -> None:
    wire = b"".join(sse.encode_event("data", p) for p in payloads)
    whole = parse_all([wire])
    assert parse_all(split(wire, cuts)) == whole
    assert parse_all([bytes([b]) for b in wire]) == whole
    assert [e.data for e in whole] == [re.sub(r"\r\n|\r", "\n", p) for p in payloads]


@given(st.binary(max_size=300))
def test_base64_data_events_round_trip_any_bytes(payload: bytes) -> None:
    (event,) = parse_all([sse.encode_data(payload, base64_encoded=True)])
    assert sse.decode_data(event, base64_encoded=True).data == payload
    assert base64.b64encode(payload).decode() == event.data


@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=8))
def test_random_bytes_give_events_or_sse_errors_only(data: bytes, cuts: list[int]) -> None:
    parser = sse.SSEParser(max_line=64, max_event=128)
    try:
        for piece in split(data, cuts):
            for event in parser.feed(piece):
                if event.event == "control":
                    try:
                        sse.decode_control(event)
                    except RemoteProtocolError as exc:
                        assert exc.code == "sse"  # noqa: PT017
    except RemoteProtocolError as exc:
        assert exc.code == "sse"  # noqa: PT017
