"""Requests on the wire: typed request events to h11 request heads and back.

``parse_request`` is the server's validation of what a client sent; every rule it enforces
answers with the status the protocol names (usually 400), as a non-fatal ``RemoteProtocolError``
carrying the ``ErrorResponse`` to send. ``build_request`` validates a user's request event the
same way (``LocalProtocolError``) before any byte is produced.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, quote

import h11

from s3p_codec._core.errors import LocalProtocolError, RemoteProtocolError
from s3p_codec.durable import _headers as H
from s3p_codec.durable import _subscriptions as S
from s3p_codec.durable._events import (
    Append,
    Create,
    Delete,
    ErrorCode,
    ErrorResponse,
    Head,
    LiveMode,
    Options,
    Producer,
    Read,
    Request,
)
from s3p_codec.durable._limits import Limits
from s3p_codec.durable._subscription_events import (
    AckSubscription,
    AddSubscriptionStreams,
    ClaimSubscription,
    DeleteSubscription,
    GetJwks,
    GetSubscription,
    PutSubscription,
    ReleaseSubscription,
    RemoveSubscriptionStream,
    SubscriptionCallback,
)
from s3p_codec.durable._webhooks import WEBHOOK_SIGNATURE, WebhookDelivery, WebhookSignature
from s3p_codec.durable.offsets import is_sentinel, offset_error
from s3p_codec.durable.producer import MAX_PRODUCER_INT

__all__ = ["build_request", "parse_request", "validate_request"]

_METHODS = {"PUT", "POST", "GET", "HEAD", "DELETE", "OPTIONS"}
_SUBSCRIPTION_REQUESTS = (
    PutSubscription,
    GetSubscription,
    DeleteSubscription,
    AddSubscriptionStreams,
    RemoveSubscriptionStream,
    GetJwks,
    SubscriptionCallback,
    ClaimSubscription,
    AckSubscription,
    ReleaseSubscription,
)


class _Invalid(Exception):
    """A rule broken; turned into a Local- or RemoteProtocolError by the caller."""

    def __init__(self, status: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _remote(exc: _Invalid) -> RemoteProtocolError:
    return RemoteProtocolError(
        exc.message, code=exc.status, fatal=False, reply=ErrorResponse(exc.status, exc.message)
    )


def _bad(message: str) -> _Invalid:
    return _Invalid(ErrorCode.BAD_REQUEST, message)


def _check_path(path: str) -> None:
    if not path.startswith("/"):
        raise _bad("stream path must start with '/'")
    for char in path:
        if char in "?#" or not "\x21" <= char <= "\x7e":
            raise _bad("stream path must be printable ASCII without '?', '#' or spaces")


def _check_text(name: str, value: str) -> None:
    # Header values: no control characters (CR/LF would split headers).
    for char in value:
        if (char < "\x20" and char != "\t") or char == "\x7f" or char > "\x7e":
            raise _bad(f"{name} must be printable ASCII")


def _check_offset(name: str, offset: str, limits: Limits, *, sentinel_ok: bool) -> None:
    why = offset_error(offset, limits.max_offset_length)
    if why is not None:
        raise _bad(f"invalid {name}: {why}")
    if not sentinel_ok and is_sentinel(offset):
        raise _bad(f"{name} cannot be the sentinel {offset!r}")


def _check_create(event: Create, limits: Limits) -> None:
    if event.ttl_seconds is not None and event.expires_at is not None:
        # "If both Stream-TTL and Stream-Expires-At are supplied, servers SHOULD reject the
        # request with 400 Bad Request."
        raise _bad("Stream-TTL and Stream-Expires-At are exclusive")
    if event.ttl_seconds is not None and event.ttl_seconds < 0:
        raise _bad("Stream-TTL must be a non-negative integer")
    if event.expires_at is not None and H.parse_rfc3339(event.expires_at) is None:
        raise _bad("Stream-Expires-At must be an RFC 3339 timestamp")
    if event.content_type is not None:
        _check_text("Content-Type", event.content_type)
    if event.forked_from is None:
        if event.fork_offset is not None or event.fork_sub_offset is not None:
            raise _bad("Stream-Fork-Offset and Stream-Fork-Sub-Offset require Stream-Forked-From")
    else:
        _check_path(event.forked_from)
    if event.fork_offset is not None:
        _check_offset("Stream-Fork-Offset", event.fork_offset, limits, sentinel_ok=False)
    if event.fork_sub_offset is not None:
        if event.fork_sub_offset < 0:
            raise _bad("Stream-Fork-Sub-Offset must be a non-negative integer")
        if event.fork_sub_offset > 0 and event.fork_offset is None:
            raise _bad("a non-zero Stream-Fork-Sub-Offset requires Stream-Fork-Offset")


def _check_producer(producer: Producer) -> None:
    if not producer.id:
        raise _bad("Producer-Id MUST be a non-empty string")
    _check_text("Producer-Id", producer.id)
    for name, value in (("Producer-Epoch", producer.epoch), ("Producer-Seq", producer.seq)):
        if not 0 <= value <= MAX_PRODUCER_INT:
            raise _bad(f"{name} MUST be a non-negative integer <= 2^53-1")


def _check_append(event: Append) -> None:
    if not event.body and not event.close:
        # "Servers MUST reject POST requests with an empty body ... unless the
        # Stream-Closed: true header is present"
        raise _bad("empty append body without Stream-Closed: true")
    if event.body and not event.content_type:
        raise _bad("Content-Type is required on an append with a body")
    if event.content_type is not None:
        _check_text("Content-Type", event.content_type)
    if event.seq is not None:
        if not event.seq:
            raise _bad("Stream-Seq must not be empty")
        _check_text("Stream-Seq", event.seq)
    if event.producer is not None:
        _check_producer(event.producer)


def _check_read(event: Read, limits: Limits) -> None:
    if event.offset is not None:
        _check_offset("offset", event.offset, limits, sentinel_ok=True)
    elif event.live is not None:
        # Long-poll and SSE: "offset (required) ... MUST be provided."
        raise _bad(f"live={event.live.value} requires an offset")
    if event.cursor is not None:
        if not event.cursor:
            raise _bad("cursor must not be empty")
        _check_text("cursor", event.cursor)
    if event.if_none_match is not None:
        _check_text("If-None-Match", event.if_none_match)


def _check_delivery(event: WebhookDelivery, limits: Limits) -> None:
    if not isinstance(event.signature, WebhookSignature):
        raise _bad("a webhook delivery carries a WebhookSignature")
    try:
        S.parse_notification(event.body, limits.max_subscription_streams)
    except RemoteProtocolError as exc:
        raise _bad(f"not a webhook notification: {exc.message}") from None


def validate_request(event: Request, limits: Limits) -> None:
    """Raise ``LocalProtocolError`` (code: the status a server would answer) if invalid."""
    if isinstance(event, _SUBSCRIPTION_REQUESTS):
        S.validate_subscription_request(event, limits.max_subscription_streams)
        return
    try:
        _check_path(event.path)
        if isinstance(event, WebhookDelivery):
            _check_delivery(event, limits)
            return
        if S.is_reserved_path(event.path):
            # "Application stream paths whose first stream-root-relative segment is __ds are
            # reserved for Durable Streams control APIs."
            raise _bad(f"a path segment {S.RESERVED_SEGMENT!r} is reserved, never a stream")
        if isinstance(event, Create):
            _check_create(event, limits)
        elif isinstance(event, Append):
            _check_append(event)
        elif isinstance(event, Read):
            _check_read(event, limits)
    except _Invalid as exc:
        raise LocalProtocolError(exc.message, code=exc.status, fatal=False) from None


def build_request(event: Request, host: str, limits: Limits) -> tuple[h11.Request, bytes]:
    """The h11 request head and body for a (validated) request event."""
    validate_request(event, limits)
    headers: list[tuple[bytes, bytes]] = [(b"host", host.encode("ascii"))]
    if isinstance(event, _SUBSCRIPTION_REQUESTS):
        verb, path, extra, payload = S.build_subscription_request(
            event, limits.max_subscription_streams
        )
        return h11.Request(method=verb, target=path, headers=headers + extra), payload
    if isinstance(event, WebhookDelivery):
        headers += [
            (H.CONTENT_TYPE, b"application/json"),
            (WEBHOOK_SIGNATURE, event.signature.format().encode("ascii")),
            (b"content-length", str(len(event.body)).encode("ascii")),
        ]
        return h11.Request(method=b"POST", target=event.path, headers=headers), event.body
    body = b""
    target = event.path
    if isinstance(event, Create):
        method = b"PUT"
        body = event.body
        if event.content_type is not None:
            headers.append((H.CONTENT_TYPE, event.content_type.encode("ascii")))
        if event.ttl_seconds is not None:
            headers.append((H.STREAM_TTL, str(event.ttl_seconds).encode("ascii")))
        if event.expires_at is not None:
            headers.append((H.STREAM_EXPIRES_AT, event.expires_at.encode("ascii")))
        if event.closed:
            headers.append((H.STREAM_CLOSED, b"true"))
        if event.forked_from is not None:
            headers.append((H.STREAM_FORKED_FROM, event.forked_from.encode("ascii")))
        if event.fork_offset is not None:
            headers.append((H.STREAM_FORK_OFFSET, event.fork_offset.encode("ascii")))
        if event.fork_sub_offset is not None:
            headers.append((H.STREAM_FORK_SUB_OFFSET, str(event.fork_sub_offset).encode()))
        headers.append((b"content-length", str(len(body)).encode("ascii")))
    elif isinstance(event, Append):
        method = b"POST"
        body = event.body
        if event.content_type is not None:
            headers.append((H.CONTENT_TYPE, event.content_type.encode("ascii")))
        if event.seq is not None:
            headers.append((H.STREAM_SEQ, event.seq.encode("ascii")))
        if event.producer is not None:
            headers.append((H.PRODUCER_ID, event.producer.id.encode("ascii")))
            headers.append((H.PRODUCER_EPOCH, str(event.producer.epoch).encode("ascii")))
            headers.append((H.PRODUCER_SEQ, str(event.producer.seq).encode("ascii")))
        if event.close:
            headers.append((H.STREAM_CLOSED, b"true"))
        headers.append((b"content-length", str(len(body)).encode("ascii")))
    elif isinstance(event, Read):
        method = b"GET"
        # "clients SHOULD order query parameters lexicographically by key name"
        query = []
        if event.cursor is not None:
            query.append("cursor=" + quote(event.cursor, safe=""))
        if event.live is not None:
            query.append("live=" + event.live.value)
        if event.offset is not None:
            query.append("offset=" + quote(event.offset, safe=""))
        if query:
            target += "?" + "&".join(query)
        if event.live is LiveMode.SSE:
            headers.append((b"accept", b"text/event-stream"))
        if event.if_none_match is not None:
            headers.append((H.IF_NONE_MATCH, event.if_none_match.encode("ascii")))
    elif isinstance(event, Head):
        method = b"HEAD"
    elif isinstance(event, Delete):
        method = b"DELETE"
    else:
        method = b"OPTIONS"
    return h11.Request(method=method, target=target.encode("ascii"), headers=headers), body


# ---------------------------------------------------------------------------------------------
# Server side


def _header(headers: dict[bytes, list[bytes]], name: bytes) -> str | None:
    values = headers.get(name)
    if not values:
        return None
    if len(values) > 1:
        raise _bad(f"{name.decode()} given more than once")
    try:
        return values[0].decode("ascii")
    except UnicodeDecodeError:
        raise _bad(f"{name.decode()} must be ASCII") from None


def _parse_create(path: str, headers: dict[bytes, list[bytes]], body: bytes) -> Create:
    content_type = _header(headers, H.CONTENT_TYPE)
    if content_type is not None and not content_type.strip():
        content_type = None
    ttl_text = _header(headers, H.STREAM_TTL)
    expires_at = _header(headers, H.STREAM_EXPIRES_AT)
    if ttl_text is not None and expires_at is not None:
        raise _bad("Stream-TTL and Stream-Expires-At are exclusive")
    ttl = None
    if ttl_text is not None:
        ttl = H.parse_ttl(ttl_text)
        if ttl is None:
            raise _bad("Stream-TTL must be a non-negative integer without leading zeros")
    if expires_at is not None and H.parse_rfc3339(expires_at) is None:
        raise _bad("Stream-Expires-At must be an RFC 3339 timestamp")
    forked_from = _header(headers, H.STREAM_FORKED_FROM)
    fork_offset = _header(headers, H.STREAM_FORK_OFFSET)
    sub_text = _header(headers, H.STREAM_FORK_SUB_OFFSET)
    sub_offset = None
    if sub_text is not None:
        sub_offset = H.parse_ttl(sub_text)  # the same "0|[1-9][0-9]*" syntax
        if sub_offset is None:
            raise _bad("Stream-Fork-Sub-Offset must be a non-negative integer")
    return Create(
        path=path,
        content_type=content_type,
        ttl_seconds=ttl,
        expires_at=expires_at,
        closed=H.is_true(headers.get(H.STREAM_CLOSED, [None])[0]),
        body=body,
        forked_from=forked_from,
        fork_offset=fork_offset,
        fork_sub_offset=sub_offset,
    )


def _parse_append(path: str, headers: dict[bytes, list[bytes]], body: bytes) -> Append:
    producer_id = _header(headers, H.PRODUCER_ID)
    epoch_text = _header(headers, H.PRODUCER_EPOCH)
    seq_text = _header(headers, H.PRODUCER_SEQ)
    present = [v is not None for v in (producer_id, epoch_text, seq_text)]
    producer = None
    if any(present):
        if not all(present):
            # "If only some headers are provided, servers MUST return 400 Bad Request."
            raise _bad("Producer-Id, Producer-Epoch and Producer-Seq must be given together")
        assert producer_id is not None
        assert epoch_text is not None
        assert seq_text is not None
        epoch = H.parse_non_negative(epoch_text, MAX_PRODUCER_INT)
        seq = H.parse_non_negative(seq_text, MAX_PRODUCER_INT)
        if epoch is None or seq is None:
            raise _bad("Producer-Epoch and Producer-Seq MUST be non-negative integers <= 2^53-1")
        producer = Producer(producer_id, epoch, seq)
    content_type = _header(headers, H.CONTENT_TYPE)
    if content_type is not None and not content_type.strip():
        content_type = None
    return Append(
        path=path,
        body=body,
        content_type=content_type,
        seq=_header(headers, H.STREAM_SEQ),
        producer=producer,
        close=H.is_true(headers.get(H.STREAM_CLOSED, [None])[0]),
    )


def _parse_read(path: str, query: str, headers: dict[bytes, list[bytes]]) -> Read:
    params: dict[str, list[str]] = {}
    for key, value in parse_qsl(query, keep_blank_values=True, errors="strict"):
        params.setdefault(key, []).append(value)
    offsets = params.get("offset", [])
    if len(offsets) > 1:
        raise _bad("more than one offset parameter")
    lives = params.get("live", [])
    cursors = params.get("cursor", [])
    if len(lives) > 1 or len(cursors) > 1:
        raise _bad("live and cursor may be given once")
    live = None
    if lives:
        try:
            live = LiveMode(lives[0])
        except ValueError:
            raise _bad("live must be long-poll or sse") from None
    return Read(
        path=path,
        offset=offsets[0] if offsets else None,
        live=live,
        cursor=cursors[0] if cursors and cursors[0] else None,
        if_none_match=_header(headers, H.IF_NONE_MATCH),
    )


def parse_request(
    method: bytes,
    target: bytes,
    raw_headers: list[tuple[bytes, bytes]],
    body: bytes,
    limits: Limits,
) -> Request:
    """The typed request of one complete HTTP request, or a non-fatal ``RemoteProtocolError``.

    Unknown query parameters and headers are ignored ("Extensions SHOULD be additive only").
    """
    try:
        headers: dict[bytes, list[bytes]] = {}
        for name, value in raw_headers:
            headers.setdefault(name.lower(), []).append(value)
        try:
            text = target.decode("ascii")
        except UnicodeDecodeError:
            raise _bad("request target must be ASCII") from None
        path, _, query = text.partition("?")
        path = path.partition("#")[0]
        verb = method.decode("ascii", errors="replace").upper()
        if S.is_reserved_path(path) and verb != "OPTIONS":  # preflights stay CORS's
            # "Servers MUST route the reserved __ds prefix before normal stream operations":
            # a control path is typed here or refused here, never taken for a stream.
            return S.parse_subscription_request(
                verb, path, headers, body, max_streams=limits.max_subscription_streams
            )
        if verb not in _METHODS:
            raise _Invalid(ErrorCode.METHOD_NOT_ALLOWED, f"method {verb} not allowed")
        _check_path(path)
        event: Request
        if verb == "POST" and WEBHOOK_SIGNATURE in headers:
            # A signed webhook notification (section 7.1), never an append.
            try:
                signature = WebhookSignature.parse(_header(headers, WEBHOOK_SIGNATURE) or "")
            except RemoteProtocolError as exc:
                raise _bad(exc.message) from None
            event = WebhookDelivery(path, body, signature)
            _check_delivery(event, limits)
            return event
        if verb == "PUT":
            event = _parse_create(path, headers, body)
        elif verb == "POST":
            event = _parse_append(path, headers, body)
        elif verb == "GET":
            event = _parse_read(path, query, headers)
        elif verb == "HEAD":
            event = Head(path)
        elif verb == "DELETE":
            event = Delete(path)
        else:
            event = Options(path)
        validate_remote(event, limits)
        return event
    except _Invalid as exc:
        raise _remote(exc) from None
    except (ValueError, UnicodeDecodeError) as exc:  # parse_qsl(errors="strict")
        raise _remote(_bad(f"malformed request: {exc}")) from None


def validate_remote(event: Request, limits: Limits) -> None:
    """The same rules as ``validate_request``, raising ``_Invalid`` for the server path."""
    if isinstance(event, (*_SUBSCRIPTION_REQUESTS, WebhookDelivery)):
        return
    if isinstance(event, Create):
        _check_create(event, limits)
    elif isinstance(event, Append):
        _check_append(event)
    elif isinstance(event, Read):
        _check_read(event, limits)
