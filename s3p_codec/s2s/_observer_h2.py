"""Passive decoding of S2S sessions carried over HTTP/2 (cleartext, prior knowledge) in captures.

The official SDKs speak S2S over HTTP/2, so a capture of them is HTTP/2 frames (RFC 9113) around
the S2S frames. One ``Http2Observer`` per TCP connection, fed both directions; ``s2s.Observer``
hands a connection to it when the client opens with the connection preface
``PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n``. Each direction is cut into frames
("9-octet header": 24-bit length, type, flags, 31-bit stream identifier):

- the client preface, then "the first frame ... MUST be a SETTINGS frame" on both sides;
  ``SETTINGS_MAX_FRAME_SIZE`` bounds the other side's frames (16,384 until a peer raises it; a
  frame over the bound is rejected from its header alone), ``SETTINGS_HEADER_TABLE_SIZE`` the
  other side's HPACK table (capped here at 1 MiB to bound memory);
- HEADERS (padding and priority fields stripped) and its CONTINUATIONs ("MUST be followed by
  a contiguous sequence of CONTINUATION frames" on the same stream) form one header block,
  bounded by ``max_header_block`` bytes and decoded with the ``hpack`` package, one decoder per
  direction (the dynamic table runs across streams); PUSH_PROMISE blocks are decoded to keep
  that table in step and otherwise ignored;
- DATA (padding stripped) of a stream that opened an S2S session feeds an ``s2s.Connection``,
  exactly as ``s2s.Observer`` does for HTTP/1.1 bodies: server role for the request body,
  client role for the response body, the session kind chosen by ``s2s.http.parse_request``
  from ``:method`` and ``:path``;
- END_STREAM ends that side's body (leftover bytes of a partial S2S frame are an error);
  RST_STREAM ends the sender's side of the stream, dropping what is buffered there ("MUST NOT
  send additional frames for that stream"). The other side's frames already on their way still
  decode; as that peer usually stops without END_STREAM, the last ``MAX_RESET_STREAMS`` reset
  streams are kept for them and older ones forgotten. GOAWAY, PING, WINDOW_UPDATE, PRIORITY and
  frame types this code does not know are checked for their fixed sizes and skipped (no flow
  control).

Reported events are those of the HTTP/1.1 observer: ``SessionRequest``, ``SessionResponse`` or
``ErrorResponse`` (a non-200 answer and its JSON body), then ``AppendInput`` / ``AppendAck`` /
``ReadBatch`` / ``Heartbeat`` / ``ReconnectAdvised`` / ``Terminal``, each with the ``pair_id``
given to its HTTP/2 stream. REST calls (streams that open no session) give nothing.

Offsets are positions in the direction's TCP byte stream. A ``SessionRequest`` or
``SessionResponse`` spans its header block: from the first byte of the HEADERS frame to the last
byte of its last CONTINUATION. An ``ErrorResponse`` spans from its HEADERS frame to the end of
the frame carrying END_STREAM. An S2S frame spans from its first byte (the 3-byte length) to
its last, wherever the DATA frames carrying it put them: a frame split across DATA frames also
covers the HTTP/2 frame headers, padding and other streams' frames in between. A
``ReconnectAdvised`` reports the range of the frame that carried the flag.

Errors: broken HTTP/2 framing or HPACK yields ``ObservedError`` at the frame (or header block)
at fault, with an ``Http2ErrorCode``, and abandons that direction (``resynchronized=False``);
so does a gap (``ObservedGap``), since the frame boundaries and the HPACK table are lost. An
error confined to one stream (a broken S2S frame, a malformed response head) yields
``ObservedError`` with ``resynchronized=True``: that stream's side is passed over, the rest of
the connection decodes on.

Order: the server's frames on a client stream are decoded once the client's HEADERS opening
that stream were, and a frame over the size bound waits for the other side's SETTINGS that may
raise it (until that side is closed or lost), so each direction's events do not depend on how the
two directions' bytes are interleaved in the ``observe`` calls.

The HTTP/2 framing is written here rather than taken from ``h2``: ``h2`` is an endpoint (it
enforces flow control, answers pings and raises on the first surprise) and reports no byte
positions; only HPACK, which is pure decoding, comes from a library.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Sequence
from typing import ClassVar, NamedTuple

import hpack

from s3p_codec._core import (
    Direction,
    Observed,
    ObservedError,
    ObservedGap,
    ReceiveBuffer,
    RemoteProtocolError,
    Role,
)
from s3p_codec._core.checkpoint import Checkpointable
from s3p_codec.s2s._bodymap import MAX_ERROR_BODY, BodyFrames, Output, error_response
from s3p_codec.s2s._connection import Connection
from s3p_codec.s2s._limits import Limits
from s3p_codec.s2s.http import SessionRequest, check_response, parse_request

__all__ = [
    "MAX_HEADER_BLOCK",
    "MAX_OPEN_SESSIONS",
    "MAX_RESET_STREAMS",
    "PREFACE",
    "FrameType",
    "Http2ErrorCode",
    "Http2Observer",
]

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
""""the connection preface starts with the string PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n"."""

MAX_HEADER_BLOCK = 64 * 1024
"""Bytes of one HPACK header block (HEADERS + CONTINUATIONs), and of its decoded header list."""

MAX_OPEN_SESSIONS = 1000
"""S2S sessions open at once on one connection (real servers advertise 100 concurrent streams)."""

MAX_RESET_STREAMS = 128
"""Streams reset by one side whose other side is still decoded (in-flight frames)."""

_FRAME_HEADER = 9
_DEFAULT_MAX_FRAME = 16_384  # "The initial value is 2^14 (16,384) octets"
_LARGEST_MAX_FRAME = (1 << 24) - 1  # "the maximum allowed frame size (2^24-1 ...)"
_LARGEST_TABLE = 1024 * 1024
_MAX_WINDOW = (1 << 31) - 1
_BLOCK_OVERHEAD = 1 + 5 + 255  # pad length, priority fields, padding: beside a block fragment
_MAX_WAIT = 4 * 1024 * 1024  # bytes one side holds back while waiting for the other side

_END_STREAM = 0x1
_ACK = 0x1
_END_HEADERS = 0x4
_PADDED = 0x8
_PRIORITY = 0x20

_C2S, _S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT


class FrameType(enum.IntEnum):
    """The frame types of RFC 9113 section 6."""

    DATA = 0x0
    HEADERS = 0x1
    PRIORITY = 0x2
    RST_STREAM = 0x3
    SETTINGS = 0x4
    PUSH_PROMISE = 0x5
    PING = 0x6
    GOAWAY = 0x7
    WINDOW_UPDATE = 0x8
    CONTINUATION = 0x9


_FIXED_LENGTH: dict[int, int] = {
    FrameType.RST_STREAM: 4, FrameType.PING: 8, FrameType.WINDOW_UPDATE: 4, FrameType.PRIORITY: 5,
}  # fmt: skip


class Http2ErrorCode(enum.StrEnum):
    """The error codes of RFC 9113 section 7, by name; ``number`` is the code on the wire.

    ``ENHANCE_YOUR_CALM`` marks our own bounds (header block size, open sessions);
    ``INTERNAL_ERROR`` a missing decoder (the ``hpack`` package).
    """

    NO_ERROR = "NO_ERROR"
    PROTOCOL_ERROR = "PROTOCOL_ERROR"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    FLOW_CONTROL_ERROR = "FLOW_CONTROL_ERROR"
    SETTINGS_TIMEOUT = "SETTINGS_TIMEOUT"
    STREAM_CLOSED = "STREAM_CLOSED"
    FRAME_SIZE_ERROR = "FRAME_SIZE_ERROR"
    REFUSED_STREAM = "REFUSED_STREAM"
    CANCEL = "CANCEL"
    COMPRESSION_ERROR = "COMPRESSION_ERROR"
    CONNECT_ERROR = "CONNECT_ERROR"
    ENHANCE_YOUR_CALM = "ENHANCE_YOUR_CALM"
    INADEQUATE_SECURITY = "INADEQUATE_SECURITY"
    HTTP_1_1_REQUIRED = "HTTP_1_1_REQUIRED"

    @property
    def number(self) -> int:
        """The code's number on the wire (RFC 9113 section 7)."""
        return list(Http2ErrorCode).index(self)


