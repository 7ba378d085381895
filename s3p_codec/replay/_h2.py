"""An S2S client over HTTP/2 with prior knowledge, shaped like the other client codecs.

The official S2 SDKs speak HTTP/2 to an ``http://`` endpoint, so a capture of them is replayed
over HTTP/2 too: a server may treat the two versions differently (flow control, resets, GOAWAY).
``h2`` (an endpoint: flow control, SETTINGS, PING answers) carries the bytes and ``s2s`` the
frames inside the bodies, one ``s2s.Connection`` per session stream. The events are the ones
the capture's ``s2s.Observer`` reports, so that the recorded and the live answer compare:
``SessionResponse`` or ``ErrorResponse`` (a non-200 and its JSON body), the session's events,
and a terminal frame as a ``Terminal`` event rather than a raised ``SessionTerminated``.

Sans-IO like the codecs: ``send`` returns bytes, ``receive_data`` takes them, and
``data_to_send`` gives what h2 owes the peer after receiving (SETTINGS and PING
acknowledgements, window updates, data a window update released).
"""

from __future__ import annotations

import contextlib
from collections import deque

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h11

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, s2s
from s3p_codec._core import NeedData

__all__ = ["Http2Client"]

_MAX_ERROR_BODY = 64 * 1024
_HOP_BY_HOP = {b"host", b"transfer-encoding", b"connection"}  # not allowed in HTTP/2 (8.2.2)


def _request_head(request: s2s.SessionRequest, authority: bytes) -> list[tuple[bytes, bytes]]:
    """The request's HTTP/2 header block: the head ``s2s.Http1Connection`` builds (the one
    place that knows S2S request heads), read back with h11, as pseudo-headers and fields."""
    wire = s2s.Http1Connection(Role.CLIENT, host=authority.decode()).send(request)
    reader = h11.Connection(h11.SERVER)
    reader.receive_data(wire)
    head = reader.next_event()
    assert isinstance(head, h11.Request)
    fields = [(bytes(k), bytes(v)) for k, v in head.headers if bytes(k) not in _HOP_BY_HOP]
    return [
        (b":method", bytes(head.method)), (b":scheme", b"http"), (b":authority", authority),
        (b":path", bytes(head.target)), *fields,
    ]  # fmt: skip


def _response_head(
    request: s2s.SessionRequest, status: int, fields: list[tuple[bytes, bytes]], body: bytes
) -> object:
    """``SessionResponse`` or ``ErrorResponse`` of a response head (and a refusal's body), as
    ``s2s.Http1Connection`` judges it (the codec's rules, not a copy of them)."""
    judge = s2s.Http1Connection(Role.CLIENT, host="replay")
    judge.send(request)
    lines = [f"HTTP/1.1 {status} \r\n".encode()]
    lines += [k + b": " + v + b"\r\n" for k, v in fields if k not in _HOP_BY_HOP
              and k != b"content-length"]  # fmt: skip
    lines.append(b"content-length: %d\r\n\r\n" % (len(body) if status != 200 else 0))
    judge.receive_data(b"".join(lines) + (body if status != 200 else b""))
    try:
        event = judge.next_event()
    except s2s.SessionTerminated as refused:
        terminal = refused.terminal
        return s2s.ErrorResponse(terminal.status, terminal.code, terminal.message)
    if event is NEED_DATA:
        raise RemoteProtocolError(f"an HTTP {status} without a body", code=s2s.ErrorCode.BAD_FRAME)
    return event


