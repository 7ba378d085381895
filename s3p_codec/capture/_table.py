"""The ways rows are written out: a pandas DataFrame, JSON lines, JSON, Parquet, the terminal
table, and the per-protocol summary of ``stats``.

Every output has the columns of ``COLUMNS`` (``_rows``), in that order and with those types;
the event objects (``Row.event``) go only into a DataFrame. Rows are written as they come, in
bounded memory: JSON lines and the table line by line (flushed per row for a live decode),
Parquet in batches, and the summary counts each row once (``Summary``).
"""

from __future__ import annotations

import datetime
import json
import math
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any

from s3p_codec._extras import require
from s3p_codec.capture._rows import COLUMN_NAMES, COLUMNS, Row, is_error

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "STATS_COLUMNS",
    "TABLE_FIELDS",
    "TIME_FORMATS",
    "Summary",
    "arrow_schema",
    "format_summary",
    "format_table",
    "rows_to_dataframe",
    "summarize",
    "write_json",
    "write_jsonl",
    "write_parquet",
]


_PANDAS_DTYPES = {"str": "string", "int": "Int64", "float": "Float64", "bool": "boolean"}


def rows_to_dataframe(rows: Iterable[Row], *, events: bool = True) -> pd.DataFrame:
    """A pandas DataFrame of the rows, typed per ``COLUMNS``; ``events`` adds the event objects.

    ``ts`` also comes as a ``time`` column of pandas timestamps (UTC) for plotting.
    """
    require("parquet", "capture.rows_to_dataframe", "pandas")
    import pandas as pd  # noqa: PLC0415 - heavy, and only some callers want tables

    listed = list(rows)
    columns: dict[str, Any] = {}
    for c in COLUMNS:
        values: list[Any] = [getattr(r, c.name) for r in listed]
        columns[c.name] = pd.array(values, dtype=_PANDAS_DTYPES[c.kind])  # type: ignore[call-overload]
    frame = pd.DataFrame(columns)
    frame["time"] = pd.to_datetime(frame["ts"].astype("float64"), unit="s", utc=True)
    if events:
        frame["event"] = pd.Series([r.event for r in listed], dtype="object")
    return frame


def arrow_schema() -> pa.Schema:
    """The Parquet/Arrow schema of ``COLUMNS``."""
    require("parquet", "capture.arrow_schema", "pyarrow")
    import pyarrow as pa  # noqa: PLC0415 - heavy, and only some callers want Parquet

    types = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}
    return pa.schema([pa.field(c.name, types[c.kind], nullable=c.nullable) for c in COLUMNS])


def write_jsonl(rows: Iterable[Row], out: IO[str], *, flush: bool = False) -> int:
    """One JSON object per row; return how many rows were written. ``flush`` flushes ``out``
    after every row (live decoding: each row is readable as soon as it is complete)."""
    written = 0
    for row in rows:
        out.write(json.dumps(row.as_dict(), ensure_ascii=False, separators=(",", ":")))
        out.write("\n")
        if flush:
            out.flush()
        written += 1
    return written


def write_json(rows: Iterable[Row], out: IO[str]) -> int:
    """One JSON array of row objects (``--format json``, as ``stats`` writes its table),
    written row by row so memory stays bounded; return how many rows were written."""
    written = 0
    out.write("[")
    for row in rows:
        out.write(",\n " if written else "\n ")
        out.write(json.dumps(row.as_dict(), ensure_ascii=False, separators=(",", ":")))
        written += 1
    out.write("\n]\n" if written else "]\n")
    return written


def write_parquet(rows: Iterable[Row], path: str, batch_rows: int = 50_000) -> int:
    """Write rows to a Parquet file in batches (memory bounded by ``batch_rows``)."""
    require("parquet", "Parquet output", "pyarrow", "pandas")
    import pyarrow as pa  # noqa: PLC0415 - heavy, and only some callers want Parquet
    import pyarrow.parquet as pq  # noqa: PLC0415

    # The pandas metadata of an empty ``rows_to_dataframe`` frame goes into the file, so that
    # ``pandas.read_parquet`` gives the same dtypes (nullable ``Int64`` ``pair_id``, ``string``
    # columns) as ``rows_to_dataframe``, not float64 for integer columns with nulls.
    empty = rows_to_dataframe([], events=False).drop(columns=["time"])
    pandas_metadata = pa.Schema.from_pandas(empty, preserve_index=False).metadata
    schema = arrow_schema().with_metadata(pandas_metadata)
    written = 0
    with pq.ParquetWriter(path, schema) as writer:
        for batch in _batches(rows, batch_rows):
            columns = {name: [getattr(r, name) for r in batch] for name in COLUMN_NAMES}
            writer.write_table(pa.Table.from_pydict(columns, schema=schema))
            written += len(batch)
        if not written:
            writer.write_table(schema.empty_table())
    return written


