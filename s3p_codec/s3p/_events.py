"""The typed values of S3P v0.1.0 and v0.2.0: commands, replies, timestamps/IDs, error codes.

One set of classes serves both versions; the fields a version does not know must be None when
sent (``LocalProtocolError`` otherwise): v0.1.0 uses ``Create.timestamp_strategy``,
``Append.timestamp``, ``Read.min_timestamp`` and ``Trim.until``; v0.2.0 uses ``Append.id`` (the
``ID`` option: the ``<ms>`` part only), ``Read.min_id`` and ``Trim.min_id``. v0.2.0's record IDs
have the same ``<ms>-<seq>`` form as v0.1.0's timestamps, so both are ``Timestamp`` values
(``Id`` is another name for it).

Events are immutable. Events built by the parser are already valid and skip re-validation;
events built by users are validated when they are sent (``Connection.send``), which raises
``LocalProtocolError`` and emits nothing if the event breaks the spec.

``Timestamp`` is a ``NamedTuple`` rather than an attrs class on purpose: a READ reply carries
one per record, and a tuple is both the cheapest immutable value Python builds and already
ordered the way the spec orders timestamps ("lexicographic by <ms>, then by <seq>", as
integers: ``9-0 < 10-0``).
"""

from __future__ import annotations

import enum
from typing import NamedTuple, TypeAlias

import attrs

from s3p_codec._core.convert import as_tuple

__all__ = [
    "MAX_U64",
    "Append",
    "AppendReply",
    "Create",
    "Delete",
    "ErrorCode",
    "ErrorReply",
    "Event",
    "Id",
    "Ok",
    "Read",
    "ReadReply",
    "Reply",
    "Request",
    "Timestamp",
    "TimestampStrategy",
    "Trim",
]

MAX_U64 = (1 << 64) - 1
"""Both parts of a timestamp are unsigned 64-bit integers."""


class ErrorCode(enum.StrEnum):
    """The canonical error codes of the spec (section 9), as written on the wire."""

    BAD_FORMAT = "ERR_BAD_FORMAT"
    """Request is malformed or contains invalid data."""
    STREAM_EXISTS = "ERR_STREAM_EXISTS"
    """Attempt to create a stream that already exists."""
    UNKNOWN_STREAM = "ERR_UNKNOWN_STREAM"
    """Operation references a stream that does not exist."""
    LIMITS = "ERR_LIMITS"
    """Request exceeds server-configured limits (record size, record count, COUNT/BLOCK)."""
    NON_MONOTONIC_ID = "ERR_NON_MONOTONIC_ID"
    """v0.2.0 only: an APPEND ``ID`` lower than the stream's last ID (recoverable)."""


class TimestampStrategy(enum.StrEnum):
    """Who assigns APPEND timestamps on a stream (CREATE option ``TIMESTAMP_STRATEGY``)."""

    SERVER = "server"
    CLIENT = "client"


class Timestamp(NamedTuple):
    """A record timestamp ``<ms>-<seq>``; orders by ``(ms, seq)`` as integers."""

    ms: int
    seq: int

    @classmethod
    def parse(cls, text: bytes | str) -> Timestamp:
        """Parse ``b"<ms>-<seq>"`` ("timestamp = 1*DIGIT "-" 1*DIGIT"); ValueError if not."""
        raw = text.encode("ascii", "replace") if isinstance(text, str) else bytes(text)
        parsed = parse_timestamp(raw)
        if parsed is None:
            raise ValueError(f"not an S3P timestamp (<ms>-<seq>, unsigned 64-bit): {text!r}")
        return parsed

    def format(self) -> bytes:
        """The wire form, ``b"<ms>-<seq>"``."""
        return b"%d-%d" % (self.ms, self.seq)

    def __bytes__(self) -> bytes:
        return b"%d-%d" % (self.ms, self.seq)

    def __str__(self) -> str:
        return f"{self.ms}-{self.seq}"

    @property
    def is_valid(self) -> bool:
        """Both parts are ``int`` (not bool) in the unsigned 64-bit range."""
        ms, seq = self.ms, self.seq
        return type(ms) is int and type(seq) is int and 0 <= ms <= MAX_U64 and 0 <= seq <= MAX_U64


Id = Timestamp
"""v0.2.0 calls a record's ``<ms>-<seq>`` an ID; it is the same value as a v0.1.0 timestamp."""

_new_timestamp = tuple.__new__


def parse_timestamp(raw: bytes) -> Timestamp | None:
    """``<ms>-<seq>`` with decimal digits only and both parts within u64, else None."""
    ms, dash, seq = raw.partition(b"-")
    if not (dash and ms.isdigit() and seq.isdigit()):
        return None
    ms_value = int(ms)
    seq_value = int(seq)
    if ms_value > MAX_U64 or seq_value > MAX_U64:
        return None
    return _new_timestamp(Timestamp, (ms_value, seq_value))


# --- Requests (client to server) -----------------------------------------------------------


@attrs.frozen(slots=True)
class Create:
    """CREATE a stream; ``timestamp_strategy=None`` leaves the option out (server default)."""

    stream: bytes
    timestamp_strategy: TimestampStrategy | None = None


@attrs.frozen(slots=True)
class Append:
    """APPEND one or more records.

    v0.1.0: ``timestamp`` is required iff the stream uses CLIENT. v0.2.0: ``id`` is the
    optional ``ID`` option, the ``<ms>`` of the IDs to assign (the server picks ``<seq>``).
    """

    stream: bytes
    records: tuple[bytes, ...] = attrs.field(converter=as_tuple)
    timestamp: Timestamp | None = None
    id: int | None = None


@attrs.frozen(slots=True)
class Read:
    """READ records after ``min_timestamp`` (v0.1.0, exclusive) or from ``min_id`` (v0.2.0,
    inclusive); ``None`` leaves an option out."""

    stream: bytes
    count: int | None = None
    block_ms: int | None = None
    min_timestamp: Timestamp | None = None
    min_id: Timestamp | None = None


@attrs.frozen(slots=True)
class Trim:
    """TRIM records strictly before ``until`` (v0.1.0, required) or ``min_id`` (v0.2.0,
    required); the other one stays None."""

    stream: bytes
    until: Timestamp | None = None
    min_id: Timestamp | None = None


@attrs.frozen(slots=True)
class Delete:
    """DELETE a stream and all its records."""

    stream: bytes


# --- Replies (server to client) ------------------------------------------------------------


@attrs.frozen(slots=True)
class Ok:
    """``+OK``: the answer to CREATE, TRIM and DELETE."""


@attrs.frozen(slots=True)
class AppendReply:
    """The timestamp of the last record an APPEND stored (a Bulk String on the wire)."""

    timestamp: Timestamp


@attrs.frozen(slots=True)
class ReadReply:
    """The records a READ returned, as ``(timestamp, payload)`` pairs, strictly increasing."""

    records: tuple[tuple[Timestamp, bytes], ...] = attrs.field(converter=as_tuple)


@attrs.frozen(slots=True)
class ErrorReply:
    """``-<ERROR_CODE> <message>``; the server closes the connection after sending it, except
    after the codes v0.2.0 makes recoverable (see ``version.Rules.recoverable``)."""

    code: ErrorCode
    message: str


#: The requests a client sends.
Request: TypeAlias = Create | Append | Read | Trim | Delete
#: The replies a server sends.
Reply: TypeAlias = Ok | AppendReply | ReadReply | ErrorReply
#: Any S3P message.
Event: TypeAlias = Request | Reply
