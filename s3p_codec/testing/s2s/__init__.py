"""The s2s cases, moving into a package: ``requests`` holds them all until they are split."""

from __future__ import annotations

from s3p_codec.testing.s2s.requests import APPEND_REQUEST as APPEND_REQUEST
from s3p_codec.testing.s2s.requests import END as END
from s3p_codec.testing.s2s.requests import HEAD as HEAD
from s3p_codec.testing.s2s.requests import READ_REQUEST as READ_REQUEST
from s3p_codec.testing.s2s.requests import RESPONSE_HEAD as RESPONSE_HEAD
from s3p_codec.testing.s2s.requests import STREAM as STREAM
from s3p_codec.testing.s2s.requests import TOKEN as TOKEN
from s3p_codec.testing.s2s.requests import U64 as U64
from s3p_codec.testing.s2s.requests import E as E
from s3p_codec.testing.s2s.requests import (
    Target,
    append_inputs,
    edge_cases,
    malformed,
    malformed_replies,
    positions,
    read_batches,
    replies,
    reply_edge_cases,
    reply_wire,
    request_wire,
    requests,
    requests_for,
)
from s3p_codec.testing.s2s.requests import _ack as _ack
from s3p_codec.testing.s2s.requests import _inputs as _inputs
from s3p_codec.testing.s2s.requests import _limits as _limits
from s3p_codec.testing.s2s.requests import _reply_cuts as _reply_cuts
from s3p_codec.testing.s2s.requests import _reply_framing as _reply_framing
from s3p_codec.testing.s2s.requests import _reply_heads as _reply_heads
from s3p_codec.testing.s2s.requests import _reply_orders as _reply_orders
from s3p_codec.testing.s2s.requests import _reply_protobuf as _reply_protobuf
from s3p_codec.testing.s2s.requests import _server_frames as _server_frames
from s3p_codec.testing.s2s.requests import append_records as append_records
from s3p_codec.testing.s2s.requests import session_head as session_head

__all__ = [
    "Target",
    "append_inputs",
    "edge_cases",
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
]
