"""``EventSpans``: where each event of a client connection starts and ends in the response bytes.

A passive reader (a capture's ``Observer``) reports every response event with its exact range in
the server's byte stream, the same whatever the chunking of the bytes fed. Pass an
``EventSpans`` to ``Connection(Role.CLIENT, spans=...)``; after each event ``next_event`` returns,
``pop()`` gives its ``(start, end)``, and after ``next_event`` raises, ``error_start(exc)``
gives where the unit the error breaks begins. A connection built without one measures nothing
and runs exactly as fast as before.

h11 reports no positions, so they are measured: the first byte h11 has not consumed sits at
``bytes fed - len(trailing_data[0])``, read once per h11 event. A buffered response spans its
whole message, head to end of body. A streaming (SSE) response is cut in pieces: ``SSEStart``
spans the head; each ``SSEData``/``SSEControl`` spans from the first body byte after the
previous event to the line end that dispatched it (a chunked body's framing bytes in between
included; with CRLF line ends the final LF opens the next range); ``SSEEnd`` spans what is left
up to the end of the message, which is empty (``start == end``) when a body that ends with the
connection has no bytes after its last event. Each h11 ``Data`` event's bytes are the last ones
h11 consumed, which locates them on the wire under chunked transfer encoding too. An error starts
at the message (for a streaming response, the SSE event) it breaks.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Sequence, Sized

from s3p_codec._core.errors import ProtocolError
from s3p_codec.durable._events import SSEStart

__all__ = ["EventSpans"]

_LINE_END = re.compile(rb"[\r\n]")


class EventSpans:
    """The stream range of every event a client-role ``Connection`` queues, in queue order.

    ``next_event`` only ever hands out queued events, so a reader pops one span per event.
    """

    __slots__ = ("_failed", "_last_end", "_message_start", "_spans", "_streaming", "_unit_start")

    def __init__(self) -> None:
        self._spans: deque[tuple[int, int]] = deque()
        self._failed: tuple[ProtocolError, int] | None = None  # an error and the unit it broke
        self._message_start = 0  # the end of the previous message
        self._last_end = 0  # the consumed offset after the last h11 event handled
        self._unit_start: int | None = None  # first body byte not yet in an SSE event
        self._streaming = False

    def pop(self) -> tuple[int, int]:
        """``(start, end)`` of the oldest event not yet popped: call once per event returned."""
        return self._spans.popleft()

    def error_start(self, error: ProtocolError) -> int:
        """Where the unit ``error`` (just raised by ``next_event``) breaks begins: its message,
        or its SSE event.
        """
        if self._failed is not None and self._failed[0] is error:
            return self._failed[1]
        if self._streaming:  # h11 broke the framing of a streaming body
            return self._unit_start if self._unit_start is not None else self._last_end
        return self._message_start

    # -- called by the connection for each h11 event of a response --------------------------

    def head(self, end: int, queue: Sequence[object], begin: Callable[[], object]) -> None:
        """A response head ending at ``end``, handled by ``begin``; it streams if it queued
        ``SSEStart``.
        """
        self._last_end = end
        self._unit_start = None
        before = len(queue)
        self._run(self._message_start, end, queue, begin)
        self._streaming = len(queue) > before and isinstance(queue[-1], SSEStart)

    def data(self, end: int, data: bytes, queue: Sized, feed: Callable[[bytes], object]) -> None:
        """Body bytes ending at ``end``, handed to ``feed`` (line by line while streaming, so that
        each SSE event ends exactly after the line end that dispatched it).
        """
        self._last_end = end
        if not self._streaming:
            self._run(self._message_start, end, queue, lambda: feed(data))
            return
        base = end - len(data)
        at = 0
        for found in _LINE_END.finditer(data):
            self._piece(data[at : found.end()], base + at, base + found.end(), queue, feed)
            at = found.end()
        if at < len(data):
            self._piece(data[at:], base + at, end, queue, feed)

    def end(self, end: int, queue: Sized, finish: Callable[[], object]) -> None:
        """The end of the message at ``end``; ``finish`` queues its last event(s)."""
        if not self._streaming:  # a buffered response: the whole message
            start = self._message_start
        else:
            start = self._unit_start if self._unit_start is not None else self._last_end
        self._message_start = self._last_end = end
        self._unit_start = None
        self._streaming = False
        self._run(start, end, queue, finish)

    def _piece(
        self, piece: bytes, start: int, end: int, queue: Sized, feed: Callable[[bytes], object]
    ) -> None:
        if self._unit_start is None:
            self._unit_start = start
        before = len(self._spans)
        self._run(self._unit_start, end, queue, lambda: feed(piece))
        if len(self._spans) > before:
            self._unit_start = None

    def _run(self, start: int, end: int, queue: Sized, step: Callable[[], object]) -> None:
        """Run ``step``; every event it queued (even when it then raised) spans start..end."""
        before = len(queue)
        try:
            step()
        except ProtocolError as exc:
            self._failed = (exc, start)
            raise
        finally:
            self._spans.extend((start, end) for _ in range(len(queue) - before))
