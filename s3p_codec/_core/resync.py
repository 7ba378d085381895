"""Finding frame boundaries again in a length-prefixed stream, for Observers of captures.

A capture loses bytes (``gap``) and carries garbage; an Observer of a length-prefixed protocol
(RustLog, Pravega) then is in one of three states, kept here once:

- *in step*: the next frame header starts the buffer;
- *dropping*: a gap fell inside a frame whose header was read, so the frame's end is known and
  the rest of it is dropped (``resynchronized=True``);
- *scanning*: the boundary is lost (a gap we cannot place, or a header no frame can have); bytes
  are dropped until a header the protocol finds plausible, whose whole frame checks out, starts
  the buffer. The error that lost the boundary is reported when the scan succeeds, with the
  number of bytes passed over.

Which headers are plausible and how a candidate frame is checked are the protocol's business:
``scan`` takes them as functions.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from s3p_codec._core.buffer import ReceiveBuffer
from s3p_codec._core.errors import RemoteProtocolError
from s3p_codec._core.observe import ObservedError
from s3p_codec._core.types import Direction

__all__ = ["FrameSync"]

PayloadLength = Callable[[tuple[Any, ...]], int | None]
FrameCheck = Callable[[bytes | bytearray, int, int], bool]


class FrameSync:
    """The boundary-keeping state of one direction of a length-prefixed stream."""

    __slots__ = ("_await", "error", "error_start", "scanning", "skip")

    def __init__(self) -> None:
        self.skip = 0  # bytes of a frame damaged by a gap still to drop
        self.scanning = False
        self.error: RemoteProtocolError | None = None  # why the boundary was lost
        self.error_start = 0  # stream offset where the lost boundary was
        self._await = 0  # while scanning: buffered bytes needed to check the candidate

    def __repr__(self) -> str:
        state = "scanning" if self.scanning else f"dropping {self.skip}" if self.skip else "in step"
        return f"<FrameSync {state}>"

    def gap(self, size: int, missing: int | None) -> bool:
        """``size`` bytes were lost where ``missing`` bytes of the current frame were still due
        (None if no frame header was read). True if the boundary is still known: the rest of
        the frame is then dropped. False if it is lost (the caller clears the buffer and calls
        ``lose``).
        """
        if self.scanning:
            return False
        if missing is not None and size <= missing:
            self.skip = missing - size
            return True
        if self.skip and size <= self.skip:
            self.skip -= size
            return True
        self.skip = 0
        return False

    def drop(self, buffer: ReceiveBuffer) -> bool:
        """Drop what is left of a frame damaged by a gap; True once nothing is left to drop."""
        if self.skip:
            self.skip -= buffer.skip(self.skip)
        return not self.skip

    def lose(self, error: RemoteProtocolError | None, start: int) -> None:
        """The boundary is lost at stream offset ``start`` because of ``error``: scan. A loss
        while already scanning changes nothing (the first cause is the one reported)."""
        if not self.scanning:
            self.scanning = True
            self.error = error
            self.error_start = start
            self._await = 0

    def scan(
        self,
        buffer: ReceiveBuffer,
        header: struct.Struct,
        payload_length: PayloadLength,
        check: FrameCheck,
        *,
        anchor: bytes | None = None,
        lookahead: int = 0,
        final: bool = False,
    ) -> bool:
        """Drop bytes until a plausible frame starts ``buffer``; True when one does.

        ``payload_length(fields)`` gives the payload length of a header that could start a
        frame, or None. ``check(data, start, end)`` confirms the whole candidate
        ``data[start:end]`` (header included). ``anchor``, if given, is a byte string every
        payload starts with: only offsets a header before an anchor are tried. A candidate whose
        frame is not all here yet is waited for, so no byte is scanned twice per chunk.

        ``lookahead``: bytes after the candidate that ``check`` also reads (the next frame's
        header). They are waited for too, so the verdict is the same however the stream is
        chunked; ``final`` (the stream ended) checks with what is there.
        """
        if len(buffer) < self._await and not final:
            return False
        self._await = 0
        data, start, end = buffer.window()
        size = header.size
        last = end - size  # the last offset a whole header fits at
        at = start
        while at <= last:
            if anchor is not None:
                found = data.find(anchor, at + size, end)
                if found < 0:
                    break
                at = found - size
            length = payload_length(header.unpack_from(data, at))
            if length is not None:
                stop = at + size + length
                if stop > end or (stop + lookahead > end and not final):
                    if final:  # the stream ended inside this candidate: try the next offset
                        at += 1
                        continue
                    buffer.skip(at - start)
                    self._await = stop + lookahead - at
                    return False
                if check(data, at, stop):
                    buffer.skip(at - start)
                    self.scanning = False
                    return True
            at += 1
        # No header can start before ``at`` (nor, with an anchor, before the last header's
        # room): keep only the bytes a later candidate may begin with.
        keep_from = max(at, end - size) if anchor is not None else at
        buffer.skip(max(0, min(keep_from, end) - start))
        return False

    def resynchronized(self, direction: Direction, position: int) -> ObservedError | None:
        """After a successful ``scan``: the error that lost the boundary, with the bytes passed
        over up to ``position`` (None if the loss had no error to report, e.g. a gap)."""
        error, self.error = self.error, None
        if error is None:
            return None
        return ObservedError(
            direction,
            error,
            self.error_start,
            skipped=position - self.error_start,
            resynchronized=True,
        )

    def abandoned(self, direction: Direction, position: int) -> ObservedError | None:
        """At the end of the stream while scanning: the rest, up to ``position``, was lost."""
        error, self.error = self.error, None
        if not self.scanning or error is None:
            return None
        return ObservedError(
            direction, error, self.error_start, skipped=position - self.error_start
        )
