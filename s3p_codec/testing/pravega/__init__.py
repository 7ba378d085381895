"""Hypothesis strategies for Pravega segment-store peers: valid commands, frames, bad frames.

Pravega has no error reply for a broken frame: "a real segment store logs an
``InvalidMessageException`` and closes the connection". So every malformed case here is fatal
with ``reply=False``: the server must close, and ``code`` names the case (``pravega.ErrorCode``)
as this library's server-role codec raises it. Every case starts with a valid ``Hello``, so the
frame after it is judged by the framing, not by a missing handshake; the server's ``Hello`` in
answer is not counted as an answer to the case.

Limits are hit exactly (``edge_cases``: must be accepted) and by one more (``malformed``): the
frame length ("Max payload 0xFFFFFF"), a 65535-byte string, ``Limits.max_writers``, and the
sizes inside an append block that must add up ("0 <= sizeOfWholeEvents <= block content", "the
rest of the block is exactly one PARTIAL_EVENT or PADDING frame", numEvents, dataLen).

Client direction (fuzz your own Pravega client): ``reply_wire()`` gives replies as this
library's server-role codec writes them, ``requests_for(reply)`` what the client sent first;
``malformed_replies()`` gives server byte streams a strict client must refuse (lengths off by
one, over the limit from the header alone, cut after every field, undefined or request type
codes, bad modified UTF-8, incompatible Hello), each with the ``code`` this library's
client-role codec raises and ``pending``, the requests sent first; ``reply_edge_cases()``
replies it must accept. This library's client does not track appends, so acks in illegal orders
(a DataAppended for a writer never set up) are not among them. "Replies" is the draft's own word
("requests" from the client, "replies" going back to it).

For a codec of one's own, both directions: ``commands(*types)`` draws any instance of the typed
commands given (every one by default), each field over its whole wire range, to check that
each encodes to a frame that decodes back to it.

Where each part lives (every name below is importable from this package):

- ``for_servers``: the server direction (``requests()``, ``request_wire()``, ``malformed()``,
  ``edge_cases()``);
- ``for_clients``: the client direction (``replies()``, ``reply_wire()``, ``requests_for()``,
  ``malformed_replies()``, ``reply_edge_cases()``);
- ``_target``: ``Target``, the live driver's view of Pravega, and its answer reader;
- ``_wire``: what both directions share (``E``, ``HELLO``, ``WRITER``, ``SEGMENT``,
  ``segments()``, ``commands()``, the frame builders).
"""

from __future__ import annotations

from s3p_codec._extras import testing as _testing_extra  # noqa: F401 - MissingExtra without it
from s3p_codec.testing.pravega._target import Target
from s3p_codec.testing.pravega._wire import HELLO as HELLO
from s3p_codec.testing.pravega._wire import SEGMENT as SEGMENT
from s3p_codec.testing.pravega._wire import WRITER as WRITER
from s3p_codec.testing.pravega._wire import E as E
from s3p_codec.testing.pravega._wire import commands
from s3p_codec.testing.pravega._wire import segments as segments
from s3p_codec.testing.pravega.for_clients import I64 as I64
from s3p_codec.testing.pravega.for_clients import _cut_replies as _cut_replies
from s3p_codec.testing.pravega.for_clients import _reply_framing as _reply_framing
from s3p_codec.testing.pravega.for_clients import _reply_strings as _reply_strings
from s3p_codec.testing.pravega.for_clients import (
    malformed_replies,
    replies,
    reply_edge_cases,
    reply_wire,
    requests_for,
)
from s3p_codec.testing.pravega.for_servers import SETUP as SETUP
from s3p_codec.testing.pravega.for_servers import _aggregates as _aggregates
from s3p_codec.testing.pravega.for_servers import _orders as _orders
from s3p_codec.testing.pravega.for_servers import edge_cases, malformed, request_wire, requests

__all__ = [
    "Target",
    "commands",
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
