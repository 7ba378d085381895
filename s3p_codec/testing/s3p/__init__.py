"""Hypothesis strategies for S3P peers: valid commands, their bytes, malformed bytes.

Every strategy takes ``version`` (``"0.1.0"``, the default, or ``"0.2.0"``), and so does
``Target``: v0.2.0 cases carry ``ID``/``MIN_ID``, expect v0.2.0's codes, and the live target
adds a recoverable case (``ERR_STREAM_EXISTS``, after which the connection must still serve).

Every malformed case is fatal and must get an Error reply: "After sending any Error reply,
servers MUST close the connection immediately" and, in v0.1.0, "all errors result in
connection closure". The one exception is a command cut short by the end of the stream
(``half_close``): the server closes, and no reply is owed to a client that stopped sending.

Cases aimed at limits are built from the server's ``s3p.Limits`` (pass the limits the server
under test was started with); when a header alone breaks a limit, the payload
is left out, so a server that waits for it before answering hangs and is caught.

For clients: ``replies()`` and ``reply_wire()`` (valid replies and the bytes our server-role
codec writes for them), ``replies_for(request)`` (the replies that answer one request) and
``malformed_replies()`` (``MalformedReply`` cases a strict client refuses: lengths off by one,
at and over the client's bounds, wrong RESP types for the request pending, non-ASCII text,
repeated or missing pairs, nesting, replies out of order, truncation). Both directions at once:
``conversations()``, pipelined requests each with its reply. "Reply" is the S3P spec's word
for what a server sends back; the other protocol modules use the same names, except RustLog and
Durable Streams, whose specs say "response".

Where each part lives (every name below is importable from this package):

- ``for_servers``: the server direction (``requests()``, ``request_wire()``, ``malformed()``,
  ``edge_cases()``);
- ``for_clients``: the client direction (``replies()``, ``replies_for()``, ``reply_wire()``,
  ``request_for()``, ``requests_for()``, ``malformed_replies()``);
- ``_conversations``: both directions of one connection (``conversations()``);
- ``_target``: ``Target``, the live driver's view of S3P, and its answer reader;
- ``_wire``: what both directions share (error codes, ``U64``, ``timestamps()``).
"""

from __future__ import annotations

from s3p_codec._extras import testing as _testing_extra  # noqa: F401 - MissingExtra without it
from s3p_codec.testing.s3p._conversations import conversations
from s3p_codec.testing.s3p._target import Target
from s3p_codec.testing.s3p._wire import BAD as BAD
from s3p_codec.testing.s3p._wire import LIMITS as LIMITS
from s3p_codec.testing.s3p._wire import U64 as U64
from s3p_codec.testing.s3p._wire import timestamps
from s3p_codec.testing.s3p.for_clients import _reply_truncated as _reply_truncated
from s3p_codec.testing.s3p.for_clients import (
    malformed_replies,
    replies,
    replies_for,
    reply_wire,
    request_for,
    requests_for,
)
from s3p_codec.testing.s3p.for_servers import edge_cases, malformed, request_wire, requests

__all__ = [
    "Target",
    "conversations",
    "edge_cases",
    "malformed",
    "malformed_replies",
    "replies",
    "replies_for",
    "reply_wire",
    "request_for",
    "request_wire",
    "requests_for",
    "requests",
    "timestamps",
]
