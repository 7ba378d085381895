"""Responses on the wire: typed response events to h11 response heads and back.

``build_response`` is the server's response builder: it always sets the headers the protocol
requires (security headers on every response, ``Cache-Control`` per kind, exact
``text/event-stream`` without ``Content-Length`` for SSE, ``stream-sse-data-encoding: base64``
for binary streams) and validates the event first. ``parse_response`` is the client's typing of
a complete response by the request it answers.
"""

from __future__ import annotations

import contextlib
from http import HTTPStatus

import h11

from s3p_codec._core.errors import LocalProtocolError, RemoteProtocolError
from s3p_codec.durable import _headers as H
from s3p_codec.durable import _subscriptions as S
from s3p_codec.durable._events import (
    Append,
    Appended,
    Chunk,
    ConnectionErrorCode,
    Create,
    Created,
    Delete,
    Deleted,
    ErrorCode,
    ErrorResponse,
    Head,
    LiveMode,
    LongPollTimeout,
    NotModified,
    Options,
    OptionsOk,
    Read,
    Request,
    Response,
    SSEStart,
    StreamInfo,
)
from s3p_codec.durable._subscription_events import (
    Claimed,
    Jwks,
    SubscriptionError,
    SubscriptionOk,
    SubscriptionUpdated,
    WakeAcked,
)
from s3p_codec.durable._webhooks import WebhookDelivery, WebhookReply
from s3p_codec.durable.offsets import is_sentinel, offset_error
from s3p_codec.durable.producer import MAX_PRODUCER_INT

__all__ = [
    "ALLOWED",
    "ResponseHeaders",
    "build_response",
    "parse_error",
    "parse_response",
    "validate_response",
]

SSE_CONTENT_TYPE = b"text/event-stream"
SSE_CACHE_CONTROL = b"no-cache"
NO_STORE = b"no-store"

ALLOWED: dict[type, tuple[type, ...]] = {
    Create: (Created,),
    Append: (Appended,),
    Read: (Chunk, NotModified, LongPollTimeout, SSEStart),
    Head: (StreamInfo,),
    Delete: (Deleted,),
    Options: (OptionsOk,),
    WebhookDelivery: (WebhookReply,),
}
"""Which success events answer which request (``ErrorResponse`` answers any)."""


def _local(message: str) -> LocalProtocolError:
    return LocalProtocolError(message, code=ErrorCode.INTERNAL_SERVER_ERROR, fatal=False)


def _check_offset(name: str, offset: str | None, *, required: bool = True) -> None:
    if offset is None:
        if required:
            raise _local(f"{name} is required")
        return
    why = offset_error(offset)
    if why is not None:
        raise _local(f"invalid {name}: {why}")
    if is_sentinel(offset):
        # "Server implementations MUST NOT generate these strings as actual stream offsets"
        raise _local(f"{name} MUST NOT be the sentinel {offset!r}")


def _check_value(name: str, value: str | None) -> None:
    if value is None:
        return
    for char in value:
        if (char < "\x20" and char != "\t") or char > "\x7e":
            raise _local(f"{name} must be printable ASCII")


def _check_int(name: str, value: int | None) -> None:
    if value is not None and not 0 <= value <= MAX_PRODUCER_INT:
        raise _local(f"{name} must be in [0, 2^53-1]")


_SUBSCRIPTION_RESPONSES = (
    SubscriptionOk,
    SubscriptionUpdated,
    Jwks,
    WakeAcked,
    Claimed,
    SubscriptionError,
)


def _is_control(request: Request | None) -> bool:
    return request is not None and type(request) in S.ANSWERS


