"""The pravega cases, moving into a package: ``requests`` holds them all until they are split."""

from __future__ import annotations

from s3p_codec.testing.pravega.requests import HELLO as HELLO
from s3p_codec.testing.pravega.requests import I64 as I64
from s3p_codec.testing.pravega.requests import SEGMENT as SEGMENT
from s3p_codec.testing.pravega.requests import SETUP as SETUP
from s3p_codec.testing.pravega.requests import WRITER as WRITER
from s3p_codec.testing.pravega.requests import E as E
from s3p_codec.testing.pravega.requests import (
    Target,
    edge_cases,
    malformed,
    malformed_replies,
    replies,
    reply_edge_cases,
    reply_wire,
    request_wire,
    requests,
    requests_for,
)
from s3p_codec.testing.pravega.requests import _aggregates as _aggregates
from s3p_codec.testing.pravega.requests import _cut_replies as _cut_replies
from s3p_codec.testing.pravega.requests import _orders as _orders
from s3p_codec.testing.pravega.requests import _reply_framing as _reply_framing
from s3p_codec.testing.pravega.requests import _reply_strings as _reply_strings
from s3p_codec.testing.pravega.requests import segments as segments

__all__ = [
    "Target",
    "edge_cases",
    "malformed",
    "malformed_replies",
    "replies",
    "reply_edge_cases",
    "reply_wire",
    "request_wire",
    "requests",
    "requests_for",
]
