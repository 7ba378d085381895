"""Frames: a u32 big-endian length, then that many bytes of UTF-8 JSON holding one object.

The spec splits bad input in two ("Connection Error Handling"). Fatal, the connection ends:
"Frame length exceeds MAX_FRAME_SIZE", "Invalid UTF-8 in payload", "Malformed JSON structure",
and, per NOTES.md, a zero length (the spec's ``FrameError::EmptyFrame``), a root that is not an
object ("Object root: Top-level must be JSON object") and a missing or non-string ``type``
("Type field: Must contain "type""). Recoverable, answered by an Error response on a connection
that stays open: "Unknown request type" and "Invalid request fields".

A payload nested deeper than ``MAX_JSON_DEPTH`` (64) levels counts as malformed JSON (see
``json_backend``). Every fatal error here carries code 400 (InvalidRequest), except an
over-long frame, which carries 413 (its payload is too large). Lengths are judged on the 4-byte
header alone, before any of the payload is buffered.

The spec's own example frame is mislabelled: its payload
``{"type":"Produce","topic":"logs","partition":0,"records":["SGVsbG8gV29ybGQ="]}`` is 78 bytes
(0x4E), not the 74 (0x4A) of its length line; the tests use the real length. Its Python
``read_frame`` sketch assumes ``recv(n)`` returns ``n`` bytes; here any split of the stream
gives the same frames, and a zero length is rejected as its Rust reader does.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, Final, TypeVar

from s3p_codec._core import LocalProtocolError, RemoteProtocolError
from s3p_codec.rustlog import schema
from s3p_codec.rustlog.events import ErrorCode, Event
from s3p_codec.rustlog.json_backend import (
    DEPTH_MESSAGE,
    STDLIB,
    JsonBackend,
    JsonDecodeFailure,
    too_deep,
)
from s3p_codec.rustlog.limits import LENGTH_FIELD_SIZE, MAX_JSON_DEPTH, Limits

__all__ = ["HEADER", "check_length", "decode_payload", "encode_frame"]

HEADER: Final = struct.Struct(">I")
"""The length header: "u32 big-endian" ("ENDIANNESS: Big-endian (network byte order)")."""

EventT = TypeVar("EventT", bound=Event)


def check_length(length: int, limits: Limits) -> None:
    """Reject a frame from its header alone (fatal: the stream cannot be trusted after it)."""
    if length > limits.max_frame_size:
        raise RemoteProtocolError(
            f"Frame length exceeds MAX_FRAME_SIZE: {length} > {limits.max_frame_size}",
            code=ErrorCode.RECORD_TOO_LARGE,
        )
    if length == 0:
        raise RemoteProtocolError(
            "empty frame: MIN_FRAME_SIZE is 1 byte", code=ErrorCode.INVALID_REQUEST
        )


def decode_payload(
    payload: bytes,
    decoders: dict[str, Callable[[dict[str, Any], schema.Context], EventT]],
    context: schema.Context,
    json: JsonBackend,
    kind: str,
) -> EventT:
    """Turn one frame's payload into an event, or raise ``RemoteProtocolError``.

    ``kind`` ("request" or "response") names what the peer may send, for messages. The error
    is fatal (``fatal=True``) or recoverable exactly as the module docstring divides them.
    """
    try:
        obj = json.loads(payload)
    except JsonDecodeFailure as exc:
        raise RemoteProtocolError(exc.message, code=ErrorCode.INVALID_REQUEST) from None
    if type(obj) is not dict or type(obj.get("type")) is not str:
        # Over-deep nesting is named first, as the exact parser would have failed on it.
        if too_deep(obj, MAX_JSON_DEPTH):
            raise RemoteProtocolError(DEPTH_MESSAGE, code=ErrorCode.INVALID_REQUEST)
        if type(obj) is not dict:
            raise RemoteProtocolError(
                "Object root: Top-level must be JSON object", code=ErrorCode.INVALID_REQUEST
            )
        raise RemoteProtocolError(
            'Type field: Must contain "type" with a string value', code=ErrorCode.INVALID_REQUEST
        )
    name: str = obj["type"]
    decoder = decoders.get(name)
    try:
        if decoder is None:
            _reject_deep(obj)
            raise RemoteProtocolError(
                f"Unknown {kind} type {name!r}", code=ErrorCode.INVALID_REQUEST, fatal=False
            )
        try:
            event = decoder(obj, context)
        except schema.FieldError as exc:
            _reject_deep(obj)  # a message nested too deep is malformed before it is invalid
            raise RemoteProtocolError(
                f"Invalid {name} {kind}: {exc.message}", code=exc.code, fatal=False
            ) from None
        known = schema.KNOWN_FIELDS[name]
        if len(obj) != len(known) or name in schema.OPTIONAL_FIELDS:
            schema.check_extras(obj, known, 1)
    except schema.TooDeep:
        raise RemoteProtocolError(DEPTH_MESSAGE, code=ErrorCode.INVALID_REQUEST) from None
    except schema.AmbiguousNumber:
        # orjson read an integer beyond 64 bits as a float: let the exact parser decide.
        exact = schema.Context(context.limits, exact_integers=True)
        return decode_payload(payload, decoders, exact, STDLIB, kind)
    return event


def _reject_deep(obj: dict[str, Any]) -> None:
    if too_deep(obj, MAX_JSON_DEPTH):
        raise schema.TooDeep


def encode_frame(event: object, json: JsonBackend, limits: Limits) -> bytes:
    """The whole frame for ``event``; ``LocalProtocolError`` (nothing emitted) if invalid."""
    payload = json.dumps(schema.encode(event, limits))
    if len(payload) > limits.max_frame_size:
        raise LocalProtocolError(
            f"Frame length exceeds MAX_FRAME_SIZE: {len(payload)} > {limits.max_frame_size}",
            code=ErrorCode.RECORD_TOO_LARGE,
        )
    return HEADER.pack(len(payload)) + payload


assert HEADER.size == LENGTH_FIELD_SIZE
