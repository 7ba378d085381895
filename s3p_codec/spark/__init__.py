"""Decode packet captures on Spark (PySpark >= 4): local mode by default, a cluster alike.

``format("s3p_codec")`` is a Python Data Source of decoded events; ``decode`` is the same
result through a shuffle (files read once in parallel, segments grouped by flow key, each flow
decoded by ``capture.decode_flow``), the path for large inputs. Both give the rows of
``capture.COLUMNS`` and equal ``capture.decode_files`` on the same files::

    from s3p_codec import spark as s3p_spark
    spark = s3p_spark.spark_session()                       # local[*], 127.0.0.1, no UI
    events = s3p_spark.decode(spark, ["captures/*.pcap"], decode_as={7500: "s3p"})
    events = spark.read.format("s3p_codec").option("decode_as", "7500=s3p").load("captures/*.pcap")
    s3p_spark.summarize(events)                             # per-protocol table
    query = s3p_spark.start_stream(spark, "captures/*.pcap*", "events", "events.ckpt")

Needs the ``spark`` extra (pyspark, pyarrow) and Java 17. Names load on first use, so that the
command line can offer ``s3p-codec spark ...`` without importing pyspark for every command.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from s3p_codec.spark._datasource import (
        EVENTS_FORMAT,
        SEGMENTS_FORMAT,
        CaptureDataSource,
        SegmentsDataSource,
        expand_paths,
        register,
    )
    from s3p_codec.spark._flows import EVENT_COLUMNS, spark_ddl
    from s3p_codec.spark._pipeline import decode, format_summary, read_segments, summarize
    from s3p_codec.spark._segments import FLOW_COLUMNS, SEGMENT_SCHEMA
    from s3p_codec.spark._session import DEFAULT_MASTER, local_cores, spark_session
    from s3p_codec.spark._stream import committed_files, start_stream, stream_events

_WHERE = {
    "EVENTS_FORMAT": "datasource",
    "SEGMENTS_FORMAT": "datasource",
    "CaptureDataSource": "datasource",
    "SegmentsDataSource": "datasource",
    "expand_paths": "datasource",
    "register": "datasource",
    "EVENT_COLUMNS": "flows",
    "spark_ddl": "flows",
    "decode": "pipeline",
    "format_summary": "pipeline",
    "read_segments": "pipeline",
    "summarize": "pipeline",
    "FLOW_COLUMNS": "segments",
    "SEGMENT_SCHEMA": "segments",
    "DEFAULT_MASTER": "session",
    "local_cores": "session",
    "spark_session": "session",
    "committed_files": "stream",
    "start_stream": "stream",
    "stream_events": "stream",
}

__all__ = [
    "DEFAULT_MASTER",
    "EVENTS_FORMAT",
    "EVENT_COLUMNS",
    "FLOW_COLUMNS",
    "SEGMENTS_FORMAT",
    "SEGMENT_SCHEMA",
    "CaptureDataSource",
    "SegmentsDataSource",
    "committed_files",
    "decode",
    "expand_paths",
    "format_summary",
    "local_cores",
    "read_segments",
    "register",
    "spark_ddl",
    "spark_session",
    "start_stream",
    "stream_events",
    "summarize",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 's3p_codec.spark' has no attribute {name!r}")
    importlib.import_module("s3p_codec._extras.spark")  # MissingExtra without the spark extra
    value = getattr(importlib.import_module(f"s3p_codec.spark._{module}"), name)
    globals()[name] = value  # looked up here from now on, and seen by help() and autodoc
    return value
