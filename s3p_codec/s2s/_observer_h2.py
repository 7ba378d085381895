"""Passive decoding of S2S sessions carried over HTTP/2 (cleartext, prior knowledge) in captures:
the mapping from HTTP/2 streams to S2S events.

The official SDKs speak S2S over HTTP/2, so a capture of them is HTTP/2 frames (RFC 9113) around
the S2S frames. One ``Http2Observer`` per TCP connection, fed both directions; ``s2s.Observer``
hands a connection to it when the client opens with the connection preface
``PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n``. The framing, HPACK and stream bookkeeping are
``_core.h2input.H2Input`` (its docstring has the rules, the order in which the two directions
are read and why no frame library is used); this module says which streams matter and what
their heads and bodies mean:

- a request head that ``s2s.http.parse_request`` takes (from ``:method``, ``:path`` and the
  other fields) opens an S2S session on its stream; other streams (REST calls) are passed over
  and give nothing. At most ``max_sessions`` sessions are followed at once;
- the DATA of a session's stream feeds an ``s2s.Connection``, exactly as ``s2s.Observer`` does
  for HTTP/1.1 bodies: server role for the request body, client role for the response body;
- END_STREAM ends that side's body (leftover bytes of a partial S2S frame are an error);
  RST_STREAM drops what that side's body holds.

Reported events are those of the HTTP/1.1 observer: ``SessionRequest``, ``SessionResponse`` or
``ErrorResponse`` (a non-200 answer and its JSON body), then ``AppendInput`` / ``AppendAck`` /
``ReadBatch`` / ``Heartbeat`` / ``ReconnectAdvised`` / ``Terminal``, each with the ``pair_id``
given to its HTTP/2 stream.

Offsets are positions in the direction's TCP byte stream. A ``SessionRequest`` or
``SessionResponse`` spans its header block: from the first byte of the HEADERS frame to the last
byte of its last CONTINUATION. An ``ErrorResponse`` spans from its HEADERS frame to the end of
the frame carrying END_STREAM. An S2S frame spans from its first byte (the 3-byte length) to
its last, wherever the DATA frames carrying it put them: a frame split across DATA frames also
covers the HTTP/2 frame headers, padding and other streams' frames in between. A
``ReconnectAdvised`` reports the range of the frame that carried the flag.

Errors: those of HTTP/2 itself carry an ``Http2ErrorCode`` (see ``H2Input``). A broken S2S frame
or a malformed response head is confined to its stream: ``ObservedError`` with
``resynchronized=True``, that stream's side is passed over and the rest of the connection
decodes on.
"""

from __future__ import annotations

from s3p_codec._core import Direction, Observed, ObservedError, RemoteProtocolError, Role
from s3p_codec._core.h2input import (
    MAX_HEADER_BLOCK,
    H2Headers,
    H2Input,
    H2Stream,
    Http2ErrorCode,
    h2_error,
)
from s3p_codec.s2s._bodymap import MAX_ERROR_BODY, BodyFrames, ObserverEvent, error_response
from s3p_codec.s2s._connection import Connection
from s3p_codec.s2s._limits import Limits
from s3p_codec.s2s.http import SessionRequest, check_response, parse_request

__all__ = ["MAX_OPEN_SESSIONS", "Http2Observer"]

MAX_OPEN_SESSIONS = 1000
"""S2S sessions open at once on one connection (real servers advertise 100 concurrent streams)."""

_C2S, _S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT


class _Session(H2Stream):
    """One HTTP/2 stream that opened an S2S session."""

    __slots__ = ("bodies", "error_body", "error_start", "error_status", "request")

    def __init__(self, request: SessionRequest) -> None:
        super().__init__()
        self.request = request
        self.bodies: dict[Direction, BodyFrames] = {}  # a side whose S2S stream broke: none
        self.error_start: int | None = None  # a non-200 response being gathered
        self.error_status = 0
        self.error_body = bytearray()


class Http2Observer(H2Input[_Session, ObserverEvent]):
    """Decodes both directions of one captured HTTP/2 connection carrying S2S sessions."""

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        max_header_block: int = MAX_HEADER_BLOCK,
        max_sessions: int = MAX_OPEN_SESSIONS,
    ) -> None:
        super().__init__(max_header_block=max_header_block)
        self._limits = limits if limits is not None else Limits()
        self._max_sessions = max_sessions

    # -- heads -----------------------------------------------------------------------------------

    def _follow(self, headers: H2Headers) -> _Session | None:
        method, path = headers.pseudo.get(b":method"), headers.pseudo.get(b":path")
        if method is None or path is None:
            return None
        try:
            request = parse_request(method, path, headers.regular)
        except RemoteProtocolError:
            return None  # not an S2S session: a REST call, skipped
        if len(self._streams) >= self._max_sessions:
            error = h2_error(
                Http2ErrorCode.ENHANCE_YOUR_CALM,
                f"more than {self._max_sessions} open sessions: stream {headers.stream_id} skipped",
            )
            self._out.append(ObservedError(_C2S, error, headers.start, resynchronized=True))
            return None
        return _Session(request)

    def _opened(self, stream: _Session, headers: H2Headers) -> None:
        conn = Connection(Role.SERVER, stream.request.session, limits=self._limits)
        stream.bodies[_C2S] = BodyFrames(conn, headers.end)
        self._out.append(Observed(_C2S, stream.request, headers.start, headers.end, stream.pair))

    def _response(self, stream: _Session, status: int, headers: H2Headers) -> None:
        if status != 200:
            # A refused session: its JSON body is gathered and read at END_STREAM.
            stream.error_start, stream.error_status = headers.start, status
            return
        try:
            response = check_response(200, headers.regular)
        except RemoteProtocolError as exc:
            self._out.append(ObservedError(_S2C, exc, headers.start, resynchronized=True))
            return
        reader = Connection(
            Role.CLIENT, stream.request.session, limits=self._limits, observe_only=True
        )
        stream.bodies[_S2C] = BodyFrames(reader, headers.end)
        self._out.append(Observed(_S2C, response, headers.start, headers.end, stream.pair))

    # -- bodies ----------------------------------------------------------------------------------

    def _data(self, direction: Direction, stream: _Session, data: bytes, at: int) -> None:
        if direction is _S2C and stream.error_start is not None:
            stream.error_body += data[: MAX_ERROR_BODY - len(stream.error_body)]
            return
        body = stream.bodies.get(direction)
        if body is not None and body.open and data:
            body.add(at, data)
            self._body_events(direction, stream, body)

    def _ended(self, direction: Direction, stream: _Session, end: int) -> None:
        if direction is _S2C and stream.error_start is not None:
            self._error_response(stream, end)
        body = stream.bodies.get(direction)
        if body is not None and body.open:
            body.end()
            self._body_events(direction, stream, body)

    def _reset_side(self, direction: Direction, stream: _Session) -> None:
        stream.bodies.pop(direction, None)
        if direction is _S2C:
            stream.error_start = None  # a refusal cut short is not reported

    def _error_response(self, stream: _Session, end: int) -> None:
        """A refused session: its status and JSON body, read as the client reads them."""
        start = stream.error_start
        assert start is not None
        stream.error_start = None
        response = error_response(stream.error_status, bytes(stream.error_body))
        if response is not None:
            self._out.append(Observed(_S2C, response, start, end, stream.pair))

    def _body_events(self, direction: Direction, stream: _Session, body: BodyFrames) -> None:
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
