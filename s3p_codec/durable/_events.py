"""Typed events of the Durable Streams protocol: requests, responses and SSE events.

A stream is a URL; the protocol is the HTTP methods, query parameters and headers applied to it.
Requests (``Create``, ``Append``, ``Read``, ``Head``, ``Delete``, ``Options``) are what a client
sends and a server-role connection parses; responses (``Created``, ``Appended``, ``Chunk``, ...)
are what a server sends and a client-role connection parses. ``path`` is the request target's
path (without the query), exactly as it appears on the wire.

Events built by the parser skip re-validation; events built by users are validated when sent
(``LocalProtocolError`` with the HTTP status the peer would have answered).
"""

from __future__ import annotations

import enum

import attrs

from s3p_codec.durable._subscription_events import SubscriptionRequest, SubscriptionResponse
from s3p_codec.durable._webhooks import WebhookDelivery, WebhookReply

__all__ = [
    "Append",
    "Appended",
    "Chunk",
    "ConnectionErrorCode",
    "Create",
    "Created",
    "Delete",
    "Deleted",
    "ErrorCode",
    "ErrorResponse",
    "Event",
    "Head",
    "LiveMode",
    "LongPollTimeout",
    "NotModified",
    "Options",
    "OptionsOk",
    "Producer",
    "Read",
    "Request",
    "Response",
    "SSEControl",
    "SSEData",
    "SSEEnd",
    "SSEEvent",
    "SSEStart",
    "StreamInfo",
]


class ErrorCode(enum.IntEnum):
    """The HTTP statuses the protocol gives a meaning to (the protocol's error codes)."""

    BAD_REQUEST = 400
    UNAUTHORIZED = 401  # a subscription callback or claim token that is invalid or expired
    FORBIDDEN = 403  # stale producer epoch ("zombie fencing")
    NOT_FOUND = 404
    METHOD_NOT_ALLOWED = 405
    CONFLICT = 409
    GONE = 410  # soft-deleted stream, or offset before the retained data
    PAYLOAD_TOO_LARGE = 413
    TOO_MANY_REQUESTS = 429
    REQUEST_HEADER_FIELDS_TOO_LARGE = 431  # a request head over Limits.max_header_size
    INTERNAL_SERVER_ERROR = 500
    NOT_IMPLEMENTED = 501


class ConnectionErrorCode(enum.StrEnum):
    """The ``code`` of the errors that no HTTP status names (all others carry an ``ErrorCode``).

    A ``StrEnum``: each member equals the plain string these codes were before.
    """

    STATE = "state"  # a request or response sent out of turn, or an SSE event with none open
    HTTP = "http"  # HTTP/1.1 framing broken (h11 refused the bytes or the event)
    EOF = "eof"  # bytes received after the end of the stream
    ERROR = "error"  # the connection is already in state ERROR
    SSE = "sse"  # a broken SSE body
    INVALID_RESPONSE = "invalid_response"  # a well-framed response that breaks the protocol


class LiveMode(enum.Enum):
    """The ``live`` query parameter: how a read waits for data at the tail."""

    LONG_POLL = "long-poll"
    SSE = "sse"


# ---------------------------------------------------------------------------------------------
# Requests (client -> server)


@attrs.frozen(slots=True)
class Producer:
    """The idempotent-producer header set: ``Producer-Id``, ``Producer-Epoch``, ``Producer-Seq``.

    "All three producer headers MUST be provided together or none at all."
    """

    id: str
    epoch: int
    seq: int


@attrs.frozen(slots=True)
class Create:
    """``PUT {stream-url}``: create a stream, or a fork of one when ``forked_from`` is set.

    ``ttl_seconds`` and ``expires_at`` are exclusive; ``closed`` creates the stream closed,
    with ``body`` as its complete content.
    """

    path: str
    content_type: str | None = None
    ttl_seconds: int | None = None
    expires_at: str | None = None
    closed: bool = False
    body: bytes = b""
    forked_from: str | None = None
    fork_offset: str | None = None
    fork_sub_offset: int | None = None


@attrs.frozen(slots=True)
class Append:
    """``POST {stream-url}``: append ``body``; with ``close`` and an empty body, close only."""

    path: str
    body: bytes = b""
    content_type: str | None = None
    seq: str | None = None
    producer: Producer | None = None
    close: bool = False


@attrs.frozen(slots=True)
class Read:
    """``GET {stream-url}?offset=..[&live=..][&cursor=..]``: catch-up, long-poll or SSE read.

    ``offset`` None means the parameter is omitted (the stream start, like ``-1``).
    """

    path: str
    offset: str | None = None
    live: LiveMode | None = None
    cursor: str | None = None
    if_none_match: str | None = None


@attrs.frozen(slots=True)
class Head:
    """``HEAD {stream-url}``: tail offset, TTL, expiry and closure status, without a body."""

    path: str


@attrs.frozen(slots=True)
class Delete:
    """``DELETE {stream-url}``."""

    path: str


@attrs.frozen(slots=True)
class Options:
    """``OPTIONS {stream-url}``: a browser's CORS preflight."""

    path: str


#: The requests a client sends: stream operations, and the reserved ``__ds`` subscription APIs.
Request = Create | Append | Read | Head | Delete | Options | SubscriptionRequest | WebhookDelivery

# ---------------------------------------------------------------------------------------------
# Responses (server -> client)


