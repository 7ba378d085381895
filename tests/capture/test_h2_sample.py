"""S2S over HTTP/2 in captures: the recorded sample of the official SDK, and sniffing it.

``examples/captures/s2s_h2.pcap`` holds the official S2 SDK (PyPI ``s2-sdk``) talking HTTP/2 with
prior knowledge to the example server; ``s2s_h2.json`` what the SDK sent and was told (one JSON
object a line: each batch appended with its ack, then the records read back).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import hpack
import pytest

from s3p_codec import s2s
from s3p_codec.capture import decode_files
from s3p_codec.capture._detect import sniff

CAPTURES = Path(__file__).resolve().parents[2] / "examples" / "captures"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _printed() -> list[dict[str, Any]]:
    (step,) = json.loads((CAPTURES / "s2s_h2.json").read_text())["steps"]
    assert step["status"] == 0
    return [json.loads(line) for line in step["stdout"].splitlines()]


@pytest.fixture(scope="module")
def rows() -> list[Any]:
    return list(decode_files([str(CAPTURES / "s2s_h2.pcap")]))


def test_the_sample_is_small_and_decodes_as_s2s_without_errors(rows: list[Any]) -> None:
    assert (CAPTURES / "s2s_h2.pcap").stat().st_size < 64 * 1024
    assert {r.protocol for r in rows} == {"s2s"}
    assert {r.kind for r in rows} == {"event", "undecoded"}
    # Only the REST call creating the stream (its own connection) carries no session.
    assert sum(1 for r in rows if r.kind == "undecoded") == 2


def test_the_appends_and_acks_are_what_the_sdk_sent_and_was_told(rows: list[Any]) -> None:
    appended = [p for p in _printed() if "append" in p]
    inputs = [r.event for r in rows if r.event_type == "AppendInput"]
    assert [[rec.body.decode() for rec in i.records] for i in inputs] == [
        p["append"] for p in appended
    ]
    acks = [r.event for r in rows if r.event_type == "AppendAck"]
    assert [(a.start.seq_num, a.end.seq_num) for a in acks] == [
        (p["start"], p["end"]) for p in appended
    ]
    assert all(r.direction == "client_to_server" for r in rows if r.event_type == "AppendInput")
    assert all(r.direction == "server_to_client" for r in rows if r.event_type == "AppendAck")


def test_each_session_negotiated_the_compression_the_sdk_asked_for(rows: list[Any]) -> None:
    sessions = [r.event.session.value for r in rows if isinstance(r.event, s2s.SessionRequest)]
    assert sessions == ["append"] * 3 + ["read"]
    negotiated = [r.event.compression for r in rows if isinstance(r.event, s2s.SessionResponse)]
    assert negotiated == [
        s2s.Compression.NONE, s2s.Compression.ZSTD, s2s.Compression.GZIP, s2s.Compression.ZSTD,
    ]  # fmt: skip
    # Every session row of one connection shares its stream's pair id with its request.
    for row in rows:
        if row.kind == "event":
            assert row.pair_id == 0  # the SDK opened one stream per connection here


def test_the_read_session_returns_what_the_sdk_read(rows: list[Any]) -> None:
    (read,) = [p["read"] for p in _printed() if "read" in p]
    batches = [r.event for r in rows if r.event_type == "ReadBatch"]
    assert [rec.body.decode() for b in batches for rec in b.records] == read
    assert len(read) == sum(len(p["append"]) for p in _printed() if "append" in p)


def _h2_client(headers: list[tuple[bytes, bytes]]) -> bytes:
    block = hpack.Encoder().encode(headers)
    head = len(block).to_bytes(3, "big") + b"\x01\x04\x00\x00\x00\x01" + block
    return PREFACE + SETTINGS + head


def test_sniffing_finds_s2s_in_an_http2_request_header_block() -> None:
    request = [
        (b":method", b"POST"), (b":scheme", b"http"), (b":authority", b"h"),
        (b":path", b"/v1/streams/orders/records"), (b"content-type", b"s2s/proto"),
    ]  # fmt: skip
    client = _h2_client(request)
    verdict = sniff(client, SETTINGS)
    assert verdict is not None
    assert (verdict.protocol, verdict.first_is_client) == ("s2s", True)
    # Either side first: the sniffer also finds which side is the client.
    verdict = sniff(SETTINGS, client)
    assert verdict is not None
    assert (verdict.protocol, verdict.first_is_client) == ("s2s", False)


def test_sniffing_waits_for_a_whole_preface_and_header_block_and_refuses_other_http2() -> None:
    assert sniff(PREFACE[:10], b"") is None  # more bytes may make it HTTP/2
    client = _h2_client([(b":method", b"GET"), (b":path", b"/"), (b":scheme", b"http")])
    assert sniff(client[:-3], b"") is None  # the header block is not whole yet
    done = sniff(client, b"", first_done=True, second_done=True, first_is_client=True)
    assert done is not None
    assert done.protocol is None
