"""Subscriptions for the example Durable Streams server (PROTOCOL.md sections 6-7).

The codec types every ``{root}__ds/...`` request; this module holds the decisions: the
subscription records, stream links and their acked offsets, wakes with generation fencing,
webhook delivery (signed with an Ed25519 key published at ``__ds/jwks.json``, retried with
exponential backoff and 20% jitter), callbacks, pull-wake claim/ack/release, and leases.

Decisions the text leaves to servers:
- The stream root is ``Settings.stream_root`` (``/v1/stream/``); control requests under any
  other root are 404, and streams outside the root are never linked.
- Callback and claim tokens are ``base64url(JSON).base64url(HMAC-SHA256)`` with the
  subscription's incarnation (a fresh nonce per creation), generation and expiry, so a token
  of a deleted subscription never works for a new one under the same id.
- A stream found by a matching write is linked at offset zero (before that write).
- Wake events are written to the wake stream directly, not as client appends: they wake no
  subscription themselves.
- Every bound is in ``SubscriptionLimits``: subscriptions, links, deliveries in flight,
  delivery time-out and reply size, retry attempts and delay.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import hashlib
import hmac
import ipaddress
import json
import os
import random
import socket
import ssl
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import attrs

from s3p_codec import ProtocolError, Role, durable
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.asyncio import AsyncioConnection, connect

if TYPE_CHECKING:
    from examples.durable_server import App

__all__ = ["SubscriptionLimits", "Subscriptions", "glob_match"]

offsets = durable.offsets
ZERO = offsets.format_offset(0, 0)
Code = durable.SubscriptionErrorCode


@attrs.frozen
class SubscriptionLimits:
    """Every bound of the subscription machinery, each with a default."""

    max_subscriptions: int = 1024
    """Subscriptions held at once (a PUT over it: 429 ``LIMIT_EXCEEDED``)."""
    max_links: int = 10_000
    """Streams linked to one subscription (backfill and later links stop there)."""
    max_inflight_deliveries: int = 64
    """Webhook POSTs in progress at once; further deliveries wait their turn."""
    delivery_timeout: float = 10.0
    """Seconds for one webhook POST, connect to reply."""
    max_webhook_reply: int = 64 * 1024
    """Largest webhook reply body read, in bytes (a longer one is a failed delivery)."""
    max_delivery_attempts: int = 20
    """Attempts of one wake before delivery stops (the subscription stays ``failed`` until its
    next write)."""
    retry_base_delay: float = 1.0
    """First retry delay in seconds, doubled per attempt ("from 1 second up to 60 seconds")."""
    retry_max_delay: float = 60.0
    """Largest retry delay in seconds."""
    token_ttl: float = 3600.0
    """Seconds a callback or claim token stays valid."""


def glob_match(pattern: str, path: str) -> bool:
    """``*`` matches one path segment, ``**`` zero or more; ``*`` inside a segment matches any
    characters of it. Dynamic programming over segments: linear in pattern x path."""
    pats, segs = pattern.split("/"), path.split("/")
    # reach[j]: the first i pattern segments can match the first j path segments
    reach = [True] + [False] * len(segs)
    for pat in pats:
        nxt = [False] * (len(segs) + 1)
        if pat == "**":
            seen = False
            for j in range(len(segs) + 1):
                seen = seen or reach[j]
                nxt[j] = seen
        else:
            for j in range(1, len(segs) + 1):
                nxt[j] = reach[j - 1] and _segment_match(pat, segs[j - 1])
        reach = nxt
    return reach[len(segs)]


def _segment_match(pat: str, seg: str) -> bool:
    if pat == "*":
        return bool(seg)
    pieces = pat.split("*")
    if len(pieces) == 1:
        return pat == seg
    if not seg.startswith(pieces[0]) or not seg.endswith(pieces[-1]):
        return False
    pos = len(pieces[0])
    end = len(seg) - len(pieces[-1])
    for piece in pieces[1:-1]:
        found = seg.find(piece, pos, end)
        if found < 0:
            return False
        pos = found + len(piece)
    return pos <= end


def _cmp(a: str, b: str) -> int:
    """Offsets are lexicographically sortable (section 8)."""
    return (a > b) - (a < b)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@attrs.define(eq=False)
class _Link:
    path: str
    types: set[durable.LinkType]
    acked: str


@attrs.define(eq=False)
class _Record:
    id: str
    config: durable.SubscriptionConfig
    created_at: str
    incarnation: str
    links: dict[str, _Link] = attrs.Factory(dict)
    status: durable.SubscriptionStatus = durable.SubscriptionStatus.ACTIVE
    generation: int = 0
    wake_id: str | None = None
    snapshot: dict[str, str] = attrs.Factory(dict)
    holder: str | None = None
    lease: asyncio.TimerHandle | None = None
    retry: asyncio.TimerHandle | None = None
    attempts: int = 0
    next_attempt_at: float | None = None


class _Refused(Exception):
    def __init__(self, code: durable.SubscriptionErrorCode, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.reply = durable.SubscriptionError(code, message, **extra)


class Subscriptions:
    """The subscriptions of one server: answers control requests, hears stream writes."""

    def __init__(
        self, app: App, limits: SubscriptionLimits | None = None, *, root: str = "/v1/stream/"
    ) -> None:
        self.app = app
        self.limits = limits or SubscriptionLimits()
        self.root = root
        self.records: dict[str, _Record] = {}
        self.random = random.Random()
        self._token_key = os.urandom(32)
        self._deliveries = asyncio.Semaphore(self.limits.max_inflight_deliveries)
        self._tasks: set[asyncio.Task[None]] = set()
        self._key: Any = None
        self._jwk: durable.Jwk | None = None
        try:
            from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
                Ed25519PrivateKey,
            )
        except ImportError:  # pragma: no cover - the webhooks extra is missing
            return
        self._key = Ed25519PrivateKey.generate()
        self._jwk = durable.public_jwk(self._key)

    # -- helpers --------------------------------------------------------------------------

    def _now(self) -> float:
        return self.app.clock()

    def _tail(self, rel: str) -> str:
        stream = self.app.store.get(self.root + rel)
        if stream is None or stream.soft_deleted:
            return ZERO
        return stream.tail

    def _relative(self, path: str) -> str | None:
        if not path.startswith(self.root):
            return None
        rel = path[len(self.root) :].strip("/")
        return rel if rel and not durable.is_reserved_path("/" + rel) else None

    def _url(self, tail: str) -> str:
        return self.app.settings.base_url + self.root + "__ds/" + tail

    def _link(self, record: _Record, rel: str, kind: durable.LinkType, acked: str) -> None:
        link = record.links.get(rel)
        if link is not None:
            link.types.add(kind)
        elif len(record.links) < self.limits.max_links:
            record.links[rel] = _Link(rel, {kind}, acked)

    def _wake_streams(self, record: _Record) -> tuple[durable.WakeStream, ...]:
        out = []
        for link in record.links.values():
            tail = self._tail(link.path)
            kind = (
                durable.LinkType.EXPLICIT
                if durable.LinkType.EXPLICIT in link.types
                else durable.LinkType.GLOB
            )
            out.append(
                durable.WakeStream(link.path, kind, link.acked, tail, _cmp(tail, link.acked) > 0)
            )
        return tuple(out)

    def _pending(self, record: _Record) -> str | None:
        for stream in self._wake_streams(record):
            if stream.has_pending:
                return stream.path
        return None

    def _serialize(self, record: _Record) -> durable.Subscription:
        config = record.config
        signing = None
        if config.type is durable.SubscriptionType.WEBHOOK and self._jwk is not None:
            signing = durable.WebhookSigning(kid=self._jwk.kid, jwks_url=self._url("jwks.json"))
        return durable.Subscription(
            id=record.id,
            type=config.type,
            streams=tuple(
                durable.StreamLink(s.path, s.link_type, s.acked_offset)
                for s in self._wake_streams(record)
            ),
            pattern=config.pattern,
            webhook_url=config.webhook_url,
            signing=signing,
            wake_stream=config.wake_stream,
            lease_ttl_ms=config.lease_ttl_ms,
            created_at=record.created_at,
            status=record.status,
            description=config.description,
        )

    # -- tokens ---------------------------------------------------------------------------

    def _token(self, record: _Record) -> str:
        payload = {
            "sub": f"{record.id}:{record.incarnation}",
            "gen": record.generation,
            "exp": int(self._now() + self.limits.token_ttl),
            "jti": os.urandom(8).hex(),
        }
        text = _b64(json.dumps(payload, separators=(",", ":")).encode())
        mac = hmac.new(self._token_key, text.encode(), hashlib.sha256).digest()
        return f"{text}.{_b64(mac)}"

    def _check_token(self, record: _Record, token: str) -> int:
        """The token's generation; ``_Refused`` (401) unless it is ours, for ``record``, live."""
        text, _, mac = token.partition(".")
        expected = _b64(hmac.new(self._token_key, text.encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(mac.encode(), expected.encode()):
            raise _Refused(Code.TOKEN_INVALID, "token invalid")
        payload = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        if payload.get("sub") != f"{record.id}:{record.incarnation}":
            raise _Refused(Code.TOKEN_INVALID, "token invalid for this subscription")
        if self._now() > payload["exp"]:
            raise _Refused(Code.TOKEN_EXPIRED, "token expired")
        return int(payload["gen"])

    # -- control requests -----------------------------------------------------------------

    def respond(
        self, request: durable.SubscriptionRequest | durable.WebhookDelivery
    ) -> durable.Response:
        """The answer to one control request (synchronous: no ``await`` between check and
        change, so requests on one subscription are serialized). Control requests are routed
        here before any stream operation: a ``__ds`` path is never a stream."""
        if isinstance(request, durable.WebhookDelivery):
            return durable.ErrorResponse(404, "this server receives no webhooks")
        try:
            if request.root != self.root:
                raise _Refused(Code.SUBSCRIPTION_NOT_FOUND, "no control API under this root")
            return self._respond(request)
        except _Refused as refused:
            return refused.reply

    def _record(self, ident: str) -> _Record:
        record = self.records.get(ident)
        if record is None:
            raise _Refused(Code.SUBSCRIPTION_NOT_FOUND, "subscription not found")
        return record

    def _respond(self, request: durable.SubscriptionRequest) -> durable.Response:
        if isinstance(request, durable.GetJwks):
            return durable.Jwks(() if self._jwk is None else (self._jwk,))
        if isinstance(request, durable.PutSubscription):
            return self._put(request)
        if isinstance(request, durable.GetSubscription):
            return durable.SubscriptionOk(self._serialize(self._record(request.id)))
        if isinstance(request, durable.DeleteSubscription):
            record = self.records.pop(request.id, None)
            if record is not None:
                self._clear_wake(record)
                self._cancel_retry(record)
            return durable.SubscriptionUpdated()
        record = self._record(request.id)
        if isinstance(request, durable.AddSubscriptionStreams):
            for rel in request.streams:
                self._link(record, rel, durable.LinkType.EXPLICIT, self._tail(rel))
            return durable.SubscriptionUpdated()
        if isinstance(request, durable.RemoveSubscriptionStream):
            link = record.links.get(request.stream)
            if link is not None:
                link.types.discard(durable.LinkType.EXPLICIT)
                if not link.types:
                    del record.links[request.stream]
            return durable.SubscriptionUpdated()
        webhook = record.config.type is durable.SubscriptionType.WEBHOOK
        if isinstance(request, durable.SubscriptionCallback):
            if not webhook:
                raise _Refused(Code.INVALID_REQUEST, "callback is for webhook subscriptions")
            return self._finish(record, request)
        if webhook:
            raise _Refused(Code.INVALID_REQUEST, "claim, ack and release are for pull-wake")
        if isinstance(request, durable.ClaimSubscription):
            return self._claim(record, request.worker)
        if isinstance(request, durable.AckSubscription):
            return self._finish(record, request)
        self._fence(record, request.token, request.wake_id, request.generation)
        self._clear_wake(record)
        self._wake_if_pending(record)  # "MUST write another wake event"
        return durable.SubscriptionUpdated()

    def _put(self, request: durable.PutSubscription) -> durable.Response:
        config = request.config
        existing = self.records.get(request.id)
        if existing is not None:
            # "hash the normalized subscription configuration and compare that hash"
            if existing.config.normalized() != config.normalized():
                raise _Refused(
                    Code.SUBSCRIPTION_ALREADY_EXISTS,
                    "subscription exists with a different configuration",
                )
            return durable.SubscriptionOk(self._serialize(existing))
        if config.type is durable.SubscriptionType.WEBHOOK:
            assert config.webhook_url is not None
            why = durable.webhook_url_error(config.webhook_url)
            if why is not None:
                raise _Refused(Code.WEBHOOK_URL_REJECTED, why)
            if self._key is None:
                raise _Refused(Code.INVALID_REQUEST, "webhooks need the cryptography package")
        if len(self.records) >= self.limits.max_subscriptions:
            raise _Refused(Code.LIMIT_EXCEEDED, "too many subscriptions")
        created = datetime.datetime.fromtimestamp(self._now(), datetime.UTC)
        record = _Record(
            id=request.id,
            config=config,
            created_at=created.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            incarnation=os.urandom(8).hex(),
        )
        for rel in config.streams:
            self._link(record, rel, durable.LinkType.EXPLICIT, self._tail(rel))
        if config.pattern is not None:
            # "the server MUST eagerly backfill matching existing streams ... at their
            # current tail offset"
            for path in list(self.app.store.streams):
                found = self._relative(path)
                if found is not None and glob_match(config.pattern, found):
                    self._link(record, found, durable.LinkType.GLOB, self._tail(found))
        self.records[request.id] = record
        return durable.SubscriptionOk(self._serialize(record), created=True)

    def _fence(self, record: _Record, token: str, wake_id: str, generation: int) -> None:
        # 7.3: token valid for the subscription, its generation, the request's generation and
        # wake_id all match the current state.
        token_generation = self._check_token(record, token)
        if (
            record.wake_id is None
            or token_generation != record.generation
            or generation != record.generation
            or wake_id != record.wake_id
        ):
            raise _Refused(Code.FENCED, "wake generation is stale")

    def _finish(
        self, record: _Record, request: durable.SubscriptionCallback | durable.AckSubscription
    ) -> durable.Response:
        self._fence(record, request.token, request.wake_id, request.generation)
        if record.config.type is durable.SubscriptionType.PULL_WAKE and record.holder is None:
            raise _Refused(Code.FENCED, "no worker holds this wake")
        for ack in request.acks:  # all checked before any is applied
            link = record.links.get(ack.stream)
            if link is None:
                raise _Refused(Code.INVALID_OFFSET, f"{ack.stream} is not linked")
            if offsets.parse_offset(ack.offset) is None:
                raise _Refused(Code.INVALID_OFFSET, "an ack offset must be a stream offset")
            if _cmp(ack.offset, link.acked) < 0:
                raise _Refused(Code.INVALID_OFFSET, "ack offset regresses the cursor")
            if _cmp(ack.offset, self._tail(ack.stream)) > 0:
                raise _Refused(Code.INVALID_OFFSET, "ack offset is beyond the stream tail")
        for ack in request.acks:
            record.links[ack.stream].acked = ack.offset
        if not request.done:
            self._start_lease(record)  # the ack "doubles as heartbeat"
            return durable.WakeAcked(next_wake=False)
        self._clear_wake(record)
        return durable.WakeAcked(next_wake=self._wake_if_pending(record))

    def _claim(self, record: _Record, worker: str) -> durable.Response:
        if record.holder is not None:
            raise _Refused(
                Code.ALREADY_CLAIMED,
                "another worker holds the lease",
                current_holder=record.holder,
                generation=record.generation,
            )
        if self._pending(record) is None:
            raise _Refused(Code.NO_PENDING_WORK, "subscription has no pending work")
        if record.wake_id is None:
            self._new_wake(record)
        assert record.wake_id is not None
        record.holder = worker
        self._start_lease(record)
        return durable.Claimed(
            wake_id=record.wake_id,
            generation=record.generation,
            token=self._token(record),
            streams=self._wake_streams(record),
            lease_ttl_ms=record.config.lease_ttl_ms,
        )

    # -- wakes and leases -----------------------------------------------------------------

    def on_write(self, path: str) -> None:
        """A client created or appended to ``path``: link it where a pattern matches, wake."""
        rel = self._relative(path)
        if rel is None:
            return
        for record in list(self.records.values()):
            pattern = record.config.pattern
            if pattern is not None and glob_match(pattern, rel):
                # "Streams discovered later because of a matching append are linked before
                # that append for wake purposes."
                self._link(record, rel, durable.LinkType.GLOB, ZERO)
            if rel in record.links:
                if record.attempts >= self.limits.max_delivery_attempts:
                    record.attempts = 0  # delivery had given up: a new write starts over
                self._wake_if_pending(record)

    def after(self, request: durable.Request, response: durable.Response) -> None:
        """Hear what a stream request did: writes wake, deletions unlink."""
        if isinstance(request, (durable.Create, durable.Append)) and isinstance(
            response, (durable.Created, durable.Appended)
        ):
            self.on_write(request.path)
        elif isinstance(request, durable.Delete) and isinstance(response, durable.Deleted):
            self.on_delete(request.path)

    def on_delete(self, path: str) -> None:
        """A stream was deleted: no subscription links it any more."""
        rel = self._relative(path)
        if rel is not None:
            for record in self.records.values():
                record.links.pop(rel, None)

    def _wake_if_pending(self, record: _Record) -> bool:
        if record.wake_id is not None or record.holder is not None:
            return False
        if record.attempts >= self.limits.max_delivery_attempts:
            return False  # delivery gave up: the next write to a linked stream starts over
        if self._pending(record) is None:
            return False
        self._new_wake(record)
        return True

    def _new_wake(self, record: _Record) -> None:
        record.generation += 1
        record.wake_id = "w_" + os.urandom(12).hex()
        streams = self._wake_streams(record)
        record.snapshot = {s.path: s.tail_offset for s in streams}
        if record.config.type is durable.SubscriptionType.WEBHOOK:
            self._start_lease(record)  # "the lease starts when a wake is issued"
            delay = 0.0
            if record.next_attempt_at is not None:
                delay = max(0.0, record.next_attempt_at - self._now())
            self._schedule_delivery(record, delay)
            return
        first = next((s.path for s in streams if s.has_pending), "")
        self._write_wake_event(record, first)

    def _write_wake_event(self, record: _Record, rel: str) -> None:
        wake = record.config.wake_stream
        stream = None if wake is None else self.app.store.get(self.root + wake)
        if stream is None or stream.soft_deleted or stream.closed:
            return  # "MUST be created explicitly by the application"
        event = durable.WakeEvent(record.id, rel, record.generation, int(time.time() * 1000))
        body = durable.encode_wake_event(event)
        if stream.json:
            self.app.store.append_entry(stream, b"", (body,))
        else:
            self.app.store.append_entry(stream, body, ())
        stream.notify()

    def _start_lease(self, record: _Record) -> None:
        if record.lease is not None:
            record.lease.cancel()
        loop = asyncio.get_running_loop()
        record.lease = loop.call_later(
            record.config.lease_ttl_ms / 1000, self._lease_expired, record
        )

    def _lease_expired(self, record: _Record) -> None:
        # "When a lease expires, the server MUST clear the holder and wake token; if pending
        # work remains, it MUST schedule another wake."
        record.lease = None
        if self.records.get(record.id) is not record:
            return
        self._clear_wake(record)
        self._wake_if_pending(record)

    def _clear_wake(self, record: _Record) -> None:
        if record.lease is not None:
            record.lease.cancel()
            record.lease = None
        record.wake_id = None
        record.holder = None
        record.snapshot = {}

    def _cancel_retry(self, record: _Record) -> None:
        if record.retry is not None:
            record.retry.cancel()
            record.retry = None

    # -- webhook delivery -----------------------------------------------------------------

    def _schedule_delivery(self, record: _Record, delay: float) -> None:
        self._cancel_retry(record)
        wake_id = record.wake_id

        def start() -> None:
            record.retry = None
            if self.records.get(record.id) is record and record.wake_id == wake_id:
                task = asyncio.get_running_loop().create_task(self._deliver(record))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

        record.retry = asyncio.get_running_loop().call_later(delay, start)

    async def _deliver(self, record: _Record) -> None:
        wake_id = record.wake_id
        url = record.config.webhook_url
        if wake_id is None or url is None or self._key is None:
            return
        notification = durable.WebhookNotification(
            subscription_id=record.id,
            wake_id=wake_id,
            generation=record.generation,
            streams=self._wake_streams(record),
            callback_url=self._url(f"subscriptions/{record.id}/callback"),
            callback_token=self._token(record),
        )
        body = durable.encode_notification(notification)
        signature = durable.sign_webhook(self._key, body, int(time.time()))
        reply: durable.Response | None = None
        async with self._deliveries:
            try:
                reply = await asyncio.wait_for(
                    _post(url, body, signature, self.limits.max_webhook_reply),
                    self.limits.delivery_timeout,
                )
            except (OSError, TimeoutError, ValueError, ConnectionClosed, ProtocolError):
                reply = None
        if self.records.get(record.id) is not record:
            return
        if not isinstance(reply, durable.WebhookReply):  # an error status, or no answer
            self._retry(record)
            return
        record.status = durable.SubscriptionStatus.ACTIVE
        record.attempts = 0
        record.next_attempt_at = None
        if reply.done and record.wake_id == wake_id:
            # "the server MUST automatically ack the tail offsets included in that wake
            # snapshot and release the lease"; new events since then wake again.
            for rel, tail in record.snapshot.items():
                link = record.links.get(rel)
                if link is not None and _cmp(tail, link.acked) > 0:
                    link.acked = tail
            self._clear_wake(record)
            self._wake_if_pending(record)

    def _retry(self, record: _Record) -> None:
        record.status = durable.SubscriptionStatus.FAILED
        record.attempts += 1
        if record.attempts >= self.limits.max_delivery_attempts:
            record.next_attempt_at = None
            self._clear_wake(record)
            return  # given up until the next write
        base = min(
            self.limits.retry_base_delay * 2 ** (record.attempts - 1), self.limits.retry_max_delay
        )
        delay = max(0.0, base * (1 + 0.2 * (self.random.random() * 2 - 1)))
        record.next_attempt_at = self._now() + delay
        if record.wake_id is not None:
            self._schedule_delivery(record, delay)


def _blocked(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_unspecified
        or ip.is_multicast
        or ip.is_reserved
    )


async def _post(
    url: str, body: bytes, signature: durable.WebhookSignature, max_reply: int
) -> durable.Response:
    """POST a signed notification through the codec's client role; the typed reply."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    tls = parts.scheme == "https"
    port = parts.port or (443 if tls else 80)
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = [str(info[4][0]) for info in infos]
    if tls and any(_blocked(a) for a in addresses):
        # A DNS name that resolves to a private target is refused like the address itself.
        raise ValueError("webhook host resolves to a private address")
    limits = durable.Limits(max_body_size=max_reply)
    codec = durable.Connection(Role.CLIENT, limits, host=parts.netloc)
    context = ssl.create_default_context() if tls else None
    conn: AsyncioConnection[durable.Request, durable.ClientEvent] = await connect(
        codec, addresses[0], port, ssl=context, server_hostname=host if tls else None
    )
    try:
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        await conn.send(durable.WebhookDelivery(target, body, signature))
        reply = await conn.next_event()
        if isinstance(reply, (durable.SSEData, durable.SSEControl, durable.SSEEnd)):
            raise ValueError("an SSE body in answer to a webhook")
        return reply
    finally:
        await conn.aclose()
