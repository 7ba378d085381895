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
which no request is pending (a capture that began mid-conversation, or lost requests) is still
typed by its shape, with ``pair_id=None``, and an ``ObservedError`` says so (once, until a
reply is paired again), so that no reply goes unpaired in silence. Finding the request costs
O(1) amortised: one queue of pending ids per reply shape, each id entering and leaving it once.

Requests awaiting a reply are bounded (``max_pending``, default ``MAX_PENDING``): a client
that pipelines more than that without a reply being seen (or replies lost for good) makes the
Observer forget the oldest; an ``ObservedError`` with code ``ERR_LIMITS`` says so when the bound
is reached, and the forgotten requests' replies, if they come, are typed by shape, unpaired.

Versions: ``Observer(version="0.1.0" | "0.2.0")`` decodes one version strictly (the capture
layer's ``--decode-as 7500=s3p@0.2.0``). Without a version the Observer detects it: it accepts
what either version accepts until the traffic says which one it is (``TIMESTAMP``,
``MIN_TIMESTAMP``, ``UNTIL`` or ``TIMESTAMP_STRATEGY``: v0.1.0; ``ID`` or
``MIN_ID`` options, ``ERR_NON_MONOTONIC_ID``, or a reply after a recoverable error: v0.2.0),
then holds to that version's rules. ``version`` is the version decided, 0.1.0 until then.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from typing import ClassVar

import attrs

from s3p_codec._core import (
    Direction,
    Observed,
    ObservedError,
    ObservedGap,
    ObserverOutput,
    RemoteProtocolError,
)
from s3p_codec._core.checkpoint import Checkpointable
from s3p_codec.s3p._connection import remote_error
from s3p_codec.s3p._events import (
    Append,
    Create,
    Delete,
    ErrorCode,
    ErrorReply,
    Event,
    Read,
    Request,
    Trim,
)
from s3p_codec.s3p._limits import Limits
from s3p_codec.s3p._readers import CommandParser
from s3p_codec.s3p._replies import ReplyParser
from s3p_codec.s3p._schema import default_floor
from s3p_codec.s3p._version import DETECT, RULES, Rules, Version, rules_for
from s3p_codec.s3p._wire import ARRAY, BULK, ERROR, SIMPLE, Malformed, WireBuffer

__all__ = ["MAX_PENDING", "Observer"]

MAX_PENDING = 100_000
"""Requests an Observer keeps awaiting a reply, by default (``Observer(max_pending=...)``).

Each costs about 100 bytes while it waits (its id and what pairing needs, never its records),
so the bound keeps a capture of a client that pipelines without end (or whose replies were
lost) in bounded memory: about 10 MB per conversation at most.
"""

_COMMAND_START = re.compile(rb"\*[234]\r\n\$[4-6]\r\n(?i:CREATE|APPEND|READ|TRIM|DELETE)\r\n")
_REPLY_START = re.compile(
    rb"\+OK\r\n|-ERR_[A-Z_]+[ \r]|\$[1-9][0-9]?\r\n[0-9]+-[0-9]+\r\n"
    rb"|\*[1-9][0-9]*\r\n\$[1-9][0-9]?\r\n[0-9]+-[0-9]+\r\n|\*0\r\n"
)
_KEEP = 64  # bytes kept while hunting: a start pattern may straddle two chunks
_ANY_READ = Read(b"?")
_ANY_APPEND = Append(b"?", (b"?",))
_ANY_OK = Delete(b"?")
_STAND_INS: dict[type[Request], Request] = {
    Append: _ANY_APPEND,
    Create: Create(b"?"),
    Trim: Trim(b"?"),
    Delete: _ANY_OK,
}


def _slim(request: Request) -> Request:
    """What pairing needs of ``request``: its type, and a READ's bounds (count, MIN_ID or
    MIN_TIMESTAMP) that its reply is checked against. Never its records or stream name, so a
    request waiting for its reply costs about 100 bytes however large it was."""
    if type(request) is Read:
        assert isinstance(request, Read)
        return attrs.evolve(request, stream=b"?", block_ms=None)
    return _STAND_INS.get(type(request), request)


class _Side:
    """One direction: its buffer, its parser, and the error being resynchronised, if any."""

    def __init__(self, direction: Direction, limits: Limits, rules: Rules) -> None:
        self.direction = direction
        self.limits = limits
        self.rules = rules
        self.closed = False
        self.hunting: tuple[RemoteProtocolError, int] | None = None  # error, start offset
        self.hunt_gap = False  # hunting after a gap: nothing to report when found
        # An absolute offset that begins a line though the byte before it is not buffered:
        # right after a gap (nothing is known of the byte before, so a frame may start there),
        # or after an LF dropped while hunting. Kept as an offset, so that finding a frame
        # start does not depend on how the bytes are chunked.
        self.line_start: int | None = None
        self.reset(0)

    def reset(self, offset: int) -> None:
        """Start afresh at absolute ``offset`` (after a gap): no bytes, no partial frame."""
        self.buffer = WireBuffer()
        self.buffer.base = offset
        self.restart()

    def restart(self) -> None:
        """Forget the frame being parsed; keep the bytes."""
        self.commands = CommandParser(self.buffer, self.limits, self.rules)
        self.replies = ReplyParser(self.buffer, self.limits, self.rules)
        self.current: tuple[int | None, Request] | None = None

    def use(self, rules: Rules) -> None:
        """Hold to ``rules`` from now on (the version was detected)."""
        self.rules = rules
        self.commands.rules = rules
        self.replies.rules = rules
        self.replies.zero = default_floor(rules)

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


def _shape(request: Request) -> int:
    """The type byte of a non-error reply to ``request``."""
    kind = type(request)
    if kind is Read:
        return ARRAY
    if kind is Append:
        return BULK
    return SIMPLE


class Observer(Checkpointable):
    """Feed both directions of one conversation; get typed events tagged with direction.

    ``version``: ``"0.1.0"``, ``"0.2.0"`` or None (detect); ``max_pending``: requests kept
    awaiting a reply (see ``MAX_PENDING``). ValueError for an unknown version or a bound < 1.
    """

    #: A gap or garbage is passed over by hunting for a line start (see ``_core.Observer``).
    resynchronizes: ClassVar[bool] = True

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        version: str | Version | None = None,
        max_pending: int = MAX_PENDING,
    ) -> None:
        if type(max_pending) is not int or max_pending < 1:
            raise ValueError(f"max_pending must be a positive int, got {max_pending!r}")
        self.limits = Limits() if limits is None else limits
        self.max_pending = max_pending
        rules = DETECT if version is None else rules_for(version)
        self._rules = rules
        self._sides = {
            direction: _Side(direction, self.limits, rules)
            for direction in (Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT)
        }
        self._pending: deque[tuple[int, Request]] = deque()
        # The ids of pending requests by the shape of their reply, oldest first; ids of requests
        # already gone are dropped lazily (they are older than the head of ``_pending``).
        self._by_shape: dict[int, deque[int]] = {ARRAY: deque(), BULK: deque(), SIMPLE: deque()}
        self._next_id = 0
        self._lenient = False
        self._overflowing = False  # the pending bound was hit and not yet relieved
        self._unpaired_said = False  # an unpaired reply was reported since the last pairing
        self._after_recoverable = False  # the last reply was a recoverable error

    @property
    def version(self) -> Version:
        """The version decoded: the one configured or detected, 0.1.0 until detected."""
        return self._rules.version or Version.V0_1_0

    @property
    def detected(self) -> bool:
        """True once the version is known (configured, or seen in the traffic)."""
        return self._rules.version is not None

    def _decide(self, version: Version) -> None:
        if self._rules.version is None:
            self._rules = RULES[version]
            for side in self._sides.values():
                side.use(self._rules)

    def _evidence(self, event: Event) -> None:
        """Learn the version from an event that only one version can hold."""
        kind = type(event)
        if kind is Append:
            assert isinstance(event, Append)
            if event.id is not None:
                self._decide(Version.V0_2_0)
            elif event.timestamp is not None:
                self._decide(Version.V0_1_0)
        elif kind is Read:
            assert isinstance(event, Read)
            if event.min_id is not None:
                self._decide(Version.V0_2_0)
            elif event.min_timestamp is not None:
                self._decide(Version.V0_1_0)
        elif kind is Trim:
            assert isinstance(event, Trim)
            self._decide(Version.V0_2_0 if event.min_id is not None else Version.V0_1_0)
        elif kind is Create:
            assert isinstance(event, Create)
            if event.timestamp_strategy is not None:
                self._decide(Version.V0_1_0)
        elif kind is ErrorReply:
            assert isinstance(event, ErrorReply)
            if event.code is ErrorCode.NON_MONOTONIC_ID:
                self._decide(Version.V0_2_0)

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
        side.hunt_gap = True
        side.line_start = start + size
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
                side.hunt_gap = False
                side.line_start = None
            try:
                if side.direction is Direction.CLIENT_TO_SERVER:
                    request = side.commands.next_command()
                    if request is None:
                        return out
                    pair_id = self._next_id
                    self._next_id += 1
                    start = side.commands.start
                    if self._rules.version is None:
                        self._evidence(request)
                    self._remember(pair_id, request, start, out)
                    out.append(Observed(side.direction, request, start, buffer.offset, pair_id))
                else:
                    observed = self._next_reply(side)
                    if observed is None:
                        return out
                    out.extend(observed)
            except Malformed as problem:
                parser_start = side.start
                error = remote_error(problem, side.direction.sender)
                side.hunting = (error, parser_start)
                self._lenient = True
                side.restart()
                # Hunt after the start of the broken frame (its consumed bytes are gone),
                # noting whether the hunt begins a line before the byte before it goes.
                hunt_from = max(buffer.offset, parser_start + 1)
                before = hunt_from - 1 - buffer.base
                if before < 0:
                    # Consumed, and dropped already (how far depends on the chunking): what
                    # the parsers consume ends with a CRLF, a header line or a payload's.
                    side.line_start = hunt_from
                elif before < len(buffer.data) and buffer.data[before] == 0x0A:
                    side.line_start = hunt_from
                if buffer.offset <= parser_start:
                    buffer.discard(parser_start + 1 - buffer.offset)

    def _hunt(self, side: _Side) -> int | None:
        """Drop bytes up to the next plausible frame start; its absolute offset, or None."""
        buffer = side.buffer
        data = buffer.data
        pattern = _COMMAND_START if side.direction is Direction.CLIENT_TO_SERVER else _REPLY_START
        base = buffer.base
        found = -1
        at = buffer.pos
        # One search at a time, from the byte after a candidate refused: a candidate that is
        # not at a line start may overlap one that is (``finditer`` would skip past it).
        while (match := pattern.search(data, at)) is not None:
            at = match.start()
            # A line starts after LF; at the buffer's first byte, ``line_start`` says.
            if data[at - 1] == 0x0A if at > 0 else base == side.line_start:
                found = at
                break
            at += 1
        if found >= 0:
            buffer.pos = buffer.scan = found
            offset = buffer.offset
            buffer.compact()
            return offset
        # Keep the last bytes: a start may straddle two chunks. Whether the first byte kept
        # begins a line is noted before the byte before it goes.
        keep_from = max(buffer.pos, len(data) - _KEEP)
        if keep_from > 0 and data[keep_from - 1] == 0x0A:
            side.line_start = base + keep_from
        buffer.pos = buffer.scan = keep_from
        buffer.compact()
        return None

    def _remember(
        self, pair_id: int, request: Request, start: int, out: list[ObserverOutput[Event]]
    ) -> None:
        """Queue ``request`` for its reply, forgetting the oldest beyond ``max_pending``."""
        pending = self._pending
        if len(pending) >= self.max_pending:
            if not self._overflowing:
                self._overflowing = True
                problem = Malformed(
                    ErrorCode.LIMITS,
                    f"more than {self.max_pending} requests await a reply (max_pending): the"
                    " oldest are forgotten, and their replies will be unpaired",
                )
                error = remote_error(problem, Direction.CLIENT_TO_SERVER.sender)
                out.append(ObservedError(Direction.CLIENT_TO_SERVER, error, start, 0, True))
            self._forget_oldest()
        elif self._overflowing and len(pending) < self.max_pending // 2:
            self._overflowing = False
        pending.append((pair_id, _slim(request)))
        self._by_shape[_shape(request)].append(pair_id)

    def _forget_oldest(self) -> None:
        """Drop the head of the pending queue (answered, lost or forgotten)."""
        pair_id, request = self._pending.popleft()
        ids = self._by_shape[_shape(request)]
        while ids and ids[0] <= pair_id:
            ids.popleft()

    def _clear_pending(self) -> None:
        self._pending.clear()
        for ids in self._by_shape.values():
            ids.clear()

    def _next_reply(self, side: _Side) -> list[ObserverOutput[Event]] | None:
        buffer = side.buffer
        replies = side.replies
        pending = self._pending
        said: list[ObserverOutput[Event]] = []
        if side.current is None:
            if not len(buffer):
                return None
            # At a reply start: choose the request it answers.
            kind = buffer.data[buffer.pos]
            found = self._choose(kind)
            if found is None:
                stand_in: Request = _ANY_OK
                if kind == ARRAY:
                    stand_in = _ANY_READ
                elif kind == BULK:
                    stand_in = _ANY_APPEND
                side.current = (None, stand_in)
            else:
                side.current = pending[0]
        pair_id, request = side.current
        reply = replies.next_reply(request)
        if reply is None:
            return None
        side.current = None
        if pair_id is not None and pending and pending[0][0] == pair_id:
            self._forget_oldest()
        if pair_id is None and not self._unpaired_said:
            self._unpaired_said = True
            problem = Malformed(
                ErrorCode.BAD_FORMAT,
                "a reply with no request seen that it can answer (the capture began"
                " mid-conversation, or requests were lost): typed by its shape, unpaired",
            )
            error = remote_error(problem, side.direction.sender)
            said.append(ObservedError(side.direction, error, replies.start, 0, True))
        elif pair_id is not None:
            self._unpaired_said = False
        if self._after_recoverable and pair_id is not None and self._rules.version is None:
            # A request answered after an error answered its own: v0.1.0 would have closed.
            # Only paired replies count: replies whose requests were not seen say nothing.
            self._decide(Version.V0_2_0)
        self._after_recoverable = False
        if isinstance(reply, ErrorReply):
            if self._rules.version is None:
                self._evidence(reply)
            if self._rules.keeps_open(reply.code):
                self._after_recoverable = pair_id is not None
            else:
                self._clear_pending()  # the server closes after this Error: the rest is lost
        said.append(Observed(side.direction, reply, replies.start, buffer.offset, pair_id))
        return said

    def _choose(self, kind: int) -> int | None:
        """The pair id of the request this reply answers (made the head of the pending queue),
        or None. Before a gap or an error, replies answer requests in order; after one, the
        oldest request whose reply has this shape, the older ones being taken as lost."""
        pending = self._pending
        if not pending:
            return None
        if not self._lenient or kind == ERROR:
            return pending[0][0]
        ids = self._by_shape.get(kind)
        if ids is None:
            return None
        oldest = pending[0][0]
        while ids and ids[0] < oldest:
            ids.popleft()  # answered or lost already
        if not ids:
            return None
        wanted = ids[0]
        while pending[0][0] != wanted:
            self._forget_oldest()
        return wanted
