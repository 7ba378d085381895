"""Hypothesis strategies for Durable Streams servers: requests, their bytes, malformed requests.

Durable Streams is HTTP/1.1: a malformed case is one whole request whose answer must be the
HTTP status in ``code``. Two groups:

- ``malformed()``: broken headers and framing a server refuses without looking at its streams
  (TTL "0|[1-9][0-9]*", TTL together with Expires-At, producer headers "all or none", offsets
  containing ``, & = ? /``, ``live`` values, bad Content-Length and chunk sizes, a head over the
  size limit (431), a body over the limit announced by Content-Length alone (413), no Host);
- ``decisions()``: requests that are well formed but wrong for the server's state (append to a
  missing stream 404, another Content-Type than the stream's 409, invalid JSON on a JSON
  stream 400, an empty append body 400).

HTTP lets a server close the connection after any error response, so every case is ``fatal``
in the sense that the exchange is over once the response has been read; the live driver then
checks that a fresh connection is served.

For clients: ``responses()`` (every response kind), ``response_wire()`` (a response, SSE body
included, as our server-role codec writes it, with the request it answers) and
``malformed_replies()`` (``MalformedReply`` bytes a strict client refuses). ``responses()`` and
``response_wire()`` keep HTTP's and the Durable Streams spec's word, "response", where S3P,
Pravega and S2S say ``replies()``; ``reply_wire`` is ``response_wire`` under the name every
protocol module shares, as are ``malformed_replies()`` and ``requests_for()``.

Where each part lives (every name below is importable from this package):

- ``for_servers``: the server direction (``requests()``, ``request_wire()``, ``malformed()``,
  ``decisions()``);
- ``for_clients``: the client direction (``responses()``, ``response_wire()`` and its other name
  ``reply_wire()``, ``request_for()``, ``requests_for()``, ``stream_offsets()``,
  ``ClientEvents``, ``malformed_replies()``);
- ``_target``: ``Target``, the live driver's view of Durable Streams, and its answer reader;
- ``_subscriptions``: the reserved ``__ds`` APIs (``subscription_requests()``,
  ``subscription_exchanges()``, ``subscription_malformed()`` (also in ``malformed()``),
  ``subscription_decisions()`` (also in ``decisions()``), ``notifications()``,
  ``wake_events()``);
- ``_wire``: what both directions share (``C``, ``STREAM``, ``TYPES``).
"""

from __future__ import annotations

from s3p_codec._extras import testing as _testing_extra  # noqa: F401 - MissingExtra without it
from s3p_codec.testing.durable._subscriptions import (
    notifications,
    subscription_decisions,
    subscription_exchanges,
    subscription_malformed,
    subscription_requests,
    wake_events,
)
from s3p_codec.testing.durable._target import Target
from s3p_codec.testing.durable._wire import STREAM as STREAM
from s3p_codec.testing.durable._wire import TYPES as TYPES
from s3p_codec.testing.durable._wire import C as C
from s3p_codec.testing.durable.for_clients import _OPEN_SSE as _OPEN_SSE
from s3p_codec.testing.durable.for_clients import _READ as _READ
from s3p_codec.testing.durable.for_clients import (
    ClientEvents,
    malformed_replies,
    reply_wire,
    request_for,
    requests_for,
    response_wire,
    responses,
    stream_offsets,
)
from s3p_codec.testing.durable.for_clients import _reply_headers as _reply_headers
from s3p_codec.testing.durable.for_clients import _sse as _sse
from s3p_codec.testing.durable.for_servers import HOST as HOST
from s3p_codec.testing.durable.for_servers import JSON_STREAM as JSON_STREAM
from s3p_codec.testing.durable.for_servers import decisions, malformed, request_wire, requests

__all__ = [
    "ClientEvents",
    "Target",
    "decisions",
    "malformed",
    "malformed_replies",
    "notifications",
    "reply_wire",
    "request_for",
    "request_wire",
    "requests_for",
    "requests",
    "response_wire",
    "responses",
    "stream_offsets",
    "subscription_decisions",
    "subscription_exchanges",
    "subscription_malformed",
    "subscription_requests",
    "wake_events",
]
