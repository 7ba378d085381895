"""PySpark (>= 4) Python Data Sources for capture files.

Two formats, registered by ``register(spark)`` (``spark_session`` does it):

``s3p_codec``
    Decoded events: ``spark.read.format("s3p_codec").option("decode_as", "7500=s3p")
    .load("captures/*.pcap")`` gives one row per event, error or gap, with the columns of
    ``capture.COLUMNS`` (see ``EVENTS_SCHEMA``). The input is cut into ``partitions`` flow
    buckets (option; default: one per file, at most the planner's cores): each task reads every
    file, keeps the segments whose flow key falls in its bucket and runs the capture layer's
    one-pass decoder on them, so a flow split across rotated files is decoded in one place, with
    memory bounded by the connections open at a time. Every task parses every file's packet
    headers, which is cheap next to decoding on one machine but grows with the bucket count: for
    large inputs and clusters, ``pipeline.decode`` (which reads each file once and lets Spark
    shuffle the segments by flow key) is the better path. Both give the same rows.

``s3p_codec_segments``
    The TCP segments of every file (``segments.SEGMENT_SCHEMA``), one task per file, each row
    with its flow key. This is the first stage of ``pipeline.decode``.

Options (both formats): ``path``/``paths`` (what ``load`` passes: files, directories or glob
patterns, expanded on the driver; missing files become error rows), ``decode_as``
(``PORT=PROTO`` pairs separated by commas). Files are ordered as a rotated set
(``capture.capture_order``) and must be readable at the same path from every executor (a local
disk in local mode, a shared mount on a cluster).
"""

from __future__ import annotations

import glob
import json
import os
import zlib
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from s3p_codec.capture import (
    CaptureFileError,
    capture_order,
    decode_segments,
    expand_url,
    flow_key,
    is_remote,
    local_path,
    read_segments,
)
from s3p_codec.spark._flows import capture_error_row, parse_options, rows_to_batch, spark_ddl
from s3p_codec.spark._segments import file_segments, segment_ddl

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

__all__ = [
    "CaptureDataSource",
    "EVENTS_FORMAT",
    "SEGMENTS_FORMAT",
    "SegmentsDataSource",
    "expand_paths",
    "register",
]

#: ``spark.read.format(...)`` name of the decoded-events data source.
EVENTS_FORMAT = "s3p_codec"
#: ``spark.read.format(...)`` name of the TCP-segments data source.
SEGMENTS_FORMAT = "s3p_codec_segments"
_BATCH_ROWS = 4096


def expand_paths(patterns: Sequence[str]) -> list[str]:
    """Files named by ``patterns`` (files, directories, globs) in capture order, no duplicates.

    A pattern that names no existing file is kept as it is, so that reading it reports the
    error in the output (as the single-process decoder does) instead of failing the job.
    """
    found: list[str] = []
    for name in patterns:
        if is_remote(name):
            found.extend(expand_url(name))  # each executor reads its own objects
            continue
        pattern = local_path(name)
        if os.path.isdir(pattern):
            found.extend(
                p for p in sorted(glob.glob(os.path.join(pattern, "*"))) if os.path.isfile(p)
            )
        elif glob.has_magic(pattern):
            found.extend(p for p in sorted(glob.glob(pattern)) if os.path.isfile(p))
        else:
            found.append(pattern)
    return capture_order(dict.fromkeys(found))


def _paths(options: Mapping[str, str]) -> list[str]:
    if "paths" in options:
        patterns = json.loads(options["paths"])
    elif "path" in options:
        patterns = [options["path"]]
    else:
        raise ValueError("no capture files: use .load(PATH_OR_GLOB) or .load([PATHS])")
    return expand_paths([str(p) for p in patterns])


class _File(InputPartition):
    """One capture file: the path a worker opens, the name rows show, its place in the set."""

    def __init__(self, path: str, name: str, index: int) -> None:
        super().__init__((path, name, index))
        self.path = path
        self.name = name
        self.index = index


