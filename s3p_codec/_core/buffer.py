"""The receive buffer every codec parses from.

Parsing must cost time linear in the bytes received, whatever the chunking: a peer that sends one
byte at a time must not make us rescan what we already looked at, and consuming an event must not
copy the unconsumed tail. So the buffer keeps a read offset into its storage and compacts only
when the consumed prefix is at least half of the storage (amortised O(1) per byte), and
``read_line`` remembers how far it has already searched for a terminator.

Two more rules save copies on real traffic, where most chunks hold whole frames and a few frames
are far bigger than a chunk:

- *Adopt the chunk.* When everything before it was consumed, a received ``bytes`` chunk becomes
  the storage itself (no copy); only when a frame spans chunks is the unconsumed tail copied,
  once, into a ``bytearray`` that then grows in place (one byte fed at a time costs O(1)
  amortised). A buffer class may set ``join_spans``: then a frame's unconsumed start no longer
  than the new chunk is joined with it into one ``bytes`` instead (at most twice the chunk
  copied), so that records are still sliced out of immutable ``bytes``, once; out of a
  ``bytearray`` a slice is copied twice. S3P sets it (its varied READ replies in 64 KiB chunks
  decode 10-15% slower without); for frame loops of 20-400 B it was measured 9% slower with
  1460-byte chunks, 4% faster with 64 KiB ones, so it is not the default.
- *Big payload aside.* ``take_frame`` reads a length-prefixed frame. When a payload of
  ``ASIDE_MIN`` bytes or more is incomplete, its bytes are collected aside (views of the chunks,
  small pieces coalesced) and joined once when the last one arrives: a payload of n bytes costs
  one full copy, not one per chunk.

The buffer also enforces a bound on memory: ``feed`` itself accepts any amount (the caller handed
us those bytes), but a line may not grow past ``max_length`` before its terminator arrives, and a
frame's declared length is checked against its limit before any payload is waited for.
``BufferOverflow`` and ``FrameTooLong`` are internal: codecs translate them into their own
``RemoteProtocolError``.

Codecs that cut frames in their own loops (S3P's text framing, Pravega's and RustLog's batches)
read the storage in place: ``data`` from index ``pos``, ``base`` being the stream offset of
``data[0]``. Such a codec may move ``pos`` forward within ``data`` and then call ``compact``; it
may also note in ``want`` the storage length it needs before parsing can progress, so that a
caller skips parsing while ``len(data) < want`` (one-byte feeds cost O(1) each). The buffer
clears ``want`` whenever it replaces or shifts its storage, so the note is never stale.
"""

from __future__ import annotations

import struct
from typing import Any, ClassVar

__all__ = ["ASIDE_MIN", "BufferOverflow", "FrameTooLong", "ReceiveBuffer"]

_COMPACT_MIN = 64 * 1024
# Above this size a slice is copied once through a memoryview instead of twice (bytearray slice,
# then bytes); below it the plain slice is cheaper than setting up the view.
_ONE_COPY_MIN = 4096
ASIDE_MIN = 64 * 1024  # an incomplete payload at least this big is collected aside
_PIECE_MIN = 16 * 1024  # smaller pieces of a payload aside are coalesced, bigger ones kept as is