def _batches(rows: Iterable[Row], size: int) -> Iterator[list[Row]]:
    batch: list[Row] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


_TABLE_COLUMNS = (
    # (column, title, width, may be cut when the terminal is narrow)
    ("first_packet", "pkt", 6, False),
    ("ts", "time", 17, False),
    ("protocol", "proto", 7, False),
    ("direction", "dir", 3, False),
    ("event_type", "event", 14, True),
    ("pair_id", "pair", 4, False),
    ("latency_ms", "latency", 9, False),
    ("stream", "stream", 12, True),
    ("offset", "offset", 16, True),
    ("count", "count", 5, False),
    ("wire_bytes", "bytes", 6, False),
    ("error_code", "error", 12, False),
    ("detail", "detail", 0, True),
)
_TITLES = {name: title for name, title, _, _ in _TABLE_COLUMNS}
TABLE_FIELDS = tuple(name for name, _, _, _ in _TABLE_COLUMNS)
"""The table's default columns, in order; ``format_table(fields=...)`` (``-e FIELD``) picks
others among ``COLUMNS``."""
_GROWS = {"error_code": 20, "stream": 32, "offset": 24, "event_type": 18}
"""How wide a cut column may grow when the terminal has room (the rest goes to ``detail``)."""
_MIN_WIDTH = 10
_GAP = " "
TIME_FORMATS = ("relative", "absolute", "epoch")
"""How the table shows ``ts``: seconds since the earliest packet of the inputs (tshark's default,
across files in time order), UTC date and time, or seconds since the epoch (what JSON lines and
Parquet always hold)."""
_TIME_WIDTH = {"relative": 13, "absolute": 26, "epoch": 17}


def _cell(name: str, value: object) -> str:
    if value is None:
        return ""
    if name == "direction":
        return "->" if value == "client_to_server" else "<-" if value else ""
    if name == "latency_ms" and isinstance(value, float):
        return f"{value:.3f}ms"
    return str(value)


def _time_cell(ts: float, time: str, origin: float) -> str:
    if time == "relative":
        return f"{ts - origin:.6f}"
    if time == "absolute":
        stamp = datetime.datetime.fromtimestamp(ts, datetime.UTC)
        return stamp.strftime("%Y-%m-%d %H:%M:%S.%f")
    return f"{ts:.6f}"


def _layout(fields: Sequence[str], time: str, width: int | None) -> list[tuple[str, int, bool]]:
    """(column, width, may be cut) for each field, fitted to ``width`` (None: nothing is cut).

    A narrow terminal shrinks the cut columns down to ``_MIN_WIDTH`` each; a wide one grows
    them up to ``_GROWS``, and the last column (``detail``) takes the rest of the line.
    """
    known = {name: (w, cut) for name, _, w, cut in _TABLE_COLUMNS}
    names = list(fields)
    widths: dict[str, int] = {}
    cuts: dict[str, bool] = {}
    for name in names:
        base, cut = known.get(name, (max(len(name), 10), True))
        widths[name] = _TIME_WIDTH[time] if name == "ts" else base
        cuts[name] = cut
    if width is None:
        return [(n, widths[n], False) for n in names]
    body = names[:-1]
    fixed = sum(widths[n] for n in body) + len(_GAP) * len(body)
    room = width - fixed - (widths[names[-1]] or _MIN_WIDTH)  # the last column keeps some
    for name in body:
        if room >= 0:
            break
        if cuts[name] and widths[name] > _MIN_WIDTH:
            give = min(widths[name] - _MIN_WIDTH, -room)
            widths[name] -= give
            room += give
    for name, grow in _GROWS.items():
        if room > 0 and name in body and widths[name] < grow:
            give = min(grow - widths[name], room)
            widths[name] += give
            room -= give
    return [(n, widths[n], cuts[n]) for n in names]


