"""Webhook deliveries and the ``Webhook-Signature`` header (``t=<s>,kid=<id>,ed25519=<sig>``).

A webhook delivery is an HTTP POST from a Durable Streams server to a worker: the server plays
the client role (``Connection(Role.CLIENT).send(WebhookDelivery(...))``) and the worker the server
role. A POST carrying ``Webhook-Signature`` is typed as a ``WebhookDelivery``, never as an
append (appends never carry that header); its answer is a ``WebhookReply``.

The signature is Ed25519 over ``<t>.<raw body>`` (PROTOCOL.md 7.1); keys are published as a JWK
Set (RFC 8037 ``OKP``/``Ed25519``) at ``{root}__ds/jwks.json``. Parsing and formatting are pure;
signing and verifying use ``cryptography`` (the ``webhooks`` extra), imported on first use so
the codec itself needs nothing beyond its core dependencies. The clock comes in as an argument.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from http import HTTPStatus
from typing import TYPE_CHECKING

import attrs

from s3p_codec._core.errors import RemoteProtocolError
from s3p_codec._core.extras import MissingExtra
from s3p_codec.durable._subscription_events import Jwk, Jwks
from s3p_codec.durable._subscriptions import WebhookNotification, parse_notification

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = [
    "REPLAY_WINDOW_SECONDS",
    "WEBHOOK_SIGNATURE",
    "WebhookDelivery",
    "WebhookReply",
    "WebhookSignature",
    "public_jwk",
    "sign_webhook",
    "verify_webhook",
]

#: Header name (lower case, as h11 yields names).
WEBHOOK_SIGNATURE = b"webhook-signature"
#: "reject timestamps outside a small replay window such as five minutes"
REPLAY_WINDOW_SECONDS = 300
_HEADER = re.compile(r"t=(0|[1-9][0-9]{0,15}),kid=([^,\s]{1,256}),ed25519=([A-Za-z0-9_-]{1,200})")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@attrs.frozen(slots=True)
class WebhookSignature:
    """One parsed ``Webhook-Signature`` value; ``signature`` is the raw 64 bytes."""

    timestamp: int
    kid: str
    signature: bytes

    @classmethod
    def parse(cls, value: str | bytes) -> WebhookSignature:
        """The header's parts, or a non-fatal ``RemoteProtocolError`` (400) if malformed."""
        text = value.decode("ascii", errors="replace") if isinstance(value, bytes) else value
        match = _HEADER.fullmatch(text.strip())
        if match is None:
            raise RemoteProtocolError(
                "Webhook-Signature must be t=<seconds>,kid=<id>,ed25519=<base64url>",
                code=HTTPStatus.BAD_REQUEST,
                fatal=False,
            )
        try:
            raw = _unb64url(match.group(3))
        except ValueError:  # binascii.Error: a length of 4n + 1 characters is no base64
            raw = b""
        if len(raw) != 64 or _b64url(raw) != match.group(3):
            raise RemoteProtocolError(
                "Webhook-Signature: an Ed25519 signature is 64 bytes, unpadded base64url",
                code=HTTPStatus.BAD_REQUEST,
                fatal=False,
            )
        return cls(int(match.group(1)), match.group(2), raw)

    def format(self) -> str:
        """The header value."""
        return f"t={self.timestamp},kid={self.kid},ed25519={_b64url(self.signature)}"


def _need_cryptography(feature: str) -> None:
    """``MissingExtra`` naming the ``webhooks`` extra, not a bare ``ModuleNotFoundError``."""
    try:
        import cryptography  # noqa: F401, PLC0415 - optional extra
    except ModuleNotFoundError:
        raise MissingExtra("webhooks", feature, "cryptography") from None


def _raw_public(key: Ed25519PrivateKey) -> bytes:
    _need_cryptography("Durable Streams webhook keys")
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415 - optional extra

    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def public_jwk(key: Ed25519PrivateKey) -> Jwk:
    """The public half of ``key`` as a JWK whose ``kid`` is ``ds_`` + its RFC 7638 thumbprint
    ("Servers SHOULD derive kid values from key material")."""
    x = _b64url(_raw_public(key))
    canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, separators=(",", ":"))
    kid = "ds_" + _b64url(hashlib.sha256(canonical.encode("ascii")).digest())
    return Jwk(kid=kid, x=x)


def sign_webhook(key: Ed25519PrivateKey, body: bytes, timestamp: int) -> WebhookSignature:
    """The signature of ``body`` sent at ``timestamp`` (Unix seconds)."""
    message = str(timestamp).encode("ascii") + b"." + body
    return WebhookSignature(timestamp, public_jwk(key).kid, key.sign(message))


def verify_webhook(
    header: str | bytes,
    body: bytes,
    jwks: Jwks,
    now: float,
    *,
    window: int = REPLAY_WINDOW_SECONDS,
) -> WebhookSignature:
    """The verified signature of a received webhook; a non-fatal ``RemoteProtocolError``: 400
    when the header is malformed (``WebhookSignature.parse``'s), 401 when its ``kid`` is
    unknown, its time outside ``window`` seconds of ``now`` or the signature wrong. Verify the
    raw body bytes, before parsing them."""
    _need_cryptography("verify_webhook")
    from cryptography.exceptions import InvalidSignature  # noqa: PLC0415 - optional extra
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PublicKey,
    )

    signature = WebhookSignature.parse(header)

    def refuse(why: str) -> RemoteProtocolError:
        return RemoteProtocolError(
            f"webhook signature refused: {why}", code=HTTPStatus.UNAUTHORIZED, fatal=False
        )

    if abs(now - signature.timestamp) > window:
        raise refuse("timestamp outside the replay window")
    keys = [k for k in jwks.keys if k.kid == signature.kid]
    if not keys:
        raise refuse(f"no key {signature.kid!r} in the JWK Set")
    key = keys[0]
    if key.kty != "OKP" or key.crv != "Ed25519":
        raise refuse("the key is not an Ed25519 key")
    try:
        raw = _unb64url(key.x)
        public = Ed25519PublicKey.from_public_bytes(raw)
        message = str(signature.timestamp).encode("ascii") + b"." + body
        public.verify(signature.signature, message)
    except (ValueError, InvalidSignature):
        raise refuse("the signature does not match the body") from None
    return signature


@attrs.frozen(slots=True)
class WebhookDelivery:
    """``POST {webhook path}`` with a signed notification: ``body`` is the exact JSON bytes
    (verify them with ``verify_webhook`` before trusting ``notification``)."""

    path: str
    body: bytes
    signature: WebhookSignature

    @property
    def notification(self) -> WebhookNotification:
        """The typed body (``RemoteProtocolError`` if it is not a notification)."""
        return parse_notification(self.body)


@attrs.frozen(slots=True)
class WebhookReply:
    """A webhook's 2xx answer; ``done`` (``{"done": true}``) finishes the wake synchronously."""

    done: bool = False
