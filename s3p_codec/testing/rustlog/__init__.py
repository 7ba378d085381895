"""The rustlog cases, moving into a package: ``requests`` holds them all until they are split."""

from __future__ import annotations

from s3p_codec.testing.rustlog.requests import BAD as BAD
from s3p_codec.testing.rustlog.requests import TOO_LARGE as TOO_LARGE
from s3p_codec.testing.rustlog.requests import TOPIC_CHARS as TOPIC_CHARS
from s3p_codec.testing.rustlog.requests import U32 as U32
from s3p_codec.testing.rustlog.requests import U64 as U64
from s3p_codec.testing.rustlog.requests import (
    Target,
    edge_cases,
    malformed,
    malformed_replies,
    recoverable,
    reply_wire,
    request_for,
    request_wire,
    requests,
    requests_for,
    responses,
)
from s3p_codec.testing.rustlog.requests import _reply_fields as _reply_fields
from s3p_codec.testing.rustlog.requests import topics as topics

__all__ = [
    "Target",
    "edge_cases",
    "malformed",
    "malformed_replies",
    "recoverable",
    "reply_wire",
    "request_for",
    "request_wire",
    "requests_for",
    "requests",
    "responses",
]