def validate_response(request: Request | None, event: Response) -> None:
    """``LocalProtocolError`` if ``event`` cannot answer ``request`` or breaks a MUST."""
    if isinstance(event, _SUBSCRIPTION_RESPONSES):
        if request is not None and not _is_control(request):
            raise _local(f"{type(event).__name__} answers only a reserved __ds request")
        S.validate_subscription_response(request, event)  # type: ignore[arg-type]
        return
    if _is_control(request) and not isinstance(event, ErrorResponse):
        raise _local(f"{type(event).__name__} cannot answer {type(request).__name__}")
    if request is not None and not isinstance(event, ErrorResponse):
        allowed = ALLOWED[type(request)]
        if not isinstance(event, allowed):
            raise _local(f"{type(event).__name__} cannot answer {type(request).__name__}")
        if isinstance(request, Read):
            if isinstance(event, SSEStart) and request.live is not LiveMode.SSE:
                raise _local("SSEStart answers only live=sse reads")
            if isinstance(event, LongPollTimeout) and request.live is not LiveMode.LONG_POLL:
                raise _local("LongPollTimeout answers only live=long-poll reads")
            if request.live is LiveMode.SSE and isinstance(event, (Chunk, LongPollTimeout)):
                raise _local("a live=sse read is answered with SSEStart")
    if isinstance(event, (Created, StreamInfo, Chunk, LongPollTimeout)):
        _check_offset("next_offset", event.next_offset)
    if isinstance(event, Appended):
        _check_offset("next_offset", event.next_offset, required=False)
        _check_int("producer_epoch", event.producer_epoch)
        _check_int("producer_seq", event.producer_seq)
        if event.duplicate and event.producer_epoch is None:
            raise _local("a duplicate is a producer outcome: set producer_epoch")
    if isinstance(event, (Created,)):
        _check_value("content_type", event.content_type)
        _check_value("location", event.location)
    if isinstance(event, StreamInfo):
        _check_value("content_type", event.content_type)
        _check_value("expires_at", event.expires_at)
        _check_value("etag", event.etag)
        if event.ttl_seconds is not None and event.ttl_seconds < 0:
            raise _local("ttl_seconds must be non-negative")
    if isinstance(event, (Chunk, LongPollTimeout)):
        _check_value("cursor", event.cursor)
        if (
            event.cursor is None
            and not event.closed
            and (
                isinstance(event, LongPollTimeout)
                or (isinstance(request, Read) and request.live is LiveMode.LONG_POLL)
            )
        ):
            # Long-poll: "Stream-Cursor: <cursor>: Servers MUST include this header" (when open).
            raise _local("a long-poll response on an open stream MUST carry a cursor")
    if isinstance(event, Chunk):
        _check_value("content_type", event.content_type)
        _check_value("etag", event.etag)
        _check_value("cache_control", event.cache_control)
    if isinstance(event, NotModified):
        _check_value("etag", event.etag)
    if isinstance(event, ErrorResponse):
        if not 400 <= event.status <= 599:
            raise _local("an ErrorResponse status is 4xx or 5xx")
        _check_offset("next_offset", event.next_offset, required=False)
        _check_int("producer_epoch", event.producer_epoch)
        _check_int("expected_seq", event.expected_seq)
        _check_int("received_seq", event.received_seq)


def _ascii(value: str) -> bytes:
    return value.encode("ascii")


