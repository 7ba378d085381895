"""JSON mode (``application/json`` streams): validation, one-level array flattening, responses.

- "Servers MUST validate that appended data is valid JSON" (400 otherwise).
- "When a POST request body contains a JSON array, servers MUST flatten exactly one level of
  the array, treating each element as a separate message."
- "Servers MUST reject POST requests containing empty JSON arrays ([]) with 400 Bad Request";
  "PUT requests with an empty array body ([]) are valid and create an empty stream."
- "GET responses ... MUST return ... a JSON array of all messages in the requested range";
  "If no messages exist in the range, servers MUST return an empty JSON array []".

Messages are stored re-serialised compactly, so each one is a self-contained JSON text.
The standard library's ``json`` is used (strict: ``NaN``/``Infinity`` are not JSON).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from s3p_codec._core.errors import RemoteProtocolError
from s3p_codec.durable._events import ErrorCode, ErrorResponse

__all__ = ["JSON_CONTENT_TYPE", "flatten", "format_messages", "is_json", "media_type"]

#: The content type that turns on JSON mode (messages are JSON values, arrays flattened).
JSON_CONTENT_TYPE = "application/json"


def media_type(content_type: str | None) -> str:
    """The media type without parameters, lower-cased: ``Application/JSON; charset=utf-8``."""
    if not content_type:
        return ""
    return content_type.split(";", 1)[0].strip().lower()


def is_json(content_type: str | None) -> bool:
    """True when a stream of this content type is in JSON mode."""
    return media_type(content_type) == JSON_CONTENT_TYPE


def _bad(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(
        message,
        code=ErrorCode.BAD_REQUEST,
        fatal=False,
        reply=ErrorResponse(ErrorCode.BAD_REQUEST, message),
    )


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _dump(value: object) -> bytes:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate escape: keep it escaped
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def flatten(body: bytes, *, initial: bool = False) -> tuple[bytes, ...]:
    """The messages a JSON-mode body stores: one, or each element of a top-level array.

    ``initial`` is True for a PUT body, where ``[]`` is allowed (no messages). Raises
    ``RemoteProtocolError`` (400, not fatal, with the reply) for invalid JSON or an empty array.
    """
    try:
        text = body.decode("utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
        value = json.loads(text, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _bad("Invalid JSON") from exc
    if isinstance(value, list):
        if not value:
            if initial:
                return ()
            raise _bad("Empty arrays are not allowed")
        try:
            return tuple(_dump(item) for item in value)
        except RecursionError as exc:
            raise _bad("Invalid JSON: nested too deeply") from exc
    try:
        return (_dump(value),)
    except RecursionError as exc:
        raise _bad("Invalid JSON: nested too deeply") from exc


def format_messages(messages: Iterable[bytes]) -> bytes:
    """The JSON array of stored messages (``[]`` when there are none)."""
    return b"[" + b",".join(messages) + b"]"
