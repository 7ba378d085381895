"""The capture pipeline as a Spark Structured Streaming query: capture files are picked up as
they appear in a directory (``tcpdump -G 60 -w 'cap-%s.pcap'``), their rows appended to Parquet
exactly once.

::

    spark = spark_session("local[*]")
    query = start_stream(spark, "captures/*.pcap*", out="events", checkpoint="events.checkpoint",
                  trigger_seconds=10)
    query.awaitTermination()

1. Spark's file source lists new capture files (``format("binaryFile")``, of which only the
   path is read: the content column is pruned, so a file is never loaded whole);
2. each file is read into TCP segments in its own task (``segments.file_segments``, the batch
   pipeline's reader);
3. segments are grouped by connection (``applyInPandasWithState``). A conversation that spans
   files, and so micro-batches, keeps only a *snapshot* of its decoding state in Spark's state
   store (``FlowTable.snapshot``: both directions' reassembly, the protocol Observer, the bytes
   after the last complete message, what pairs replies with requests), never its segments.
   Each micro-batch restores that snapshot, feeds it the conversation's new segments in capture
   order, emits their rows and saves the new snapshot: its cost follows the new bytes, not the
   conversation's age, and a conversation of any length is carried whole. Snapshots restore
   exactly (a property test cuts every protocol's captures at random points), so the rows are
   those of the batch pipeline on the same files, provided the files of one conversation
   arrive in capture order (as a rotating ``tcpdump`` writes them; Spark's file source takes
   the oldest first). Time is capture time (a watermark on the segments' timestamps), never
   the clock of the cluster: when the newest capture time seen is ``timeout`` seconds past a
   conversation's last segment, it is finished as at the end of a capture (its last rows,
   ``evicted`` rows for what was still open) and its state dropped. So a restart, however
   long, changes nothing, and segments more than ``timeout`` older than the newest seen (a file
   that arrives far too late) are dropped by Spark.

``max_state_bytes`` (64 MiB) bounds one snapshot: only a single message in flight that large
outgrows it; the conversation is then closed with an ``evicted`` row (``StateLimit``) and what
follows is decoded as a capture that starts mid-conversation. A snapshot of another version
(a checkpoint written before an upgrade) is not misread: the conversation gets a
``capture_error`` row (``SnapshotError``) and goes on as if captured mid-stream.

Exactly once: the file sink and the checkpoint make each micro-batch's rows land once, and a
query killed and restarted from its checkpoint goes on from the last committed micro-batch
(its state store included).
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import pandas as pd
import pyarrow as pa

from s3p_codec._core import SnapshotError
from s3p_codec.capture import Row, Segment, capture_error_row
from s3p_codec.capture.observe import FlowTable
from s3p_codec.capture.pcap import rotation_key
from s3p_codec.spark.flows import rows_to_batch, spark_ddl
from s3p_codec.spark.segments import FLOW_COLUMNS, SEGMENT_FIELDS, file_segments, segment_ddl

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.state import GroupState

__all__ = [
    "MAX_STATE_BYTES",
    "STATE_TIMEOUT",
    "committed_files",
    "decode_group",
    "local_path",
    "start_stream",
    "stream_events",
]

STATE_TIMEOUT = 300.0
"""Seconds of capture time without a new segment after which a conversation is finished (the
batch decoder's idle timeout); also how late, in capture time, a file may arrive."""

MAX_STATE_BYTES = 64 << 20
"""Bytes one conversation's snapshot may take in the state store (see the module docstring)."""

STATE_DDL = "snapshot binary, last_ts double"
"""Per connection: the snapshot of its decoding state (``FlowTable.snapshot``: reassembly, the
Observer, what is in flight; the closed conversation's key for its strays) and the capture time
of its last segment."""

_BINARY_FILE_DDL = "path string, modificationTime timestamp, length bigint, content binary"
"""The schema of Spark's ``binaryFile`` source (a streaming source must be given it)."""


def local_path(uri: str) -> str:
    """The local path of a ``file:`` URI as Spark's file source lists it (other schemes as
    they are)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme in ("file", "") else uri


def committed_files(out: str | os.PathLike[str]) -> list[str]:
    """The Parquet files of the micro-batches committed so far to the output directory ``out``,
    from the file sink's ``_spark_metadata`` log: what ``spark.read.parquet(out)`` reads, for a
    reader without Spark (pyarrow, pandas). A micro-batch killed while writing may leave part
    files in ``out`` that are in no committed batch: a reader must not see them."""
    log = Path(out) / "_spark_metadata"
    if not log.is_dir():
        return []
    batches: dict[int, Path] = {}
    compacted = -1  # every 10 batches Spark writes N.compact, holding every entry up to N
    for entry in log.iterdir():
        digits, _, suffix = entry.name.partition(".")
        if digits.isdigit() and suffix in ("", "compact"):
            batches[int(digits)] = entry
            if suffix:
                compacted = max(compacted, int(digits))
    found: list[str] = []
    for number in sorted(n for n in batches if n >= compacted):
        for line in batches[number].read_text().splitlines()[1:]:  # after the version line
            record = json.loads(line)
            if record.get("action") == "add":
                found.append(local_path(record["path"]))
    return found


def _read_files(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for uri in batch.column(0).to_pylist():
            path = local_path(str(uri))
            yield from file_segments(path, 0, path)


def _segments(frame: pd.DataFrame) -> list[Segment]:
    """A frame of segment rows as ``Segment`` objects."""
    columns = [frame[name].tolist() for name in SEGMENT_FIELDS]
    payload = SEGMENT_FIELDS.index("payload")
    columns[payload] = [bytes(p) if p is not None else b"" for p in columns[payload]]  # ""->null
    return [Segment(*v) for v in zip(*columns, strict=True)]


def _capture_order(segment: Segment) -> tuple[list[tuple[int, int | str]], int]:
    """Rotation order of the segment's file, then its packet number."""
    return (rotation_key(segment.file), segment.number)


def _frame(rows: list[Row]) -> pd.DataFrame:
    frame: pd.DataFrame = rows_to_batch(rows).to_pandas(integer_object_nulls=True)
    return frame


def decode_group(
    key: tuple[Any, ...],
    frames: Iterator[pd.DataFrame],
    state: GroupState,
    decode_as: Mapping[int, str],
    *,
    timeout: float = STATE_TIMEOUT,
    max_state_bytes: int = MAX_STATE_BYTES,
) -> Iterator[pd.DataFrame]:
    """One connection's step of a micro-batch (the function ``applyInPandasWithState`` runs):
    restore its decoder from the snapshot, feed it this micro-batch's segments, emit their rows,
    keep the new snapshot."""
    if pd.isna(key[0]):  # error rows of files that could not be read: no connection, no state
        for frame in frames:
            errors = zip(frame["file"], frame["error_type"], frame["error"], strict=True)
            yield _frame([capture_error_row(str(f), str(t), str(m)) for f, t, m in errors])
        return
    rows: list[Row] = []
    table: FlowTable | None = None
    last_ts = float("-inf")
    if state.exists:
        blob, last_ts = state.get
        try:
            table = FlowTable.restore(bytes(blob))
        except SnapshotError as exc:  # a checkpoint of another version: start afresh, say so
            rows.append(_lost_state_row(key, exc))
    if table is None:
        table = FlowTable(decode_as)
    if state.hasTimedOut:
        rows += table.finish()
        state.remove()
    else:
        # A group's rows may come in several frames, in no order: sorted together.
        fresh = [segment for frame in frames for segment in _segments(frame)]
        fresh.sort(key=_capture_order)
        add = table.add
        for segment in fresh:
            rows += add(segment)
        if fresh:
            last_ts = max(last_ts, *(segment.ts for segment in fresh))
        blob = table.snapshot()
        if len(blob) > max_state_bytes:
            rows += _evict(table, max_state_bytes)
            state.remove()
        else:
            state.update((blob, last_ts))
            _finish_later(state, last_ts, timeout)
    if rows:
        yield _frame(rows)


def _evict(table: FlowTable, max_state_bytes: int) -> list[Row]:
    """Close a conversation whose snapshot outgrew ``max_state_bytes`` (a single message in
    flight that large): its ``evicted`` row, and what follows decodes as a capture that starts
    mid-conversation."""
    rows: list[Row] = []
    for decoder in table.flows.values():
        rows += decoder.evict(
            "StateLimit",
            f"closed early: the decoding state of one conversation outgrew "
            f"max_state_bytes={max_state_bytes} bytes (a message in flight that large)",
            "state_limit",
        )
    table.flows.clear()
    return rows + table.finish()


def _lost_state_row(key: tuple[Any, ...], exc: SnapshotError) -> Row:
    """The row of a conversation whose saved state this version cannot read."""
    a_addr, a_port, b_addr, b_port = key
    return capture_error_row(
        f"{a_addr}:{a_port}-{b_addr}:{b_port}",
        "SnapshotError",
        f"decoding state not restored, the conversation goes on as if captured mid-stream: "
        f"{exc.message}",
    )


def _finish_later(state: GroupState, last_ts: float, timeout: float) -> None:
    """Capture time, as the batch decoder's idle timeout: the conversation is finished once the
    watermark (the newest capture time seen, less ``timeout``) passes its last segment by
    ``timeout``."""
    due = int((last_ts + timeout) * 1000) if last_ts > float("-inf") else 0
    state.setTimeoutTimestamp(max(due, state.getCurrentWatermarkMs() + 1))


def stream_events(
    spark: SparkSession,
    pattern: str,
    decode_as: Mapping[int, str] | None = None,
    *,
    timeout: float = STATE_TIMEOUT,
    max_state_bytes: int = MAX_STATE_BYTES,
    max_files_per_trigger: int | None = None,
) -> DataFrame:
    """A streaming DataFrame of the decoded events of the capture files matching ``pattern``
    (a glob or a directory), as new files appear. Rows have the columns of
    ``capture.COLUMNS``."""
    from pyspark.sql import functions as F  # noqa: PLC0415
    from pyspark.sql.streaming.state import GroupStateTimeout  # noqa: PLC0415

    ports = dict(decode_as or {})

    def step(
        key: tuple[Any, ...], frames: Iterator[pd.DataFrame], state: GroupState
    ) -> Iterator[pd.DataFrame]:
        return decode_group(
            key, frames, state, ports, timeout=timeout, max_state_bytes=max_state_bytes
        )

    with warnings.catch_warnings():
        # pyspark 4 warns that pandas 3 is "not yet fully supported" whenever it plans a Python
        # step; the frames here hold plain columns that both versions convert alike (the
        # stream tests compare every row with the batch decoder's).
        warnings.filterwarnings("ignore", message=".*not yet fully support pandas.*")
        reader = spark.readStream.format("binaryFile").schema(_BINARY_FILE_DDL)
        if max_files_per_trigger:
            reader = reader.option("maxFilesPerTrigger", str(max_files_per_trigger))
        files = reader.load(pattern).select("path")
        segments = (
            files.mapInArrow(_read_files, segment_ddl())
            .withColumn("capture_time", F.timestamp_seconds("ts"))
            .withWatermark("capture_time", f"{int(timeout * 1000)} milliseconds")
        )
        return segments.groupBy(*FLOW_COLUMNS).applyInPandasWithState(
            step,
            outputStructType=spark_ddl(),
            stateStructType=STATE_DDL,
            outputMode="append",
            timeoutConf=GroupStateTimeout.EventTimeTimeout,
        )


def start_stream(
    spark: SparkSession,
    pattern: str,
    out: str,
    checkpoint: str,
    decode_as: Mapping[int, str] | None = None,
    *,
    trigger_seconds: float = 10.0,
    timeout: float = STATE_TIMEOUT,
    max_state_bytes: int = MAX_STATE_BYTES,
    max_files_per_trigger: int | None = None,
) -> StreamingQuery:
    """Start the query: rows appended to the Parquet directory ``out`` exactly once, progress
    and state in ``checkpoint`` (restart with the same ``checkpoint`` to go on)."""
    events = stream_events(
        spark, pattern, decode_as, timeout=timeout, max_state_bytes=max_state_bytes,
        max_files_per_trigger=max_files_per_trigger,
    )  # fmt: skip
    return (
        events.writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
        .outputMode("append")
        .trigger(processingTime=f"{trigger_seconds} seconds")
        .start()
    )
