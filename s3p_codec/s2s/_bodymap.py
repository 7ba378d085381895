"""Where the bytes of one HTTP body sit in the direction's TCP byte stream, and its S2S frames.

HTTP framing (chunk headers over HTTP/1.1, frame headers and other streams over HTTP/2) puts
bytes between the TCP stream and the S2S frames of a body; both S2S Observers (HTTP/1.1 in
``_observer``, HTTP/2 in ``_observer_h2``) hand each piece of body to ``BodyFrames``, which feeds
an ``s2s.Connection`` and maps a frame's body positions (``Connection.position``) back to stream
offsets through a ``BodyMap``. What else both Observers share lives here too: the events they
yield and the reading of a refused session's answer.
"""

from __future__ import annotations

from collections import deque

from s3p_codec._core import NEED_DATA, ObserverOutput
from s3p_codec.s2s._connection import Connection
from s3p_codec.s2s._errors import SessionTerminated
from s3p_codec.s2s._events import Event
from s3p_codec.s2s._state import ConnectionState
from s3p_codec.s2s.http import ErrorResponse, SessionRequest, SessionResponse, check_response

__all__ = ["MAX_ERROR_BODY", "BodyFrames", "BodyMap", "ObserverEvent", "Output", "error_response"]

#: The events an S2S ``Observer`` yields: HTTP heads, error responses and session frames.
ObserverEvent = SessionRequest | SessionResponse | ErrorResponse | Event
Output = ObserverOutput[ObserverEvent]
"""What an S2S Observer returns: one decoded item with its direction and byte offsets."""

MAX_ERROR_BODY = 64 * 1024
"""Bytes of a refused session's JSON body kept (the rest is cut off)."""


class BodyMap:
    """Where the bytes of one HTTP body sit in the direction's stream.

    One entry per piece of body handed over (an h11 ``Data`` event, an HTTP/2 DATA frame),
    ``(body position, stream offset, size)``; entries behind the last frame reported are
    dropped, so lookups cost amortised constant time.
    """

    __slots__ = ("_origin", "_pieces", "_size")

    def __init__(self, origin: int) -> None:
        self._origin = origin  # where the body begins: the end of its message head
        self._pieces: deque[tuple[int, int, int]] = deque()
        self._size = 0

    def add(self, wire_start: int, size: int) -> None:
        """The next ``size`` bytes of the body sit at stream offset ``wire_start``."""
        self._pieces.append((self._size, wire_start, size))
        self._size += size

    def start(self, position: int) -> int:
        """Stream offset of the body byte at ``position`` (dropping pieces before it)."""
        pieces = self._pieces
        while len(pieces) > 1 and pieces[0][0] + pieces[0][2] <= position:
            pieces.popleft()
        if not pieces:
            return self._origin
        body, wire, _ = pieces[0]
        return wire + position - body

    def end(self, position: int) -> int:
        """Stream offset just after the body byte before ``position``."""
        for body, wire, size in self._pieces:
            if position <= body + size:
                return wire + position - body
        return self._origin


class BodyFrames:
    """The S2S frames of one HTTP body in one direction, each located in the stream.

    Both S2S Observers hand each piece of body to ``add`` and take frames from ``next_frame``.
    A ``ReconnectAdvised`` is a flag of the frame before it (the connection's position does not
    move) and reports that frame's range; a terminal frame is reported as its ``Terminal``
    event, after which ``terminated`` is True and the body is over.
    """

    __slots__ = ("_before", "conn", "last", "places", "terminated")

    def __init__(self, conn: Connection, origin: int) -> None:
        self.conn = conn
        self.places = BodyMap(origin)
        self.last = (origin, origin)  # range of the last frame reported
        self.terminated = False
        self._before = 0  # the body position the last ``next_frame`` started at

    @property
    def open(self) -> bool:
        """True while the body's connection still takes bytes."""
        return self.conn.state is ConnectionState.OPEN

    def add(self, wire_start: int, data: bytes) -> None:
        """The next piece of the body, whose bytes sit at stream offset ``wire_start``."""
        self.places.add(wire_start, len(data))
        self.conn.receive_data(data)

    def end(self) -> None:
        """The body is over (a partial S2S frame left in it is an error ``next_frame`` raises)."""
        self.conn.receive_data(b"")

    def next_frame(self) -> tuple[Event, int, int] | None:
        """The next event with its stream range, or None until more of the body arrives.

        Raises ``RemoteProtocolError`` at a broken frame; ``error_start`` says where it begins.
        """
        conn = self.conn
        before = self._before = conn.position
        try:
            event = conn.next_event()
        except SessionTerminated as ended:
            self.terminated = True
            event = ended.terminal
        if event is NEED_DATA:
            return None
        after = conn.position
        if after != before:
            self.last = (self.places.start(before), self.places.end(after))
        # else a ``ReconnectAdvised``: a flag of the frame just reported
        return (event, *self.last)

    def error_start(self) -> int:
        """Stream offset of the frame the last ``next_frame`` found broken."""
        return self.places.start(self._before)


def error_response(status: int, body: bytes) -> ErrorResponse | None:
    """A refused session (a status other than 200 and its JSON body), read as a client reads it."""
    try:
        check_response(status, [], body)
    except SessionTerminated as refused:
        terminal = refused.terminal
        return ErrorResponse(terminal.status, terminal.code, terminal.message)
    return None
