"""The durable cases, moving into a package: ``requests`` holds them all until they are split."""

from __future__ import annotations

from s3p_codec.testing.durable.requests import _OPEN_SSE as _OPEN_SSE
from s3p_codec.testing.durable.requests import _READ as _READ
from s3p_codec.testing.durable.requests import HOST as HOST
from s3p_codec.testing.durable.requests import JSON_STREAM as JSON_STREAM
from s3p_codec.testing.durable.requests import STREAM as STREAM
from s3p_codec.testing.durable.requests import TYPES as TYPES
from s3p_codec.testing.durable.requests import C as C
from s3p_codec.testing.durable.requests import (
    ClientEvents,
    Target,
    decisions,
    malformed,
    malformed_replies,
    reply_wire,
    request_for,
    request_wire,
    requests,
    requests_for,
    response_wire,
    responses,
    stream_offsets,
)
from s3p_codec.testing.durable.requests import _reply_headers as _reply_headers
from s3p_codec.testing.durable.requests import _sse as _sse

__all__ = [
    "ClientEvents",
    "Target",
    "decisions",
    "malformed",
    "malformed_replies",
    "reply_wire",
    "request_for",
    "request_wire",
    "requests_for",
    "requests",
    "response_wire",
    "responses",
    "stream_offsets",
]