class BufferOverflow(Exception):
    """A line grew past its bound before its terminator arrived (codecs translate this)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"line longer than {limit} bytes")
        self.limit = limit


class FrameTooLong(Exception):
    """A frame header declared a length outside ``0..limit`` (codecs translate this)."""

    def __init__(self, length: int, limit: int, fields: tuple[Any, ...]) -> None:
        super().__init__(f"frame length {length} outside 0..{limit}")
        self.length = length
        self.limit = limit
        self.fields = fields


class ReceiveBuffer:
    """Bytes received and not yet consumed, with O(1) amortised consumption.

    ``position`` counts every byte ever consumed, so Observers can report where in a stream an
    event started and ended. While a payload is collected aside, its frame counts as not
    consumed yet: ``position`` stays at the frame's first byte and ``len`` includes the frame.
    """

    __slots__ = (
        "_aside",
        "_aside_fields",
        "_aside_head",
        "_aside_left",
        "_aside_start",
        "base",
        "data",
        "line_scan",
        "pos",
        "want",
    )

    join_spans: ClassVar[bool] = False
    """Join a short unconsumed start with the next chunk into ``bytes`` (module docstring)."""

    def __init__(self) -> None:
        self.data: bytes | bytearray = b""  # the storage (see the module docstring)
        self.pos = 0  # index in ``data`` of the first unconsumed byte
        self.base = 0  # absolute stream offset of data[0]
        # Absolute stream offset up to which a line terminator is known to be absent.
        self.line_scan = 0
        self.want = 0  # a codec's note: nothing to parse while len(data) < want
        # A payload being collected aside (see take_frame): its pieces, the bytes still to
        # come, the frame's header fields and bytes, and the frame's absolute start.
        self._aside: list[bytes | bytearray | memoryview] | None = None
        self._aside_left = 0
        self._aside_fields: tuple[Any, ...] = ()
        self._aside_head = b""
        self._aside_start = 0

    def __getstate__(self) -> dict[str, Any]:
        # A snapshot keeps the unconsumed bytes only, and views as the bytes they show.
        names = (n for c in type(self).__mro__ for n in getattr(c, "__slots__", ()))
        state = {name: getattr(self, name) for name in names if hasattr(self, name)}
        data, pos = self.data, self.pos
        if pos and self._aside is None:
            state["data"] = type(data)(data[pos:])
            state["base"], state["pos"] = self.base + pos, 0
        if self._aside is not None:
            state["_aside"] = [bytes(p) if type(p) is memoryview else p for p in self._aside]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def __len__(self) -> int:
        if self._aside is None:
            return len(self.data) - self.pos
        return self.base + len(self.data) - self._aside_start

    def __bool__(self) -> bool:
        return self._aside is not None or len(self.data) > self.pos

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {len(self)} bytes at offset {self.position}>"

    @property
    def position(self) -> int:
        """Absolute offset, in the whole stream, of the first unconsumed byte."""
        if self._aside is not None:
            return self._aside_start
        return self.base + self.pos

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Append received bytes (a ``bytes`` chunk may be kept as is: it cannot change)."""
        if type(data) is not bytes:
            data = bytes(data)
        left = self._aside_left
        if left:
            # A payload is being collected aside: a small piece inside it (a peer trickling
            # bytes) goes onto the last coalesced piece, the cheapest case; the rest is there.
            size = len(data)
            last = self._aside[-1]  # type: ignore[index]
            if size < left and size < _PIECE_MIN and type(last) is bytearray:
                last += data
                self._aside_left = left - size
                self.base += size
            elif size:
                self._feed_aside(data)
            return
        stored = self.data
        tail = len(stored) - self.pos
        if type(stored) is bytearray and (tail > len(data) or (tail > 0 and not self.join_spans)):
            stored += data  # a frame spanning chunks grows in place (the common trickle)
            return
        if not data:
            return
        self.want = 0
        if tail <= 0:
            # Everything consumed: adopt the chunk itself.
            self.base += len(stored)
            self.data = data
            self.pos = 0
            return
        start = self.pos
        self.base += start
        self.pos = 0
        if tail <= len(data) and self.join_spans:
            # A frame spans chunks and its start is no longer than the chunk: one ``bytes``.
            with memoryview(stored) as view:
                self.data = b"".join((view[start:], data))
        else:
            # A frame spans chunks: from now on grow a bytearray (the unconsumed tail only).
            grown = bytearray(memoryview(stored)[start:]) if start else bytearray(stored)
            grown += data
            self.data = grown

    def _feed_aside(self, data: bytes) -> None:
        aside = self._aside
        assert aside is not None
        left = self._aside_left
        size = len(data)
        taken = min(size, left)
        if taken >= _PIECE_MIN:
            aside.append(data if taken == size else memoryview(data)[:taken])
        else:
            tail = aside[-1]
            if type(tail) is bytearray:
                tail += data if taken == size else data[:taken]
            else:
                aside.append(bytearray(data if taken == size else data[:taken]))
        self._aside_left = left - taken
        if taken < size:
            # The payload is complete; the rest of the chunk is the storage, its payload part
            # already consumed (no copy: ``data`` was empty while the payload went aside).
            self.base += len(self.data)
            self.data = data
            self.pos = taken
            self.want = 0
        else:
            self.base += taken

    def peek(self, size: int) -> bytes | None:
        """The next ``size`` bytes without consuming them, or None if fewer are buffered."""
        if self._aside is not None:
            self._restore()
        end = self.pos + size
        if end > len(self.data):
            return None
        return self._copy(self.pos, end)

    def peek_byte(self, index: int = 0) -> int:
        """The unconsumed byte at ``index`` (-1 if not buffered yet)."""
        if self._aside is not None:
            self._restore()
        at = self.pos + index
        return self.data[at] if at < len(self.data) else -1

    def window(self) -> tuple[bytes | bytearray, int, int]:
        """The storage and the bounds ``(data, start, end)`` of the unconsumed bytes.

        For codecs that cut many small length-prefixed frames in one loop: read headers in place
        with ``struct.unpack_from(data, offset)`` and slice each payload once (``data[a:b]``),
        then ``skip`` what was used. Read only, and valid only until the next ``feed``, ``take``,
        ``skip`` or read: those move ``start`` or compact the storage.
        """
        if self._aside is not None:
            self._restore()
        return self.data, self.pos, len(self.data)

    def take(self, size: int) -> bytes | None:
        """Consume and return exactly ``size`` bytes, or None (consuming nothing) if short."""
        if self._aside is not None:
            self._restore()
        start = self.pos
        end = start + size
        if end > len(self.data):
            return None
        chunk = self._copy(start, end)
        self._advance(end)
        return chunk

    def take_frame(
        self, header: struct.Struct, limit: int, length_index: int = -1
    ) -> tuple[tuple[Any, ...], bytes] | None:
        """Consume one length-prefixed frame: ``(header fields, payload)``, or None if short.

        ``header`` is the frame header's layout and ``header_fields[length_index]`` the payload
        length, which must lie in ``0..limit``: ``FrameTooLong`` is raised as soon as the header
        is here (nothing consumed), before any payload is waited for. An incomplete payload of
        ``ASIDE_MIN`` bytes or more is collected aside and joined once (see the module
        docstring); the frame still counts as unconsumed until it is returned.
        """
        if self._aside is not None:
            if self._aside_left:
                return None
            return self.take_aside()
        data = self.data
        start = self.pos
        begin = start + header.size
        if begin > len(data):
            return None
        fields = header.unpack_from(data, start)
        length = fields[length_index]
        if not 0 <= length <= limit:
            raise FrameTooLong(length, limit, fields)
        end = begin + length
        if end <= len(data):
            payload = self._copy(begin, end)
            self._advance(end)
            return fields, payload
        if length >= ASIDE_MIN:
            self.put_aside(begin, end, fields)
        return None

    def put_aside(self, begin: int, end: int, fields: tuple[Any, ...] = ()) -> None:
        """Collect the payload ``data[begin:end]`` aside as it arrives (``end > len(data)``).

        The frame starts at ``pos`` (its header, ``data[pos:begin]``, is kept to put back);
        ``fields`` are returned with the payload by ``take_frame`` or ``take_aside``. For codecs
        whose headers are not a ``struct`` (S3P's ``$<length>``): such a codec's own reader
        checks ``_aside`` (not None: collecting) and ``_aside_left`` (bytes still to come), and
        takes the payload with ``take_aside`` once it is complete.
        """
        data = self.data
        start = self.pos
        self._aside_start = self.base + start
        self._aside_head = self._copy(start, begin)
        self._aside_fields = fields
        self._aside_left = end - len(data)
        if type(data) is bytes:
            self._aside = [memoryview(data)[begin:]]
        else:
            self._aside = [bytearray(memoryview(data)[begin:])]
        self.base += len(data)
        self.data = b""
        self.pos = 0
        self.want = 0

    def take_aside(self) -> tuple[tuple[Any, ...], bytes]:
        """The payload collected aside (all of it arrived) and its fields, consumed.

        What follows the payload is then at ``data[pos:]``: a codec checks its trailer there.
        """
        aside = self._aside
        assert aside is not None
        assert not self._aside_left
        payload = b"".join(aside)
        self._aside = None
        self._aside_head = b""
        fields = self._aside_fields
        self._aside_fields = ()
        return fields, payload

    def _restore(self) -> None:
        """Put a payload collected aside back in front of the storage (a read other than
        ``take_frame`` came: rare, e.g. an Observer dropping bytes after a gap)."""
        aside = self._aside
        if aside is None:
            return
        merged = bytearray(self._aside_head)
        for piece in aside:
            merged += piece
        merged += memoryview(self.data)[self.pos :]
        self._aside = None
        self._aside_head = b""
        self._aside_fields = ()
        self._aside_left = 0
        self.base = self._aside_start
        self.data = merged
        self.pos = 0
        self.want = 0

    def take_all(self) -> bytes:
        """Consume and return everything buffered."""
        if self._aside is not None:
            self._restore()
        chunk = self._copy(self.pos, len(self.data))
        self._advance(len(self.data))
        return chunk

    def skip(self, size: int) -> int:
        """Consume up to ``size`` bytes without copying them; return how many were skipped."""
        if self._aside is not None:
            self._restore()
        size = min(size, len(self.data) - self.pos)
        self._advance(self.pos + size)
        self.want = 0
        return size

    def compact(self) -> None:
        """After a codec moved ``pos`` itself: drop the consumed bytes when that is cheap (all of
        them) or amortised (half or more), and clear ``want`` (an event was taken)."""
        self.want = 0
        self._advance(self.pos)

    def find(self, needle: bytes, start: int = 0) -> int:
        """Index of ``needle`` relative to the unconsumed data, searching from ``start``; -1."""
        if self._aside is not None:
            self._restore()
        found = self.data.find(needle, self.pos + start)
        return -1 if found < 0 else found - self.pos

    def read_line(self, max_length: int, terminator: bytes = b"\r\n") -> bytes | None:
        """Consume one line and return it without its terminator, or None if incomplete.

        Bytes already searched are never searched again, so feeding a long line one byte at a
        time stays linear. Raises ``BufferOverflow`` once more than ``max_length`` bytes are
        buffered without a terminator (or the line found is longer than that).
        """
        if self._aside is not None:
            self._restore()
        data = self.data
        start = self.pos
        # Resume the search just before the previous end, in case a terminator straddles it.
        scan_from = max(start, self.line_scan - self.base - len(terminator) + 1)
        end = data.find(terminator, scan_from)
        if end < 0:
            self.line_scan = self.base + len(data)
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
            return bytes(self.data[start:end])
        # The views are released before returning, so a bytearray stays resizable.
        with memoryview(self.data) as whole, whole[start:end] as part:
            return part.tobytes()

    def _advance(self, new_start: int) -> None:
        data = self.data
        if new_start >= len(data):
            # Everything consumed: reset without copying anything.
            self.base += len(data)
            self.data = b""
            self.pos = 0
        elif new_start >= _COMPACT_MIN and new_start * 2 >= len(data) and type(data) is bytearray:
            self.base += new_start
            del data[:new_start]
            self.pos = 0
            self.want = 0
        else:
            self.pos = new_start
