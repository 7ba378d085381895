"""Where the bytes of one HTTP body sit in the direction's TCP byte stream.

HTTP framing (chunk headers over HTTP/1.1, frame headers and other streams over HTTP/2) puts
bytes between the TCP stream and the S2S frames of a body; both S2S Observers record each piece
of body they hand to an ``s2s.Connection`` here and map a frame's body positions
(``Connection.position``) back to stream offsets.
"""

from __future__ import annotations

from collections import deque

__all__ = ["BodyMap"]


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
