"""Passive decoding of captured S2S sessions: S2S frames inside HTTP/1.1 or HTTP/2 bodies.

One ``Observer`` per TCP connection, fed both directions. It picks the HTTP version from the
first bytes the client sent: the HTTP/2 connection preface
(``PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n``, what the official SDKs send to an ``http://``
endpoint) hands the connection to
``_observer_h2.Http2Observer`` (which needs the ``hpack`` package, in the ``capture`` extra);
anything else is HTTP/1.1, decoded here. The server's bytes wait until the client's decide.
Without any client bytes (the client's side lost or silent), a server side that opens with a
SETTINGS frame is taken for HTTP/2.

HTTP/1.1: requests are parsed with h11 (one
h11 machine per direction, each told what the other side said so that both stay in step across
keep-alive cycles); a request that opens an S2S session (``s2s.http.parse_request``) gets a
fresh ``pair_id``, and the frames of both bodies are decoded by an ``s2s.Connection`` per body
(server role for the request body, client role for the response body), tagged with that id.
Other HTTP exchanges (the JSON REST calls around sessions) are skipped.

Reported: ``SessionRequest``; ``SessionResponse`` for a 200 with ``s2s/proto``, or
``ErrorResponse`` (status and JSON ``code``/``message``) for a refusal; then ``AppendInput`` /
``AppendAck`` / ``ReadBatch`` / ``Heartbeat`` / ``ReconnectAdvised``; a terminal frame is reported
as a ``Terminal`` event (a capture shows it; it is not a decoding failure).

Offsets are exact positions in the direction's byte stream, whatever the chunking of the
``observe`` calls. h11 reports no positions, so they are measured: the first byte h11 has not
consumed sits at ``bytes fed - len(trailing_data[0])``, read once per h11 event. h11 is fed no
more than its bound on an incomplete event (plus one byte) at a time (``H11Feed``), so what it
refuses does not depend on the chunking either. A
``SessionRequest``/``SessionResponse`` spans its message head, an ``ErrorResponse`` its whole
message. Chunked transfer encoding puts framing bytes between the TCP bytes and the frames, so
each h11 ``Data`` event is located on the wire (its bytes are the last ones consumed) and an
S2S frame's body positions (``Connection.position``) are mapped through those pieces
(``s2s._bodymap.BodyFrames``): a frame
spans exactly its own bytes, chunk framing around it belongs to no event. A
``ReconnectAdvised`` is a flag of the frame before it and reports that frame's range.

A broken stream yields ``ObservedError`` (at the broken frame, or where h11 stopped); S2S has no
resynchronisation point inside an HTTP body, so that direction is abandoned
(``resynchronized=False``), as it is after a gap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

import h11

from s3p_codec._core import (
    Direction,
    Observed,
    ObservedError,
    ObservedGap,
    RemoteProtocolError,
    Role,
)
from s3p_codec._core.checkpoint import Checkpointable
from s3p_codec._core.h11input import BODY_FEED_STEP, FEED_STEP, H11Feed
from s3p_codec.s2s._bodymap import MAX_ERROR_BODY, BodyFrames, ObserverEvent, error_response
from s3p_codec.s2s._bodymap import Output as _Output
from s3p_codec.s2s._connection import Connection
from s3p_codec.s2s._events import ErrorCode
from s3p_codec.s2s.http import SessionRequest, check_response, parse_request

if TYPE_CHECKING:
    from s3p_codec.s2s._observer_h2 import Http2Observer

__all__ = ["MAX_WAITING", "Observer", "ObserverEvent"]

_CHUNKED = [(b"transfer-encoding", b"chunked")]
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_MAX_HELD = 64 * 1024  # server bytes held while the client's first bytes are awaited


MAX_WAITING = 64 << 20
"""Bytes of one direction an HTTP/1.1 capture may hold waiting behind an unanswered request
(pipelined requests, whose replies never came); past it the direction is given up with one
error row, and its waiting bytes forgotten."""


class Observer(Checkpointable):
    """Decodes both directions of one captured connection (HTTP/1.1 or HTTP/2) carrying S2S."""

    #: HTTP has no frame marker to hunt for: after a gap a direction is abandoned.
    resynchronizes: ClassVar[bool] = False

    def __init__(self, *, max_waiting: int = MAX_WAITING) -> None:
        self._max_waiting = max_waiting  # HTTP/1.1: see ``MAX_WAITING``
        self._inner: _Http1Observer | Http2Observer | _Undecodable | None = None
        self._opening = bytearray()  # the client's bytes while the version is undecided
        self._held: list[tuple[str, bytes | int]] = []  # the server's calls meanwhile
        self._held_size = 0
        self._failed: list[_Output] = []

    def observe(self, direction: Direction, data: bytes) -> Sequence[_Output]:
        """Feed bytes seen travelling ``direction``; the client's first bytes pick HTTP/2 or
        HTTP/1.1 decoding.
        """
        if self._inner is not None:
            return self._inner.observe(direction, data)
        if direction is Direction.SERVER_TO_CLIENT:
            self._held.append(("data", data))
            self._held_size += len(data)
            return self._decide(None) if self._held_size > _MAX_HELD else []
        self._opening += data
        size = min(len(self._opening), len(_H2_PREFACE))
        if self._opening[:size] != _H2_PREFACE[:size]:
            return self._decide(False)
        return self._decide(True) if size == len(_H2_PREFACE) else []

    def gap(self, direction: Direction, size: int) -> Sequence[_Output]:
        """``size`` bytes were lost in ``direction`` (server bytes are held until the HTTP version
        is known).
        """
        if self._inner is not None:
            return self._inner.gap(direction, size)
        if direction is Direction.SERVER_TO_CLIENT:
            self._held.append(("gap", size))
            return []
        out = self._decide(None)
        return [*out, *self._current().gap(direction, size)]

    def close(self, direction: Direction) -> Sequence[_Output]:
        """No more bytes come in ``direction``; once the HTTP version is known, the decoder for it
        reports what was cut short.
        """
        if self._inner is not None:
            return self._inner.close(direction)
        if direction is Direction.SERVER_TO_CLIENT:
            self._held.append(("close", 0))
            return []
        out = self._decide(True if self._opening else None)
        return [*out, *self._current().close(direction)]

    def _current(self) -> _Http1Observer | Http2Observer | _Undecodable:
        assert self._inner is not None
        return self._inner

    def _decide(self, http2: bool | None) -> list[_Output]:
        """Hand the connection to one decoder and replay what was held back."""
        if http2 is None:  # no word from the client: does the server open with SETTINGS?
            first = b"".join(d for kind, d in self._held if isinstance(d, bytes))[:9]
            http2 = first[3:4] == b"\x04" and first[5:9] == bytes(4)
        out: list[_Output] = []
        if http2:
            try:
                # The HTTP/2 decoder needs hpack: asked for by name, so that its absence shows
                # even when the decoder's module was imported before.
                import hpack  # noqa: F401, PLC0415

                from s3p_codec.s2s._observer_h2 import Http2Observer  # noqa: PLC0415
            except ImportError as exc:
                self._inner = _Undecodable()
                error = RemoteProtocolError(
                    f"decoding HTTP/2 needs the hpack package (s3p-codec[capture]): {exc}",
                    code=ErrorCode.INTERNAL,
                )
                return [ObservedError(d, error, 0) for d in Direction]
            self._inner = Http2Observer()
        else:
            self._inner = _Http1Observer(self._max_waiting)
        inner = self._inner
        if self._opening:
            out += inner.observe(Direction.CLIENT_TO_SERVER, bytes(self._opening))
        self._opening = bytearray()
        for kind, item in self._held:
            if kind == "data":
                assert isinstance(item, bytes)
                out += inner.observe(Direction.SERVER_TO_CLIENT, item)
            elif kind == "gap":
                assert isinstance(item, int)
                out += inner.gap(Direction.SERVER_TO_CLIENT, item)
            else:
                out += inner.close(Direction.SERVER_TO_CLIENT)
        self._held = []
        return out


class _Undecodable:
    """What HTTP/2 turns into without the ``hpack`` package: nothing more to report."""

    def observe(self, direction: Direction, data: bytes) -> Sequence[_Output]:
        return []

    def gap(self, direction: Direction, size: int) -> Sequence[_Output]:
        return []

    def close(self, direction: Direction) -> Sequence[_Output]:
        return []


class _Http1Observer:
    """Decodes both directions of one captured HTTP/1.1 connection that carries S2S sessions."""

    def __init__(self, max_waiting: int = MAX_WAITING) -> None:
        self._max_waiting = max_waiting
        self._input = {  # h11 reads what each side sent, paced (see ``H11Feed``)
            Direction.CLIENT_TO_SERVER: H11Feed(h11.Connection(h11.SERVER)),
            Direction.SERVER_TO_CLIENT: H11Feed(h11.Connection(h11.CLIENT)),
        }
        self._c2s = self._input[Direction.CLIENT_TO_SERVER].machine
        self._s2c = self._input[Direction.SERVER_TO_CLIENT].machine
        self._offset = {Direction.CLIENT_TO_SERVER: 0, Direction.SERVER_TO_CLIENT: 0}
        # Stream offset where the message being parsed began (the end of the previous one).
        self._message_start = {Direction.CLIENT_TO_SERVER: 0, Direction.SERVER_TO_CLIENT: 0}
        # Where the last h11 event handled ended: the bytes h11 refuses begin there. (How far
        # h11 had read into them when it refused depends on how the bytes were chunked.)
        self._last_end = {Direction.CLIENT_TO_SERVER: 0, Direction.SERVER_TO_CLIENT: 0}
        self._dead: set[Direction] = set()
        self._next_pair = 0
        self._pair: int | None = None  # pair id of the current exchange, if it is a session
        self._request: SessionRequest | None = None
        self._bodies: dict[Direction, BodyFrames] = {}
        self._failure_start: dict[Direction, int] = {}
        self._error_status: int | None = None
        self._error_body = bytearray()

    # -- Observer protocol -----------------------------------------------------------------------

    def observe(self, direction: Direction, data: bytes) -> Sequence[_Output]:
        self._offset[direction] += len(data)
        feed = self._input[direction]
        if direction in self._dead or not data or feed.eof:  # eof: data after the close
            return []
        feed.receive(data)
        out = self._drain()
        if feed.queued > self._max_waiting and direction not in self._dead:
            # HTTP/1.1 answers in order: requests pipelined behind one never answered wait
            # here whole. Past the bound the direction is given up, and its bytes with it.
            start = feed.given
            self._dead.add(direction)
            skipped = feed.drop_waiting()
            error = RemoteProtocolError(
                f"more than {self._max_waiting} bytes wait behind an unanswered request "
                "(max_waiting): this direction is not decoded further",
                code=ErrorCode.INVALID,
            )
            out.append(ObservedError(direction, error, start, skipped, resynchronized=False))
        return out

    def gap(self, direction: Direction, size: int) -> Sequence[_Output]:
        start = self._offset[direction]
        self._offset[direction] += size
        already = direction in self._dead
        self._dead.add(direction)
        return [] if already else [ObservedGap(direction, start, size, resynchronized=False)]

    def close(self, direction: Direction) -> Sequence[_Output]:
        if direction in self._dead or self._input[direction].eof:
            return []
        self._input[direction].eof = True
        return self._drain()

    # -- internals -------------------------------------------------------------------------------

    def _drain(self) -> list[_Output]:
        out: list[_Output] = []
        progress = True
        while progress:
            progress = False
            for direction in (Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT):
                if direction in self._dead:
                    continue
                try:
                    if self._step(direction, out):
                        progress = True
                except RemoteProtocolError as exc:
                    self._fail(direction, exc, out)
                except h11.ProtocolError as exc:
                    error = RemoteProtocolError(f"HTTP/1.1: {exc}", code=ErrorCode.BAD_HEADER)
                    self._fail(direction, error, out)
            if self._cycle_done():
                self._c2s.start_next_cycle()
                self._s2c.start_next_cycle()
                self._pair = None
                self._request = None
                self._bodies.clear()
                progress = True
        return out

    def _cycle_done(self) -> bool:
        return all(
            machine.our_state is h11.DONE and machine.their_state is h11.DONE
            for machine in (self._c2s, self._s2c)
        )

    def _fail(self, direction: Direction, error: RemoteProtocolError, out: list[_Output]) -> None:
        self._dead.add(direction)
        start = self._failure_start.pop(direction, None)
        if start is None:
            start = self._last_end[direction]
        out.append(ObservedError(direction, error, start, resynchronized=False))

    def _emit(
        self, direction: Direction, event: ObserverEvent, start: int, end: int, out: list[_Output]
    ) -> None:
        out.append(Observed(direction, event, start, end, self._pair))

    def _body_events(self, direction: Direction, out: list[_Output]) -> bool:
        body = self._bodies.get(direction)
        if body is None:
            return False
        found = False
        while not body.terminated:
            try:
                frame = body.next_frame()
            except RemoteProtocolError:
                self._failure_start[direction] = body.error_start()
                raise
            if frame is None:
                return found
            event, start, end = frame
            self._emit(direction, event, start, end, out)
            found = True
        return found

    def _step(self, direction: Direction, out: list[_Output]) -> bool:
        """Handle one h11 event of ``direction``; True if anything happened."""
        if self._body_events(direction, out):
            return True
        if direction is Direction.SERVER_TO_CLIENT and self._s2c.our_state is h11.IDLE:
            return False  # no request seen yet: wait for the client's side
        feed = self._input[direction]
        item = feed.machine.next_event()
        step = BODY_FEED_STEP if feed.machine.their_state is h11.SEND_BODY else FEED_STEP
        while item is h11.NEED_DATA and feed.give(step):
            item = feed.machine.next_event()
        if item is h11.NEED_DATA or item is h11.PAUSED:
            return False
        if isinstance(item, h11.ConnectionClosed):
            return False
        consumed = self._last_end[direction] = feed.consumed()
        if isinstance(item, h11.Request):
            self._on_request(item, consumed, out)
        elif isinstance(item, h11.Response):
            self._on_response(item, consumed, out)
        elif isinstance(item, h11.Data):
            self._on_data(direction, bytes(item.data), consumed)
        elif isinstance(item, h11.EndOfMessage):
            self._on_end(direction, consumed, out)
        return True

    def _on_request(self, item: h11.Request, consumed: int, out: list[_Output]) -> None:
        direction = Direction.CLIENT_TO_SERVER
        # Keep the response parser in step: it must know a request (and its method) was sent.
        self._s2c.send(h11.Request(method=item.method, target=item.target, headers=[
            (b"host", b"capture"), *_CHUNKED,
        ]))  # fmt: skip
        try:
            request = parse_request(item.method, item.target, item.headers)
        except RemoteProtocolError:
            return  # not an S2S session: a REST call, skipped
        self._pair = self._next_pair
        self._next_pair += 1
        self._request = request
        self._bodies[direction] = BodyFrames(Connection(Role.SERVER, request.session), consumed)
        self._emit(direction, request, self._message_start[direction], consumed, out)

    def _on_response(self, item: h11.Response, consumed: int, out: list[_Output]) -> None:
        direction = Direction.SERVER_TO_CLIENT
        self._c2s.send(h11.Response(status_code=item.status_code, headers=_CHUNKED))
        self._error_status = None
        if self._request is None:
            return
        if item.status_code != 200:
            self._error_status = item.status_code
            self._error_body.clear()
            return
        self._failure_start[direction] = self._message_start[direction]
        response = check_response(item.status_code, item.headers)
        del self._failure_start[direction]
        reader = Connection(Role.CLIENT, self._request.session, observe_only=True)
        self._bodies[direction] = BodyFrames(reader, consumed)
        self._emit(direction, response, self._message_start[direction], consumed, out)

    def _on_data(self, direction: Direction, data: bytes, consumed: int) -> None:
        if direction is Direction.SERVER_TO_CLIENT and self._error_status is not None:
            self._error_body += data[: MAX_ERROR_BODY - len(self._error_body)]
            return
        body = self._bodies.get(direction)
        if body is not None and body.open:
            # h11 hands out a Data event's bytes as the last ones it consumed (after any chunk
            # header or chunk-ending CRLF), so they sit just before ``consumed``.
            body.add(consumed - len(data), data)

    def _on_end(self, direction: Direction, consumed: int, out: list[_Output]) -> None:
        start = self._message_start[direction]
        self._message_start[direction] = consumed
        if direction is Direction.CLIENT_TO_SERVER:
            self._s2c.send(h11.EndOfMessage())
        else:
            self._c2s.send(h11.EndOfMessage())
            if self._error_status is not None and self._request is not None:
                refused = error_response(self._error_status, bytes(self._error_body))
                if refused is not None:
                    self._emit(direction, refused, start, consumed, out)
                self._error_status = None
        body = self._bodies.get(direction)
        if body is not None and body.open:
            body.end()
            self._body_events(direction, out)
