"""The recorded S3P v0.2.0 sample (``examples/captures/s3p_v020.pcap``) decodes to what the
example clients sent and printed, with the version detected from the traffic or named by
``--decode-as 7500=s3p@0.2.0``; read as v0.1.0 it gives error rows instead of silence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from s3p_codec import s3p
from s3p_codec.capture import Row, decode_files

CAPTURES = Path(__file__).resolve().parents[2] / "examples" / "captures"
SAMPLE = CAPTURES / "s3p_v020.pcap"
STEPS: list[dict[str, Any]] = json.loads((CAPTURES / "s3p_v020.json").read_text())["steps"]


def events(rows: list[Row], direction: str, kind: str) -> list[Any]:
    return [r.event for r in rows if r.direction == direction and r.event_type == kind]


@pytest.mark.parametrize("decode_as", [None, {7500: "s3p@0.2.0"}], ids=["detected", "decode-as"])
def test_the_v020_sample_holds_what_the_clients_sent_and_printed(
    decode_as: dict[int, str] | None,
) -> None:
    rows = list(decode_files([str(SAMPLE)], decode_as))
    assert {r.protocol for r in rows} == {"s3p"}
    assert [r for r in rows if r.kind not in ("event", "undecoded")] == []
    appends = events(rows, "client_to_server", "Append")
    assert [(a.records, a.id) for a in appends] == [
        ((b"hello", b"world"), 1700000001234),
        ((b"a", b"b"), None),
        ((b"c",), None),
        ((b"late",), 1),
    ]
    printed = (STEPS[1]["stdout"] + STEPS[2]["stdout"]).split()
    replies = events(rows, "server_to_client", "AppendReply")
    assert [str(r.timestamp) for r in replies] == printed
    first_read = events(rows, "server_to_client", "ReadReply")[0]
    assert [f"{ts} {data.decode()}" for ts, data in first_read.records] == (
        STEPS[3]["stdout"].splitlines()
    )
    errors = events(rows, "server_to_client", "ErrorReply")
    assert [e.code for e in errors] == [
        s3p.ErrorCode.STREAM_EXISTS,
        s3p.ErrorCode.NON_MONOTONIC_ID,
    ]
    # The pipelined READ after both errors was answered on the same connection, and paired.
    (pipelined,) = [r for r in rows if r.event_type == "Read" and r.event.min_id == s3p.Id(0, 0)]
    (answer,) = [r for r in rows if r.pair_id == pipelined.pair_id and r is not pipelined]
    assert answer.event_type == "ReadReply"
    assert answer.conversation == pipelined.conversation


def test_the_v020_sample_read_as_v010_says_what_it_cannot_decode() -> None:
    rows = list(decode_files([str(SAMPLE)], {7500: "s3p@0.1.0"}))
    assert any(r.kind == "error" for r in rows)
