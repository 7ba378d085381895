"""Frames: a u32 big-endian length, then that many bytes of UTF-8 JSON holding one object.

The spec splits bad input in two ("Connection Error Handling"). Fatal, the connection ends:
"Frame length exceeds MAX_FRAME_SIZE", "Invalid UTF-8 in payload", "Malformed JSON structure",
and, per docs/decisions.rst, a zero length (the spec's ``FrameError::EmptyFrame``), a root that
is not an object ("Object root: Top-level must be JSON object") and a missing or non-string
``type`` ("Type field: Must contain "type""). Recoverable, answered by an Error response on a
connection that stays open: "Unknown request type" and "Invalid request fields".

A payload nested deeper than ``MAX_JSON_DEPTH`` (64) levels counts as malformed JSON (see
``json_backend``). Every fatal error here carries code 400 (InvalidRequest), except an
over-long frame, which carries 413 (its payload is too large). Lengths are judged on the 4-byte
header alone, before any of the payload is buffered.

``FrameDecoder`` is the receiving hot path: it cuts every complete frame already buffered in one
loop (headers read in place with ``struct.unpack_from``, one copy per payload) and decodes each
plain, valid message straight from its decoder; any other frame goes through ``decode_payload``,
the reference, so both give the same events and errors. (Cutting each small frame with
``ReceiveBuffer.take_frame`` instead costs about 40% more instructions per Fetch request: three
Python calls per frame. The connection uses ``take_frame`` for the frame a chunk boundary cuts,
so that a big payload is collected aside and copied once.)

The spec's own example frame is mislabelled: its payload
``{"type":"Produce","topic":"logs","partition":0,"records":["SGVsbG8gV29ybGQ="]}`` is 78 bytes
(0x4E), not the 74 (0x4A) of its length line; the tests use the real length. Its Python
``read_frame`` sketch assumes ``recv(n)`` returns ``n`` bytes; here any split of the stream
gives the same frames, and a zero length is rejected as its Rust reader does.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Callable
from typing import Any, Final, TypeVar

from s3p_codec._core import LocalProtocolError, RemoteProtocolError
from s3p_codec.rustlog import _schema
from s3p_codec.rustlog._events import ErrorCode, Event
from s3p_codec.rustlog._json_backend import (
    DEPTH_MESSAGE,
    STDLIB,
    JsonBackend,
    JsonDecodeFailure,
    too_deep,
)
from s3p_codec.rustlog._limits import LENGTH_FIELD_SIZE, MAX_JSON_DEPTH, Limits

__all__ = [
    "HEADER",
    "FrameDecoder",
    "check_length",
    "decode_payload",
    "encode_frame",
    "length_error",
]

HEADER: Final = struct.Struct(">I")
"""The length header: "u32 big-endian" ("ENDIANNESS: Big-endian (network byte order)")."""

_unpack_from = HEADER.unpack_from
_BATCH_BYTES = 16384
"""How far ahead ``FrameDecoder`` reads in one pass. Small frames share the cost of a pass;
big ones are not all turned into events at once (thousands of live events make the garbage
collector work harder than the decoding saved)."""

EventT = TypeVar("EventT", bound=Event)


def length_error(length: int, limits: Limits) -> RemoteProtocolError | None:
    """The fatal error of a frame length the header alone condemns (0, or over the limit)."""
    if length > limits.max_frame_size:
        return RemoteProtocolError(
            f"Frame length exceeds MAX_FRAME_SIZE: {length} > {limits.max_frame_size}",
            code=ErrorCode.RECORD_TOO_LARGE,
        )
    if length == 0:
        return RemoteProtocolError(
            "empty frame: MIN_FRAME_SIZE is 1 byte", code=ErrorCode.INVALID_REQUEST
        )
    return None


def check_length(length: int, limits: Limits) -> None:
    """Reject a frame from its header alone (fatal: the stream cannot be trusted after it).

    Raises ``RemoteProtocolError`` for a length of 0 or over ``limits.max_frame_size``.
    """
    error = length_error(length, limits)
    if error is not None:
        raise error


def decode_payload(
    payload: bytes,
    decoders: dict[str, Callable[[dict[str, Any], _schema.Context], EventT]],
    context: _schema.Context,
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
        except _schema.FieldError as exc:
            _reject_deep(obj)  # a message nested too deep is malformed before it is invalid
            raise RemoteProtocolError(
                f"Invalid {name} {kind}: {exc.message}", code=exc.code, fatal=False
            ) from None
    except _schema.TooDeep:
        raise RemoteProtocolError(DEPTH_MESSAGE, code=ErrorCode.INVALID_REQUEST) from None
    except _schema.AmbiguousNumber:
        # orjson read an integer beyond 64 bits as a float: let the exact parser decide.
        exact = _schema.Context(context.limits, exact_integers=True)
        return decode_payload(payload, decoders, exact, STDLIB, kind)
    return event


class FrameDecoder:
    """Decodes every complete frame already buffered, in one loop: the hot path.

    Per frame it does what ``check_length`` and ``decode_payload`` do, with the header read in
    place (``struct.unpack_from`` over the receive buffer) and one copy of the payload. A frame
    that is not a plain, valid message (bad JSON, unknown type, a bad field, free-form values
    that need a second look) goes through ``decode_payload`` itself, so every error and every
    event is exactly the one ``decode_payload`` gives.
    """

    __slots__ = ("_context", "_decoders", "_fallback", "_json", "_kind", "_loads", "_max")

    def __init__(self, context: _schema.Context, json: JsonBackend, *, requests: bool) -> None:
        self._context = context
        self._json = json
        self._max = context.limits.max_frame_size
        self._kind = "request" if requests else "response"
        self._decoders: dict[str, Callable[[dict[str, Any], _schema.Context], Event]] = (
            _schema.REQUEST_DECODERS if requests else _schema.RESPONSE_DECODERS  # type: ignore[assignment]
        )
        failures: tuple[type[Exception], ...] = json.fast_failures
        if json.loads_fast is not None:
            self._loads = json.loads_fast
        else:  # a backend of the user's: give it bytes, as its contract says

            def loads(payload: bytes | bytearray) -> object:
                return json.loads(bytes(payload))

            self._loads = loads
            failures = (JsonDecodeFailure,)
        # What sends a frame to ``decode_payload``: the JSON failed, it is not an object with a
        # known "type", or the decoder wants a closer look (an error, deep or ambiguous values).
        self._fallback: tuple[type[Exception], ...] = (
            *failures,
            KeyError,
            TypeError,
            _schema.FieldError,
            _schema.TooDeep,
            _schema.AmbiguousNumber,
        )

    def decode(
        self, data: bytes | bytearray, start: int, end: int, out: deque[Event | RemoteProtocolError]
    ) -> int:
        """Append to ``out`` the event (or the error) of each frame in ``data[start:end]``.

        Returns the offset just past the last frame used. It stops before an incomplete frame
        or a header that ``check_length`` rejects (the caller raises it, from the header alone),
        and just after a frame whose error is fatal: nothing after it can be trusted.
        """
        unpack_from = _unpack_from
        maximum = self._max
        loads = self._loads
        fallback = self._fallback
        decoders = self._decoders
        context = self._context
        append = out.append
        size = LENGTH_FIELD_SIZE
        at = start
        limit = start + _BATCH_BYTES  # no new frame is begun past it (one always is)
        while at < limit and end - at > size:
            (length,) = unpack_from(data, at)
            stop = at + size + length
            if stop > end or length > maximum or not length:
                break
            payload = data[at + size : stop]
            at = stop
            try:
                obj: Any = loads(payload)
                # Only a dict whose "type" is a known name gets past this line: anything else
                # raises KeyError or TypeError (a list or a scalar, an unhashable "type").
                event = decoders[obj["type"]](obj, context)
            except fallback:
                pass  # decode_payload names the error (or decodes what needs a second look)
            else:
                append(event)
                continue
            if self._decode_slowly(payload, out):
                break
        return at

    def decode_one(self, payload: bytes, out: deque[Event | RemoteProtocolError]) -> None:
        """Append to ``out`` the event (or the error) of one frame's ``payload``."""
        try:
            obj: Any = self._loads(payload)
            event = self._decoders[obj["type"]](obj, self._context)
        except self._fallback:
            self._decode_slowly(payload, out)
        else:
            out.append(event)

    def _decode_slowly(
        self, payload: bytes | bytearray, out: deque[Event | RemoteProtocolError]
    ) -> bool:
        """``decode_payload``'s event or error appended to ``out``; True if the error is fatal."""
        try:
            data = bytes(payload)
            event = decode_payload(data, self._decoders, self._context, self._json, self._kind)
            out.append(event)
        except RemoteProtocolError as exc:
            out.append(exc)
            return exc.fatal
        return False


def _reject_deep(obj: dict[str, Any]) -> None:
    if too_deep(obj, MAX_JSON_DEPTH):
        raise _schema.TooDeep


def encode_frame(event: object, json: JsonBackend, limits: Limits) -> bytes:
    """The whole frame for ``event``; ``LocalProtocolError`` (nothing emitted) if invalid."""
    payload = json.dumps(_schema.encode(event, limits))
    if len(payload) > limits.max_frame_size:
        raise LocalProtocolError(
            f"Frame length exceeds MAX_FRAME_SIZE: {len(payload)} > {limits.max_frame_size}",
            code=ErrorCode.RECORD_TOO_LARGE,
        )
    return HEADER.pack(len(payload)) + payload


assert HEADER.size == LENGTH_FIELD_SIZE
