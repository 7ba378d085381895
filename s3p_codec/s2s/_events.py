"""Typed S2S events: the seven s2.v1 messages, plus what a session adds around them.

The message classes mirror package ``s2.v1`` field for field. ``optional`` fields are
``X | None`` so that presence survives a round trip ("a match_seq_num of 0 is written");
repeated fields are tuples. ``Heartbeat`` is how a read session reports a ``ReadBatch`` with no
records and a tail; ``Terminal`` is the terminal frame (status + JSON body) a server sends to end a
session with an error; ``ReconnectAdvised`` reports the flag a draining server sets.

Events built by the parser are trusted; events built by users are checked when sent
(``validate``), so that nothing half-valid reaches the wire.
"""

from __future__ import annotations

import enum
from typing import TypeAlias

import attrs

from s3p_codec._core.convert import as_tuple

__all__ = [
    "AppendAck",
    "AppendInput",
    "AppendRecord",
    "ErrorCode",
    "Event",
    "Header",
    "Heartbeat",
    "ReadBatch",
    "ReconnectAdvised",
    "SequencedRecord",
    "StreamPosition",
    "Terminal",
    "metered_bytes",
]


class ErrorCode(enum.StrEnum):
    """The snake_case error codes of S2 (the ``code`` of a JSON error body).

    The codec raises the first four itself; the others are what an S2 server answers and are
    listed so that servers and clients spell them the same way.
    """

    BAD_FRAME = "bad_frame"  # 400: framing broken (length, flags, compression, leftovers)
    BAD_PROTO = "bad_proto"  # 400: the protobuf payload does not decode
    INVALID = "invalid"  # 422: a well-formed message that breaks a rule (1..1000 records)
    HEARTBEAT_TIMEOUT = "heartbeat_timeout"  # no frame for 20 s on a read session
    BAD_HEADER = "bad_header"  # 400: a request header is missing or wrong
    BAD_PATH = "bad_path"  # 400: no such route
    BAD_QUERY = "bad_query"  # 400: a query parameter is malformed
    UNAUTHORIZED = "unauthorized"  # 401
    PERMISSION_DENIED = "permission_denied"  # 403
    BASIN_NOT_FOUND = "basin_not_found"  # 404
    STREAM_NOT_FOUND = "stream_not_found"  # 404
    STREAM_EXISTS = "resource_already_exists"  # 409
    SEQ_NUM_MISMATCH = "seq_num_mismatch"  # 412
    FENCING_TOKEN_MISMATCH = "fencing_token_mismatch"  # 412
    RANGE_NOT_SATISFIABLE = "range_not_satisfiable"  # 416
    SERVER_DRAINING = "server_draining"  # 503
    INTERNAL = "internal"  # 500


@attrs.frozen(slots=True)
class StreamPosition:
    """``message StreamPosition {uint64 seq_num = 1; uint64 timestamp = 2;}``"""

    seq_num: int
    timestamp: int


@attrs.frozen(slots=True)
class Header:
    """``message Header {bytes name = 1; bytes value = 2;}``"""

    name: bytes
    value: bytes


@attrs.frozen(slots=True)
class AppendRecord:
    """``message AppendRecord {optional uint64 timestamp = 1; repeated Header headers = 2;
    bytes body = 3;}``"""

    body: bytes
    headers: tuple[Header, ...] = attrs.field(default=(), converter=as_tuple)
    timestamp: int | None = None


@attrs.frozen(slots=True)
class AppendInput:
    """``message AppendInput {repeated AppendRecord records = 1; optional uint64 match_seq_num
    = 2; optional string fencing_token = 3;}``: one batch of an append session."""

    records: tuple[AppendRecord, ...] = attrs.field(converter=as_tuple)
    match_seq_num: int | None = None
    fencing_token: str | None = None


@attrs.frozen(slots=True)
class AppendAck:
    """``message AppendAck {StreamPosition start = 1; end = 2; tail = 3;}``: records
    ``start.seq_num`` up to (excluding) ``end.seq_num`` were appended."""

    start: StreamPosition
    end: StreamPosition
    tail: StreamPosition


@attrs.frozen(slots=True)
class SequencedRecord:
    """``message SequencedRecord {uint64 seq_num = 1; uint64 timestamp = 2; repeated Header
    headers = 3; bytes body = 4;}``"""

    seq_num: int
    timestamp: int
    body: bytes
    headers: tuple[Header, ...] = attrs.field(default=(), converter=as_tuple)


@attrs.frozen(slots=True)
class ReadBatch:
    """``message ReadBatch {repeated SequencedRecord records = 1; optional StreamPosition tail
    = 2;}``"""

    records: tuple[SequencedRecord, ...] = attrs.field(converter=as_tuple)
    tail: StreamPosition | None = None


@attrs.frozen(slots=True)
class Heartbeat:
    """A ``ReadBatch`` with no records and a tail: the server is alive, the stream ends at
    ``tail`` ("Server sends heartbeats (empty batches) every 5-15 seconds")."""

    tail: StreamPosition


@attrs.frozen(slots=True)
class Terminal:
    """A terminal frame: HTTP ``status`` plus the JSON error body.

    Empty ``code``/``message`` are left out of the body. The 412 details
    (``seq_num_mismatch``, ``fencing_token_mismatch``) and the 416 ``tail`` are written as
    real S2 writes them.
    """

    status: int
    code: str = ""
    message: str = ""
    seq_num_mismatch: int | None = None
    fencing_token_mismatch: str | None = None
    tail: StreamPosition | None = None


@attrs.frozen(slots=True)
class ReconnectAdvised:
    """The peer set the "reconnect advised" flag (0x10): it is draining; finish, then reconnect.

    Reported once per session, right after the event of the first frame that carried it.
    """


#: Any S2S session event: what a client sends and what a server answers.
Event: TypeAlias = AppendInput | AppendAck | ReadBatch | Heartbeat | Terminal | ReconnectAdvised


def metered_bytes(records: tuple[AppendRecord, ...] | tuple[SequencedRecord, ...]) -> int:
    """S2's metered size: per record ``8 + 2 * len(headers) + sum(name + value) + len(body)``.

    "Maximum batch size: 1000 records or 1 MiB of metered data".
    """
    total = 0
    for record in records:
        total += 8 + len(record.body) + 2 * len(record.headers)
        for header in record.headers:
            total += len(header.name) + len(header.value)
    return total