def build_response(
    request: Request | None, event: Response, *, close: bool = False, head: bool = False
) -> tuple[h11.Response, bytes]:
    """The h11 response head and body of a (validated) response event.

    For ``SSEStart`` only the head is returned; the body follows as SSE events. ``head`` says
    the request was a HEAD (even one that could not be parsed): such responses have no body.
    """
    validate_response(request, event)
    headers: list[tuple[bytes, bytes]] = list(H.SECURITY_HEADERS)
    headers.append((b"access-control-expose-headers", H.EXPOSED_HEADERS))
    body = b""
    status = 200
    sized = True  # whether to send Content-Length
    if isinstance(event, _SUBSCRIPTION_RESPONSES):
        status, extra, body = S.response_parts(event)
        headers.extend(extra)
        sized = status != 204
    elif isinstance(event, WebhookReply):
        body = b'{"done":true}' if event.done else b"{}"
        headers.append((H.CONTENT_TYPE, b"application/json"))
        headers.append((H.CACHE_CONTROL, NO_STORE))
    elif isinstance(event, Created):
        status = 200 if event.existed else 201
        headers.append((H.CONTENT_TYPE, _ascii(event.content_type)))
        headers.append((H.STREAM_NEXT_OFFSET, _ascii(event.next_offset)))
        if event.location is not None and not event.existed:
            headers.append((H.LOCATION, _ascii(event.location)))
        if event.closed:
            headers.append((H.STREAM_CLOSED, b"true"))
    elif isinstance(event, Appended):
        # 200 for an append accepted from a producer; 204 otherwise (close-only included).
        closing_only = isinstance(request, Append) and not request.body
        status = 204 if closing_only else event.status
        sized = status != 204
        if event.next_offset is not None:
            headers.append((H.STREAM_NEXT_OFFSET, _ascii(event.next_offset)))
        if event.closed:
            headers.append((H.STREAM_CLOSED, b"true"))
        if event.producer_epoch is not None:
            headers.append((H.PRODUCER_EPOCH, str(event.producer_epoch).encode()))
        if event.producer_seq is not None:
            headers.append((H.PRODUCER_SEQ, str(event.producer_seq).encode()))
    elif isinstance(event, StreamInfo):
        # "Servers SHOULD make HEAD responses effectively non-cacheable ... no-store"
        sized = False
        headers.append((H.STREAM_NEXT_OFFSET, _ascii(event.next_offset)))
        headers.append((H.CACHE_CONTROL, NO_STORE))
        if event.content_type is not None:
            headers.append((H.CONTENT_TYPE, _ascii(event.content_type)))
        if event.closed:
            headers.append((H.STREAM_CLOSED, b"true"))
        if event.ttl_seconds is not None:
            headers.append((H.STREAM_TTL, str(event.ttl_seconds).encode()))
        if event.expires_at is not None:
            headers.append((H.STREAM_EXPIRES_AT, _ascii(event.expires_at)))
        if event.etag is not None:
            headers.append((H.ETAG, _ascii(event.etag)))
    elif isinstance(event, Deleted):
        status = 204
        sized = False
    elif isinstance(event, Chunk):
        body = event.data
        if event.content_type is not None:
            headers.append((H.CONTENT_TYPE, _ascii(event.content_type)))
        headers.append((H.STREAM_NEXT_OFFSET, _ascii(event.next_offset)))
        if event.up_to_date:
            headers.append((H.STREAM_UP_TO_DATE, b"true"))
        if event.closed:
            headers.append((H.STREAM_CLOSED, b"true"))
        if event.cursor is not None:
            headers.append((H.STREAM_CURSOR, _ascii(event.cursor)))
        if event.etag is not None:
            headers.append((H.ETAG, _ascii(event.etag)))
        if event.cache_control is not None:
            headers.append((H.CACHE_CONTROL, _ascii(event.cache_control)))
    elif isinstance(event, NotModified):
        status = 304
        sized = False
        if event.etag is not None:
            headers.append((H.ETAG, _ascii(event.etag)))
    elif isinstance(event, LongPollTimeout):
        status = 204
        sized = False
        headers.append((H.STREAM_NEXT_OFFSET, _ascii(event.next_offset)))
        # "Stream-Up-To-Date: true: Servers MUST include this header"
        headers.append((H.STREAM_UP_TO_DATE, b"true"))
        if event.cursor is not None:
            headers.append((H.STREAM_CURSOR, _ascii(event.cursor)))
        if event.closed:
            headers.append((H.STREAM_CLOSED, b"true"))
    elif isinstance(event, SSEStart):
        # "SSE responses MUST use Content-Type: text/event-stream"; no Content-Length.
        sized = False
        headers.append((H.CONTENT_TYPE, SSE_CONTENT_TYPE))
        headers.append((H.CACHE_CONTROL, SSE_CACHE_CONTROL))
        if event.base64:
            headers.append((H.STREAM_SSE_DATA_ENCODING, b"base64"))
    elif isinstance(event, OptionsOk):
        status = 204
        sized = False
        headers.extend(H.ACCESS_CONTROL_HEADERS)
    else:
        status = event.status
        body = event.message.encode("utf-8")
        headers.append((H.CONTENT_TYPE, b"text/plain; charset=utf-8"))
        headers.append((H.CACHE_CONTROL, NO_STORE))
        if event.closed:
            headers.append((H.STREAM_CLOSED, b"true"))
        if event.next_offset is not None:
            headers.append((H.STREAM_NEXT_OFFSET, _ascii(event.next_offset)))
        if event.producer_epoch is not None:
            headers.append((H.PRODUCER_EPOCH, str(event.producer_epoch).encode()))
        if event.expected_seq is not None:
            headers.append((H.PRODUCER_EXPECTED_SEQ, str(event.expected_seq).encode()))
        if event.received_seq is not None:
            headers.append((H.PRODUCER_RECEIVED_SEQ, str(event.received_seq).encode()))
    if head or isinstance(request, Head):
        sized = False
        body = b""
    if sized:
        headers.append((b"content-length", str(len(body)).encode()))
    if close:
        headers.append((b"connection", b"close"))
    reason = b""
    with contextlib.suppress(ValueError):
        reason = HTTPStatus(status).phrase.encode("ascii")
    return h11.Response(status_code=status, headers=headers, reason=reason), body


