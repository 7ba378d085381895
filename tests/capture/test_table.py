"""Rows as DataFrame, JSON lines, Parquet and text; the per-protocol summary."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from s3p_codec import s3p
from s3p_codec.capture import (
    COLUMNS,
    Row,
    arrow_schema,
    decode_segments,
    format_summary,
    format_table,
    rows_to_dataframe,
    segments_from_bytes,
    summarize,
    write_jsonl,
    write_parquet,
)
from s3p_codec.capture._describe import describe_event
from tests.capture.synth import Flow, write_capture
from tests.capture.test_decoder import CLIENT, SERVER, conversation


@pytest.fixture
def rows() -> list[Row]:
    frames = conversation(Flow(CLIENT, SERVER))
    return list(decode_segments(segments_from_bytes(write_capture(frames))))


def test_dataframe_has_typed_columns_a_time_column_and_the_events(rows: list[Row]) -> None:
    frame = rows_to_dataframe(rows)
    assert list(frame.columns) == [c.name for c in COLUMNS] + ["time", "event"]
    assert str(frame["first_packet"].dtype) == "Int64"
    assert str(frame["latency_ms"].dtype) == "Float64"
    assert str(frame["time"].dtype) == "datetime64[ns, UTC]"
    assert frame["pair_id"].isna().sum() == 0
    assert frame["latency_ms"].isna().sum() == 5
    assert isinstance(frame["event"][2], s3p.Append)
    assert "event" not in rows_to_dataframe(rows, events=False).columns


def test_jsonl_and_parquet_hold_the_same_values(rows: list[Row], tmp_path: Path) -> None:
    out = io.StringIO()
    assert write_jsonl(rows, out) == len(rows)
    from_json = [json.loads(line) for line in out.getvalue().splitlines()]
    path = tmp_path / "rows.parquet"
    assert write_parquet(rows, str(path), batch_rows=3) == len(rows)
    table = pq.read_table(path)
    assert table.schema.equals(arrow_schema())
    assert table.to_pylist() == from_json == [r.as_dict() for r in rows]


def test_an_empty_parquet_file_still_has_the_schema(tmp_path: Path) -> None:
    path = tmp_path / "empty.parquet"
    assert write_parquet([], str(path)) == 0
    assert pq.read_table(path).schema.names == [c.name for c in COLUMNS]


def test_rows_have_a_rich_html_repr(rows: list[Row]) -> None:
    html = rows[2]._repr_html_()
    assert "<th>event_type</th><td>Append</td>" in html
    assert "Append(stream=b&#x27;orders&#x27;" in html


def test_text_table_groups_by_conversation(rows: list[Row]) -> None:
    lines = list(format_table(rows))
    assert lines[1] == "# <memory>#1  10.0.0.1:40000 -> 10.0.0.2:7500  [s3p]"
    assert lines[2].split()[2:5] == ["s3p", "->", "Create"]
    assert "1.000ms" in lines[3]


def test_summary_counts_and_nearest_rank_percentiles(rows: list[Row]) -> None:
    extra = [
        Row("f", 1, 1, 0.0, "f#9", "c", "s", "server_to_client", "s3p", "event", "Ok", 9,
            float(ms), None, None, None, None, 10, None, "")
        for ms in range(1, 101)
    ]  # fmt: skip
    broken = Row("f", 1, 1, 0.0, "f#9", "c", "s", "client_to_server", "s3p", "error", "Error",
                 None, None, None, None, None, None, 3, "ERR_BAD_FORMAT", "")  # fmt: skip
    (s3p_row,) = summarize([*extra, broken])
    assert s3p_row["conversations"] == 1
    assert s3p_row["events"] == 100
    assert s3p_row["errors"] == 1
    assert s3p_row["bytes"] == 1003
    assert (s3p_row["latency_p50_ms"], s3p_row["latency_p90_ms"], s3p_row["latency_p99_ms"]) == (
        50.0, 90.0, 99.0,
    )  # fmt: skip
    (real,) = summarize(rows)
    assert real["conversations"] == 1
    assert real["requests"] == real["replies"] == 5
    lines = list(format_summary([real]))
    assert lines[0].split()[0] == "protocol"
    assert lines[1].split()[:3] == ["s3p", "1", "10"]


def test_key_fields_are_found_by_name_on_any_event() -> None:
    append = s3p.Append(b"orders", (b"ab", b"cde"), timestamp=s3p.Timestamp(5, 1))
    assert describe_event(append) == {
        "stream": "orders", "offset": "5-1", "count": 2, "payload_bytes": 5,
    }  # fmt: skip
    error = s3p.ErrorReply(s3p.ErrorCode.UNKNOWN_STREAM, "no such stream")
    assert describe_event(error)["error_code"] == "ERR_UNKNOWN_STREAM"
    assert describe_event(object()) == {}


def test_s3p_v020_ids_are_the_offset_column() -> None:
    """An APPEND's ``ID`` and a READ's or TRIM's ``MIN_ID`` are where the stream is read or
    written, as a v0.1.0 timestamp is."""
    assert describe_event(s3p.Append(b"orders", (b"x",), id=1700000001234))["offset"] == (
        "1700000001234"
    )
    assert describe_event(s3p.Read(b"orders", min_id=s3p.Timestamp(7, 1)))["offset"] == "7-1"
    assert describe_event(s3p.Trim(b"orders", min_id=s3p.Timestamp(9, 0)))["offset"] == "9-0"


def test_parquet_read_back_by_pandas_has_the_dataframe_dtypes(
    rows: list[Row], tmp_path: Path
) -> None:
    """``pandas.read_parquet`` of our file and ``rows_to_dataframe`` agree column by column
    (a nullable ``Int64`` ``pair_id``, not float64), so a notebook can mix the two."""
    import pandas as pd

    from s3p_codec.capture import rows_to_dataframe, write_parquet

    path = tmp_path / "rows.parquet"
    write_parquet(rows, str(path))
    from_file = pd.read_parquet(path)
    in_memory = rows_to_dataframe(rows, events=False).drop(columns=["time"])
    assert from_file.dtypes.to_dict() == in_memory.dtypes.to_dict()
    assert str(from_file.dtypes["pair_id"]) == "Int64"
    pd.testing.assert_frame_equal(from_file, in_memory)


def test_an_event_rows_detail_is_made_when_read_and_is_the_short_repr(tmp_path: Path) -> None:
    """Event rows get their ``detail`` text only when it is read; every way of reading a row
    (attribute, ``==``, ``hash``, ``repr``, pickling, ``as_tuple``) sees the same text."""
    import pickle

    import attrs

    from s3p_codec import Role
    from s3p_codec.capture import Row, decode_files
    from s3p_codec.capture._describe import short_repr

    flow = Flow()
    frames = flow.handshake() + flow.send(True, s3p.Connection(Role.CLIENT).send(
        s3p.Append(b"orders", (b"x" * 100,) * 5)
    )) + flow.close()  # fmt: skip
    path = tmp_path / "cap.pcap"
    path.write_bytes(write_capture(frames))
    lazy = next(r for r in decode_files([str(path)]) if r.kind == "event")
    made = next(r for r in decode_files([str(path)]) if r.kind == "event")
    eager = attrs.evolve(made, detail=short_repr(made.event))
    assert type(lazy) is Row
    assert pickle.loads(pickle.dumps(lazy)) == eager  # pickling reads the text
    assert hash(made) == hash(eager)
    assert repr(made) == repr(eager)
    assert lazy.as_tuple() == eager.as_tuple()
    assert lazy.detail == short_repr(lazy.event) == eager.detail
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        lazy.detail = "x"  # type: ignore[misc]