@attrs.frozen(slots=True)
class Created:
    """``201 Created`` (new stream) or ``200 OK`` (``existed``: same configuration)."""

    next_offset: str
    content_type: str
    location: str | None = None
    closed: bool = False
    existed: bool = False


@attrs.frozen(slots=True)
class Appended:
    """A successful append or close.

    ``204 No Content`` for a plain append, a close, or a producer duplicate (``duplicate``);
    ``200 OK`` for an append accepted from an idempotent producer. ``next_offset`` is absent
    only on some producer duplicates.
    """

    next_offset: str | None
    closed: bool = False
    producer_epoch: int | None = None
    producer_seq: int | None = None
    duplicate: bool = False

    @property
    def status(self) -> int:
        """The HTTP status this outcome travels with."""
        return 200 if self.producer_epoch is not None and not self.duplicate else 204


@attrs.frozen(slots=True)
class StreamInfo:
    """``200 OK`` to ``HEAD``: the stream's metadata."""

    next_offset: str
    content_type: str | None = None
    closed: bool = False
    ttl_seconds: int | None = None
    expires_at: str | None = None
    etag: str | None = None


@attrs.frozen(slots=True)
class Deleted:
    """``204 No Content`` to ``DELETE``."""


#: ``Cache-Control`` of a catch-up read (historical data may be cached by a CDN).
CATCH_UP_CACHE_CONTROL = "public, max-age=60, stale-while-revalidate=300"


@attrs.frozen(slots=True)
class Chunk:
    """``200 OK`` to a catch-up or long-poll read: bytes from the offset, and where to go next.

    ``up_to_date`` says the response holds all data available when it was generated (not EOF);
    ``closed`` is the EOF signal. ``cache_control`` defaults to the spec's catch-up policy;
    ``offset=now`` reads use ``no-store``.
    """

    data: bytes
    next_offset: str
    content_type: str | None = None
    up_to_date: bool = False
    closed: bool = False
    cursor: str | None = None
    etag: str | None = None
    cache_control: str | None = CATCH_UP_CACHE_CONTROL


@attrs.frozen(slots=True)
class NotModified:
    """``304 Not Modified``: the ``If-None-Match`` ETag still matches."""

    etag: str | None = None


@attrs.frozen(slots=True)
class LongPollTimeout:
    """``204 No Content`` to a long-poll: no new data (with ``closed``: EOF, no waiting)."""

    next_offset: str
    cursor: str | None = None
    closed: bool = False


@attrs.frozen(slots=True)
class SSEStart:
    """``200 OK`` with ``Content-Type: text/event-stream``: an SSE read begins.

    ``base64`` is the ``stream-sse-data-encoding: base64`` header, which servers MUST send for
    streams whose content type is neither ``text/*`` nor ``application/json``.
    """

    base64: bool = False


@attrs.frozen(slots=True)
class SSEData:
    """An ``event: data`` SSE event; ``data`` is the decoded payload (base64 already undone)."""

    data: bytes


@attrs.frozen(slots=True)
class SSEControl:
    """An ``event: control`` SSE event (JSON ``streamNextOffset``, ``streamCursor``, ...)."""

    next_offset: str
    cursor: str | None = None
    up_to_date: bool = False
    closed: bool = False


@attrs.frozen(slots=True)
class SSEEnd:
    """The server ended the SSE response body (reconnect from the last offset unless closed)."""


@attrs.frozen(slots=True)
class OptionsOk:
    """``204 No Content`` to a CORS preflight, with the ``Access-Control-*`` headers."""


@attrs.frozen(slots=True)
class ErrorResponse:
    """Any non-success status, with the protocol's headers that explain it.

    ``closed``/``next_offset``: 409 on an append to a closed stream. ``producer_epoch``: 403 on
    a stale producer epoch. ``expected_seq``/``received_seq``: 409 on a producer sequence gap.
    """

    status: int
    message: str = ""
    closed: bool = False
    next_offset: str | None = None
    producer_epoch: int | None = None
    expected_seq: int | None = None
    received_seq: int | None = None

    @property
    def code(self) -> ErrorCode | None:
        """The status as an ``ErrorCode`` when the protocol names it."""
        try:
            return ErrorCode(self.status)
        except ValueError:
            return None

    @property
    def stream_closed(self) -> bool:
        """409 because the stream is closed: no further appends are permitted."""
        return self.status == ErrorCode.CONFLICT and self.closed

    @property
    def stale_epoch(self) -> bool:
        """403 zombie fencing: a newer producer epoch (``producer_epoch``) owns the id."""
        return self.status == ErrorCode.FORBIDDEN and self.producer_epoch is not None

    @property
    def sequence_gap(self) -> bool:
        """409 producer sequence gap: ``expected_seq`` was due, ``received_seq`` came."""
        return self.status == ErrorCode.CONFLICT and self.expected_seq is not None


Response = (
    Created
    | Appended
    | StreamInfo
    | Deleted
    | Chunk
    | NotModified
    | LongPollTimeout
    | SSEStart
    | OptionsOk
    | ErrorResponse
    | SubscriptionResponse
    | WebhookReply
)
"""Events that start (and, except ``SSEStart``, complete) one HTTP response."""

#: The events inside an SSE response body, after ``SSEStart``.
SSEEvent = SSEData | SSEControl | SSEEnd

#: Any Durable Streams event: a request, a response or an SSE event.
Event = Request | Response | SSEData | SSEControl | SSEEnd
