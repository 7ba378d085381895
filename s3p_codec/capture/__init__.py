"""Decode packet captures: pcap/pcapng files -> TCP reassembly -> protocol Observers -> rows.

The three steps are pure functions another driver (Spark) calls on its own schedule::

    from s3p_codec import capture
    segments = capture.read_segments("cap.pcap", file_index=0)   # 1. per file
    key = capture.flow_key(segment)                              # 2. group by connection
    rows = capture.decode_flow(segments_of_one_key)              # 3. per flow, any order

``decode_files(paths)`` runs them in one process in one pass, ``decode_stream(binary_file)``
decodes a pipe or a growing file as it is written (rows as soon as complete), both bounded by
``Limits``; ``rows_to_dataframe``, ``write_jsonl`` and ``write_parquet`` turn rows into tables
and files. ``feed_file`` adds one capture file to a ``FlowTable`` kept between calls (the
Spark stream's step), and the URL helpers (``is_remote``, ``list_objects``, ``new_objects``...)
name the objects of a store as the command line and the Spark sources read them.

The implementation modules are private (``_pcap``, ``_reassembly``...): everything public is
exported here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from s3p_codec._extras import capture as _capture_extra  # noqa: F401 - MissingExtra without it
from s3p_codec.capture._decoder import FlowDecoder, default_observer
from s3p_codec.capture._describe import describe_event
from s3p_codec.capture._detect import DEFAULT_PORTS, PROTOCOLS, Verdict, parse_decode_as, sniff
from s3p_codec.capture._drivers import (
    FileOutcome,
    decode_files,
    decode_stream,
    feed_file,
)
from s3p_codec.capture._flows import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_FLOWS,
    FlowTable,
    Limits,
    decode_flow,
    decode_segments,
)
from s3p_codec.capture._packets import Packet, Segment, decode_packet
from s3p_codec.capture._pcap import MAX_RECORD, CaptureFileError, capture_order, read_packets
from s3p_codec.capture._reassembly import (
    HELD_PIECE_COST,
    Conversation,
    FlowKey,
    HalfStream,
    StreamData,
    StreamEnd,
    StreamGap,
    flow_key,
)
from s3p_codec.capture._remote import (
    LATE_UPLOAD,
    RemoteInputError,
    Seen,
    expand_url,
    is_remote,
    list_objects,
    local_path,
    new_objects,
)
from s3p_codec.capture._rows import (
    COLUMNS,
    MAX_TIMED_REQUESTS,
    Column,
    Row,
    RowErrorCode,
    capture_error_row,
    is_error,
)
from s3p_codec.capture._scan import read_segments, segments_from_bytes
from s3p_codec.capture._table import (
    Summary,
    arrow_schema,
    format_summary,
    format_table,
    rows_to_dataframe,
    summarize,
    write_jsonl,
    write_parquet,
)

if TYPE_CHECKING:
    from s3p_codec.capture._run import CaptureRun

__all__ = [
    "COLUMNS",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_FLOWS",
    "DEFAULT_PORTS",
    "HELD_PIECE_COST",
    "LATE_UPLOAD",
    "MAX_RECORD",
    "MAX_TIMED_REQUESTS",
    "PROTOCOLS",
    "CaptureFileError",
    "CaptureRun",
    "Column",
    "Conversation",
    "FileOutcome",
    "FlowDecoder",
    "FlowKey",
    "FlowTable",
    "HalfStream",
    "Limits",
    "Packet",
    "RemoteInputError",
    "Row",
    "RowErrorCode",
    "Seen",
    "Segment",
    "StreamData",
    "StreamEnd",
    "StreamGap",
    "Summary",
    "Verdict",
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
    "expand_url",
    "feed_file",
    "flow_key",
    "format_summary",
    "format_table",
    "is_error",
    "is_remote",
    "list_objects",
    "local_path",
    "new_objects",
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

# The command line's run of ``decode``/``stats``/``live`` is loaded on first use: it imports
# argparse, subprocess and the display-filter parser, which a library caller never needs.
_LAZY = {"CaptureRun": "_run"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 's3p_codec.capture' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"s3p_codec.capture.{module}"), name)
    globals()[name] = value  # looked up here from now on, and seen by help() and autodoc
    return value
