"""The reserved ``__ds`` APIs on the wire: paths, JSON bodies, statuses, for both roles.

Routing comes first: ``control_path`` finds the reserved ``__ds`` segment in a request path
("Servers MUST route the reserved ``__ds`` prefix before normal stream operations"), so a
server-role connection never types such a request as a stream operation; an unknown reserved
path is a 404 ``SUBSCRIPTION_NOT_FOUND``, never a stream. The stream root is whatever precedes
``__ds`` (the codec knows no root of its own, so a ``__ds`` segment anywhere is reserved).

JSON is the standard library's ``json``, strict (no ``NaN``), with every field type-checked:
a malformed body is a typed error carrying the ``SubscriptionError`` to answer, nothing is
half-created. The JSON shapes are hand-mapped because they are few and flat; a schema library
would add a dependency for ten objects.
"""

from __future__ import annotations

import ipaddress
import json
import re
from http import HTTPStatus
from typing import NoReturn
from urllib.parse import unquote, urlsplit

import attrs

from s3p_codec._core.convert import as_tuple
from s3p_codec._core.errors import LocalProtocolError, RemoteProtocolError
from s3p_codec.durable._subscription_events import (
    MAX_LEASE_TTL_MS,
    MIN_LEASE_TTL_MS,
    AckSubscription,
    AddSubscriptionStreams,
    Claimed,
    ClaimSubscription,
    DeleteSubscription,
    GetJwks,
    GetSubscription,
    Jwk,
    Jwks,
    LinkType,
    PutSubscription,
    ReleaseSubscription,
    RemoveSubscriptionStream,
    StreamAck,
    StreamLink,
    Subscription,
    SubscriptionCallback,
    SubscriptionConfig,
    SubscriptionError,
    SubscriptionErrorCode,
    SubscriptionOk,
    SubscriptionRequest,
    SubscriptionResponse,
    SubscriptionStatus,
    SubscriptionType,
    SubscriptionUpdated,
    WakeAcked,
    WakeStream,
    WebhookSigning,
)
from s3p_codec.durable.offsets import offset_error

__all__ = [
    "ANSWERS",
    "InvalidAnswer",
    "JWKS_CONTENT_TYPE",
    "RESERVED_SEGMENT",
    "WakeEvent",
    "WebhookNotification",
    "build_subscription_request",
    "build_subscription_response",
    "control_path",
    "encode_notification",
    "encode_wake_event",
    "is_reserved_path",
    "normalize_stream_path",
    "parse_notification",
    "parse_subscription_request",
    "parse_subscription_response",
    "parse_wake_event",
    "response_parts",
    "parse_webhook_reply",
    "validate_subscription_request",
    "validate_subscription_response",
    "webhook_url_error",
]

#: The reserved first stream-root-relative segment.
RESERVED_SEGMENT = "__ds"
#: Media type of ``__ds/jwks.json``.
JWKS_CONTENT_TYPE = "application/jwk-set+json"
_JSON = "application/json"
_MAX_INT = (1 << 53) - 1
_MAX_TEXT = 4096  # ids, worker names, tokens, URLs, patterns: bounded before any use
_ACTIONS = ("callback", "claim", "ack", "release")


class InvalidAnswer(Exception):
    """A success answer whose body breaks the protocol (the caller raises its typed error)."""


