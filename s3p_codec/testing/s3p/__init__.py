"""S3P cases, moving into a package: ``requests`` holds them all until they are split."""

from __future__ import annotations

from s3p_codec.testing.s3p.requests import BAD as BAD
from s3p_codec.testing.s3p.requests import LIMITS as LIMITS
from s3p_codec.testing.s3p.requests import U64 as U64
from s3p_codec.testing.s3p.requests import (
    Target,
    edge_cases,
    malformed,
    malformed_replies,
    replies,
    reply_wire,
    request_for,
    request_wire,
    requests,
    requests_for,
)
from s3p_codec.testing.s3p.requests import _reply_truncated as _reply_truncated
from s3p_codec.testing.s3p.requests import timestamps as timestamps

__all__ = [
    "Target",
    "edge_cases",
    "malformed",
    "malformed_replies",
    "replies",
    "reply_wire",
    "request_for",
    "request_wire",
    "requests_for",
    "requests",
]
