"""The recorded conversation of the official Pravega client decodes with no error rows."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from s3p_codec import capture

SAMPLES = Path(__file__).resolve().parents[2] / "examples" / "captures"
PCAP = SAMPLES / "pravega_official.pcap"


@pytest.fixture(scope="module")
def rows() -> list[capture.Row]:
    return list(capture.decode_files([str(PCAP)]))


def test_every_row_decodes_as_pravega_without_an_error(rows: list[capture.Row]) -> None:
    assert len(rows) > 100
    assert {row.protocol for row in rows} == {"pravega"}
    assert [row for row in rows if row.kind != "event" or row.error_code] == []


def test_the_capture_holds_what_the_client_did(rows: list[capture.Row]) -> None:
    kinds = collections.Counter(row.event_type for row in rows)
    # 20 events, then 3 in a committed and 3 in an aborted transaction: every one was appended
    appended = sum(row.count or 0 for row in rows if row.event_type == "Append")
    assert appended == 26
    # every append is acknowledged, except one that reached an aborted transaction's segment
    # after the abort had deleted it (the client aborts without waiting for its writes)
    refused = [row for row in rows if row.event_type == "NoSuchSegment"]
    assert all("#transaction." in row.detail for row in refused)
    answered = kinds["DataAppended"] + len(refused)
    assert answered == kinds["Append"] + kinds["ConditionalBlockEnd"]
    assert kinds["ConditionalBlockEnd"] == 1  # the byte stream's write
    assert kinds["TruncateSegment"] == kinds["SegmentTruncated"] == 1
    tables = {
        row.detail.split("CommandType.")[1].split(":")[0]
        for row in rows
        if row.event_type == "Opaque"
    }
    assert {"CREATE_TABLE_SEGMENT", "UPDATE_TABLE_ENTRIES", "TABLE_ENTRIES_UPDATED",
            "READ_TABLE_ENTRIES_DELTA", "TABLE_ENTRIES_DELTA_READ"} <= tables  # fmt: skip
    log = json.loads((SAMPLES / "pravega_official.json").read_text())
    assert "read order-0" in log["steps"][0]["stdout"]
    assert "txn-2" in log["steps"][0]["stdout"]
    assert "aborted-" not in log["steps"][0]["stdout"]
