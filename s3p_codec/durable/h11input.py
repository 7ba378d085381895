"""What both ends of a Durable Streams connection do with received bytes before h11 reads them.

h11 bounds a message head only while it is incomplete (``max_incomplete_event_size``); a head
that arrives whole in one chunk is never measured. So each end counts the bytes it gives h11
and measures every head from where it began to where h11 stopped consuming: the outcome never
depends on how the bytes were split.
"""

from __future__ import annotations

import h11

from s3p_codec._core import LocalProtocolError

__all__ = ["H11Input"]


class H11Input:
    """Received bytes into ``self._h11``, counted; subclasses set ``_h11`` and call
    ``_start_input()`` in their constructor."""

    _h11: h11.Connection

    def _start_input(self) -> None:
        self._eof = False
        self._fed = 0  # bytes given to h11
        self._head_start = 0  # stream offset where the head being read began

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes from the peer; ``b""`` means it closed its side.

        Raises ``LocalProtocolError`` (code ``eof``) for bytes fed after the end of the stream.
        """
        if self._eof:
            if data:
                raise LocalProtocolError("data received after end of stream", code="eof")
            return
        if not data:
            self._eof = True
        if self._h11.their_state is h11.ERROR:
            return
        try:
            self._h11.receive_data(data)
            self._fed += len(data)
        except RuntimeError as exc:  # h11 refuses data once the connection is closed
            raise LocalProtocolError(str(exc), code="eof") from None

    def _consumed(self) -> int:
        """Stream offset of the first byte h11 has not turned into an event yet."""
        return self._fed - len(self._h11.trailing_data[0])

    def _head_size(self) -> int:
        """Bytes of the head h11 just read, from ``_head_start`` (which each end moves)."""
        return self._consumed() - self._head_start
