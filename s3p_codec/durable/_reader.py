"""The client read state machine of the spec: catch up, then go live, resume from offsets.

::

    START -> CATCH_UP --(Stream-Up-To-Date)--> LIVE --(Stream-Closed / streamClosed)--> DONE
               ^   |  more data                 | long-poll: wait -> emit -> request again
               +---+                            | sse: stream -> emit -> reconnect (~60 s)

Pure: it is fed the typed events a client ``Connection`` produced and says which ``Read`` to send
next; it never touches a socket or a clock. Rules it keeps:

- "Clients MUST use the Stream-Next-Offset value returned in responses for subsequent read
  requests";
- "Clients MUST include the received cursor value as the cursor query parameter in subsequent
  requests";
- SSE: "Client MUST reconnect using the last received streamNextOffset value from the control
  event" and "MUST NOT reconnect if the last control event included streamClosed: true";
- ``Stream-Up-To-Date`` alone is not EOF: only ``Stream-Closed``/``streamClosed`` is.
"""

from __future__ import annotations

import enum

from s3p_codec.durable._events import (
    Chunk,
    ErrorResponse,
    LiveMode,
    LongPollTimeout,
    NotModified,
    Read,
    SSEControl,
    SSEData,
    SSEEnd,
    SSEStart,
)
from s3p_codec.durable.offsets import BEGINNING

__all__ = ["ReadPhase", "StreamReader"]

ReaderInput = Chunk | NotModified | LongPollTimeout | SSEStart | SSEData | SSEControl | SSEEnd


class ReadPhase(enum.Enum):
    """Where a ``StreamReader`` is: catching up, reading live, done (stream closed and read) or
    failed.
    """
    CATCH_UP = "catch_up"
    LIVE = "live"
    DONE = "done"  # the stream is closed and everything was read (EOF)
    FAILED = "failed"  # the server answered with an error


class StreamReader:
    """Tracks offset, cursor and phase of one reader of one stream.

    ``live`` None reads until up to date, then stops (DONE without EOF: ``closed`` stays False).
    ``data`` collects what each event delivered, for the caller to take with ``take()``.
    """

    def __init__(self, path: str, *, offset: str = BEGINNING, live: LiveMode | None = None) -> None:
        self.path = path
        self.offset = offset
        self.cursor: str | None = None
        self.live = live
        self.phase = ReadPhase.CATCH_UP
        self.closed = False
        self.error: ErrorResponse | None = None
        self._chunks: list[bytes] = []

    def next_request(self) -> Read | None:
        """The read to send now, or None when the reader is finished."""
        if self.phase in (ReadPhase.DONE, ReadPhase.FAILED):
            return None
        live = None if self.phase is ReadPhase.CATCH_UP else self.live
        return Read(self.path, offset=self.offset, live=live, cursor=self.cursor if live else None)

    def take(self) -> bytes:
        """The payload bytes delivered since the last call."""
        data = b"".join(self._chunks)
        self._chunks.clear()
        return data

    def on_event(self, event: ReaderInput | ErrorResponse) -> None:
        """Advance on one event of the current read's response."""
        if isinstance(event, ErrorResponse):
            self.error = event
            self.phase = ReadPhase.FAILED
        elif isinstance(event, Chunk):
            if event.data:
                self._chunks.append(event.data)
            self._advance(event.next_offset, event.cursor, event.up_to_date, event.closed)
        elif isinstance(event, LongPollTimeout):
            self._advance(event.next_offset, event.cursor, True, event.closed)
        elif isinstance(event, SSEData):
            self._chunks.append(event.data)
        elif isinstance(event, SSEControl):
            self._advance(event.next_offset, event.cursor, event.up_to_date, event.closed)
        # NotModified, SSEStart, SSEEnd: nothing moves (an SSE end means reconnect).

    def _advance(self, offset: str, cursor: str | None, up_to_date: bool, closed: bool) -> None:
        self.offset = offset
        if cursor is not None:
            self.cursor = cursor
        if closed:
            self.closed = True
            self.phase = ReadPhase.DONE
        elif up_to_date and self.phase is ReadPhase.CATCH_UP:
            self.phase = ReadPhase.DONE if self.live is None else ReadPhase.LIVE