# ---------------------------------------------------------------------------------------------
# Client side


def _invalid(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(message, code=ConnectionErrorCode.INVALID_RESPONSE, fatal=False)


class ResponseHeaders:
    """The headers of one response, looked up case-insensitively, decoded as ASCII."""

    __slots__ = ("_values",)

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self._values: dict[bytes, bytes] = {}
        for name, value in raw:
            key = name.lower()
            if key in self._values:
                self._values[key] += b", " + value
            else:
                self._values[key] = value

    def get(self, name: bytes) -> str | None:
        """Header ``name`` as text, or None when absent; raises ``RemoteProtocolError`` if it is not
        ASCII.
        """
        value = self._values.get(name)
        if value is None:
            return None
        try:
            return value.decode("ascii")
        except UnicodeDecodeError:
            raise _invalid(f"{name.decode()} is not ASCII") from None

    def flag(self, name: bytes) -> bool:
        """True when header ``name`` is present and says ``true``."""
        return H.is_true(self._values.get(name))

    def integer(self, name: bytes) -> int | None:
        """Header ``name`` as a non-negative integer, or None when absent; raises
        ``RemoteProtocolError`` if it is not one.
        """
        text = self.get(name)
        if text is None:
            return None
        value = H.parse_non_negative(text.strip(), MAX_PRODUCER_INT)
        if value is None:
            raise _invalid(f"{name.decode()} is not a non-negative integer")
        return value

    def offset(self, name: bytes, *, required: bool) -> str | None:
        """Header ``name`` as a valid offset (None when absent and not ``required``); raises
        ``RemoteProtocolError`` if it is missing but required, or not a valid offset.
        """
        text = self.get(name)
        if text is None:
            if required:
                raise _invalid(f"{name.decode()} is missing")
            return None
        text = text.strip()
        if offset_error(text, 1 << 16) is not None:
            raise _invalid(f"{name.decode()} is not a valid offset")
        return text

    def next_offset(self, *, required: bool) -> str | None:
        """``Stream-Next-Offset``: an offset, never a sentinel ("Server implementations MUST
        NOT generate these strings as actual stream offsets"; a reader following ``-1`` would
        read from the start again, ``now`` would skip to the tail)."""
        offset = self.offset(H.STREAM_NEXT_OFFSET, required=required)
        if offset is not None and is_sentinel(offset):
            raise _invalid(f"Stream-Next-Offset is the sentinel {offset!r}, not an offset")
        return offset


def parse_response(
    request: Request,
    status: int,
    raw: list[tuple[bytes, bytes]],
    body: bytes,
    max_streams: int = 1024,
) -> Response:
    """The typed event of a complete (non-SSE) response to ``request``."""
    headers = ResponseHeaders(raw)
    if _is_control(request):
        try:
            answer = S.parse_subscription_response(
                request,  # type: ignore[arg-type]
                status,
                headers.get(H.CONTENT_TYPE),
                body,
                max_streams,
            )
        except S.InvalidAnswer as exc:
            raise _invalid(str(exc)) from None
        return parse_error(status, raw, body) if answer is None else answer
    if 200 <= status < 300:
        if isinstance(request, WebhookDelivery):
            return WebhookReply(done=S.parse_webhook_reply(body))
        if isinstance(request, Create):
            return Created(
                next_offset=headers.next_offset(required=True) or "",
                content_type=headers.get(H.CONTENT_TYPE) or "application/octet-stream",
                location=headers.get(H.LOCATION),
                closed=headers.flag(H.STREAM_CLOSED),
                existed=status != 201,
            )
        if isinstance(request, Append):
            epoch = headers.integer(H.PRODUCER_EPOCH)
            return Appended(
                next_offset=headers.next_offset(required=False),
                closed=headers.flag(H.STREAM_CLOSED),
                producer_epoch=epoch,
                producer_seq=headers.integer(H.PRODUCER_SEQ),
                duplicate=request.producer is not None and status == 204 and bool(request.body),
            )
        if isinstance(request, Read):
            next_offset = headers.next_offset(required=True) or ""
            if status == 204:
                return LongPollTimeout(
                    next_offset=next_offset,
                    cursor=headers.get(H.STREAM_CURSOR),
                    closed=headers.flag(H.STREAM_CLOSED),
                )
            return Chunk(
                data=body,
                next_offset=next_offset,
                content_type=headers.get(H.CONTENT_TYPE),
                up_to_date=headers.flag(H.STREAM_UP_TO_DATE),
                closed=headers.flag(H.STREAM_CLOSED),
                cursor=headers.get(H.STREAM_CURSOR),
                etag=headers.get(H.ETAG),
                cache_control=headers.get(H.CACHE_CONTROL),
            )
        if isinstance(request, Head):
            ttl_text = headers.get(H.STREAM_TTL)
            ttl = H.parse_ttl(ttl_text.strip()) if ttl_text is not None else None
            if ttl_text is not None and ttl is None:
                raise _invalid("Stream-TTL is not a non-negative integer")
            return StreamInfo(
                next_offset=headers.next_offset(required=True) or "",
                content_type=headers.get(H.CONTENT_TYPE),
                closed=headers.flag(H.STREAM_CLOSED),
                ttl_seconds=ttl,
                expires_at=headers.get(H.STREAM_EXPIRES_AT),
                etag=headers.get(H.ETAG),
            )
        if isinstance(request, Delete):
            return Deleted()
        return OptionsOk()
    if status == 304 and isinstance(request, Read):
        return NotModified(etag=headers.get(H.ETAG))
    return parse_error(status, raw, body)


def parse_error(status: int, raw: list[tuple[bytes, bytes]], body: bytes) -> ErrorResponse:
    """An ``ErrorResponse`` with the headers that explain it (any status)."""
    headers = ResponseHeaders(raw)
    code: int = status
    with contextlib.suppress(ValueError):
        code = ErrorCode(status)
    return ErrorResponse(
        status=code,
        message=body.decode("utf-8", errors="replace"),
        closed=headers.flag(H.STREAM_CLOSED),
        next_offset=headers.next_offset(required=False),
        producer_epoch=headers.integer(H.PRODUCER_EPOCH),
        expected_seq=headers.integer(H.PRODUCER_EXPECTED_SEQ),
        received_seq=headers.integer(H.PRODUCER_RECEIVED_SEQ),
    )
