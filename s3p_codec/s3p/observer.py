"""Passive decoding of a recorded S3P conversation (both directions), for captures.

The Observer runs the same parsers as ``Connection`` (commands client-to-server, replies
server-to-client), gives each request a fresh ``pair_id`` and tags its reply with the same id.
It never stops on bad bytes: a malformed frame yields ``ObservedError`` and the Observer
resynchronises.

Resynchronisation: client-to-server, the next plausible command start is a line beginning with
``*2``, ``*3`` or ``*4`` followed by a command name Bulk String (``$6\\r\\nCREATE\\r\\n`` ...,
any case). Server-to-client, it is a line beginning a plausible reply: ``+OK``, ``-ERR_...``, a
timestamp Bulk String, or an Array of timestamp/record pairs. A line begins at the start of the
data or right after LF. ``ObservedError.skipped`` counts the bytes dropped from the start of the
broken frame to the resynchronisation point; if the direction closes first, the error is
reported with ``resynchronized=False``.

After a gap or an error, replies can no longer be paired by order alone (requests or replies
were lost), so pairing becomes best-effort: a reply is paired with the oldest pending request
whose reply has that shape (``+OK`` for CREATE/TRIM/DELETE, a Bulk String for APPEND, an Array
for READ; an Error answers anything), and older pending requests are taken as lost. A reply for
which no request is pending is still typed by its shape, with ``pair_id=None``.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence

from s3p_codec._core import (
    Direction,
    Observed,
    ObservedError,
    ObservedGap,
    ObserverOutput,
    RemoteProtocolError,
)
from s3p_codec.s3p.commands import CommandParser
from s3p_codec.s3p.connection import remote_error
from s3p_codec.s3p.events import (
    Append,
    Delete,
    ErrorCode,
    ErrorReply,
    Event,
    Read,
    Request,
)
from s3p_codec.s3p.limits import Limits
from s3p_codec.s3p.replies import ReplyParser
from s3p_codec.s3p.wire import ARRAY, BULK, ERROR, SIMPLE, Malformed, WireBuffer

__all__ = ["Observer"]

_COMMAND_START = re.compile(rb"\*[234]\r\n\$[4-6]\r\n(?i:CREATE|APPEND|READ|TRIM|DELETE)\r\n")
_REPLY_START = re.compile(
    rb"\+OK\r\n|-ERR_[A-Z_]+[ \r]|\$[1-9][0-9]?\r\n[0-9]+-[0-9]+\r\n"
    rb"|\*[1-9][0-9]*\r\n\$[1-9][0-9]?\r\n[0-9]+-[0-9]+\r\n|\*0\r\n"
)
_KEEP = 64  # bytes kept while hunting: a start pattern may straddle two chunks
_ANY_READ = Read(b"?")
_ANY_APPEND = Append(b"?", (b"?",))
_ANY_OK = Delete(b"?")


class _Side:
    """One direction: its buffer, its parser, and the error being resynchronised, if any."""

    def __init__(self, direction: Direction, limits: Limits) -> None:
        self.direction = direction
        self.limits = limits
        self.closed = False
        self.hunting: tuple[RemoteProtocolError, int] | None = None  # error, start offset
        self.hunt_gap = False  # hunting after a gap: nothing to report when found
        self.after_gap = False  # no byte seen since the gap: the next one may start a line
        self.reset(0)

    def reset(self, offset: int) -> None:
        """Start afresh at absolute ``offset`` (after a gap): no bytes, no partial frame."""
        self.buffer = WireBuffer()
        self.buffer.base = offset
        self.restart()

    def restart(self) -> None:
        """Forget the frame being parsed; keep the bytes."""
        self.commands = CommandParser(self.buffer, self.limits)
        self.replies = ReplyParser(self.buffer, self.limits)
        self.current: tuple[int | None, Request] | None = None

    @property
    def busy(self) -> bool:
        """A frame is partly read (or bytes wait that may begin one)."""
        if self.direction is Direction.CLIENT_TO_SERVER:
            return self.commands.in_command
        return self.replies.in_reply

    @property
    def start(self) -> int:
        """Absolute offset where the frame being read (or the last one) began."""
        if self.direction is Direction.CLIENT_TO_SERVER:
            return self.commands.start
        return self.replies.start


class Observer:
    """Feed both directions of one conversation; get typed events tagged with direction."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = Limits() if limits is None else limits
        self._sides = {
            direction: _Side(direction, self.limits)
            for direction in (Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT)
        }
        self._pending: deque[tuple[int, Request]] = deque()
        self._next_id = 0
        self._lenient = False

    def observe(self, direction: Direction, data: bytes) -> Sequence[ObserverOutput[Event]]:
        """Decode the bytes seen travelling ``direction``."""
        side = self._sides[direction]
        if side.closed or not data:
            return []
        side.buffer.feed(data)
        return self._drain(side)

    def gap(self, direction: Direction, size: int) -> Sequence[ObserverOutput[Event]]:
        """``size`` bytes were lost in ``direction``: drop the broken frame, hunt a new start."""
        side = self._sides[direction]
        out: list[ObserverOutput[Event]] = []
        if side.closed:
            return out
        buffer = side.buffer
        start = buffer.base + len(buffer.data)
        if side.hunting is not None:
            error, began = side.hunting
            out.append(
                ObservedError(direction, error, began, skipped=start - began, resynchronized=False)
            )
            side.hunting = None
        side.reset(start + size)
        side.hunt_gap = side.after_gap = True
        self._lenient = True
        out.append(ObservedGap(direction, start, size, resynchronized=True))
        return out

    def close(self, direction: Direction) -> Sequence[ObserverOutput[Event]]:
        """No more bytes come in ``direction``; a partial frame left is an error."""
        side = self._sides[direction]
        out: list[ObserverOutput[Event]] = []
        if side.closed:
            return out
        side.closed = True
        buffer = side.buffer
        if side.hunting is not None:
            error, began = side.hunting
            end = buffer.base + len(buffer.data)
            out.append(ObservedError(direction, error, began, skipped=end - began))
            side.hunting = None
        elif side.busy and not side.hunt_gap:
            # Where the unfinished frame began (its parser noted it when it started reading).
            start = side.start
            error = remote_error(
                Malformed(ErrorCode.BAD_FORMAT, "the stream ended mid-frame"), direction.sender
            )
            end = buffer.base + len(buffer.data)
            out.append(ObservedError(direction, error, start, skipped=end - start))
        return out

    # -- decoding ---------------------------------------------------------------------------

    def _drain(self, side: _Side) -> list[ObserverOutput[Event]]:
        out: list[ObserverOutput[Event]] = []
        buffer = side.buffer
        while True:
            if side.hunting is not None or side.hunt_gap:
                found = self._hunt(side)
                if found is None:
                    return out
                if side.hunting is not None:
                    error, began = side.hunting
                    out.append(
                        ObservedError(
                            side.direction,
                            error,
                            began,
                            skipped=found - began,
                            resynchronized=True,
                        )
                    )
                side.hunting = None
                side.hunt_gap = side.after_gap = False
            try:
                if side.direction is Direction.CLIENT_TO_SERVER:
                    request = side.commands.next_command()
                    if request is None:
                        return out
                    pair_id = self._next_id
                    self._next_id += 1
                    self._pending.append((pair_id, request))
                    start = side.commands.start
                    out.append(Observed(side.direction, request, start, buffer.offset, pair_id))
                else:
                    observed = self._next_reply(side)
                    if observed is None:
                        return out
                    out.append(observed)
            except Malformed as problem:
                parser_start = side.start
                error = remote_error(problem, side.direction.sender)
                side.hunting = (error, parser_start)
                self._lenient = True
                side.restart()
                # Hunt after the start of the broken frame (its consumed bytes are gone).
                if buffer.offset <= parser_start:
                    buffer.discard(parser_start + 1 - buffer.offset)

    def _hunt(self, side: _Side) -> int | None:
        """Drop bytes up to the next plausible frame start; its absolute offset, or None."""
        buffer = side.buffer
        data = buffer.data
        pattern = _COMMAND_START if side.direction is Direction.CLIENT_TO_SERVER else _REPLY_START
        for match in pattern.finditer(data, buffer.pos):
            at = match.start()
            # A line starts after LF; right after a gap nothing is known, so its first byte may.
            if (at > 0 and data[at - 1] == 0x0A) or (at == 0 and side.after_gap):
                buffer.pos = buffer.scan = at
                offset = buffer.offset
                buffer.compact()
                return offset
        # Keep the last bytes (never none): a start may straddle two chunks, and the byte
        # before a candidate must still be there to tell whether it begins a line.
        keep_from = max(buffer.pos, len(data) - _KEEP)
        if data and keep_from >= len(data):
            keep_from = len(data) - 1
        buffer.pos = buffer.scan = keep_from
        buffer.compact()
        side.after_gap = side.after_gap and not data  # bytes seen since: no longer right at it
        return None

    def _next_reply(self, side: _Side) -> Observed[Event] | None:
        buffer = side.buffer
        replies = side.replies
        pending = self._pending
        if side.current is None:
            if not len(buffer):
                return None
            # At a reply start: choose the request it answers.
            kind = buffer.data[buffer.pos]
            index = self._choose(kind)
            if index is None:
                stand_in: Request = _ANY_OK
                if kind == ARRAY:
                    stand_in = _ANY_READ
                elif kind == BULK:
                    stand_in = _ANY_APPEND
                side.current = (None, stand_in)
            else:
                for _ in range(index):
                    pending.popleft()
                side.current = pending[0]
        pair_id, request = side.current
        reply = replies.next_reply(request)
        if reply is None:
            return None
        side.current = None
        if pair_id is not None and pending and pending[0][0] == pair_id:
            pending.popleft()
        if isinstance(reply, ErrorReply):
            pending.clear()  # the server closes after any Error; the rest is never answered
        return Observed(side.direction, reply, replies.start, buffer.offset, pair_id)

    def _choose(self, kind: int) -> int | None:
        """Index in the pending queue of the request this reply answers, or None."""
        pending = self._pending
        if not pending:
            return None
        if not self._lenient or kind in (ERROR,):
            return 0
        for index, (_, request) in enumerate(pending):
            if isinstance(request, Read):
                fits = kind == ARRAY
            elif isinstance(request, Append):
                fits = kind == BULK
            else:
                fits = kind == SIMPLE
            if fits:
                return index
        return None
