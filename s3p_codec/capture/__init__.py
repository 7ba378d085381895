"""Decode packet captures: pcap/pcapng files -> TCP reassembly -> protocol Observers -> rows.

The three steps are pure functions another driver (Spark) calls on its own schedule::

    from s3p_codec import capture
    segments = capture.read_segments("cap.pcap", file_index=0)   # 1. per file
    key = capture.flow_key(segment)                              # 2. group by connection
    rows = capture.decode_flow(segments_of_one_key)              # 3. per flow, any order

``decode_files(paths)`` runs them in one process in one pass, ``decode_stream(binary_file)``
decodes a pipe or a growing file as it is written (rows as soon as complete), both bounded by
``Limits``; ``rows_to_dataframe``, ``write_jsonl`` and ``write_parquet`` turn rows into tables
and files.
"""

from __future__ import annotations

from s3p_codec._extras import capture as _capture_extra  # noqa: F401 - MissingExtra without it
from s3p_codec.capture.detect import DEFAULT_PORTS, PROTOCOLS, parse_decode_as, sniff
from s3p_codec.capture.observe import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_FLOWS,
    FileOutcome,
    FlowDecoder,
    FlowTable,
    Limits,
    capture_error_row,
    decode_files,
    decode_flow,
    decode_segments,
    decode_stream,
    default_observer,
    describe_event,
)
from s3p_codec.capture.pcap import (
    CaptureFileError,
    Packet,
    Segment,
    capture_order,
    decode_packet,
    read_packets,
    read_segments,
    segments_from_bytes,
)
from s3p_codec.capture.table import (
    COLUMNS,
    Column,
    Row,
    arrow_schema,
    format_summary,
    format_table,
    is_error,
    rows_to_dataframe,
    summarize,
    write_jsonl,
    write_parquet,
)
from s3p_codec.capture.tcp import Conversation, FlowKey, HalfStream, flow_key

__all__ = [
    "COLUMNS",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_FLOWS",
    "DEFAULT_PORTS",
    "PROTOCOLS",
    "CaptureFileError",
    "Column",
    "Conversation",
    "FileOutcome",
    "FlowDecoder",
    "FlowKey",
    "FlowTable",
    "HalfStream",
    "Limits",
    "Packet",
    "Row",
    "Segment",
    "arrow_schema",
    "capture_error_row",
    "capture_order",
    "decode_files",
    "decode_flow",
    "decode_packet",
    "decode_segments",
    "decode_stream",
    "default_observer",
    "describe_event",
    "flow_key",
    "format_summary",
    "format_table",
    "is_error",
    "parse_decode_as",
    "read_packets",
    "read_segments",
    "rows_to_dataframe",
    "segments_from_bytes",
    "sniff",
    "summarize",
    "write_jsonl",
    "write_parquet",
]
