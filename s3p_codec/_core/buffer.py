"""The receive buffer every codec parses from.

Parsing must cost time linear in the bytes received, whatever the chunking: a peer that sends one
byte at a time must not make us rescan what we already looked at, and consuming an event must not
copy the unconsumed tail. So the buffer keeps a read offset into one ``bytearray`` and compacts
only when the consumed prefix is at least half of the storage (amortised O(1) per byte), and
``read_line`` remembers how far it has already searched for a terminator.

The buffer also enforces a bound on memory: ``feed`` itself accepts any amount (the caller handed
us those bytes), but a line may not grow past ``max_length`` before its terminator arrives, and
codecs check every declared length against their ``Limits`` before they wait for a payload.
``BufferOverflow`` is internal: codecs translate it into their own ``RemoteProtocolError``.
"""

from __future__ import annotations

__all__ = ["BufferOverflow", "ReceiveBuffer"]

_COMPACT_MIN = 64 * 1024
# Above this size a slice is copied once through a memoryview instead of twice (bytearray slice,
# then bytes); below it the plain slice is cheaper than setting up the view.
_ONE_COPY_MIN = 4096


class BufferOverflow(Exception):
    """A line grew past its bound before its terminator arrived (codecs translate this)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"line longer than {limit} bytes")
        self.limit = limit


class ReceiveBuffer:
    """Bytes received and not yet consumed, with O(1) amortised consumption.

    ``position`` counts every byte ever consumed, so Observers can report where in a stream an
    event started and ended.
    """

    __slots__ = ("_consumed_before", "_data", "_line_scan", "_start")

    def __init__(self) -> None:
        self._data = bytearray()
        self._start = 0
        # Absolute stream offset up to which a terminator is known to be absent.
        self._line_scan = 0
        self._consumed_before = 0  # bytes dropped from the front of _data by compaction

    def __len__(self) -> int:
        return len(self._data) - self._start

    def __bool__(self) -> bool:
        return len(self._data) > self._start

    def __repr__(self) -> str:
        return f"<ReceiveBuffer {len(self)} bytes at offset {self.position}>"

    @property
    def position(self) -> int:
        """Absolute offset, in the whole stream, of the first unconsumed byte."""
        return self._consumed_before + self._start

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Append received bytes."""
        self._data += data

    def peek(self, size: int) -> bytes | None:
        """The next ``size`` bytes without consuming them, or None if fewer are buffered."""
        end = self._start + size
        if end > len(self._data):
            return None
        return self._copy(self._start, end)

    def peek_byte(self, index: int = 0) -> int:
        """The unconsumed byte at ``index`` (-1 if not buffered yet)."""
        at = self._start + index
        return self._data[at] if at < len(self._data) else -1

    def window(self) -> tuple[bytearray, int, int]:
        """The storage and the bounds ``(data, start, end)`` of the unconsumed bytes.

        For codecs that cut many small length-prefixed frames in one loop: read headers in place
        with ``struct.unpack_from(data, offset)`` and slice each payload once (``data[a:b]``),
        then ``skip`` what was used. Read only, and valid only until the next ``feed``, ``take``,
        ``skip`` or read: those move ``start`` or compact the storage.
        """
        return self._data, self._start, len(self._data)

    def take(self, size: int) -> bytes | None:
        """Consume and return exactly ``size`` bytes, or None (consuming nothing) if short."""
        start = self._start
        end = start + size
        if end > len(self._data):
            return None
        chunk = self._copy(start, end)
        self._advance(end)
        return chunk

    def take_all(self) -> bytes:
        """Consume and return everything buffered."""
        chunk = self._copy(self._start, len(self._data))
        self._advance(len(self._data))
        return chunk

    def skip(self, size: int) -> int:
        """Consume up to ``size`` bytes without copying them; return how many were skipped."""
        size = min(size, len(self))
        self._advance(self._start + size)
        return size

    def find(self, needle: bytes, start: int = 0) -> int:
        """Index of ``needle`` relative to the unconsumed data, searching from ``start``; -1."""
        found = self._data.find(needle, self._start + start)
        return -1 if found < 0 else found - self._start

    def read_line(self, max_length: int, terminator: bytes = b"\r\n") -> bytes | None:
        """Consume one line and return it without its terminator, or None if incomplete.

        Bytes already searched are never searched again, so feeding a long line one byte at a
        time stays linear. Raises ``BufferOverflow`` once more than ``max_length`` bytes are
        buffered without a terminator (or the line found is longer than that).
        """
        data = self._data
        start = self._start
        # Resume the search just before the previous end, in case a terminator straddles it.
        scan_from = max(start, self._line_scan - self._consumed_before - len(terminator) + 1)
        end = data.find(terminator, scan_from)
        if end < 0:
            self._line_scan = self._consumed_before + len(data)
            pending = len(data) - start
            # Over the bound unless the only extra bytes could still begin the terminator.
            if pending > max_length and (
                pending >= max_length + len(terminator) or data[start + max_length] != terminator[0]
            ):
                raise BufferOverflow(max_length)
            return None
        if end - start > max_length:
            raise BufferOverflow(max_length)
        line = self._copy(start, end)
        self._advance(end + len(terminator))
        return line

    def _copy(self, start: int, end: int) -> bytes:
        if end - start < _ONE_COPY_MIN:
            return bytes(self._data[start:end])
        # The views are released before returning, so the bytearray stays resizable.
        with memoryview(self._data) as whole, whole[start:end] as part:
            return part.tobytes()

    def _advance(self, new_start: int) -> None:
        self._start = new_start
        data = self._data
        if new_start >= len(data):
            # Everything consumed: reset without copying anything.
            self._consumed_before += new_start
            data.clear()
            self._start = 0
        elif new_start >= _COMPACT_MIN and new_start * 2 >= len(data):
            self._consumed_before += new_start
            del data[:new_start]
            self._start = 0
