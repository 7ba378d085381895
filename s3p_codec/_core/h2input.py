"""What a passive reader of one captured HTTP/2 connection (cleartext, prior knowledge) does with
the bytes of both directions before any protocol above HTTP sees them. It knows HTTP/2 framing
(RFC 9113) and HPACK only; which streams matter and what their bodies mean is a subclass's
business (the S2S Observer over HTTP/2 is one).

Plan. Each direction is one ``_Side``: a ``ReceiveBuffer`` cut into frames ("9-octet header":
24-bit length, type, flags, 31-bit stream identifier) by ``_next_frame``; ``_drain`` steps both
sides until neither can move. Every rule the header alone can break is checked before the
payload is waited for (``_check_header``), so a bad frame is reported from its header, whatever
the chunking. Then, per frame type:

- the client preface, then "the first frame ... MUST be a SETTINGS frame" on both sides;
  ``SETTINGS_MAX_FRAME_SIZE`` bounds the other side's frames (16,384 until a peer raises it),
  ``SETTINGS_HEADER_TABLE_SIZE`` the other side's HPACK table (capped at 1 MiB to bound memory);
- HEADERS (padding and priority fields stripped) and its CONTINUATIONs ("MUST be followed by a
  contiguous sequence of CONTINUATION frames" on the same stream) form one header block, bounded
  by ``max_header_block`` bytes and decoded with the ``hpack`` package, one decoder per direction
  (the dynamic table runs across streams); PUSH_PROMISE blocks are decoded to keep that table in
  step and otherwise ignored;
- DATA (padding stripped), END_STREAM and RST_STREAM go to the stream they name;
- GOAWAY, PING, WINDOW_UPDATE, PRIORITY and frame types this code does not know are checked for
  their fixed sizes and skipped (no flow control: a capture is not a peer).

Streams. A request head on a new client stream is offered to the subclass (``_follow``); a
stream it follows (an ``H2Stream``) gets a fresh ``pair`` id and, from then on, its response
head (``_response``, interim 1xx heads skipped, trailers passed over), its DATA (``_data``), the
end of each side (``_ended``) and each side's reset (``_reset_side``). Streams nobody follows
cost nothing beyond their id. RST_STREAM ends the sender's side ("MUST NOT send additional
frames for that stream"); the other side's frames already on their way still decode, and since
that peer usually stops without END_STREAM, the last ``MAX_RESET_STREAMS`` streams reset one way
are kept for them and older ones forgotten.

Order. The server's frames on a client stream are handled once the client's HEADERS opening
that stream were, and a frame over the size bound waits for the other side's SETTINGS that may
raise it (until that side is closed or lost; never while both sides wait for each other), so
each direction's outputs do not depend on how the two directions' bytes are interleaved.

Errors are ``RemoteProtocolError`` with an ``Http2ErrorCode``. Broken framing or HPACK is an
``ObservedError`` at the frame (or header block) at fault and abandons that direction
(``resynchronized=False``); so does a gap, since the frame boundaries and the HPACK table are
lost. An error confined to one stream (a bad ``:status``, DATA after END_STREAM) is an
``ObservedError`` with ``resynchronized=True`` and the connection decodes on.

Offsets are positions in the direction's TCP byte stream: ``_Side.at`` is where the frame (or
header block) being handled began, ``H2Headers`` spans a header block from the first byte of its
HEADERS frame to the last byte of its last CONTINUATION, and ``_data`` is told where the DATA
payload sits.

Why no library for the frames: ``h2`` is an endpoint (it enforces flow control, answers pings,
raises on the first surprise) and reports no byte positions. ``hyperframe`` (h2's frame layer)
was weighed against the few dozen lines below and left out: its errors do not carry the RFC
codes (``InvalidDataError`` is a PROTOCOL_ERROR for a SETTINGS frame on a stream and a
FRAME_SIZE_ERROR for a SETTINGS ack with a payload), so every rule would still be checked here
first; it refuses frames a passive reader must pass over (a zero WINDOW_UPDATE on a stream, a
stream error in RFC 9113, would abandon the direction; an ALTSVC frame it cannot parse, which
RFC 7838 says to ignore); and it builds a frame object and a flags set per frame, about 2 us
more per DATA frame than the slicing below (some 10% of the S2S Observer's time per frame).
HPACK, pure decoding with a table to keep, comes from ``hpack``; its ``Decoder`` objects are
the only foreign state a snapshot holds (the checkpoint unpickler allows that package).
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Sequence
from typing import ClassVar, Generic, NamedTuple, TypeVar

import hpack

from s3p_codec._core.buffer import ReceiveBuffer
from s3p_codec._core.checkpoint import Checkpointable
from s3p_codec._core.errors import RemoteProtocolError
from s3p_codec._core.observe import ObservedError, ObservedGap, ObserverOutput
from s3p_codec._core.types import Direction

__all__ = [
    "MAX_HEADER_BLOCK",
    "MAX_RESET_STREAMS",
    "PREFACE",
    "FrameType",
    "H2Headers",
    "H2Input",
    "H2Stream",
    "Http2ErrorCode",
    "h2_error",
]

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
""""the connection preface starts with the string PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n"."""

MAX_HEADER_BLOCK = 64 * 1024
"""Bytes of one HPACK header block (HEADERS + CONTINUATIONs), and of its decoded header list."""

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

    ``ENHANCE_YOUR_CALM`` marks our own bounds (header block size, streams followed at once);
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


def h2_error(code: Http2ErrorCode, message: str) -> RemoteProtocolError:
    """The error for a broken HTTP/2 rule, worded ``HTTP/2: <message>``."""
    return RemoteProtocolError(f"HTTP/2: {message}", code=code)


class H2Headers(NamedTuple):
    """A decoded header block: its stream, where it spans (from its HEADERS frame to the end of
    its last CONTINUATION), whether it ended the stream, its pseudo-headers by name (the first
    of each kept) and the other fields in order."""

    stream_id: int
    start: int
    end: int
    end_stream: bool
    pseudo: dict[bytes, bytes]
    regular: list[tuple[bytes, bytes]]


class H2Stream:
    """One followed stream: what ``H2Input`` keeps of it. A subclass adds the fields of the
    protocol it carries (with ``__slots__`` of its own)."""

    __slots__ = ("ended", "pair", "responded")

    def __init__(self) -> None:
        self.pair = 0  # set by ``H2Input`` when it starts following the stream
        self.ended: set[Direction] = set()  # sides that sent END_STREAM or RST_STREAM
        self.responded = False  # a final response head came: later heads are trailers


class _Block:
    """A header block being gathered: HEADERS or PUSH_PROMISE, then CONTINUATIONs."""

    __slots__ = ("end_stream", "fragments", "kind", "start", "stream_id")

    def __init__(self, stream_id: int, kind: FrameType, end_stream: bool, start: int) -> None:
        self.stream_id = stream_id
        self.kind = kind
        self.end_stream = end_stream
        self.start = start
        self.fragments = bytearray()


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


S = TypeVar("S", bound=H2Stream)
E = TypeVar("E")


class H2Input(Checkpointable, Generic[S, E]):
    """Both directions of one captured HTTP/2 connection, framed and header-decoded: the
    ``observe``/``gap``/``close`` of an Observer, with hooks a subclass fills in for the streams
    it follows (``S``) and the events it reports (``Observed[E]``, appended to ``self._out``).
    """

    #: HTTP has no frame marker to hunt for: after a gap a direction is abandoned.
    resynchronizes: ClassVar[bool] = False

    def __init__(self, *, max_header_block: int = MAX_HEADER_BLOCK) -> None:
        self._max_block = max_header_block
        self._sides = {d: _Side(d, max_header_block) for d in (_C2S, _S2C)}
        self._streams: dict[int, S] = {}  # followed streams not over on both sides
        self._highest_client = 0  # largest stream id the client opened
        self._reset_streams: deque[int] = deque()  # reset one way, oldest first
        self._impatient = False  # no more waiting for the other side's SETTINGS
        self._next_pair = 0
        self._out: list[ObserverOutput[E]] = []  # what the current call reports, in order

    # -- what a subclass says about the streams it follows ----------------------------------------

    def _follow(self, headers: H2Headers) -> S | None:
        """The client opened a stream with these request headers: its stream object, to follow
        it, or None to pass it over (nothing of it is reported)."""
        raise NotImplementedError

    def _opened(self, stream: S, headers: H2Headers) -> None:
        """A stream ``_follow`` took is followed (``stream.pair`` is set): report its request."""
        raise NotImplementedError

    def _response(self, stream: S, status: int, headers: H2Headers) -> None:
        """The final response head of a followed stream (interim 1xx heads are skipped)."""
        raise NotImplementedError

    def _data(self, direction: Direction, stream: S, data: bytes, at: int) -> None:
        """A DATA payload of a followed stream, padding stripped; it sits at stream offset
        ``at`` in ``direction``."""
        raise NotImplementedError

    def _ended(self, direction: Direction, stream: S, end: int) -> None:
        """END_STREAM from ``direction``: that side's body is over at stream offset ``end``."""
        raise NotImplementedError

    def _reset_side(self, direction: Direction, stream: S) -> None:
        """RST_STREAM from ``direction``: drop what that side left buffered."""
        raise NotImplementedError

    # -- Observer protocol -----------------------------------------------------------------------

    def observe(self, direction: Direction, data: bytes) -> Sequence[ObserverOutput[E]]:
        """Feed bytes seen travelling ``direction``; return what the frames they complete
        report."""
        side = self._sides[direction]
        side.fed += len(data)
        if side.dead or side.closed or not data:
            return []
        side.buffer.feed(data)
        return self._drain()

    def gap(self, direction: Direction, size: int) -> Sequence[ObserverOutput[E]]:
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

    def close(self, direction: Direction) -> Sequence[ObserverOutput[E]]:
        """No more bytes come in ``direction``: report the streams it cut short."""
        side = self._sides[direction]
        if side.dead or side.closed:
            return []
        side.closed = True
        return self._drain()

    # -- the frame loop --------------------------------------------------------------------------

    def _drain(self) -> list[ObserverOutput[E]]:
        self._out = out = list[ObserverOutput[E]]()
        progress = True
        while progress:
            progress = False
            for side in self._sides.values():
                while not side.finished and self._step(side):
                    progress = True
                # A closed side is finished only once it stopped waiting for the other side:
                # the frames it holds back may still be allowed.
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
        # Its SETTINGS are unknown from here on: the other side is held to the widest bounds.
        other = self._sides[side.direction.reverse]
        other.max_frame = _LARGEST_MAX_FRAME
        other.decoder.max_allowed_table_size = _LARGEST_TABLE

    def _finish(self, side: _Side) -> None:
        """The direction closed: anything left unfinished is an error."""
        side.finished = True
        left = len(side.buffer)
        if side.preface:
            side.at = side.buffer.position
            error = h2_error(Http2ErrorCode.PROTOCOL_ERROR, "closed inside the client preface")
        elif left:
            side.at = side.buffer.position
            error = h2_error(
                Http2ErrorCode.PROTOCOL_ERROR, f"closed inside a frame ({left} bytes left over)"
            )
        elif side.block is not None:
            side.at = side.block.start
            error = h2_error(Http2ErrorCode.PROTOCOL_ERROR, "closed inside a header block")
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
                # Refuse a wrong preface as soon as its first bytes differ, not at 24 bytes.
                if not PREFACE.startswith(buffer.peek(len(buffer)) or b""):
                    raise h2_error(Http2ErrorCode.PROTOCOL_ERROR, "not the client preface")
                return False
            if got != PREFACE:
                raise h2_error(Http2ErrorCode.PROTOCOL_ERROR, "not the client preface")
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
            raise h2_error(
                Http2ErrorCode.FRAME_SIZE_ERROR,
                f"a {length}-byte frame exceeds SETTINGS_MAX_FRAME_SIZE {side.max_frame}",
            )
        if side.block is not None:
            if kind != FrameType.CONTINUATION or sid != side.block.stream_id:
                raise h2_error(problem, "a header block must go on with CONTINUATION frames")
            if len(side.block.fragments) + length > self._max_block:
                raise h2_error(Http2ErrorCode.ENHANCE_YOUR_CALM, "header block too large")
        if not side.settings_seen and (kind != FrameType.SETTINGS or flags & _ACK):
            raise h2_error(problem, "the first frame must be SETTINGS")
        if kind in (FrameType.DATA, FrameType.HEADERS, FrameType.PRIORITY, FrameType.RST_STREAM):
            if sid == 0:
                raise h2_error(problem, f"{FrameType(kind).name} on stream 0")
        elif kind in (FrameType.SETTINGS, FrameType.PING, FrameType.GOAWAY) and sid != 0:
            raise h2_error(problem, f"{FrameType(kind).name} on stream {sid}, not 0")
        elif kind in (FrameType.PUSH_PROMISE, FrameType.CONTINUATION) and sid == 0:
            raise h2_error(problem, f"{FrameType(kind).name} on stream 0")
        fixed = _FIXED_LENGTH.get(kind)
        if fixed is not None and length != fixed:
            raise h2_error(
                Http2ErrorCode.FRAME_SIZE_ERROR,
                f"a {FrameType(kind).name} frame is {fixed} bytes, not {length}",
            )
        if kind == FrameType.SETTINGS and (length % 6 or (flags & _ACK and length)):
            raise h2_error(Http2ErrorCode.FRAME_SIZE_ERROR, f"a {length}-byte SETTINGS frame")
        if kind == FrameType.GOAWAY and length < 8:
            raise h2_error(Http2ErrorCode.FRAME_SIZE_ERROR, f"a {length}-byte GOAWAY frame")
        if kind == FrameType.CONTINUATION and side.block is None:
            raise h2_error(problem, "CONTINUATION without a header block before it")
        if kind == FrameType.PUSH_PROMISE and side.direction is _C2S:
            raise h2_error(problem, "a client cannot send PUSH_PROMISE")
        # The fields around a fragment are at most _BLOCK_OVERHEAD bytes: a longer frame cannot
        # hold a block within the bound, so it is refused before its payload is waited for.
        if (
            kind in (FrameType.HEADERS, FrameType.PUSH_PROMISE)
            and length > self._max_block + _BLOCK_OVERHEAD
        ):
            raise h2_error(Http2ErrorCode.ENHANCE_YOUR_CALM, "header block too large")

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
                raise h2_error(Http2ErrorCode.FRAME_SIZE_ERROR, "frame shorter than its fields")
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
            # Only on stream 0 is a zero increment a connection error; on a stream it is a
            # stream error, which changes nothing a passive reader decodes.
            raise h2_error(Http2ErrorCode.PROTOCOL_ERROR, "WINDOW_UPDATE of 0")
        # PRIORITY, PING, GOAWAY and unknown types: nothing to decode (sizes already checked).

    @staticmethod
    def _unpad(payload: bytes, flags: int, origin: int) -> tuple[int, bytes]:
        """Strip "Pad Length" and padding; return where the rest begins and the rest."""
        if not flags & _PADDED:
            return origin, payload
        if not payload:
            raise h2_error(Http2ErrorCode.FRAME_SIZE_ERROR, "padded frame without a pad length")
        pad = payload[0]
        if pad >= len(payload):
            # "If the length of the padding is the length of the frame payload or greater,
            # the recipient MUST treat this as a connection error of type PROTOCOL_ERROR."
            raise h2_error(Http2ErrorCode.PROTOCOL_ERROR, "padding longer than the frame")
        return origin + 1, payload[1 : len(payload) - pad]

    def _on_settings(self, side: _Side, payload: bytes) -> None:
        side.settings_seen = True
        other = self._sides[side.direction.reverse]
        for at in range(0, len(payload), 6):
            ident = int.from_bytes(payload[at : at + 2], "big")
            value = int.from_bytes(payload[at + 2 : at + 6], "big")
            # A setting bounds what the *other* side sends. Bounds only ever widen here: a
            # SETTINGS frame takes effect when acknowledged, and frames sent before the ack
            # may still use the older, larger value.
            if ident == 0x1:  # SETTINGS_HEADER_TABLE_SIZE: bounds the other side's encoder
                wanted = max(other.decoder.max_allowed_table_size, min(value, _LARGEST_TABLE))
                other.decoder.max_allowed_table_size = wanted
            elif ident == 0x2 and value > 1:
                raise h2_error(Http2ErrorCode.PROTOCOL_ERROR, f"SETTINGS_ENABLE_PUSH {value}")
            elif ident == 0x4 and value > _MAX_WINDOW:
                raise h2_error(
                    Http2ErrorCode.FLOW_CONTROL_ERROR, f"SETTINGS_INITIAL_WINDOW_SIZE {value}"
                )
            elif ident == 0x5:
                if not _DEFAULT_MAX_FRAME <= value <= _LARGEST_MAX_FRAME:
                    raise h2_error(
                        Http2ErrorCode.PROTOCOL_ERROR, f"SETTINGS_MAX_FRAME_SIZE {value}"
                    )
                other.max_frame = max(other.max_frame, value)

    def _check_known(self, side: _Side, sid: int, what: str) -> None:
        """Frames on an "idle" client stream are a connection error of type PROTOCOL_ERROR."""
        if sid % 2 == 1 and sid > self._highest_client:
            if side.direction is _S2C and self._sides[_C2S].dead:
                return  # the client's side was lost: its streams are unknown, not idle
            raise h2_error(Http2ErrorCode.PROTOCOL_ERROR, f"{what} on idle stream {sid}")

    # -- header blocks ---------------------------------------------------------------------------

    def _gather(self, side: _Side, block: _Block, flags: int) -> None:
        if len(block.fragments) > self._max_block:
            side.at = block.start
            raise h2_error(Http2ErrorCode.ENHANCE_YOUR_CALM, "header block too large")
        if not flags & _END_HEADERS:
            side.block = block
            return
        side.block = None
        end = side.buffer.position
        try:
            fields = side.decoder.decode(bytes(block.fragments), raw=True)
        except hpack.HPACKError as exc:
            side.at = block.start
            raise h2_error(Http2ErrorCode.COMPRESSION_ERROR, f"HPACK: {exc}") from None
        if block.kind == FrameType.PUSH_PROMISE:
            return  # decoded only to keep the table in step: pushed streams are not followed
        pseudo: dict[bytes, bytes] = {}
        regular: list[tuple[bytes, bytes]] = []
        for name, value in fields:
            name_b, value_b = bytes(name), bytes(value)
            if name_b.startswith(b":"):
                pseudo.setdefault(name_b, value_b)
            else:
                regular.append((name_b, value_b))
        headers = H2Headers(block.stream_id, block.start, end, block.end_stream, pseudo, regular)
        if side.direction is _C2S:
            self._on_request(side, headers)
        else:
            self._on_response(side, headers)

    def _on_request(self, side: _Side, headers: H2Headers) -> None:
        sid = headers.stream_id
        if sid % 2 == 0:
            side.at = headers.start
            raise h2_error(Http2ErrorCode.PROTOCOL_ERROR, f"a client opened even stream {sid}")
        if sid <= self._highest_client:  # trailers, or a stream already closed
            stream = self._streams.get(sid)
            if stream is not None and headers.end_stream:
                self._end(side, sid, stream)
            return
        self._highest_client = sid
        stream = self._follow(headers)
        if stream is None:
            return
        stream.pair = self._next_pair
        self._next_pair += 1
        self._streams[sid] = stream
        self._opened(stream, headers)
        if headers.end_stream:
            self._end(side, sid, stream)

    def _on_response(self, side: _Side, headers: H2Headers) -> None:
        sid = headers.stream_id
        self._check_known(side, sid, "HEADERS")
        stream = self._streams.get(sid)
        if stream is None:
            return  # a stream not followed, pushed or reset
        if stream.responded:  # trailers
            if headers.end_stream:
                self._end(side, sid, stream)
            return
        raw = headers.pseudo.get(b":status", b"")
        if len(raw) != 3 or not raw.isdigit():
            stream.responded = True
            error = h2_error(Http2ErrorCode.PROTOCOL_ERROR, f"bad :status {raw!r}")
            self._out.append(ObservedError(_S2C, error, headers.start, resynchronized=True))
        else:
            status = int(raw)
            # An interim head is skipped: the final one follows. One that ends the stream has
            # nothing after it, so it is taken as the answer.
            if 100 <= status < 200 and not headers.end_stream:
                return
            stream.responded = True
            self._response(stream, status, headers)
        if headers.end_stream:
            self._end(side, sid, stream)

    # -- bodies and the end of streams -----------------------------------------------------------

    def _on_data(self, side: _Side, sid: int, data: bytes, at: int, end_stream: bool) -> None:
        direction = side.direction
        self._check_known(side, sid, "DATA")
        stream = self._streams.get(sid)
        if stream is None:
            return  # a stream not followed, pushed or reset
        if direction in stream.ended:
            error = h2_error(Http2ErrorCode.STREAM_CLOSED, f"DATA after END_STREAM on stream {sid}")
            self._out.append(ObservedError(direction, error, side.at, resynchronized=True))
            return
        self._data(direction, stream, data, at)
        if end_stream:
            self._end(side, sid, stream)

    def _end(self, side: _Side, sid: int, stream: S) -> None:
        """END_STREAM: that side's body is over."""
        stream.ended.add(side.direction)
        self._ended(side.direction, stream, side.buffer.position)
        if len(stream.ended) == 2:
            del self._streams[sid]

    def _reset(self, direction: Direction, sid: int) -> None:
        """RST_STREAM: the sender's side of the stream is over, whatever it left buffered."""
        stream = self._streams.get(sid)
        if stream is None:
            return
        self._reset_side(direction, stream)
        stream.ended.add(direction)
        if len(stream.ended) == 2:
            del self._streams[sid]
            return
        # Kept for the other side's frames in flight; bounded, as that side rarely says it ended.
        self._reset_streams.append(sid)
        if len(self._reset_streams) > MAX_RESET_STREAMS:
            self._streams.pop(self._reset_streams.popleft(), None)
