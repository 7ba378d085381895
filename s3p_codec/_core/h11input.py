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
  byte more than the bound. So a slice never fills h11's buffer past that one byte over
  (``bound`` of ``_start_input``): every event over the bound is seen incomplete at that size,
  whatever the chunking. Each end also counts the bytes it gives h11 and measures every head
  from where it began to where h11 stopped consuming.
"""

from __future__ import annotations

import h11

from s3p_codec._core.errors import LocalProtocolError

__all__ = ["BODY_FEED_STEP", "FEED_STEP", "H11Input"]

FEED_STEP = 4 * 1024
"""Bytes given to h11 at a time while it reads message heads."""

BODY_FEED_STEP = 64 * 1024
"""Bytes given to h11 at a time inside a message body (consumed whole by each Data event)."""

_COMPACT_AT = 64 * 1024  # drop the fed prefix of our buffer once it is this long and half of it

H11_DEFAULT_BOUND = 16 * 1024
"""h11's own default ``max_incomplete_event_size``, for ends that do not set one."""


class H11Input:
    """Received bytes into ``self._h11``, counted and paced; subclasses set ``_h11``, call
    ``_start_input()`` in their constructor and read events with ``_next_h11_event()``."""

    _h11: h11.Connection
    _eof_code: str | int
    """The ``code`` of the error for bytes received after the end: each protocol sets a member
    of its own error code enum."""

    def _start_input(self, bound: int = H11_DEFAULT_BOUND) -> None:
        """``bound``: the ``max_incomplete_event_size`` ``self._h11`` was made with."""
        self._bound = bound
        self._mark = 0  # a stream offset h11 is known to have consumed up to
        self._eof = False
        self._eof_fed = False
        self._waiting = bytearray()  # received, not yet given to h11, from ``_waiting_at`` on
        self._waiting_at = 0
        self._fed = 0  # bytes given to h11
        self._head_start = 0  # stream offset where the head being read began

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes from the peer; ``b""`` means it closed its side.

        Raises ``LocalProtocolError`` (code ``_eof_code``) for bytes fed after the end of the
        stream.
        """
        if self._eof:
            if data:
                raise LocalProtocolError("data received after end of stream", code=self._eof_code)
            return
        if not data:
            self._eof = True
            return
        self._waiting += data

    def _unfed(self) -> int:
        """Bytes received and not yet given to h11."""
        return len(self._waiting) - self._waiting_at

    def _feed_h11(self) -> bool:
        """Give h11 its next slice (or the end of the stream); False when there is nothing."""
        if self._h11.their_state is h11.ERROR:
            return False
        if self._unfed():
            step = BODY_FEED_STEP if self._h11.their_state is h11.SEND_BODY else FEED_STEP
            if step > self._bound + 1 - (self._fed - self._mark):
                # Maybe no room for a whole step: what h11 holds, exactly (a copy of it).
                step = min(step, self._bound + 1 - (self._fed - self._consumed()))
            at = self._waiting_at
            piece = bytes(self._waiting[at : at + step])
            self._waiting_at = at + len(piece)
            if self._waiting_at >= _COMPACT_AT and 2 * self._waiting_at >= len(self._waiting):
                del self._waiting[: self._waiting_at]
                self._waiting_at = 0
            data = piece
        elif self._eof and not self._eof_fed:
            self._eof_fed = True
            data = b""
        else:
            return False
        try:
            self._h11.receive_data(data)
        except RuntimeError as exc:  # h11 refuses data once the connection is closed
            raise LocalProtocolError(str(exc), code=self._eof_code) from None
        self._fed += len(data)
        return True

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
        return bool(self._unfed() or self._h11.trailing_data[0])

    def _consumed(self) -> int:
        """Stream offset of the first byte h11 has not turned into an event yet."""
        self._mark = self._fed - len(self._h11.trailing_data[0])
        return self._mark

    def _head_size(self) -> int:
        """Bytes of the head h11 just read, from ``_head_start`` (which each end moves)."""
        return self._consumed() - self._head_start
