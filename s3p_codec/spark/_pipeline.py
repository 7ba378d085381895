"""The capture pipeline as a Spark job: read per file, shuffle by flow key, decode per flow.

::

    spark = spark_session("local[*]")
    events = decode(spark, ["captures/*.pcap*"], decode_as={7500: "s3p"})
    events.write.parquet("events.parquet")
    for line in format_summary(summarize(events)): print(line)

1. every capture file is read in its own task (rotated sets in parallel) into its TCP segments,
   which leave the task packed per flow key: one *chunk row* per flow for each stretch of
   the file (``chunks.file_chunks``), so that Spark handles a few rows per flow, not one per
   segment;
2. Spark shuffles the chunks by a hash of the flow key into several partitions per core, so
   one connection's segments meet in one task, whichever files they came from, and sorts each
   partition on its own by (flow key, file index, packet number);
3. each flow goes through ``capture.decode_flow``, the single-process decoder's own code, one
   flow at a time (``flows.decode_chunks``, one Python call per partition).

The result has the columns of ``capture.COLUMNS`` and equals ``capture.decode_files`` on the same
files (row order aside). ``summarize`` computes ``capture.summarize``'s per-protocol table in
Spark (exact nearest-rank latency percentiles), so only one small row per protocol reaches the
driver.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql import functions as F

from s3p_codec.capture import format_summary
from s3p_codec.spark._chunks import chunk_ddl, file_chunks
from s3p_codec.spark._datasource import SEGMENTS_FORMAT, expand_paths, open_path
from s3p_codec.spark._flows import decode_chunks, spark_ddl
from s3p_codec.spark._segments import FLOW_COLUMNS

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

__all__ = [
    "PARTITIONS_PER_CORE",
    "decode",
    "format_summary",
    "read_segments",
    "shuffle_partitions",
    "summarize",
]


def read_segments(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """Stage one: the segments of every file (``format("s3p_codec_segments")``)."""
    return spark.read.format(SEGMENTS_FORMAT).option("paths", json.dumps(list(paths))).load()


PARTITIONS_PER_CORE = 4
"""Shuffle partitions per core: flows differ in size by orders of magnitude, so a few
partitions per core let a core that drew small flows take another partition instead of idling
while one large partition finishes."""


def _files_in_tasks(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """Stage one as ``decode`` runs it: one task per file, reading it with ``file_chunks``.

    The segments of ``read_segments``, packed per flow (``chunks``), and planned without the
    Python Data Source's driver-side round trips (each starts a Python process to plan the
    read): the file list is expanded here, once, and each task maps its file numbers to chunk
    batches.
    """
    names = expand_paths(paths)
    files = [(open_path(name), name) for name in names]

    def read_files(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                path, name = files[index]
                yield from file_chunks(path, index, name)

    tasks = max(1, len(files))
    return spark.range(len(files), numPartitions=tasks).mapInArrow(read_files, chunk_ddl())


def shuffle_partitions(spark: SparkSession) -> int:
    """How many flow partitions ``decode`` shuffles into: ``spark.sql.shuffle.partitions``,
    but at least ``PARTITIONS_PER_CORE`` per core, so that every core stays busy."""
    configured = int(spark.conf.get("spark.sql.shuffle.partitions") or 1)
    cores = spark.sparkContext.defaultParallelism
    return max(configured, PARTITIONS_PER_CORE * cores)


def decode(
    spark: SparkSession, paths: Sequence[str], decode_as: Mapping[int, str] | None = None
) -> DataFrame:
    """Decoded events of the capture files (or globs) ``paths``, as a lazy DataFrame.

    Every heavy step runs in parallel: one task per file reads segments (packed per flow into
    chunk rows), the shuffle spreads flows by a hash of their key over ``shuffle_partitions``
    partitions, each partition is sorted on its own (``sortWithinPartitions``, never a global
    sort) and decoded by one Python call (``mapInArrow``).
    """
    ports = dict(decode_as or {})

    def decode_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return decode_chunks(batches, ports)

    with warnings.catch_warnings():
        # pyspark warns that pandas 3 is "not yet fully supported"; no pandas is involved here.
        warnings.filterwarnings("ignore", message=".*not yet fully support pandas.*")
        segments = _files_in_tasks(spark, paths)
        return (
            segments.repartition(shuffle_partitions(spark), *FLOW_COLUMNS)
            .sortWithinPartitions(*FLOW_COLUMNS, "file_index", "number")
            .mapInArrow(decode_partition, spark_ddl())
        )


_PERCENTILES = (("latency_p50_ms", 50), ("latency_p90_ms", 90), ("latency_p99_ms", 99))


def _nearest_rank(ordered: Column, n: Column, q: int) -> Column:
    """The nearest-rank percentile ``q`` of a sorted array (null when empty), computed exactly as
    ``capture.summarize`` does: element ``max(1, ceil(q / 100 * n))``, 1-based."""
    rank = F.greatest(F.lit(1), F.ceil(F.lit(q / 100.0) * n)).cast("int")
    return F.when(n > 0, F.element_at(ordered, rank))


def summarize(events: DataFrame) -> list[dict[str, Any]]:
    """Per protocol, as ``capture.summarize`` counts them: conversations, events, requests,
    replies, bytes, errors, gaps and latency percentiles (nearest rank), sorted by protocol."""
    kind = F.col("kind")
    event = kind == "event"
    paired = event & F.col("pair_id").isNotNull()
    to_server = F.col("direction") == "client_to_server"
    latencies = F.array_sort(F.collect_list("latency_ms"))
    n = F.size(F.col("_latencies"))
    table = (
        events.groupBy("protocol")
        .agg(
            F.count_distinct(F.when(kind != "capture_error", F.col("conversation"))).alias(
                "conversations"
            ),
            F.count_if(event).alias("events"),
            F.count_if(paired & to_server).alias("requests"),
            F.count_if(paired & ~to_server).alias("replies"),
            F.sum(F.when(kind.isin("event", "undecoded", "error"), F.col("wire_bytes"))).alias(
                "bytes"
            ),
            # Decoding errors and the protocol's own error replies (rows with an error code).
            F.count_if(kind.isin("error", "capture_error") | F.col("error_code").isNotNull()).alias(
                "errors"
            ),
            F.count_if(kind == "gap").alias("gaps"),
            latencies.alias("_latencies"),
        )
        .select(
            "protocol",
            "conversations",
            "events",
            "requests",
            "replies",
            F.coalesce(F.col("bytes"), F.lit(0)).alias("bytes"),
            "errors",
            "gaps",
            *(_nearest_rank(F.col("_latencies"), n, q).alias(name) for name, q in _PERCENTILES),
        )
        .orderBy("protocol")
    )
    return [row.asDict() for row in table.collect()]