def _error(code: Http2ErrorCode, message: str) -> RemoteProtocolError:
    return RemoteProtocolError(f"HTTP/2: {message}", code=code)


class _Headers(NamedTuple):
    """A decoded header block: pseudo-headers by name, the others in order, and where it ends."""

    pseudo: dict[bytes, bytes]
    regular: list[tuple[bytes, bytes]]
    end: int


class _Block:
    """A header block being gathered: HEADERS or PUSH_PROMISE, then CONTINUATIONs."""

    __slots__ = ("end_stream", "fragments", "kind", "start", "stream_id")

    def __init__(self, stream_id: int, kind: FrameType, end_stream: bool, start: int) -> None:
        self.stream_id = stream_id
        self.kind = kind
        self.end_stream = end_stream
        self.start = start
        self.fragments = bytearray()


class _Stream:
    """One HTTP/2 stream that opened an S2S session."""

    __slots__ = (
        "bodies",
        "ended",
        "error_body",
        "error_start",
        "error_status",
        "pair",
        "request",
        "responded",
    )

    def __init__(self, pair: int, request: SessionRequest) -> None:
        self.pair = pair
        self.request = request
        self.bodies: dict[Direction, BodyFrames] = {}  # a side whose S2S stream broke: none
        self.ended: set[Direction] = set()
        self.responded = False
        self.error_start: int | None = None  # a non-200 response being gathered
        self.error_status = 0
        self.error_body = bytearray()


