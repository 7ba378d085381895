"""Durable Streams: append-only byte streams over HTTP, as a sans-IO codec.

HTTP/1.1 framing is h11's job; this package types the protocol's requests and responses,
validates every header and status rule, encodes and parses SSE, and offers the pure helpers a
server or client needs (offsets, the cursor algorithm, JSON-mode flattening, the idempotent
producer state machine, the client read state machine)::

    from s3p_codec import durable, Role

    client = durable.Connection(Role.CLIENT, host="127.0.0.1:4437")
    wire = client.send(durable.Create("/v1/stream/orders", content_type="application/json"))
    client.receive_data(reply_bytes)
    for event in client.events():
        print(event)   # durable.Created(next_offset=..., ...)
"""

from __future__ import annotations

from s3p_codec.durable import cursor, jsonmode, offsets, producer, sse
from s3p_codec.durable.client import ClientConnection, ClientEvent
from s3p_codec.durable.connection import Connection
from s3p_codec.durable.events import (
    CATCH_UP_CACHE_CONTROL,
    Append,
    Appended,
    Chunk,
    ConnectionErrorCode,
    Create,
    Created,
    Delete,
    Deleted,
    ErrorCode,
    ErrorResponse,
    Event,
    Head,
    LiveMode,
    LongPollTimeout,
    NotModified,
    Options,
    OptionsOk,
    Producer,
    Read,
    Request,
    Response,
    SSEControl,
    SSEData,
    SSEEnd,
    SSEEvent,
    SSEStart,
    StreamInfo,
)
from s3p_codec.durable.headers import parse_rfc3339, parse_ttl
from s3p_codec.durable.limits import Limits
from s3p_codec.durable.observer import Observer
from s3p_codec.durable.producer import ProducerDecision, ProducerOutcome, ProducerState
from s3p_codec.durable.reader import ReadPhase, StreamReader
from s3p_codec.durable.server import ServerConnection
from s3p_codec.durable.spans import EventSpans
from s3p_codec.durable.state import ConnectionState

__all__ = [
    "CATCH_UP_CACHE_CONTROL",
    "Append",
    "Appended",
    "Chunk",
    "ClientConnection",
    "ClientEvent",
    "Connection",
    "ConnectionErrorCode",
    "ConnectionState",
    "Create",
    "Created",
    "Delete",
    "Deleted",
    "ErrorCode",
    "ErrorResponse",
    "Event",
    "EventSpans",
    "Head",
    "Limits",
    "LiveMode",
    "LongPollTimeout",
    "NotModified",
    "Observer",
    "Options",
    "OptionsOk",
    "Producer",
    "ProducerDecision",
    "ProducerOutcome",
    "ProducerState",
    "Read",
    "ReadPhase",
    "Request",
    "Response",
    "SSEControl",
    "SSEData",
    "SSEEnd",
    "SSEEvent",
    "SSEStart",
    "ServerConnection",
    "StreamInfo",
    "StreamReader",
    "cursor",
    "jsonmode",
    "offsets",
    "parse_rfc3339",
    "parse_ttl",
    "producer",
    "sse",
]
