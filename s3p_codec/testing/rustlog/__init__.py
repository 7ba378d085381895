"""Hypothesis strategies for RustLog peers: valid requests, their frames, malformed frames.

RustLog splits errors in two (see docs/decisions.rst):

- fatal, "Protocol violations that terminate connection": a length of 0 or over
  10,485,760 (judged from the 4-byte header alone), invalid UTF-8, invalid JSON, a root that is
  not an object, a missing or non-string ``type``. The server closes; it may send an ``Error``
  first (400, or 413 for the length), so a reply is checked when present but not required;
- recoverable: unknown ``type``, missing or ill-typed fields, bad base64, out-of-range numbers.
  The server answers ``Error`` (400) and keeps the connection: the live driver then sends a
  ``Ping`` on it, which must get its ``Pong``.

For clients: ``responses()`` and ``reply_wire()`` (valid responses and the frames our
server-role codec writes for them) and ``malformed_replies()`` (``MalformedReply`` frames a
strict client refuses, with the requests it had pending). ``responses()`` keeps the RustLog
spec's own word ("Response types", ``ProduceResponse``...) where S3P, Pravega and S2S say
``replies()``; the names shared by every protocol module (``reply_wire()``,
``malformed_replies()``, ``requests_for()``) are the same here. ``json_values()`` draws the
free-form JSON of metrics, ``Error`` details and unknown extra fields.

Where each part lives (every name below is importable from this package):

- ``for_servers``: the server direction (``requests()``, ``request_wire()``, ``malformed()``,
  ``recoverable()``, ``edge_cases()``);
- ``for_clients``: the client direction (``responses()``, ``reply_wire()``, ``request_for()``,
  ``requests_for()``, ``malformed_replies()``);
- ``_target``: ``Target``, the live driver's view of RustLog, and its answer reader;
- ``_wire``: what both directions share (the frame and its JSON, codes, ``topics()``,
  ``json_values()``).
"""

from __future__ import annotations

from s3p_codec._extras import testing as _testing_extra  # noqa: F401 - MissingExtra without it
from s3p_codec.testing.rustlog._target import Target
from s3p_codec.testing.rustlog._wire import BAD as BAD
from s3p_codec.testing.rustlog._wire import TOO_LARGE as TOO_LARGE
from s3p_codec.testing.rustlog._wire import TOPIC_CHARS as TOPIC_CHARS
from s3p_codec.testing.rustlog._wire import U32 as U32
from s3p_codec.testing.rustlog._wire import U64 as U64
from s3p_codec.testing.rustlog._wire import json_values
from s3p_codec.testing.rustlog._wire import topics as topics
from s3p_codec.testing.rustlog.for_clients import _reply_fields as _reply_fields
from s3p_codec.testing.rustlog.for_clients import (
    malformed_replies,
    reply_wire,
    request_for,
    requests_for,
    responses,
)
from s3p_codec.testing.rustlog.for_servers import (
    edge_cases,
    malformed,
    recoverable,
    request_wire,
    requests,
)

__all__ = [
    "Target",
    "edge_cases",
    "json_values",
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
