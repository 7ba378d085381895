"""Typed events of the reserved subscription APIs (PROTOCOL.md sections 6-7).

Every control path is ``{root}__ds/...``: ``root`` is the stream root the request was sent
under (``/v1/stream/`` for ``/v1/stream/__ds/subscriptions/sub-1``), kept on each request so
a server can check it is its own. Stream paths inside bodies are stream-root-relative
(``events/abc``). Requests are what a client (or a webhook worker) sends; responses are what a
server answers. ``SubscriptionError`` answers any of them with the JSON error body
``{"error": {"code": ..., "message": ...}}`` the text gives.

Kept apart from ``events.py`` so that module can fold these into its ``Request`` and
``Response`` unions without an import cycle.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING
from urllib.parse import quote

import attrs

from s3p_codec._core.convert import as_tuple

if TYPE_CHECKING:
    from s3p_codec.durable._events import ErrorCode

__all__ = [
    "DEFAULT_LEASE_TTL_MS",
    "MAX_LEASE_TTL_MS",
    "MIN_LEASE_TTL_MS",
    "AckSubscription",
    "AddSubscriptionStreams",
    "ClaimSubscription",
    "Claimed",
    "DeleteSubscription",
    "GetJwks",
    "GetSubscription",
    "Jwk",
    "Jwks",
    "LinkType",
    "PutSubscription",
    "ReleaseSubscription",
    "RemoveSubscriptionStream",
    "StreamAck",
    "StreamLink",
    "Subscription",
    "SubscriptionCallback",
    "SubscriptionConfig",
    "SubscriptionError",
    "SubscriptionErrorCode",
    "SubscriptionOk",
    "SubscriptionRequest",
    "SubscriptionResponse",
    "SubscriptionStatus",
    "SubscriptionType",
    "SubscriptionUpdated",
    "WakeAcked",
    "WakeStream",
    "WebhookSigning",
]

#: ``lease_ttl_ms`` when the request leaves it out: "Default: 30 seconds".
DEFAULT_LEASE_TTL_MS = 30_000
#: "Lease duration, from 1 second to 10 minutes."
MIN_LEASE_TTL_MS = 1_000
#: "Lease duration, from 1 second to 10 minutes."
MAX_LEASE_TTL_MS = 600_000


class SubscriptionType(enum.StrEnum):
    """How wakes are delivered: POSTed to a webhook, or appended to a wake stream."""

    WEBHOOK = "webhook"
    PULL_WAKE = "pull-wake"


class LinkType(enum.StrEnum):
    """How a stream joined a subscription ("explicit takes precedence" when both)."""

    GLOB = "glob"
    EXPLICIT = "explicit"


class SubscriptionStatus(enum.StrEnum):
    """``failed`` while a webhook retry is scheduled after a failed attempt."""

    ACTIVE = "active"
    FAILED = "failed"


class SubscriptionErrorCode(enum.StrEnum):
    """The ``error.code`` values of the JSON error bodies, each with its HTTP status."""

    INVALID_REQUEST = "INVALID_REQUEST"
    SUBSCRIPTION_NOT_FOUND = "SUBSCRIPTION_NOT_FOUND"
    SUBSCRIPTION_ALREADY_EXISTS = "SUBSCRIPTION_ALREADY_EXISTS"
    WEBHOOK_URL_REJECTED = "WEBHOOK_URL_REJECTED"
    TOKEN_INVALID = "TOKEN_INVALID"
    TOKEN_EXPIRED = "TOKEN_EXPIRED"
    FENCED = "FENCED"
    ALREADY_CLAIMED = "ALREADY_CLAIMED"
    NO_PENDING_WORK = "NO_PENDING_WORK"
    INVALID_OFFSET = "INVALID_OFFSET"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    LIMIT_EXCEEDED = "LIMIT_EXCEEDED"

    @property
    def status(self) -> ErrorCode:
        """The HTTP status this code travels with (a member of the package's ``ErrorCode``)."""
        # events imports this module for its unions: ErrorCode is looked up when asked for.
        from s3p_codec.durable._events import ErrorCode  # noqa: PLC0415

        return ErrorCode(_STATUS[self])


_STATUS: dict[SubscriptionErrorCode, int] = {
    SubscriptionErrorCode.INVALID_REQUEST: 400,
    SubscriptionErrorCode.SUBSCRIPTION_NOT_FOUND: 404,
    SubscriptionErrorCode.SUBSCRIPTION_ALREADY_EXISTS: 409,
    SubscriptionErrorCode.WEBHOOK_URL_REJECTED: 400,
    SubscriptionErrorCode.TOKEN_INVALID: 401,
    SubscriptionErrorCode.TOKEN_EXPIRED: 401,
    SubscriptionErrorCode.FENCED: 409,
    SubscriptionErrorCode.ALREADY_CLAIMED: 409,
    SubscriptionErrorCode.NO_PENDING_WORK: 409,
    SubscriptionErrorCode.INVALID_OFFSET: 409,
    SubscriptionErrorCode.METHOD_NOT_ALLOWED: 405,
    SubscriptionErrorCode.PAYLOAD_TOO_LARGE: 413,
    SubscriptionErrorCode.LIMIT_EXCEEDED: 429,
}


# ---------------------------------------------------------------------------------------------
# Records inside bodies


@attrs.frozen(slots=True)
class SubscriptionConfig:
    """The body of ``PUT .../__ds/subscriptions/:id``; the hash of its normalized form decides
    between 200 (re-confirmed) and 409 (a different configuration)."""

    type: SubscriptionType
    pattern: str | None = None
    streams: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    webhook_url: str | None = None
    wake_stream: str | None = None
    lease_ttl_ms: int = DEFAULT_LEASE_TTL_MS
    description: str | None = None

    def normalized(self) -> tuple[object, ...]:
        """What re-confirmation compares: ``streams`` as a sorted set, the rest as given."""
        return (
            self.type.value,
            self.pattern,
            tuple(sorted(set(self.streams))),
            self.webhook_url,
            self.wake_stream,
            self.lease_ttl_ms,
            self.description,
        )


@attrs.frozen(slots=True)
class StreamLink:
    """One linked stream of a subscription and its inclusive ``acked_offset``."""

    path: str
    link_type: LinkType
    acked_offset: str


@attrs.frozen(slots=True)
class WakeStream:
    """A linked stream in a wake snapshot: where it was acked, where its tail is."""

    path: str
    link_type: LinkType
    acked_offset: str
    tail_offset: str
    has_pending: bool


@attrs.frozen(slots=True)
class StreamAck:
    """``{"stream": ..., "offset": ...}``: the last processed offset of a stream, inclusive."""

    stream: str
    offset: str


@attrs.frozen(slots=True)
class WebhookSigning:
    """Signing metadata of a webhook subscription: the active ``kid`` and the JWKS URL."""

    kid: str
    jwks_url: str
    alg: str = "ed25519"


@attrs.frozen(slots=True)
class Subscription:
    """A subscription as the server serializes it (``GET``, and the answer to ``PUT``)."""

    id: str
    type: SubscriptionType
    streams: tuple[StreamLink, ...] = attrs.field(default=(), converter=as_tuple)
    pattern: str | None = None
    webhook_url: str | None = None
    signing: WebhookSigning | None = None
    wake_stream: str | None = None
    lease_ttl_ms: int = DEFAULT_LEASE_TTL_MS
    created_at: str = ""
    status: SubscriptionStatus = SubscriptionStatus.ACTIVE
    description: str | None = None


@attrs.frozen(slots=True)
class Jwk:
    """One Ed25519 public key of a JWK Set (RFC 8037): ``x`` is base64url without padding."""

    kid: str
    x: str
    kty: str = "OKP"
    crv: str = "Ed25519"
    use: str = "sig"
    alg: str = "EdDSA"


# ---------------------------------------------------------------------------------------------
# Requests (client or worker -> server)


class _Control:
    """What every control request shares: its path on the wire, like a stream request's."""

    __slots__ = ()
    _action = ""

    @property
    def path(self) -> str:
        """The request path: ``{root}__ds/subscriptions/{id}[/{action}]`` (id percent-encoded)."""
        root: str = getattr(self, "root")  # noqa: B009 - every subclass is an attrs class with root
        if isinstance(self, GetJwks):
            return root + "__ds/jwks.json"
        ident: str = getattr(self, "id")  # noqa: B009
        path = root + "__ds/subscriptions/" + quote(ident, safe="")
        if isinstance(self, RemoveSubscriptionStream):
            return path + "/streams/" + quote(self.stream, safe="")
        return path + ("/" + self._action if self._action else "")


@attrs.frozen(slots=True)
class PutSubscription(_Control):
    """``PUT {root}__ds/subscriptions/:id``: create, or re-confirm an identical configuration."""

    root: str
    id: str
    config: SubscriptionConfig


@attrs.frozen(slots=True)
class GetSubscription(_Control):
    """``GET {root}__ds/subscriptions/:id``."""

    root: str
    id: str


@attrs.frozen(slots=True)
class DeleteSubscription(_Control):
    """``DELETE {root}__ds/subscriptions/:id``: tombstones it (204)."""

    root: str
    id: str


@attrs.frozen(slots=True)
class AddSubscriptionStreams(_Control):
    """``POST {root}__ds/subscriptions/:id/streams``: explicit links, at each stream's tail."""

    _action = "streams"
    root: str
    id: str
    streams: tuple[str, ...] = attrs.field(converter=as_tuple)


@attrs.frozen(slots=True)
class RemoveSubscriptionStream(_Control):
    """``DELETE {root}__ds/subscriptions/:id/streams/:path``: the explicit link only."""

    root: str
    id: str
    stream: str


@attrs.frozen(slots=True)
class GetJwks(_Control):
    """``GET {root}__ds/jwks.json``: the webhook signing public keys."""

    root: str


@attrs.frozen(slots=True)
class SubscriptionCallback(_Control):
    """``POST {root}__ds/subscriptions/:id/callback`` from a webhook worker (Bearer token)."""

    _action = "callback"
    root: str
    id: str
    token: str
    wake_id: str
    generation: int
    acks: tuple[StreamAck, ...] = attrs.field(default=(), converter=as_tuple)
    done: bool = False


@attrs.frozen(slots=True)
class ClaimSubscription(_Control):
    """``POST {root}__ds/subscriptions/:id/claim``: a pull-wake worker races for the lease.

    ``token`` is the optional service credential (``Authorization: Bearer``)."""

    _action = "claim"
    root: str
    id: str
    worker: str
    token: str | None = None


@attrs.frozen(slots=True)
class AckSubscription(_Control):
    """``POST {root}__ds/subscriptions/:id/ack``: acks, and a heartbeat unless ``done``."""

    _action = "ack"
    root: str
    id: str
    token: str
    wake_id: str
    generation: int
    acks: tuple[StreamAck, ...] = attrs.field(default=(), converter=as_tuple)
    done: bool = False


@attrs.frozen(slots=True)
class ReleaseSubscription(_Control):
    """``POST {root}__ds/subscriptions/:id/release``: give the lease back without acking."""

    _action = "release"
    root: str
    id: str
    token: str
    wake_id: str
    generation: int


SubscriptionRequest = (
    PutSubscription
    | GetSubscription
    | DeleteSubscription
    | AddSubscriptionStreams
    | RemoveSubscriptionStream
    | GetJwks
    | SubscriptionCallback
    | ClaimSubscription
    | AckSubscription
    | ReleaseSubscription
)
"""Requests on the reserved ``__ds`` paths."""

# ---------------------------------------------------------------------------------------------
# Responses (server -> client or worker)


@attrs.frozen(slots=True)
class SubscriptionOk:
    """The subscription: 201 when ``created`` by a PUT, 200 otherwise (re-confirm, GET)."""

    subscription: Subscription
    created: bool = False


@attrs.frozen(slots=True)
class SubscriptionUpdated:
    """``204 No Content``: deleted, streams added or removed, lease released."""


@attrs.frozen(slots=True)
class Jwks:
    """``200`` ``application/jwk-set+json``: the JWK Set."""

    keys: tuple[Jwk, ...] = attrs.field(converter=as_tuple)


@attrs.frozen(slots=True)
class WakeAcked:
    """``{"ok": true, "next_wake": ...}``: a callback or ack was applied."""

    next_wake: bool = False


@attrs.frozen(slots=True)
class Claimed:
    """A successful claim: the wake, its fencing generation, the lease token and snapshot."""

    wake_id: str
    generation: int
    token: str
    streams: tuple[WakeStream, ...] = attrs.field(converter=as_tuple)
    lease_ttl_ms: int


@attrs.frozen(slots=True)
class SubscriptionError:
    """``{"error": {"code", "message"[, "current_holder", "generation"]}}`` with its status."""

    code: SubscriptionErrorCode
    message: str = ""
    current_holder: str | None = None
    generation: int | None = None

    @property
    def status(self) -> ErrorCode:
        """The HTTP status of ``code``."""
        return self.code.status


SubscriptionResponse = (
    SubscriptionOk | SubscriptionUpdated | Jwks | WakeAcked | Claimed | SubscriptionError
)
"""Responses to the reserved ``__ds`` requests."""