def format_table(
    rows: Iterable[Row],
    *,
    time: str = "relative",
    origin: float | None = None,
    width: int | None = None,
    fields: Sequence[str] | None = None,
) -> Iterator[str]:
    """Rows as aligned text lines for a terminal, a header first; each conversation introduced
    by a line naming its file, client and server.

    ``time`` is one of ``TIME_FORMATS``; relative times count from ``origin`` (default: the
    first row's time; the command line passes the earliest first packet of its inputs, so
    times never go negative across files). ``width`` is the terminal's: long stream, offset,
    event and detail cells are cut to fit it and the columns grow when there is room; None (a
    pipe, ``--wide``) cuts nothing. Error codes, numbers and times are never cut. ``fields``
    picks the columns (``-e FIELD``; default ``TABLE_FIELDS``). Lines come one per row as rows
    come, so a live decode prints as it goes. Raises ValueError for an unknown ``time`` or
    field.
    """
    if time not in TIME_FORMATS:
        raise ValueError(f"time must be one of {TIME_FORMATS}, not {time!r}")
    chosen = tuple(fields) if fields else TABLE_FIELDS
    unknown = [name for name in chosen if name not in COLUMN_NAMES]
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r}; fields: {', '.join(COLUMN_NAMES)}")
    columns = _layout(chosen, time, width)
    starts = [0]
    for _, column_width, _ in columns:
        starts.append(starts[-1] + column_width + len(_GAP))
    header = _GAP.join(_TITLES.get(n, n).ljust(w) for n, w, _ in columns).rstrip()
    yield header
    current = None
    for row in rows:
        if row.kind == "capture_error":
            current = None
            yield f"# {row.file}: cannot read: {row.detail}"
            continue
        if origin is None:
            origin = row.ts
        if row.conversation != current:
            current = row.conversation
            yield f"# {row.conversation}  {row.client} -> {row.server}  [{row.protocol}]"
        line = ""
        for index, (name, column_width, cut) in enumerate(columns):
            if name == "ts":
                text = _time_cell(row.ts, time, origin)
            else:
                text = _cell(name, getattr(row, name))
            if index == len(columns) - 1:
                if cut and width is not None:
                    left = max(width - len(line), _MIN_WIDTH)
                    text = text if len(text) <= left else text[: left - 3] + "..."
                line += text
                break
            if cut and len(text) > column_width:
                text = text[: column_width - 3] + "..."
            line += text
            # Pad to where the next column starts: a cell that could not be cut (a long error
            # code) pushes only until the blank cells after it take the overflow back.
            line += " " * max(starts[index + 1] - len(line), len(_GAP))
        yield line.rstrip()


STATS_COLUMNS = (
    "protocol",
    "conversations",
    "events",
    "requests",
    "replies",
    "bytes",
    "errors",
    "gaps",
    "latency_p50_ms",
    "latency_p90_ms",
    "latency_p99_ms",
)


def _percentile(ordered: list[float], q: float) -> float | None:
    """Nearest-rank percentile of sorted values (None when there are none)."""
    if not ordered:
        return None
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[rank - 1]


class Summary:
    """``summarize``'s table built row by row, so a live decode can print it at any moment
    (Ctrl-C). Memory: a set of conversation ids and an array of latencies per protocol."""

    def __init__(self) -> None:
        self._acc: dict[str, dict[str, Any]] = {}

    def add(self, row: Row) -> None:
        """Count one row."""
        entry = self._acc.get(row.protocol)
        if entry is None:
            entry = self._acc[row.protocol] = {"conversations": set(), "latencies": array("d")}
            entry.update(dict.fromkeys(("events", "requests", "replies", "bytes"), 0))
            entry.update(dict.fromkeys(("errors", "gaps"), 0))
        if row.kind != "capture_error":
            entry["conversations"].add(row.conversation)
        if row.kind == "event":
            entry["events"] += 1
            if row.pair_id is not None:
                key = "requests" if row.direction == "client_to_server" else "replies"
                entry[key] += 1
        if is_error(row.kind, row.error_code):
            entry["errors"] += 1  # decoding errors and the protocol's own error replies
        if row.kind == "gap":
            entry["gaps"] += 1
        if row.kind in ("event", "undecoded", "error"):
            entry["bytes"] += row.wire_bytes
        if row.latency_ms is not None:
            entry["latencies"].append(row.latency_ms)

    def table(self) -> list[dict[str, Any]]:
        """The per-protocol table of the rows added so far (see ``summarize``)."""
        table = []
        for protocol in sorted(self._acc):
            entry = dict(self._acc[protocol])
            latencies = sorted(entry.pop("latencies"))
            entry["conversations"] = len(entry["conversations"])
            table.append(
                {
                    "protocol": protocol,
                    **entry,
                    "latency_p50_ms": _percentile(latencies, 50),
                    "latency_p90_ms": _percentile(latencies, 90),
                    "latency_p99_ms": _percentile(latencies, 99),
                }
            )
        return table


def summarize(rows: Iterable[Row]) -> list[dict[str, Any]]:
    """Per protocol: conversations, events, requests and replies paired, bytes on the wire,
    errors, gaps and request-to-reply latency percentiles (nearest rank), sorted by protocol."""
    summary = Summary()
    for row in rows:
        summary.add(row)
    return summary.table()


def format_summary(table: list[dict[str, Any]]) -> Iterator[str]:
    """The summary as aligned text lines, a header first."""

    def cell(value: object) -> str:
        if value is None:
            return "-"
        if isinstance(value, float):
            return f"{value:.3f}"
        return str(value)

    lines = [list(STATS_COLUMNS)] + [[cell(r[c]) for c in STATS_COLUMNS] for r in table]
    widths = [max(len(line[i]) for line in lines) for i in range(len(STATS_COLUMNS))]
    for line in lines:
        yield "  ".join(
            text.ljust(w) if i == 0 else text.rjust(w)
            for i, (text, w) in enumerate(zip(line, widths, strict=True))
        )
