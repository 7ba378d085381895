"""The capture pipeline as a Spark Structured Streaming query: capture files are picked up as
they appear in a directory (``tcpdump -G 60 -w 'cap-%s.pcap'``), their rows appended to Parquet
exactly once.

::

    spark = spark_session("local[*]")
    query = start_stream(spark, "captures/*.pcap*", out="events", checkpoint="events.checkpoint",
                  trigger_seconds=10)
    query.awaitTermination()

1. Spark's file source lists new capture files (``format("binaryFile")``, of which only the
   path is read: the content column is pruned, so a file is never loaded whole), or, for a
   URL, the query's own source lists new objects (``_object_source``); the JVM
   names each file's *capture set* (``capture_set``: the path without its digit runs, so the
   files of one ``tcpdump -C``/``-G`` rotation are one set);
2. the paths are shuffled so that each capture set is in one partition, and one stateless
   Python step (``mapInArrow``) per partition and micro-batch restores each set's decoder from
   its newest *snapshot* (``FlowTable.snapshot``: per open conversation, both directions'
   reassembly, the protocol Observer, the bytes after the last complete message, what pairs
   replies with requests), reads the new files itself, in capture order, with the
   single-process reader, emits their rows and writes the next snapshot. The snapshots live
   beside the query's checkpoint (``<checkpoint>/capture-state``), written exactly once per
   committed micro-batch (``_snapshots``: a retried micro-batch resumes from the parent of the
   snapshot it wrote); Spark's state store is not used, as its Python operator costs half a
   second per micro-batch by itself.

So no payload byte goes through the JVM (only paths in, rows out), there is one Python stage,
and a micro-batch costs what its new bytes cost, whatever the age of the conversations: a
conversation of any length is carried whole. Snapshots restore exactly (a property test cuts
every protocol's captures at random points), so the rows are those of ``s3p-codec decode`` on
the same files, provided a set's files arrive in capture order (as a rotating ``tcpdump``
writes them; Spark's file source takes the oldest first). Time is capture time, never the
cluster's clock: a conversation silent for ``timeout`` seconds of capture time is closed as by
the batch decoder's idle timeout. Different capture sets decode in parallel; one set is
decoded by one task, as one process would.

``max_state_bytes`` (64 MiB) bounds the snapshot of one conversation: only a single message in
flight that large outgrows it; the conversation is then closed with an ``evicted`` row
(``StateLimit``) and what follows is decoded as a capture that starts mid-conversation. A
snapshot of another version (a checkpoint written before an upgrade) is not misread: the set
gets a ``capture_error`` row (``SnapshotError``) and goes on as if captured mid-stream.

Exactly once: the file sink and the checkpoint make each micro-batch's rows land once, and a
query killed and restarted from its checkpoint goes on from the last committed micro-batch
(its state store included).
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import pyarrow as pa

from s3p_codec._core import SnapshotError, checkpoint
from s3p_codec.capture import (
    CaptureFileError,
    FlowTable,
    Limits,
    Row,
    capture_error_row,
    capture_order,
    feed_file,
    is_remote,
)
from s3p_codec.spark._flows import rows_to_batch, spark_ddl
from s3p_codec.spark._segments import file_error
from s3p_codec.spark._snapshots import SnapshotChain

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

__all__ = [
    "MAX_STATE_BYTES",
    "STATE_TIMEOUT",
    "STOP_GRACE",
    "batch_line",
    "capture_set",
    "committed_files",
    "decode_set",
    "local_path",
    "run_until_stopped",
    "start_stream",
    "stream_events",
    "warm_up",
]

STATE_TIMEOUT = 300.0
"""Seconds of capture time without a new segment after which a conversation is finished (the
batch decoder's idle timeout, ``capture.DEFAULT_IDLE_TIMEOUT``)."""

MAX_STATE_BYTES = 64 << 20
"""Bytes one conversation's snapshot may take in the state store (see the module docstring)."""

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


def capture_set(path: str) -> str:
    """The capture set a file belongs to: its path with the digit runs taken out, so the files
    of one rotation (``cap.pcap``, ``cap.pcap1``, ... of ``tcpdump -C``; ``cap-<time>.pcap`` of
    ``-G``) are one set, decoded in one place and in ``capture_order``."""
    return _DIGIT_RUNS.sub("", path)


_DIGIT_RUNS = re.compile(r"[0-9]+")


def decode_set(
    capture_set_name: str,
    paths: Sequence[str],
    state: str,
    decode_as: Mapping[int, str],
    *,
    timeout: float = STATE_TIMEOUT,
    max_state_bytes: int = MAX_STATE_BYTES,
    batch_rows: int = 4096,
) -> Iterator[list[Row]]:
    """One capture set's step of a micro-batch: restore its decoder from the newest snapshot in
    the directory ``state`` (``_snapshots``), decode the set's new files in capture order,
    yield their rows (lists of at most about ``batch_rows``), and write the next snapshot.

    The files are read here, by the task, straight into the decoder (``capture.feed_file``, the
    single-process reader): only their paths went through the JVM, and no segment is shuffled.
    """
    files = capture_order(paths)
    chain = SnapshotChain(state, capture_set_name)
    start = chain.resume(files)
    rows: list[Row] = []
    table: FlowTable | None = None
    if start.blob is not None:
        try:
            table = FlowTable.restore(start.blob)
        except SnapshotError as exc:  # a checkpoint of another version: start afresh, say so
            rows.append(_lost_state_row(capture_set_name, exc))
    if table is None:
        table = FlowTable.with_limits(decode_as, limits=Limits(idle_timeout=timeout))
    for path in files:
        for found in _file_rows(table, path):
            rows += found
            if len(rows) >= batch_rows:
                yield rows
                rows = []
    blob = table.snapshot()
    if len(blob) > max_state_bytes:
        rows += _evict_oversized(table, max_state_bytes)
        blob = table.snapshot()
    # Rows and snapshot both before the task ends: Spark commits the rows only once every
    # task is done, so a snapshot without its committed rows is replaced by the retry.
    chain.save(start.sequence, files, blob)
    if rows:
        yield rows


def _decode_partition(
    batches: Iterator[pa.RecordBatch],
    state: str,
    decode_as: Mapping[int, str],
    timeout: float,
    max_state_bytes: int,
) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` step: this partition's new files, by capture set (Spark put each set
    in one partition), decoded into record batches of rows."""
    sets: dict[str, list[str]] = {}
    for batch in batches:
        for uri in batch.column(0).to_pylist():
            path = local_path(str(uri))
            sets.setdefault(capture_set(path), []).append(path)
    for name in sorted(sets):
        for rows in decode_set(
            name, sets[name], state, decode_as, timeout=timeout, max_state_bytes=max_state_bytes
        ):
            yield rows_to_batch(rows)


def _file_rows(table: FlowTable, path: str) -> Iterator[list[Row]]:
    """The rows of one capture file fed to ``table`` (its error row if it is not a capture or
    breaks off), as ``capture.decode_files`` reads each file; a URL (``s3://...``) is read in
    ranged reads through the filesystem layer."""
    try:
        yield from feed_file(table, path)
    except (CaptureFileError, OSError) as exc:
        yield [capture_error_row(path, type(exc).__name__, file_error(exc, path))]


def _evict_oversized(table: FlowTable, max_state_bytes: int) -> list[Row]:
    """Close each conversation whose own decoding state outgrew ``max_state_bytes`` (a single
    message in flight that large): its ``evicted`` row, and what follows of it decodes as a
    capture that starts mid-conversation."""
    rows: list[Row] = []
    for key, decoder in list(table.flows.items()):
        if len(checkpoint.dump(decoder)) <= max_state_bytes:
            continue
        rows += decoder.evict(
            "StateLimit",
            f"closed early: the decoding state of one conversation outgrew "
            f"max_state_bytes={max_state_bytes} bytes (a message in flight that large)",
            "state_limit",
        )
        del table.flows[key]
    return rows


def _lost_state_row(name: str, exc: SnapshotError) -> Row:
    """The row of a capture set whose saved state this version cannot read."""
    return capture_error_row(
        name,
        "SnapshotError",
        f"decoding state not restored, the open conversations go on as if captured "
        f"mid-stream: {exc.message}",
    )


def stream_events(
    spark: SparkSession,
    pattern: str,
    decode_as: Mapping[int, str] | None = None,
    *,
    state: str,
    timeout: float = STATE_TIMEOUT,
    max_state_bytes: int = MAX_STATE_BYTES,
    max_files_per_trigger: int | None = None,
) -> DataFrame:
    """A streaming DataFrame of the decoded events of the capture files matching ``pattern``
    (a glob or a directory, or the URL of a prefix or glob of objects: ``s3://caps/cap.pcap*``),
    as new files appear. Rows have the columns of
    ``capture.COLUMNS``. ``state`` is the directory of the decoders' snapshots (beside the
    query's checkpoint: ``start_stream`` puts it there); a query restarted with the same
    checkpoint must be given the same ``state``."""
    from pyspark.sql import functions as F  # noqa: PLC0415

    ports = dict(decode_as or {})
    folder = local_path(state)

    def step(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return _decode_partition(batches, folder, ports, timeout, max_state_bytes)

    if is_remote(pattern):
        # Objects are listed by our source, through the filesystem the step reads them with
        # (Spark's file source would need Hadoop's connector for the store).
        from s3p_codec.spark._object_source import NAME, CaptureObjects  # noqa: PLC0415

        spark.dataSource.register(CaptureObjects)
        reader = spark.readStream.format(NAME).option("pattern", pattern)
    else:
        reader = spark.readStream.format("binaryFile").schema(_BINARY_FILE_DDL)
    if max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", str(max_files_per_trigger))
    files = reader.load() if is_remote(pattern) else reader.load(pattern)
    files = files.select("path")
    # Each capture set to one partition (only paths are shuffled), then one Python stage. With
    # one core there is nothing to spread: one partition, and no shuffle stage (~0.1 s a batch).
    if spark.sparkContext.defaultParallelism == 1:
        by_set = files.coalesce(1)
    else:
        by_set = files.repartition(_capture_set_column(F))
    return by_set.mapInArrow(step, spark_ddl())


def _capture_set_column(functions: Any) -> Any:
    """``capture_set`` of the ``path`` column, computed by the JVM (no Python step for it)."""
    return functions.regexp_replace(functions.col("path"), _DIGIT_RUNS.pattern, "")


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
    state = os.path.join(local_path(checkpoint), "capture-state")
    warm_up(spark)
    events = stream_events(
        spark, pattern, decode_as, state=state, timeout=timeout,
        max_state_bytes=max_state_bytes, max_files_per_trigger=max_files_per_trigger,
    )  # fmt: skip
    return (
        events.writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
        .outputMode("append")
        .trigger(processingTime=f"{trigger_seconds} seconds")
        .start()
    )


def _import_decoders(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    import s3p_codec  # noqa: PLC0415 - what the first micro-batch would import

    for protocol in s3p_codec.PROTOCOLS:
        getattr(s3p_codec, protocol).Observer()
    rows_to_batch([])
    yield from batches


def warm_up(spark: SparkSession) -> None:
    """Start the Python workers and import the decoders in them before the first file comes.

    Spark reuses its Python workers (``spark.python.worker.reuse``), so the first micro-batch
    then pays neither a worker start nor the imports (about 2 s on one core): the first file's
    rows come as fast as the next ones'."""
    slots = max(1, spark.sparkContext.defaultParallelism)
    spark.range(slots, numPartitions=slots).mapInArrow(_import_decoders, "id bigint").collect()


STOP_GRACE = 60.0
"""Seconds a stop request waits for the running micro-batch to commit before abandoning it."""


def batch_line(progress: Mapping[str, Any]) -> str:
    """One micro-batch's progress (``StreamingQuery.lastProgress``) as a line: new files, rows
    written, its duration, and what took the time."""
    files = sum(int(source.get("numInputRows") or 0) for source in progress.get("sources", ()))
    rows = (progress.get("sink") or {}).get("numOutputRows", -1)
    durations = progress.get("durationMs") or {}
    total = durations.get("triggerExecution", 0) / 1000
    parts = ", ".join(
        f"{name} {ms / 1000:.2f}"
        for name, ms in sorted(durations.items(), key=lambda item: -item[1])
        if name != "triggerExecution" and ms >= 50
    )
    shown = "" if rows is None or rows < 0 else f", {rows} rows"
    return (
        f"batch {progress.get('batchId')}: {files} file{'' if files == 1 else 's'}{shown} in "
        f"{total:.2f} s" + (f" ({parts})" if parts else "")
    )


def run_until_stopped(
    query: StreamingQuery, out: IO[str], *, quiet: bool = False, poll: float = 0.2
) -> int:
    """Wait for ``query`` with a line per committed micro-batch on ``out``; on SIGINT or SIGTERM
    let the running micro-batch finish (at most ``STOP_GRACE`` seconds; a second signal
    abandons it), stop, and say so in one line. Returns the exit status.

    The waiting is a poll, not ``awaitTermination``: a signal that lands inside a Py4J call
    breaks the call and prints a traceback from the gateway; here it only sets a flag."""
    stops: list[int] = []

    def on_signal(number: int, _frame: object) -> None:
        stops.append(number)

    previous = {n: signal.signal(n, on_signal) for n in (signal.SIGINT, signal.SIGTERM)}
    last_batch = -1
    try:
        while query.isActive and not stops:
            time.sleep(poll)
            last_batch = _report(query, last_batch, out, quiet)
        if stops:
            deadline = time.monotonic() + STOP_GRACE
            print("stopping: the running micro-batch is finished first (again to abandon it)",
                  file=out, flush=True)  # fmt: skip
            while (
                len(stops) < 2 and time.monotonic() < deadline and query.status["isTriggerActive"]
            ):
                time.sleep(poll)
            abandoned = bool(query.status["isTriggerActive"])
            query.stop()
            last_batch = _report(query, last_batch, out, quiet)
            what = "the running micro-batch abandoned" if abandoned else "nothing left running"
            print(f"stopped after batch {last_batch} ({what}; restart with the same "
                  "checkpoint to go on)", file=out, flush=True)  # fmt: skip
            return 0
        error = query.exception()
        if error is not None:
            print(f"the streaming query failed: {str(error).splitlines()[0]}", file=out)
            return 1
        return 0
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _report(query: StreamingQuery, last_batch: int, out: IO[str], quiet: bool) -> int:
    progress = query.lastProgress
    if not progress or progress.get("batchId", -1) <= last_batch:
        return last_batch
    if not quiet:
        print(batch_line(progress), file=out, flush=True)
    return int(progress["batchId"])
