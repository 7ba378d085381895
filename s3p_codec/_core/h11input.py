"""What an HTTP/1.1 end does with received bytes before h11 reads them (Durable Streams and S2S
over HTTP/1.1 share it; it knows HTTP framing only, no protocol above it).

Two properties h11 does not give on its own, kept here for every end:

- **Linear time for pipelined messages.** h11 keeps received bytes in one buffer and, per event,
  deletes the consumed prefix and copies the rest for ``trailing_data``: with 100,000 requests
  in one chunk that is quadratic (18 s). So received bytes wait in our own buffer and are given
  to h11 a slice at a time, only when it needs more (``FEED_STEP`` while it reads heads,
  ``BODY_FEED_STEP`` inside a body, which h11 consumes whole): what h11 holds, and so what each
  event costs, stays bounded.
- **The same verdict however the bytes were split.** h11 bounds an event (a message head, a
  chunk-size line) only while it is incomplete (``max_incomplete_event_size``): given whole, a
  head over the bound is complete and taken; given in pieces, it is refused once h11 holds one
  byte more than the bound. So a slice never fills h11's buffer past that one byte over: every
  event over the bound is seen incomplete at that size, whatever the chunking. Each end also
  counts the bytes it gives h11 and measures every head from where it began to where h11
  stopped consuming.

``H11Feed`` keeps both for one ``h11.Connection`` (the S2S Observer has one per direction);
``H11Input`` is the connections' side of it (Durable Streams' client and server, S2S over
HTTP/1.1).
"""

from __future__ import annotations

import enum
from collections import deque

import h11

from s3p_codec._core.errors import LocalProtocolError

__all__ = ["BODY_FEED_STEP", "FEED_STEP", "H11_DEFAULT_BOUND", "H11Feed", "H11Input"]

FEED_STEP = 4 * 1024
"""Bytes given to h11 at a time while it reads message heads."""

BODY_FEED_STEP = 64 * 1024
"""Bytes given to h11 at a time inside a message body (consumed whole by each Data event)."""

H11_DEFAULT_BOUND = 16 * 1024
"""h11's own default ``max_incomplete_event_size``, for ends that do not set one."""


class H11Feed:
    """Bytes received for one ``h11.Connection``, given to it only when it needs more: a slice
    of at most ``step`` bytes that never fills its buffer past one byte over ``bound`` (the
    ``max_incomplete_event_size`` it was made with). Both properties of the module docstring
    are kept here, for connections (``H11Input``) and Observers alike.
    """

    __slots__ = (
        "at", "bound", "eof", "eof_given", "given", "machine", "mark", "queued", "waiting",
    )  # fmt: skip

    def __init__(self, machine: h11.Connection, bound: int = H11_DEFAULT_BOUND) -> None:
        self.machine = machine
        self.bound = bound
        # Received bytes h11 has not had yet, as they came (a queue: bytes piling up while h11
        # waits cost no copying), the first one from ``at`` on.
        self.waiting: deque[bytes] = deque()
        self.queued = 0  # bytes in ``waiting`` not given to h11 yet (what an Observer bounds)
        self.at = 0
        self.given = 0  # stream offset up to which bytes went to h11
        self.mark = 0  # a stream offset h11 is known to have consumed up to
        self.eof = False  # the peer closed: h11 gets the close once it had every byte
        self.eof_given = False

    def receive(self, data: bytes | bytearray | memoryview) -> None:
        """Queue received bytes (copied only if they are not ``bytes``: the caller may reuse
        its buffer)."""
        self.waiting.append(data if type(data) is bytes else bytes(data))
        self.queued += len(data)

    def consumed(self) -> int:
        """Stream offset of the first byte h11 has not consumed (one copy of its buffer)."""
        self.mark = self.given - len(self.machine.trailing_data[0])
        return self.mark

    def give(self, step: int) -> bool:
        """h11 needs more: give it the next slice (at most ``step`` bytes) or the close; False
        if there is nothing to give. Raises what ``h11.Connection.receive_data`` raises."""
        waiting = self.waiting
        if waiting:
            if step > self.bound + 1 - (self.given - self.mark):
                # Maybe no room for a whole step: what h11 holds, exactly.
                step = min(step, self.bound + 1 - (self.given - self.consumed()))
            first, at = waiting[0], self.at
            piece = first[at : at + step] if at or len(first) > step else first
            at += len(piece)
            if at >= len(first):
                waiting.popleft()
                at = 0
            self.at = at
            self.given += len(piece)
            self.queued -= len(piece)
            self.machine.receive_data(piece)
            return True
        if self.eof and not self.eof_given:
            self.eof_given = True
            self.machine.receive_data(b"")
            return True
        return False

    def drop_waiting(self) -> int:
        """Forget the bytes h11 has not had (a direction given up); returns how many."""
        dropped = self.queued
        self.waiting.clear()
        self.at = self.queued = 0
        return dropped


class H11Input:
    """Received bytes into ``self._h11``, counted and paced; subclasses set ``_h11``, call
    ``_start_input()`` in their constructor and read events with ``_next_h11_event()``."""

    _h11: h11.Connection
    _eof_code: enum.Enum
    """The ``code`` of the error for bytes received after the end: each protocol sets a member
    of its own error code enum."""

    def _start_input(self, bound: int = H11_DEFAULT_BOUND) -> None:
        """``bound``: the ``max_incomplete_event_size`` ``self._h11`` was made with."""
        self._feed = H11Feed(self._h11, bound)
        self._head_start = 0  # stream offset where the head being read began

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes from the peer; ``b""`` means it closed its side.

        Raises ``LocalProtocolError`` (code ``_eof_code``) for bytes fed after the end of the
        stream.
        """
        feed = self._feed
        if feed.eof:
            if data:
                raise LocalProtocolError("data received after end of stream", code=self._eof_code)
            return
        if not data:
            feed.eof = True
            return
        feed.receive(data)

    @property
    def _eof(self) -> bool:
        """The peer closed its side (``receive_data(b"")``)."""
        return self._feed.eof

    def _feed_h11(self) -> bool:
        """Give h11 its next slice (or the end of the stream); False when there is nothing."""
        if self._h11.their_state is h11.ERROR:
            return False
        step = BODY_FEED_STEP if self._h11.their_state is h11.SEND_BODY else FEED_STEP
        try:
            return self._feed.give(step)
        except RuntimeError as exc:  # h11 refuses data once the connection is closed
            raise LocalProtocolError(str(exc), code=self._eof_code) from None

    def _next_h11_event(self) -> object:
        """h11's next event, feeding it received bytes a slice at a time while it needs more.

        Raises ``h11.RemoteProtocolError`` as h11 does; the caller turns it into ours.
        """
        while True:
            event = self._h11.next_event()
            if event is not h11.NEED_DATA or not self._feed_h11():
                return event

    def _pending_input(self) -> bool:
        """Whether bytes were received that h11 has not turned into events."""
        return bool(self._feed.waiting or self._h11.trailing_data[0])

    def _consumed(self) -> int:
        """Stream offset of the first byte h11 has not turned into an event yet."""
        return self._feed.consumed()

    def _head_size(self) -> int:
        """Bytes of the head h11 just read, from ``_head_start`` (which each end moves)."""
        return self._consumed() - self._head_start