class Http2Client:
    """S2S sessions on one HTTP/2 connection, client side (see the module docstring).

    A ``SessionRequest`` opens a stream; ``AppendInput``, ``Terminal`` and ``EndOfBody`` go on
    the stream the last request opened. ``ended`` says why the target ended the connection
    (GOAWAY) once it did.
    """

    def __init__(self, host: str) -> None:
        config = h2.config.H2Configuration(client_side=True, header_encoding=None)
        self._h2 = h2.connection.H2Connection(config=config)
        self._h2.initiate_connection()
        self._authority = host.encode("ascii")
        self._sessions: dict[int, s2s.Connection] = {}
        self._requests: dict[int, s2s.SessionRequest] = {}
        self._errors: dict[int, tuple[int, bytearray]] = {}  # stream -> non-200 status, body
        self._heads: dict[int, tuple[int, list[tuple[bytes, bytes]]]] = {}  # status, fields
        self._pending: dict[int, bytearray] = {}  # stream -> body bytes no window took yet
        self._ending: set[int] = set()  # streams to end once their pending bytes are out
        self._current: int | None = None
        self._events: deque[object] = deque()
        self._failure: RemoteProtocolError | None = None
        self.ended: str | None = None

    @property
    def finished(self) -> bool:
        """True once the target ended the connection."""
        return self.ended is not None

    # -- sending ----------------------------------------------------------------------------------

    def send(self, event: object) -> bytes:
        """The bytes that carry ``event`` (the connection preface comes with the first)."""
        try:
            if isinstance(event, s2s.SessionRequest):
                self._open(event)
            else:
                self._body(event)
        except h2.exceptions.ProtocolError as exc:
            raise LocalProtocolError(f"HTTP/2: {exc}", code=s2s.ErrorCode.INVALID) from exc
        return self.data_to_send()

    def _open(self, request: s2s.SessionRequest) -> None:
        stream = self._h2.get_next_available_stream_id()
        self._h2.send_headers(
            stream,
            _request_head(request, self._authority),
            end_stream=request.session is s2s.Session.READ,
        )
        self._requests[stream] = request
        self._sessions[stream] = s2s.Connection(
            Role.CLIENT, request.session, compression=request.accept
        )
        self._current = stream

    def _body(self, event: object) -> None:
        stream = self._current
        if stream is None:
            raise LocalProtocolError("send the SessionRequest first", code=s2s.ErrorCode.INVALID)
        if isinstance(event, s2s.EndOfBody):
            self._ending.add(stream)
        elif isinstance(event, s2s.AppendInput | s2s.Terminal):
            frame = self._sessions[stream].send(event)
            self._pending.setdefault(stream, bytearray()).extend(frame)
            if isinstance(event, s2s.Terminal):
                self._ending.add(stream)
        else:
            raise LocalProtocolError(
                f"a client cannot send {type(event).__name__}", code=s2s.ErrorCode.INVALID
            )
        self._flush()

    def _flush(self) -> None:
        """Send what the flow-control windows allow; the rest waits for WINDOW_UPDATE."""
        for stream in list(self._pending):
            pending = self._pending[stream]
            while pending:
                room = min(
                    self._h2.local_flow_control_window(stream), self._h2.max_outbound_frame_size
                )
                if room <= 0:
                    break
                self._h2.send_data(stream, bytes(pending[:room]))
                del pending[:room]
            if not pending:
                del self._pending[stream]
        for stream in [s for s in self._ending if s not in self._pending]:
            self._ending.discard(stream)
            self._h2.end_stream(stream)

    def data_to_send(self) -> bytes:
        """Bytes h2 owes the target now."""
        return bytes(self._h2.data_to_send())

    # -- receiving --------------------------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Take the target's bytes (``b""``: it closed; the caller knows that already)."""
        if not data or self._failure is not None:
            return
        try:
            happenings = self._h2.receive_data(data)
        except h2.exceptions.ProtocolError as exc:
            self._failure = RemoteProtocolError(f"HTTP/2: {exc}", code=s2s.ErrorCode.BAD_FRAME)
            return
        for happening in happenings:
            self._handle(happening)
        # A stream gone meanwhile takes no more data: what the target answered is what counts.
        with contextlib.suppress(h2.exceptions.ProtocolError):
            self._flush()

    def _handle(self, happening: h2.events.Event) -> None:
        if isinstance(happening, h2.events.ResponseReceived):
            self._response(happening.stream_id, happening.headers)
        elif isinstance(happening, h2.events.DataReceived):
            self._h2.acknowledge_received_data(
                happening.flow_controlled_length, happening.stream_id
            )
            self._data(happening.stream_id, bytes(happening.data or b""))
        elif isinstance(happening, h2.events.StreamEnded):
            self._stream_end(happening.stream_id)
        elif isinstance(happening, h2.events.StreamReset):
            self._pending.pop(happening.stream_id, None)
            self._ending.discard(happening.stream_id)
            code = getattr(happening.error_code, "name", happening.error_code)
            self.ended = self.ended or f"the target reset the stream ({code})"
        elif isinstance(happening, h2.events.ConnectionTerminated):
            code = getattr(happening.error_code, "name", happening.error_code)
            self.ended = f"the target ended the connection (GOAWAY {code})"

    def _response(self, stream: int, headers: list[tuple[bytes, bytes]] | None) -> None:
        fields = [(bytes(k), bytes(v)) for k, v in headers or []]
        status = next((int(v) for k, v in fields if k == b":status"), 0)
        plain = [(k, v) for k, v in fields if not k.startswith(b":")]
        self._heads[stream] = (status, plain)
        if status != 200:
            self._errors[stream] = (status, bytearray())
            return
        try:
            self._events.append(_response_head(self._requests[stream], status, plain, b""))
        except RemoteProtocolError as exc:
            self._failure = exc

    def _data(self, stream: int, data: bytes) -> None:
        refused = self._errors.get(stream)
        if refused is not None:
            refused[1].extend(data[: _MAX_ERROR_BODY - len(refused[1])])
            return
        session = self._sessions.get(stream)
        if session is not None:
            session.receive_data(data)
            self._drain(session)

    def _stream_end(self, stream: int) -> None:
        refused = self._errors.pop(stream, None)
        if refused is not None:
            status, body = refused
            fields = self._heads[stream][1]
            try:
                self._events.append(
                    _response_head(self._requests[stream], status, fields, bytes(body))
                )
            except RemoteProtocolError as exc:
                self._failure = exc
            return
        session = self._sessions.get(stream)
        if session is not None and session.state is s2s.ConnectionState.OPEN:
            session.receive_data(b"")
            self._drain(session)

    def _drain(self, session: s2s.Connection) -> None:
        """Queue the session's events in arrival order; a terminal frame is an event here."""
        while self._failure is None:
            try:
                event = session.next_event()
            except s2s.SessionTerminated as exc:
                self._events.append(exc.terminal)
                return
            except RemoteProtocolError as exc:
                self._failure = exc
                return
            if event is NEED_DATA:
                return
            self._events.append(event)

    def next_event(self) -> object | NeedData:
        """The next answer event, or ``NEED_DATA``; a broken answer raises once the events
        before it are out."""
        if self._events:
            return self._events.popleft()
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
        return NEED_DATA
