"""S3P v0.1.0 and v0.2.0 (Simple Stream Serialization Protocol): a sans-IO codec, both roles.

::

    from s3p_codec import s3p, Role

    client = s3p.Connection(Role.CLIENT)
    wire = client.send(s3p.Append(stream=b"orders", records=(b"hello",)))
    client.receive_data(b"$15\\r\\n1700000001234-0\\r\\n")
    client.next_event()   # AppendReply(timestamp=Timestamp(ms=1700000001234, seq=0))

The version is configuration (S3P has no handshake): ``s3p.Connection(Role.CLIENT,
version="0.2.0")`` speaks v0.2.0 (``Append(id=...)``, ``Read(min_id=...)``, ``Trim(min_id=...)``,
recoverable errors); the default is ``"0.1.0"``.

Every public name is exported here. The implementation modules behind it: ``_events`` (typed
commands, replies, ``Timestamp``, ``ErrorCode``), ``_limits``, ``_wire`` (framing), ``_schema``
(the command schema), ``_readers`` (reading commands), ``_replies`` (reading replies),
``_writers`` (checking and writing both), ``_connection`` (the state machine), ``_observer``
(passive decoding of both directions, for captures), ``_version`` (what differs between the
versions).
"""

from __future__ import annotations

from s3p_codec.s3p._connection import Connection
from s3p_codec.s3p._events import (
    Append,
    AppendReply,
    Create,
    Delete,
    ErrorCode,
    ErrorReply,
    Event,
    Id,
    Ok,
    Read,
    ReadReply,
    Reply,
    Request,
    Timestamp,
    TimestampStrategy,
    Trim,
)
from s3p_codec.s3p._limits import Limits
from s3p_codec.s3p._observer import Observer
from s3p_codec.s3p._state import ConnectionState
from s3p_codec.s3p._version import Version

__all__ = [
    "Append",
    "AppendReply",
    "Connection",
    "ConnectionState",
    "Create",
    "Delete",
    "ErrorCode",
    "ErrorReply",
    "Event",
    "Id",
    "Limits",
    "Observer",
    "Ok",
    "Read",
    "ReadReply",
    "Reply",
    "Request",
    "Timestamp",
    "TimestampStrategy",
    "Trim",
    "Version",
]