class _Bad(Exception):
    """A broken rule; becomes a Local- or RemoteProtocolError at the edge."""

    def __init__(self, code: SubscriptionErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = SubscriptionError(code, message)


def _bad(message: str) -> NoReturn:
    raise _Bad(SubscriptionErrorCode.INVALID_REQUEST, message)


# ---------------------------------------------------------------------------------------------
# Paths


def control_path(path: str) -> tuple[str, list[str]] | None:
    """``(root, segments after __ds)`` when ``path`` is a reserved control path, else None."""
    segments = path.split("/")
    for index, segment in enumerate(segments):
        if segment == RESERVED_SEGMENT and index > 0:
            return "/".join(segments[:index]) + "/", segments[index + 1 :]
    return None


def is_reserved_path(path: str) -> bool:
    """True when ``path`` holds the reserved ``__ds`` segment (never an application stream)."""
    return control_path(path) is not None


def normalize_stream_path(path: str) -> str:
    """A stream-root-relative path without leading or trailing slashes."""
    return path.strip("/")


def _text(name: str, value: object, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        _bad(f"{name} must be a string")
    if not value and not empty:
        _bad(f"{name} must not be empty")
    if len(value) > _MAX_TEXT:
        _bad(f"{name} is longer than {_MAX_TEXT} characters")
    return value


def _ascii(name: str, value: object) -> str:
    text = _text(name, value)
    if any(not "\x21" <= char <= "\x7e" for char in text):
        _bad(f"{name} must be printable ASCII without spaces")
    return text


def _stream(name: str, value: object) -> str:
    path = normalize_stream_path(_ascii(name, value))
    if not path or any(char in "?#" for char in path):
        _bad(f"{name} must be a stream-root-relative path without '?' or '#'")
    if path.split("/", 1)[0] == RESERVED_SEGMENT:
        _bad(f"{name}: the first segment {RESERVED_SEGMENT!r} is reserved")
    return path


def _integer(name: str, value: object, low: int = 0, high: int = _MAX_INT) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        _bad(f"{name} must be an integer from {low} to {high}")
    return value


def _offset(name: str, value: object) -> str:
    text = _ascii(name, value)
    why = offset_error(text)
    if why is not None:
        _bad(f"invalid {name}: {why}")
    return text


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        _bad(f"{name} must be true or false")
    return value


def _object(name: str, value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        _bad(f"{name} must be a JSON object")
    return value


def _array(name: str, value: object, limit: int) -> list[object]:
    if not isinstance(value, list):
        _bad(f"{name} must be a JSON array")
    if len(value) > limit:
        raise _Bad(SubscriptionErrorCode.LIMIT_EXCEEDED, f"{name} lists more than {limit} items")
    return value


def _reject_constant(name: str) -> NoReturn:
    _bad(f"{name} is not JSON")


def _load(body: bytes) -> dict[str, object]:
    """A JSON object body; empty means ``{}`` (the reference treats it so)."""
    if not body.strip():
        return {}
    try:
        value = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        _bad("the body is not valid JSON")
    return _object("the body", value)


def _dump(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Bodies of requests


def _config(data: dict[str, object], max_streams: int) -> SubscriptionConfig:
    try:
        kind = SubscriptionType(str(data.get("type")))
    except ValueError:
        _bad('type must be "webhook" or "pull-wake"')
    pattern = None
    if data.get("pattern") is not None:
        pattern = normalize_stream_path(_ascii("pattern", data["pattern"])) or None
    streams: tuple[str, ...] = ()
    if data.get("streams") is not None:
        items = _array("streams", data["streams"], max_streams)
        streams = tuple(_stream("streams[]", item) for item in items)
    if pattern is None and not streams:
        # "At least one of pattern or streams MUST be present."
        _bad("at least one of pattern or streams is required")
    webhook_url = None
    if data.get("webhook") is not None:
        webhook = _object("webhook", data["webhook"])
        webhook_url = _ascii("webhook.url", webhook.get("url"))
    if kind is SubscriptionType.WEBHOOK and webhook_url is None:
        _bad("webhook subscriptions require webhook.url")
    wake_stream = None
    if data.get("wake_stream") is not None:
        wake_stream = _stream("wake_stream", data["wake_stream"])
    if kind is SubscriptionType.PULL_WAKE and wake_stream is None:
        _bad("pull-wake subscriptions require wake_stream")
    lease = data.get("lease_ttl_ms")
    lease_ttl = (
        30_000
        if lease is None
        else _integer("lease_ttl_ms", lease, MIN_LEASE_TTL_MS, MAX_LEASE_TTL_MS)
    )
    description = None
    if data.get("description") is not None:
        description = _text("description", data["description"], empty=True)
    return SubscriptionConfig(
        type=kind,
        pattern=pattern,
        streams=streams,
        webhook_url=webhook_url,
        wake_stream=wake_stream,
        lease_ttl_ms=lease_ttl,
        description=description,
    )


def _config_json(config: SubscriptionConfig) -> dict[str, object]:
    out: dict[str, object] = {"type": config.type.value}
    if config.pattern is not None:
        out["pattern"] = config.pattern
    if config.streams:
        out["streams"] = list(config.streams)
    if config.webhook_url is not None:
        out["webhook"] = {"url": config.webhook_url}
    if config.wake_stream is not None:
        out["wake_stream"] = config.wake_stream
    out["lease_ttl_ms"] = config.lease_ttl_ms
    if config.description is not None:
        out["description"] = config.description
    return out


def _acks(data: dict[str, object], max_streams: int) -> tuple[StreamAck, ...]:
    if data.get("acks") is None:
        return ()
    acks = []
    for item in _array("acks", data["acks"], max_streams):
        ack = _object("acks[]", item)
        stream = ack.get("stream", ack.get("path"))
        acks.append(
            StreamAck(_stream("acks[].stream", stream), _offset("acks[].offset", ack.get("offset")))
        )
    return tuple(acks)


def _wake(data: dict[str, object]) -> tuple[str, int]:
    return _ascii("wake_id", data.get("wake_id")), _integer("generation", data.get("generation"))


def _bearer(headers: dict[bytes, list[bytes]], *, required: bool) -> str | None:
    values = headers.get(b"authorization", [])
    if not values:
        if required:
            raise _Bad(SubscriptionErrorCode.TOKEN_INVALID, "missing Authorization: Bearer token")
        return None
    raw = values[0]
    if len(values) > 1 or not raw.startswith(b"Bearer ") or len(raw) > _MAX_TEXT:
        raise _Bad(SubscriptionErrorCode.TOKEN_INVALID, "malformed Authorization header")
    token = raw[len(b"Bearer ") :].decode("ascii", errors="replace").strip()
    if not token or any(not "\x21" <= char <= "\x7e" for char in token):
        raise _Bad(SubscriptionErrorCode.TOKEN_INVALID, "malformed Authorization header")
    return token


def _method_not_allowed(method: str) -> NoReturn:
    raise _Bad(SubscriptionErrorCode.METHOD_NOT_ALLOWED, f"method {method} not allowed here")


def parse_subscription_request(
    method: str,
    path: str,
    headers: dict[bytes, list[bytes]],
    body: bytes,
    *,
    max_streams: int,
) -> SubscriptionRequest:
    """The typed request of a reserved control path (``path`` must be one), or a non-fatal
    ``RemoteProtocolError`` whose ``reply`` is the ``SubscriptionError`` to answer."""
    try:
        return _parse(method, path, headers, body, max_streams)
    except _Bad as exc:
        raise RemoteProtocolError(
            exc.error.message, code=exc.error.status, fatal=False, reply=exc.error
        ) from None


def _decode(segment: str) -> str:
    try:
        return unquote(segment, errors="strict")
    except UnicodeDecodeError:
        _bad("a path segment is not UTF-8 once percent-decoded")


def _parse(
    method: str, path: str, headers: dict[bytes, list[bytes]], body: bytes, max_streams: int
) -> SubscriptionRequest:
    found = control_path(path)
    assert found is not None
    root, rest = found
    if rest == ["jwks.json"]:
        if method != "GET":
            _method_not_allowed(method)
        return GetJwks(root)
    if len(rest) < 2 or rest[0] != "subscriptions" or not rest[1]:
        raise _Bad(
            SubscriptionErrorCode.SUBSCRIPTION_NOT_FOUND, "Durable Streams control route not found"
        )
    ident = _ascii("subscription id", _decode(rest[1]))
    tail = rest[2:]
    if not tail:
        if method == "PUT":
            return PutSubscription(root, ident, _config(_load(body), max_streams))
        if method == "GET":
            return GetSubscription(root, ident)
        if method == "DELETE":
            return DeleteSubscription(root, ident)
        _method_not_allowed(method)
    if tail[0] == "streams":
        if len(tail) == 1:
            if method != "POST":
                _method_not_allowed(method)
            data = _load(body)
            items = _array("streams", data.get("streams"), max_streams)
            if not items:
                _bad("streams must be a non-empty string array")
            return AddSubscriptionStreams(
                root, ident, tuple(_stream("streams[]", item) for item in items)
            )
        if method != "DELETE":
            _method_not_allowed(method)
        stream = _stream("stream path", _decode("/".join(tail[1:])))
        return RemoveSubscriptionStream(root, ident, stream)
    if len(tail) != 1 or tail[0] not in _ACTIONS:
        raise _Bad(
            SubscriptionErrorCode.SUBSCRIPTION_NOT_FOUND, "Durable Streams control route not found"
        )
    if method != "POST":
        _method_not_allowed(method)
    action = tail[0]
    if action == "claim":
        token = _bearer(headers, required=False)
        worker = _ascii("worker", _load(body).get("worker"))
        return ClaimSubscription(root, ident, worker, token)
    token = _bearer(headers, required=True)
    assert token is not None
    data = _load(body)
    wake_id, generation = _wake(data)
    if action == "release":
        return ReleaseSubscription(root, ident, token, wake_id, generation)
    acks = _acks(data, max_streams)
    done = _flag("done", data["done"]) if data.get("done") is not None else False
    if action == "callback":
        return SubscriptionCallback(root, ident, token, wake_id, generation, acks, done)
    return AckSubscription(root, ident, token, wake_id, generation, acks, done)


def validate_subscription_request(event: SubscriptionRequest, max_streams: int) -> None:
    """``LocalProtocolError`` (code: the status a server would answer) if ``event`` breaks a
    rule; the same checks as the server's parser, run on the JSON the event would send."""
    try:
        _check_event(event, max_streams)
    except (AttributeError, TypeError, ValueError) as exc:  # fields of the wrong types
        raise LocalProtocolError(
            f"malformed {type(event).__name__}: {exc}",
            code=HTTPStatus.BAD_REQUEST,
            fatal=False,
        ) from None


def _check_event(event: SubscriptionRequest, max_streams: int) -> None:
    try:
        if not isinstance(event.root, str):
            _bad("root must be a string")
        if not event.root.startswith("/") or not event.root.endswith("/"):
            _bad("root must start and end with '/'")
        for char in event.root:
            if char in "?#" or not "\x21" <= char <= "\x7e":
                _bad("root must be printable ASCII without '?', '#' or spaces")
        if is_reserved_path(event.root):
            _bad(f"root must not hold the reserved segment {RESERVED_SEGMENT!r}")
        if isinstance(event, GetJwks):
            return
        _ascii("subscription id", event.id)
        method, _, headers, body = _request_parts(event)
        reparsed = _parse(method, event.path, headers, body, max_streams)
        if reparsed != event:
            _bad("the request does not survive its encoding (normalize stream paths first)")
    except _Bad as exc:
        raise LocalProtocolError(exc.error.message, code=exc.error.status, fatal=False) from None


def _route(event: SubscriptionRequest) -> str:
    return event.path[len(event.root) + len(RESERVED_SEGMENT) + 1 :]


def _request_parts(
    event: SubscriptionRequest,
) -> tuple[str, str, dict[bytes, list[bytes]], bytes]:
    """Method, route, headers (lower-case names) and body of ``event``."""
    headers: dict[bytes, list[bytes]] = {}
    body = b""
    if isinstance(event, (GetJwks, GetSubscription)):
        method = "GET"
    elif isinstance(event, (DeleteSubscription, RemoveSubscriptionStream)):
        method = "DELETE"
    elif isinstance(event, PutSubscription):
        method = "PUT"
        body = _dump(_config_json(event.config))
    else:
        method = "POST"
        data: dict[str, object]
        if isinstance(event, AddSubscriptionStreams):
            data = {"streams": list(event.streams)}
        elif isinstance(event, ClaimSubscription):
            data = {"worker": event.worker}
            if event.token is not None:
                headers[b"authorization"] = [b"Bearer " + event.token.encode("utf-8")]
        else:
            headers[b"authorization"] = [b"Bearer " + event.token.encode("utf-8")]
            data = {"wake_id": event.wake_id, "generation": event.generation}
            if isinstance(event, (SubscriptionCallback, AckSubscription)):
                data["acks"] = [{"stream": a.stream, "offset": a.offset} for a in event.acks]
                data["done"] = event.done
        body = _dump(data)
    if body:
        headers[b"content-type"] = [_JSON.encode()]
    return method, _route(event), headers, body


def build_subscription_request(
    event: SubscriptionRequest, max_streams: int
) -> tuple[bytes, bytes, list[tuple[bytes, bytes]], bytes]:
    """Method, target, headers and body of a (validated) control request."""
    validate_subscription_request(event, max_streams)
    method, _route_text, headers, body = _request_parts(event)
    flat = [(name, value) for name, values in headers.items() for value in values]
    flat.append((b"content-length", str(len(body)).encode("ascii")))
    target = event.path.encode("ascii")
    return method.encode("ascii"), target, flat, body


# ---------------------------------------------------------------------------------------------
# Bodies of responses


def _link_json(link: StreamLink | WakeStream) -> dict[str, object]:
    out: dict[str, object] = {
        "path": link.path,
        "link_type": link.link_type.value,
        "acked_offset": link.acked_offset,
    }
    if isinstance(link, WakeStream):
        out["tail_offset"] = link.tail_offset
        out["has_pending"] = link.has_pending
    return out


def _subscription_json(sub: Subscription) -> dict[str, object]:
    out: dict[str, object] = {
        "id": sub.id,
        "subscription_id": sub.id,
        "type": sub.type.value,
    }
    if sub.pattern is not None:
        out["pattern"] = sub.pattern
    out["streams"] = [_link_json(link) for link in sub.streams]
    if sub.webhook_url is not None:
        webhook: dict[str, object] = {"url": sub.webhook_url}
        if sub.signing is not None:
            webhook["signing"] = {
                "alg": sub.signing.alg,
                "kid": sub.signing.kid,
                "jwks_url": sub.signing.jwks_url,
            }
        out["webhook"] = webhook
    out["wake_stream"] = sub.wake_stream
    out["lease_ttl_ms"] = sub.lease_ttl_ms
    out["created_at"] = sub.created_at
    out["status"] = sub.status.value
    if sub.description is not None:
        out["description"] = sub.description
    return out


def _link(item: object) -> StreamLink:
    data = _object("streams[]", item)
    try:
        link_type = LinkType(str(data.get("link_type")))
    except ValueError:
        _bad("link_type must be glob or explicit")
    return StreamLink(
        _stream("streams[].path", data.get("path")),
        link_type,
        _offset("streams[].acked_offset", data.get("acked_offset")),
    )


def _wake_stream(item: object) -> WakeStream:
    data = _object("streams[]", item)
    link = _link(data)
    return WakeStream(
        link.path,
        link.link_type,
        link.acked_offset,
        _offset("streams[].tail_offset", data.get("tail_offset")),
        _flag("streams[].has_pending", data.get("has_pending")),
    )


def _subscription(data: dict[str, object], max_streams: int) -> Subscription:
    try:
        kind = SubscriptionType(str(data.get("type")))
        status = SubscriptionStatus(str(data.get("status", "active")))
    except ValueError:
        _bad("type or status is not one the protocol names")
    signing = None
    webhook_url = None
    if data.get("webhook") is not None:
        webhook = _object("webhook", data["webhook"])
        webhook_url = _ascii("webhook.url", webhook.get("url"))
        if webhook.get("signing") is not None:
            meta = _object("webhook.signing", webhook["signing"])
            signing = WebhookSigning(
                kid=_ascii("signing.kid", meta.get("kid")),
                jwks_url=_ascii("signing.jwks_url", meta.get("jwks_url")),
                alg=_ascii("signing.alg", meta.get("alg")),
            )
    return Subscription(
        id=_text("id", data.get("id")),
        type=kind,
        streams=tuple(_link(i) for i in _array("streams", data.get("streams", []), max_streams)),
        pattern=None if data.get("pattern") is None else _text("pattern", data["pattern"]),
        webhook_url=webhook_url,
        signing=signing,
        wake_stream=None
        if data.get("wake_stream") is None
        else _stream("wake_stream", data["wake_stream"]),
        lease_ttl_ms=_integer("lease_ttl_ms", data.get("lease_ttl_ms", 30_000)),
        created_at=_text("created_at", data.get("created_at", ""), empty=True),
        status=status,
        description=None
        if data.get("description") is None
        else _text("description", data["description"], empty=True),
    )


def _jwk_json(key: Jwk) -> dict[str, object]:
    return {
        "kty": key.kty,
        "crv": key.crv,
        "x": key.x,
        "kid": key.kid,
        "use": key.use,
        "alg": key.alg,
    }


def _jwk(item: object) -> Jwk:
    data = _object("keys[]", item)
    return Jwk(
        kid=_ascii("kid", data.get("kid")),
        x=_ascii("x", data.get("x")),
        kty=_ascii("kty", data.get("kty")),
        crv=_ascii("crv", data.get("crv")),
        use=_ascii("use", data.get("use", "sig")),
        alg=_ascii("alg", data.get("alg", "EdDSA")),
    )


def _error_json(event: SubscriptionError) -> dict[str, object]:
    error: dict[str, object] = {"code": event.code.value, "message": event.message}
    if event.current_holder is not None:
        error["current_holder"] = event.current_holder
    if event.generation is not None:
        error["generation"] = event.generation
    return {"error": error}


ANSWERS: dict[type, tuple[type, ...]] = {
    PutSubscription: (SubscriptionOk,),
    GetSubscription: (SubscriptionOk,),
    DeleteSubscription: (SubscriptionUpdated,),
    AddSubscriptionStreams: (SubscriptionUpdated,),
    RemoveSubscriptionStream: (SubscriptionUpdated,),
    GetJwks: (Jwks,),
    SubscriptionCallback: (WakeAcked,),
    ClaimSubscription: (Claimed,),
    AckSubscription: (WakeAcked,),
    ReleaseSubscription: (SubscriptionUpdated,),
}


def validate_subscription_response(
    request: SubscriptionRequest | None, event: SubscriptionResponse
) -> None:
    """``LocalProtocolError`` if ``event`` cannot answer ``request`` or breaks a rule."""
    if request is not None and not isinstance(event, SubscriptionError):
        if not isinstance(event, ANSWERS[type(request)]):
            raise LocalProtocolError(
                f"{type(event).__name__} cannot answer {type(request).__name__}",
                code=HTTPStatus.INTERNAL_SERVER_ERROR,
                fatal=False,
            )
        if (
            isinstance(event, SubscriptionOk)
            and event.created
            and not isinstance(request, PutSubscription)
        ):
            raise LocalProtocolError(
                "only a PUT creates", code=HTTPStatus.INTERNAL_SERVER_ERROR, fatal=False
            )
    try:
        _status, _headers, body = response_parts(event)
        reparsed = _parse_success(request, event, body) if request is not None else None
    except _Bad as exc:
        raise LocalProtocolError(
            exc.error.message, code=HTTPStatus.INTERNAL_SERVER_ERROR, fatal=False
        ) from None
    if reparsed is not None and reparsed != event:
        raise LocalProtocolError(
            "the response does not survive its encoding",
            code=HTTPStatus.INTERNAL_SERVER_ERROR,
            fatal=False,
        )


def _parse_success(
    request: SubscriptionRequest, event: SubscriptionResponse, body: bytes
) -> SubscriptionResponse | None:
    if isinstance(event, SubscriptionError):
        return None
    status = 201 if isinstance(event, SubscriptionOk) and event.created else 200
    if isinstance(event, SubscriptionUpdated):
        status = 204
    return _parse_answer(request, status, body, 1 << 30)


def response_parts(event: SubscriptionResponse) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    json_type = (b"content-type", _JSON.encode())
    no_store = (b"cache-control", b"no-store")
    if isinstance(event, SubscriptionOk):
        body = _dump(_subscription_json(event.subscription))
        return (201 if event.created else 200), [json_type, no_store], body
    if isinstance(event, SubscriptionUpdated):
        return 204, [no_store], b""
    if isinstance(event, Jwks):
        body = _dump({"keys": [_jwk_json(key) for key in event.keys]})
        headers = [
            (b"content-type", JWKS_CONTENT_TYPE.encode()),
            (b"cache-control", b"public, max-age=300"),
        ]
        return 200, headers, body
    if isinstance(event, WakeAcked):
        return 200, [json_type, no_store], _dump({"ok": True, "next_wake": event.next_wake})
    if isinstance(event, Claimed):
        body = _dump(
            {
                "wake_id": event.wake_id,
                "generation": event.generation,
                "token": event.token,
                "streams": [_link_json(item) for item in event.streams],
                "lease_ttl_ms": event.lease_ttl_ms,
            }
        )
        return 200, [json_type, no_store], body
    return event.status, [json_type, no_store], _dump(_error_json(event))


def build_subscription_response(
    request: SubscriptionRequest | None, event: SubscriptionResponse
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Status, headers (without the security ones) and body of a (validated) response."""
    validate_subscription_response(request, event)
    return response_parts(event)


def _parse_answer(
    request: SubscriptionRequest, status: int, body: bytes, max_streams: int
) -> SubscriptionResponse:
    if isinstance(request, (PutSubscription, GetSubscription)):
        if status not in ((200, 201) if isinstance(request, PutSubscription) else (200,)):
            _bad(f"status {status} does not answer {type(request).__name__}")
        return SubscriptionOk(_subscription(_load(body), max_streams), created=status == 201)
    if isinstance(request, GetJwks):
        keys = _array("keys", _load(body).get("keys"), max_streams)
        return Jwks(tuple(_jwk(item) for item in keys))
    if isinstance(request, (SubscriptionCallback, AckSubscription)):
        data = _load(body)
        if data.get("ok") is not True:
            _bad("a successful callback or ack says ok: true")
        return WakeAcked(next_wake=_flag("next_wake", data.get("next_wake", False)))
    if isinstance(request, ClaimSubscription):
        data = _load(body)
        wake_id, generation = _wake(data)
        return Claimed(
            wake_id=wake_id,
            generation=generation,
            token=_ascii("token", data.get("token")),
            streams=tuple(
                _wake_stream(i) for i in _array("streams", data.get("streams"), max_streams)
            ),
            lease_ttl_ms=_integer("lease_ttl_ms", data.get("lease_ttl_ms")),
        )
    return SubscriptionUpdated()


def parse_subscription_response(
    request: SubscriptionRequest,
    status: int,
    content_type: str | None,
    body: bytes,
    max_streams: int,
) -> SubscriptionResponse | None:
    """The typed answer to a control request; None for an error status whose body is not the
    JSON error object (a plain HTTP error: the caller types it as an ``ErrorResponse``).

    Raises ``InvalidAnswer`` when a success body breaks the protocol.
    """
    if 200 <= status < 300:
        try:
            return _parse_answer(request, status, body, max_streams)
        except _Bad as exc:
            raise InvalidAnswer(
                f"invalid answer to {type(request).__name__}: {exc.error.message}"
            ) from None
    if content_type is None or content_type.split(";")[0].strip().lower() != _JSON:
        return None
    try:
        error = _object("error", _load(body).get("error"))
        code = SubscriptionErrorCode(str(error.get("code")))
    except (_Bad, ValueError):
        return None
    if code.status != status:
        return None
    message = error.get("message")
    holder = error.get("current_holder")
    generation = error.get("generation")
    return SubscriptionError(
        code=code,
        message=message if isinstance(message, str) else "",
        current_holder=holder if isinstance(holder, str) else None,
        generation=generation
        if isinstance(generation, int) and not isinstance(generation, bool)
        else None,
    )


# ---------------------------------------------------------------------------------------------
# Webhook notifications and wake events


@attrs.frozen(slots=True)
class WebhookNotification:
    """The body a server POSTs to a webhook: the wake, its snapshot, where to call back."""

    subscription_id: str
    wake_id: str
    generation: int
    streams: tuple[WakeStream, ...] = attrs.field(converter=as_tuple)
    callback_url: str
    callback_token: str


@attrs.frozen(slots=True)
class WakeEvent:
    """A pull-wake wake event, appended to the subscription's ``wake_stream``."""

    subscription_id: str
    stream: str
    generation: int
    ts: int


def encode_notification(event: WebhookNotification) -> bytes:
    """The JSON body of a webhook POST (sign exactly these bytes)."""
    return _dump(
        {
            "subscription_id": event.subscription_id,
            "wake_id": event.wake_id,
            "generation": event.generation,
            "streams": [_link_json(item) for item in event.streams],
            "callback_url": event.callback_url,
            "callback_token": event.callback_token,
        }
    )


def _remote_error(exc: _Bad) -> RemoteProtocolError:
    return RemoteProtocolError(
        exc.error.message, code=exc.error.status, fatal=False, reply=exc.error
    )


def parse_notification(body: bytes, max_streams: int = 1024) -> WebhookNotification:
    """A webhook POST body, typed; a non-fatal ``RemoteProtocolError`` (400) if malformed."""
    try:
        data = _load(body)
        wake_id, generation = _wake(data)
        return WebhookNotification(
            subscription_id=_ascii("subscription_id", data.get("subscription_id")),
            wake_id=wake_id,
            generation=generation,
            streams=tuple(
                _wake_stream(i) for i in _array("streams", data.get("streams"), max_streams)
            ),
            callback_url=_ascii("callback_url", data.get("callback_url")),
            callback_token=_ascii("callback_token", data.get("callback_token")),
        )
    except _Bad as exc:
        raise _remote_error(exc) from None


def parse_webhook_reply(body: bytes) -> bool:
    """Whether a webhook's 2xx answer finished the wake (``{"done": true}``); anything else,
    a body that is not JSON included, leaves the wake to a callback."""
    try:
        return _load(body).get("done") is True
    except _Bad:
        return False


def encode_wake_event(event: WakeEvent) -> bytes:
    """One JSON wake event, as appended to a JSON-mode wake stream."""
    return _dump(
        {
            "type": "wake",
            "subscription_id": event.subscription_id,
            "stream": event.stream,
            "generation": event.generation,
            "ts": event.ts,
        }
    )


def parse_wake_event(message: bytes) -> WakeEvent:
    """One message of a wake stream, typed; a non-fatal ``RemoteProtocolError`` if it is not
    a wake event."""
    try:
        data = _load(message)
        if data.get("type") != "wake":
            _bad('a wake event has type "wake"')
        return WakeEvent(
            subscription_id=_ascii("subscription_id", data.get("subscription_id")),
            stream=_stream("stream", data.get("stream")),
            generation=_integer("generation", data.get("generation")),
            ts=_integer("ts", data.get("ts")),
        )
    except _Bad as exc:
        raise _remote_error(exc) from None


# ---------------------------------------------------------------------------------------------
# Webhook URL safety (sections 6.2 and 12.8)

_LOCAL_DEV = re.compile(r"127\.\d{1,3}\.\d{1,3}\.\d{1,3}")


def webhook_url_error(url: str) -> str | None:
    """Why a server MUST refuse ``url`` as a webhook target, or None when it is acceptable.

    https only, except ``http://localhost`` and ``http://127.0.0.x`` for development; private
    (RFC 1918), loopback, link-local (cloud metadata included), unspecified, multicast and
    reserved addresses are refused, IPv6 ones included.
    """
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return "webhook.url must be a valid URL"
    if not host:
        return "webhook.url must name a host"
    if parts.username is not None or parts.password is not None:
        return "webhook.url must not carry credentials"
    local_dev = host == "localhost" or _LOCAL_DEV.fullmatch(host) is not None
    if parts.scheme == "http":
        return (
            None if local_dev else "http webhook URLs are only allowed for localhost or 127.0.0.x"
        )
    if parts.scheme != "https":
        return "webhook.url must use https"
    if host == "localhost" or host.endswith(".localhost"):
        return "localhost webhook URLs must use http (development only)"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None  # a DNS name: resolution is the sender's business (pin what it resolves to)
    if (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_unspecified
        or address.is_multicast
        or address.is_reserved
        or (isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None)
    ):
        return "webhook.url must not target private, loopback or link-local hosts"
    return None