class _Side:
    """The frame reader of one direction."""

    __slots__ = (
        "at",
        "block",
        "buffer",
        "closed",
        "dead",
        "decoder",
        "direction",
        "fed",
        "finished",
        "max_frame",
        "preface",
        "settings_seen",
        "waiting",
    )

    def __init__(self, direction: Direction, max_header_list: int) -> None:
        self.direction = direction
        self.buffer = ReceiveBuffer()
        self.decoder = hpack.Decoder(max_header_list_size=max_header_list)
        self.preface = direction is _C2S  # the client preface is still to be read
        self.settings_seen = False
        self.block: _Block | None = None
        self.max_frame = _DEFAULT_MAX_FRAME  # bound on the frames this side sends
        self.fed = 0  # bytes handed to ``observe`` (and gaps), for gap offsets
        self.at = 0  # where the frame (or header block) being handled began
        self.dead = False
        self.closed = False
        self.finished = False  # no more frames will be handled: dead, or closed and drained
        self.waiting = False


class Http2Observer(Checkpointable):
    """Decodes both directions of one captured HTTP/2 connection carrying S2S sessions."""

    #: HTTP has no frame marker to hunt for: after a gap a direction is abandoned.
    resynchronizes: ClassVar[bool] = False

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        max_header_block: int = MAX_HEADER_BLOCK,
        max_sessions: int = MAX_OPEN_SESSIONS,
    ) -> None:
        self._limits = limits if limits is not None else Limits()
        self._max_block = max_header_block
        self._max_sessions = max_sessions
        self._sides = {d: _Side(d, max_header_block) for d in (_C2S, _S2C)}
        self._streams: dict[int, _Stream] = {}
        self._highest_client = 0  # largest stream id the client opened
        self._reset_streams: deque[int] = deque()  # reset one way, oldest first
        self._impatient = False  # no more waiting for the other side's SETTINGS
        self._next_pair = 0
        self._out: list[Output] = []  # what the current call reports, in order

    # -- Observer protocol -----------------------------------------------------------------------

    def observe(self, direction: Direction, data: bytes) -> Sequence[Output]:
        """Feed bytes seen travelling ``direction``; return the S2S events of every HTTP/2 stream
        they complete.
        """
        side = self._sides[direction]
        side.fed += len(data)
        if side.dead or side.closed or not data:
            return []
        side.buffer.feed(data)
        return self._drain()

    def gap(self, direction: Direction, size: int) -> Sequence[Output]:
        """``size`` bytes were lost in ``direction``: HTTP/2 cannot resynchronise, so the direction
        is abandoned.
        """
        side = self._sides[direction]
        start = side.fed
        side.fed += size
        if side.dead:
            return []
        self._abandon(side)
        return [ObservedGap(direction, start, size, resynchronized=False), *self._drain()]

    def close(self, direction: Direction) -> Sequence[Output]:
        """No more bytes come in ``direction``: report the streams it cut short."""
        side = self._sides[direction]
        if side.dead or side.closed:
            return []
        side.closed = True
        return self._drain()

    # -- the frame loop --------------------------------------------------------------------------

    def _drain(self) -> list[Output]:
        self._out = out = list[Output]()
        progress = True
        while progress:
            progress = False
            for side in self._sides.values():
                while not side.finished and self._step(side):
                    progress = True
                if side.closed and not side.finished and not side.waiting:
                    self._finish(side)
                    progress = True
            if not progress and all(s.waiting for s in self._sides.values()):
                self._impatient = progress = True  # each side waits for the other: stop waiting
        return out

    def _step(self, side: _Side) -> bool:
        try:
            return self._next_frame(side)
        except RemoteProtocolError as exc:
            self._out.append(ObservedError(side.direction, exc, side.at, resynchronized=False))
            self._abandon(side)
            return True

    def _abandon(self, side: _Side) -> None:
        side.dead = side.finished = True
        side.waiting = False
        side.buffer = ReceiveBuffer()
        side.block = None
        # Its SETTINGS are unknown from here on: no longer hold the other side to them.
        other = self._sides[side.direction.reverse]
        other.max_frame = _LARGEST_MAX_FRAME
        other.decoder.max_allowed_table_size = _LARGEST_TABLE

    def _finish(self, side: _Side) -> None:
        """The direction closed: anything left unfinished is an error."""
        side.finished = True
        left = len(side.buffer)
        if side.preface:
            side.at = side.buffer.position
            error = _error(Http2ErrorCode.PROTOCOL_ERROR, "closed inside the client preface")
        elif left:
            side.at = side.buffer.position
            error = _error(
                Http2ErrorCode.PROTOCOL_ERROR, f"closed inside a frame ({left} bytes left over)"
            )
        elif side.block is not None:
            side.at = side.block.start
            error = _error(Http2ErrorCode.PROTOCOL_ERROR, "closed inside a header block")
        else:
            return
        self._out.append(ObservedError(side.direction, error, side.at, resynchronized=False))
        side.dead = True
        side.buffer = ReceiveBuffer()

    def _next_frame(self, side: _Side) -> bool:
        """Handle one frame of ``side``; False if more bytes (or the client's side) are needed."""
        buffer = side.buffer
        side.at = buffer.position
        side.waiting = False
        if side.preface:
            got = buffer.peek(len(PREFACE))
            if got is None:
                if not PREFACE.startswith(buffer.peek(len(buffer)) or b""):
                    raise _error(Http2ErrorCode.PROTOCOL_ERROR, "not the client preface")
                return False
            if got != PREFACE:
                raise _error(Http2ErrorCode.PROTOCOL_ERROR, "not the client preface")
            buffer.skip(len(PREFACE))
            side.preface = False
            return True
        head = buffer.peek(_FRAME_HEADER)
        if head is None:
            return False
        length = int.from_bytes(head[:3], "big")
        kind = head[3]
        flags = head[4]
        stream_id = int.from_bytes(head[5:9], "big") & 0x7FFF_FFFF  # "R" bit ignored
        if length > side.max_frame and self._settings_may_come(side):
            side.waiting = True  # the peer's SETTINGS raising the bound may not be fed yet
            return False
        self._check_header(side, length, kind, flags, stream_id)
        if self._must_wait(side, kind, stream_id):
            side.waiting = True
            return False
        if len(buffer) < _FRAME_HEADER + length:
            return False
        buffer.skip(_FRAME_HEADER)
        payload = buffer.take(length) if length else b""
        assert payload is not None  # the length was checked just above
        self._frame(side, kind, flags, stream_id, payload)
        return True

    def _check_header(self, side: _Side, length: int, kind: int, flags: int, sid: int) -> None:
        """Every rule the 9-byte header alone can break, before the payload arrives."""
        problem = Http2ErrorCode.PROTOCOL_ERROR
        if length > side.max_frame:
            raise _error(
                Http2ErrorCode.FRAME_SIZE_ERROR,
                f"a {length}-byte frame exceeds SETTINGS_MAX_FRAME_SIZE {side.max_frame}",
            )
        if side.block is not None:
            if kind != FrameType.CONTINUATION or sid != side.block.stream_id:
                raise _error(problem, "a header block must go on with CONTINUATION frames")
            if len(side.block.fragments) + length > self._max_block:
                raise _error(Http2ErrorCode.ENHANCE_YOUR_CALM, "header block too large")
        if not side.settings_seen and (kind != FrameType.SETTINGS or flags & _ACK):
            raise _error(problem, "the first frame must be SETTINGS")
        if kind in (FrameType.DATA, FrameType.HEADERS, FrameType.PRIORITY, FrameType.RST_STREAM):
            if sid == 0:
                raise _error(problem, f"{FrameType(kind).name} on stream 0")
        elif kind in (FrameType.SETTINGS, FrameType.PING, FrameType.GOAWAY) and sid != 0:
            raise _error(problem, f"{FrameType(kind).name} on stream {sid}, not 0")
        elif kind in (FrameType.PUSH_PROMISE, FrameType.CONTINUATION) and sid == 0:
            raise _error(problem, f"{FrameType(kind).name} on stream 0")
        fixed = _FIXED_LENGTH.get(kind)
        if fixed is not None and length != fixed:
            raise _error(
                Http2ErrorCode.FRAME_SIZE_ERROR,
                f"a {FrameType(kind).name} frame is {fixed} bytes, not {length}",
            )
        if kind == FrameType.SETTINGS and (length % 6 or (flags & _ACK and length)):
            raise _error(Http2ErrorCode.FRAME_SIZE_ERROR, f"a {length}-byte SETTINGS frame")
        if kind == FrameType.GOAWAY and length < 8:
            raise _error(Http2ErrorCode.FRAME_SIZE_ERROR, f"a {length}-byte GOAWAY frame")
        if kind == FrameType.CONTINUATION and side.block is None:
            raise _error(problem, "CONTINUATION without a header block before it")
        if kind == FrameType.PUSH_PROMISE and side.direction is _C2S:
            raise _error(problem, "a client cannot send PUSH_PROMISE")
        if (
            kind in (FrameType.HEADERS, FrameType.PUSH_PROMISE)
            and length > self._max_block + _BLOCK_OVERHEAD
        ):
            raise _error(Http2ErrorCode.ENHANCE_YOUR_CALM, "header block too large")

    def _settings_may_come(self, side: _Side) -> bool:
        """Whether a frame over the bound may yet be allowed by SETTINGS the other side sent
        but that were not fed yet (never while the two sides wait for each other)."""
        other = self._sides[side.direction.reverse]
        return (
            not other.finished
            and not self._impatient
            and len(side.buffer) <= _MAX_WAIT
            and side.max_frame < _LARGEST_MAX_FRAME
        )

    def _must_wait(self, side: _Side, kind: int, sid: int) -> bool:
        """The server answers on a client stream the client's side has not opened yet."""
        client = self._sides[_C2S]
        return (
            side.direction is _S2C
            and kind in (FrameType.DATA, FrameType.HEADERS, FrameType.RST_STREAM)
            and sid % 2 == 1
            and sid > self._highest_client
            and not client.finished
            and len(side.buffer) <= _MAX_WAIT
        )

    def _frame(self, side: _Side, kind: int, flags: int, sid: int, payload: bytes) -> None:
        if kind == FrameType.DATA:
            start, data = self._unpad(payload, flags, side.at + _FRAME_HEADER)
            self._on_data(side, sid, data, start, bool(flags & _END_STREAM))
        elif kind in (FrameType.HEADERS, FrameType.PUSH_PROMISE):
            _, fragment = self._unpad(payload, flags, 0)
            skip = 5 if kind == FrameType.HEADERS and flags & _PRIORITY else 0
            if kind == FrameType.PUSH_PROMISE:
                skip = 4  # the promised stream id
            if len(fragment) < skip:
                raise _error(Http2ErrorCode.FRAME_SIZE_ERROR, "frame shorter than its fields")
            block = _Block(sid, FrameType(kind), bool(flags & _END_STREAM), side.at)
            block.fragments += fragment[skip:]
            self._gather(side, block, flags)
        elif kind == FrameType.CONTINUATION:
            pending = side.block
            assert pending is not None  # checked from the header
            pending.fragments += payload
            self._gather(side, pending, flags)
        elif kind == FrameType.SETTINGS:
            if not flags & _ACK:
                self._on_settings(side, payload)
        elif kind == FrameType.RST_STREAM:
            self._check_known(side, sid, "RST_STREAM")
            self._reset(side.direction, sid)
        elif (
            kind == FrameType.WINDOW_UPDATE
            and sid == 0
            and not int.from_bytes(payload, "big") & 0x7FFF_FFFF
        ):
            raise _error(Http2ErrorCode.PROTOCOL_ERROR, "WINDOW_UPDATE of 0")
        # PRIORITY, PING, GOAWAY and unknown types: nothing to decode (sizes already checked).

    @staticmethod
    def _unpad(payload: bytes, flags: int, origin: int) -> tuple[int, bytes]:
        """Strip "Pad Length" and padding; return where the rest begins and the rest."""
        if not flags & _PADDED:
            return origin, payload
        if not payload:
            raise _error(Http2ErrorCode.FRAME_SIZE_ERROR, "padded frame without a pad length")
        pad = payload[0]
        if pad >= len(payload):
            # "If the length of the padding is the length of the frame payload or greater,
            # the recipient MUST treat this as a connection error of type PROTOCOL_ERROR."
            raise _error(Http2ErrorCode.PROTOCOL_ERROR, "padding longer than the frame")
        return origin + 1, payload[1 : len(payload) - pad]

    def _on_settings(self, side: _Side, payload: bytes) -> None:
        side.settings_seen = True
        other = self._sides[side.direction.reverse]
        for at in range(0, len(payload), 6):
            ident = int.from_bytes(payload[at : at + 2], "big")
            value = int.from_bytes(payload[at + 2 : at + 6], "big")
            if ident == 0x1:  # SETTINGS_HEADER_TABLE_SIZE: bounds the other side's encoder
                wanted = max(other.decoder.max_allowed_table_size, min(value, _LARGEST_TABLE))
                other.decoder.max_allowed_table_size = wanted
            elif ident == 0x2 and value > 1:
                raise _error(Http2ErrorCode.PROTOCOL_ERROR, f"SETTINGS_ENABLE_PUSH {value}")
            elif ident == 0x4 and value > _MAX_WINDOW:
                raise _error(
                    Http2ErrorCode.FLOW_CONTROL_ERROR, f"SETTINGS_INITIAL_WINDOW_SIZE {value}"
                )
            elif ident == 0x5:
                if not _DEFAULT_MAX_FRAME <= value <= _LARGEST_MAX_FRAME:
                    raise _error(Http2ErrorCode.PROTOCOL_ERROR, f"SETTINGS_MAX_FRAME_SIZE {value}")
                other.max_frame = max(other.max_frame, value)

    def _check_known(self, side: _Side, sid: int, what: str) -> None:
        """Frames on an "idle" client stream are a connection error of type PROTOCOL_ERROR."""
        if sid % 2 == 1 and sid > self._highest_client:
            if side.direction is _S2C and self._sides[_C2S].dead:
                return  # the client's side was lost: its streams are unknown, not idle
            raise _error(Http2ErrorCode.PROTOCOL_ERROR, f"{what} on idle stream {sid}")

    # -- header blocks ---------------------------------------------------------------------------

    def _gather(self, side: _Side, block: _Block, flags: int) -> None:
        if len(block.fragments) > self._max_block:
            side.at = block.start
            raise _error(Http2ErrorCode.ENHANCE_YOUR_CALM, "header block too large")
        if not flags & _END_HEADERS:
            side.block = block
            return
        side.block = None
        end = side.buffer.position
        try:
            headers = side.decoder.decode(bytes(block.fragments), raw=True)
        except hpack.HPACKError as exc:
            side.at = block.start
            raise _error(Http2ErrorCode.COMPRESSION_ERROR, f"HPACK: {exc}") from None
        if block.kind == FrameType.PUSH_PROMISE:
            return
        pseudo: dict[bytes, bytes] = {}
        regular: list[tuple[bytes, bytes]] = []
        for name, value in headers:
            name_b, value_b = bytes(name), bytes(value)
            if name_b.startswith(b":"):
                pseudo.setdefault(name_b, value_b)
            else:
                regular.append((name_b, value_b))
        if side.direction is _C2S:
            self._on_request(side, block, _Headers(pseudo, regular, end))
        else:
            self._on_response(side, block, _Headers(pseudo, regular, end))

    def _on_request(self, side: _Side, block: _Block, headers: _Headers) -> None:
        sid = block.stream_id
        if sid % 2 == 0:
            side.at = block.start
            raise _error(Http2ErrorCode.PROTOCOL_ERROR, f"a client opened even stream {sid}")
        if sid <= self._highest_client:  # trailers, or a stream already closed
            stream = self._streams.get(sid)
            if stream is not None and block.end_stream:
                self._end(side, sid, stream)
            return
        self._highest_client = sid
        method, path = headers.pseudo.get(b":method"), headers.pseudo.get(b":path")
        if method is None or path is None:
            return
        try:
            request = parse_request(method, path, headers.regular)
        except RemoteProtocolError:
            return  # not an S2S session: a REST call, skipped
        if len(self._streams) >= self._max_sessions:
            error = _error(
                Http2ErrorCode.ENHANCE_YOUR_CALM,
                f"more than {self._max_sessions} open sessions: stream {sid} skipped",
            )
            self._out.append(ObservedError(_C2S, error, block.start, resynchronized=True))
            return
        stream = _Stream(self._next_pair, request)
        self._next_pair += 1
        self._streams[sid] = stream
        conn = Connection(Role.SERVER, request.session, limits=self._limits)
        stream.bodies[_C2S] = BodyFrames(conn, headers.end)
        self._out.append(Observed(_C2S, request, block.start, headers.end, stream.pair))
        if block.end_stream:
            self._end(side, sid, stream)

    def _on_response(self, side: _Side, block: _Block, headers: _Headers) -> None:
        sid = block.stream_id
        self._check_known(side, sid, "HEADERS")
        stream = self._streams.get(sid)
        if stream is None:
            return  # a REST call, a pushed or reset stream
        if stream.responded:  # trailers
            if block.end_stream:
                self._end(side, sid, stream)
            return
        raw = headers.pseudo.get(b":status", b"")
        if len(raw) != 3 or not raw.isdigit():
            stream.responded = True
            error = _error(Http2ErrorCode.PROTOCOL_ERROR, f"bad :status {raw!r}")
            self._out.append(ObservedError(_S2C, error, block.start, resynchronized=True))
        else:
            status = int(raw)
            if 100 <= status < 200 and not block.end_stream:
                return  # an interim response; the final one follows
            stream.responded = True
            if status != 200:
                stream.error_start, stream.error_status = block.start, status
            else:
                self._open_response(stream, headers.regular, block.start, headers.end)
        if block.end_stream:
            self._end(side, sid, stream)

    def _open_response(
        self,
        stream: _Stream,
        headers: list[tuple[bytes, bytes]],
        start: int,
        end: int,
    ) -> None:
        try:
            response = check_response(200, headers)
        except RemoteProtocolError as exc:
            self._out.append(ObservedError(_S2C, exc, start, resynchronized=True))
            return
        reader = Connection(
            Role.CLIENT, stream.request.session, limits=self._limits, observe_only=True
        )
        stream.bodies[_S2C] = BodyFrames(reader, end)
        self._out.append(Observed(_S2C, response, start, end, stream.pair))

    # -- bodies ----------------------------------------------------------------------------------

    def _on_data(self, side: _Side, sid: int, data: bytes, at: int, end_stream: bool) -> None:
        direction = side.direction
        self._check_known(side, sid, "DATA")
        stream = self._streams.get(sid)
        if stream is None:
            return  # a REST call, a pushed or reset stream
        if direction in stream.ended:
            error = _error(Http2ErrorCode.STREAM_CLOSED, f"DATA after END_STREAM on stream {sid}")
            self._out.append(ObservedError(direction, error, side.at, resynchronized=True))
            return
        if direction is _S2C and stream.error_start is not None:
            stream.error_body += data[: MAX_ERROR_BODY - len(stream.error_body)]
        else:
            body = stream.bodies.get(direction)
            if body is not None and body.open and data:
                body.add(at, data)
                self._body_events(direction, stream, body)
        if end_stream:
            self._end(side, sid, stream)

    def _end(self, side: _Side, sid: int, stream: _Stream) -> None:
        """END_STREAM: that side's body is over."""
        direction = side.direction
        stream.ended.add(direction)
        if direction is _S2C and stream.error_start is not None:
            self._error_response(stream, side.buffer.position)
        body = stream.bodies.get(direction)
        if body is not None and body.open:
            body.end()
            self._body_events(direction, stream, body)
        if len(stream.ended) == 2:
            del self._streams[sid]

    def _reset(self, direction: Direction, sid: int) -> None:
        """RST_STREAM: the sender's side of the stream is over, whatever it left buffered."""
        stream = self._streams.get(sid)
        if stream is None:
            return
        stream.bodies.pop(direction, None)
        if direction is _S2C:
            stream.error_start = None
        stream.ended.add(direction)
        if len(stream.ended) == 2:
            del self._streams[sid]
            return
        self._reset_streams.append(sid)
        if len(self._reset_streams) > MAX_RESET_STREAMS:
            self._streams.pop(self._reset_streams.popleft(), None)

    def _error_response(self, stream: _Stream, end: int) -> None:
        """A refused session: its status and JSON body, read as the client reads them."""
        start = stream.error_start
        assert start is not None
        stream.error_start = None
        response = error_response(stream.error_status, bytes(stream.error_body))
        if response is not None:
            self._out.append(Observed(_S2C, response, start, end, stream.pair))

    def _body_events(self, direction: Direction, stream: _Stream, body: BodyFrames) -> None:
        while not body.terminated:
            try:
                found = body.next_frame()
            except RemoteProtocolError as exc:
                del stream.bodies[direction]  # that side's S2S stream is passed over
                error = ObservedError(direction, exc, body.error_start(), resynchronized=True)
                self._out.append(error)
                return
            if found is None:
                return
            event, start, end = found
            self._out.append(Observed(direction, event, start, end, stream.pair))
