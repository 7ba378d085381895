"""RustLog: u32 big-endian length-prefixed frames of UTF-8 JSON, as a sans-IO codec.

    from s3p_codec import rustlog, Role, NEED_DATA

    client = rustlog.Connection(Role.CLIENT)                 # json="json" | "orjson" | None
    wire = client.send(rustlog.Produce(topic="logs", partition=0, records=(b"Hello World",)))
    client.receive_data(reply_bytes)
    event = client.next_event()                              # rustlog.ProduceResponse(...)

One request is in flight at a time unless the client is made with ``pipelining=True`` (the
protocol has no request ids, so responses pair with requests by order). On a server, a request
with an unknown type or bad fields raises ``RemoteProtocolError`` with ``fatal=False`` and the
``Error`` response to send in ``error.reply``; the connection stays open. Framing, UTF-8 and JSON
errors are fatal.

Decisions where the spec is silent (documented in ``_schema``, tested):

- DescribePartition: ``{"type":"DescribePartition","topic":str,"partition":u32}``, answered by
  ``{"type":"DescribePartitionResponse","topic":str,"partition":u32,"high_watermark":u64,
  "log_start_offset":u64,"segment_count":usize}``.
- MetricsFetchResponse: ``{"type":"MetricsFetchResponse","metrics":{...}}``, one free-form JSON
  object (``rustlog.JsonObject``) under ``metrics``.
- Fields typed ``T | null`` may be absent (read as null); unknown fields are ignored; unknown
  error codes are kept as plain ints.
- Nesting deeper than 64 levels is malformed JSON (fatal), so that the standard library and
  orjson backends agree on every input.
"""

from __future__ import annotations

from s3p_codec.rustlog._connection import Connection
from s3p_codec.rustlog._events import (
    BY_TYPE_ID,
    REQUEST_TYPES,
    RESPONSE_TO,
    RESPONSE_TYPES,
    CreateTopic,
    CreateTopicResponse,
    DescribePartition,
    DescribePartitionResponse,
    DescribeTopic,
    DescribeTopicResponse,
    Error,
    ErrorCode,
    Event,
    Fetch,
    FetchResponse,
    JsonObject,
    JsonValue,
    ListTopics,
    ListTopicsResponse,
    MessageType,
    MetricsFetch,
    MetricsFetchResponse,
    OffsetCommit,
    OffsetCommitResponse,
    OffsetFetch,
    OffsetFetchResponse,
    PartitionInfo,
    Ping,
    Pong,
    Produce,
    ProduceResponse,
    Record,
    Request,
    Response,
    TopicInfo,
)
from s3p_codec.rustlog._json_backend import ORJSON, STDLIB, JsonBackend
from s3p_codec.rustlog._limits import (
    MAX_FRAME_SIZE,
    MAX_PARTITION_COUNT,
    MAX_RECORD_SIZE,
    MAX_RECORDS_PER_PRODUCE,
    MAX_TOPIC_LENGTH,
    MIN_FRAME_SIZE,
    Limits,
)
from s3p_codec.rustlog._observer import Observer
from s3p_codec.rustlog._state import ConnectionState, State

__all__ = [
    "BY_TYPE_ID",
    "MAX_FRAME_SIZE",
    "MAX_PARTITION_COUNT",
    "MAX_RECORDS_PER_PRODUCE",
    "MAX_RECORD_SIZE",
    "MAX_TOPIC_LENGTH",
    "MIN_FRAME_SIZE",
    "ORJSON",
    "REQUEST_TYPES",
    "RESPONSE_TO",
    "RESPONSE_TYPES",
    "STDLIB",
    "Connection",
    "ConnectionState",
    "CreateTopic",
    "CreateTopicResponse",
    "DescribePartition",
    "DescribePartitionResponse",
    "DescribeTopic",
    "DescribeTopicResponse",
    "Error",
    "ErrorCode",
    "Event",
    "Fetch",
    "FetchResponse",
    "JsonBackend",
    "JsonObject",
    "JsonValue",
    "Limits",
    "ListTopics",
    "ListTopicsResponse",
    "MessageType",
    "MetricsFetch",
    "MetricsFetchResponse",
    "Observer",
    "OffsetCommit",
    "OffsetCommitResponse",
    "OffsetFetch",
    "OffsetFetchResponse",
    "PartitionInfo",
    "Ping",
    "Pong",
    "Produce",
    "ProduceResponse",
    "Record",
    "Request",
    "Response",
    "State",
    "TopicInfo",
]
