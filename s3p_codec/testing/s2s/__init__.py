"""Hypothesis strategies for S2S peers: append inputs, their frames, malformed frames.

S2S frames ride in HTTP bodies. A malformed case here is a whole HTTP/1.1 append session: the
request head (``POST /v1/streams/fuzz/records``, ``Content-Type: s2s/proto``, chunked body) and
body chunks holding the broken frames. "After receiving or sending a terminal frame, the session
must be closed": every frame error is fatal and answered by a terminal frame whose JSON ``code``
is the case's ``code`` (``bad_frame`` 400 for framing and compression, ``bad_proto`` 400 for a
protobuf that does not decode, ``invalid`` 422 for a message that breaks a rule). A bad request
head gets a plain HTTP error response instead (``bad_header``, ``bad_path``, ``bad_query``).
"Fatal" here means the session ends (the response body ends); HTTP/1.1 may keep the connection.

Compression bombs: zstd and gzip payloads of a few hundred bytes that inflate past the
2 MiB - 1 payload limit; a strict peer stops decompressing at the cap. Every limit is also hit
exactly (``edge_cases``: must be accepted) and by one more (``malformed``): the 2 MiB frame
length (padded with an unknown protobuf field, which "Unknown fields are skipped" allows), the
decompressed payload, "1000 records or 1 MiB of metered data" per AppendInput.

Client direction (fuzz your own S2S client): ``replies()`` (``read_batches()`` of
``sequenced_records()``, heartbeats, ``terminals()``) and ``acks_for(inputs)`` (the acks that
answer append inputs) give the events a server sends; ``reply_wire()`` gives server frames as
this library's server-role codec writes them (ReadBatch and Heartbeat with compression none,
zstd and gzip; AppendAck; Terminal), ``requests_for(event)`` what the client sent first;
``malformed_replies()`` gives whole HTTP/1.1 responses a strict client must refuse (framing,
truncation after every byte of a frame, bombs, bad protobuf, acks in illegal orders, a wrong
content type), each with the ``code`` this library's client-role codec raises and ``pending``,
the requests the client sent first; ``reply_edge_cases()`` responses it must accept.

Where each part lives (every name below is importable from this package):

- ``for_servers``: the server direction (``append_records()``, ``append_inputs()``,
  ``requests()``, ``request_wire()``, ``malformed()``, ``edge_cases()``);
- ``for_clients``: the client direction (``positions()``, ``sequenced_records()``,
  ``read_batches()``, ``terminals()``, ``replies()``, ``acks_for()``, ``reply_wire()``,
  ``requests_for()``, ``malformed_replies()``, ``reply_edge_cases()``, the session requests
  ``APPEND_REQUEST`` and ``READ_REQUEST``, ``RESPONSE_HEAD``, ``END``);
- ``_target``: ``Target``, the live driver's view of S2S, and its answer reader;
- ``_wire``: what both directions share (``E``, ``STREAM``, ``TOKEN``, ``session_head()``,
  ``HEAD``, ``headers()``, the frame, bomb and payload builders).

S2S's own texts name no direction's messages "replies"; ``replies()`` is the name every
protocol module gives what a server sends back (RustLog and Durable Streams keep their specs'
"responses").
"""

from __future__ import annotations

from s3p_codec._extras import testing as _testing_extra  # noqa: F401 - MissingExtra without it
from s3p_codec.testing.s2s._target import Target
from s3p_codec.testing.s2s._wire import HEAD as HEAD
from s3p_codec.testing.s2s._wire import STREAM as STREAM
from s3p_codec.testing.s2s._wire import TOKEN as TOKEN
from s3p_codec.testing.s2s._wire import E as E
from s3p_codec.testing.s2s._wire import headers
from s3p_codec.testing.s2s._wire import session_head as session_head
from s3p_codec.testing.s2s.for_clients import APPEND_REQUEST as APPEND_REQUEST
from s3p_codec.testing.s2s.for_clients import END as END
from s3p_codec.testing.s2s.for_clients import READ_REQUEST as READ_REQUEST
from s3p_codec.testing.s2s.for_clients import RESPONSE_HEAD as RESPONSE_HEAD
from s3p_codec.testing.s2s.for_clients import U64 as U64
from s3p_codec.testing.s2s.for_clients import _ack as _ack
from s3p_codec.testing.s2s.for_clients import _inputs as _inputs
from s3p_codec.testing.s2s.for_clients import _reply_cuts as _reply_cuts
from s3p_codec.testing.s2s.for_clients import _reply_framing as _reply_framing
from s3p_codec.testing.s2s.for_clients import _reply_heads as _reply_heads
from s3p_codec.testing.s2s.for_clients import _reply_orders as _reply_orders
from s3p_codec.testing.s2s.for_clients import _reply_protobuf as _reply_protobuf
from s3p_codec.testing.s2s.for_clients import _server_frames as _server_frames
from s3p_codec.testing.s2s.for_clients import (
    acks_for,
    malformed_replies,
    positions,
    read_batches,
    replies,
    reply_edge_cases,
    reply_wire,
    requests_for,
    sequenced_records,
    terminals,
)
from s3p_codec.testing.s2s.for_servers import _limits as _limits
from s3p_codec.testing.s2s.for_servers import (
    append_inputs,
    append_records,
    edge_cases,
    malformed,
    request_wire,
    requests,
)

__all__ = [
    "Target",
    "acks_for",
    "append_inputs",
    "append_records",
    "edge_cases",
    "headers",
    "malformed",
    "malformed_replies",
    "positions",
    "read_batches",
    "replies",
    "reply_edge_cases",
    "reply_wire",
    "request_wire",
    "requests",
    "requests_for",
    "sequenced_records",
    "terminals",
]