class _Bucket(InputPartition):
    """One share of the flows of all files: those whose key hashes to ``bucket``."""

    def __init__(self, files: list[tuple[str, str]], bucket: int, buckets: int) -> None:
        super().__init__(bucket)
        self.files = files
        self.bucket = bucket
        self.buckets = buckets


def _files(options: Mapping[str, str]) -> list[tuple[str, str]]:
    """(path to open, name to show) of every input file, in capture order."""
    return [(open_path(name), name) for name in _paths(options)]


def open_path(name: str) -> str:
    """What a worker opens for ``name``: a URL as it is, a path made absolute."""
    return name if is_remote(name) else os.path.abspath(name)


class _SegmentsReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.files = _files(options)

    def partitions(self) -> Sequence[InputPartition]:
        return [_File(path, name, i) for i, (path, name) in enumerate(self.files)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _File)
        return file_segments(partition.path, partition.index, partition.name)


class SegmentsDataSource(DataSource):
    """``format("s3p_codec_segments")``: TCP segments per file, read in parallel."""

    @classmethod
    def name(cls) -> str:
        """The format name: ``spark.read.format("s3p_codec_segments")``."""
        return SEGMENTS_FORMAT

    def schema(self) -> str:
        """The DDL schema of segment rows."""
        return segment_ddl()

    def reader(self, schema: StructType) -> DataSourceReader:
        """A reader that turns each capture file into TCP segment rows in its own task."""
        return _SegmentsReader(self.options)


def _bucket_of(key: tuple[str, int, str, int], buckets: int) -> int:
    """A stable bucket for a flow key (Python's ``hash`` of str differs between processes)."""
    return zlib.crc32(f"{key[0]}|{key[1]}|{key[2]}|{key[3]}".encode()) % buckets


class _EventsReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.files = _files(options)
        self.decode_as = parse_options(options.get("decode_as"))
        wanted = options.get("partitions")
        default = min(len(self.files), os.cpu_count() or 1)
        self.buckets = max(1, int(wanted) if wanted else default)

    def partitions(self) -> Sequence[InputPartition]:
        return [_Bucket(self.files, b, self.buckets) for b in range(self.buckets)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _Bucket)
        errors: list[Any] = []

        def mine() -> Iterator[Any]:
            for index, (path, name) in enumerate(partition.files):
                try:
                    for segment in read_segments(path, index, name):
                        if _bucket_of(flow_key(segment), partition.buckets) == partition.bucket:
                            yield segment
                except (CaptureFileError, OSError) as exc:
                    # Each broken file is reported by exactly one task.
                    if index % partition.buckets == partition.bucket:
                        errors.append(_error_row(name, exc))

        batch = []
        for row in decode_segments(mine(), self.decode_as):
            batch.append(row)
            if len(batch) >= _BATCH_ROWS:
                yield rows_to_batch(batch)
                batch = []
        batch += errors
        if batch:
            yield rows_to_batch(batch)


def _error_row(name: str, exc: Exception) -> Any:
    if isinstance(exc, CaptureFileError):
        message = exc.message
    elif isinstance(exc, OSError) and exc.errno:
        message = str(type(exc)(exc.errno, exc.strerror, name))
    else:
        message = str(exc)
    return capture_error_row(name, type(exc).__name__, message)


class CaptureDataSource(DataSource):
    """``format("s3p_codec")``: decoded events, one row each, columns of ``capture.COLUMNS``."""

    @classmethod
    def name(cls) -> str:
        """The format name: ``spark.read.format("s3p_codec")``."""
        return EVENTS_FORMAT

    def schema(self) -> str:
        """The DDL schema of decoded-event rows (``capture.COLUMNS``)."""
        return spark_ddl()

    def reader(self, schema: StructType) -> DataSourceReader:
        """A reader that decodes each capture file in its own task."""
        return _EventsReader(self.options)


def register(spark: SparkSession) -> None:
    """Make ``format("s3p_codec")`` and ``format("s3p_codec_segments")`` known to ``spark``."""
    spark.dataSource.register(CaptureDataSource)
    spark.dataSource.register(SegmentsDataSource)
