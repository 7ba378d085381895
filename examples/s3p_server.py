"""A real S3P server (v0.1.0, or v0.2.0 with ``--s3p-version 0.2.0``) with in-memory streams,
on asyncio (default) or trio.

::

    python -m examples.s3p_server --port 7500                  # 127.0.0.1 unless --host
    python -m examples.s3p_server --port 7500 --s3p-version 0.2.0
    python -m examples.s3p_server --port 7500 --backend trio --max-count 500 --idle-timeout 60

The codec (``s3p_codec.s3p``) checks every request against the configured ``Limits`` and turns
malformed or over-limit requests into error replies; the I/O adapter sends them and closes the
connection. What is left here is what only a server with state can decide, kept in one class,
:class:`Store`, that both backends share:

- CREATE answers ``ERR_STREAM_EXISTS`` for a name already taken; APPEND, READ, TRIM and DELETE
  answer ``ERR_UNKNOWN_STREAM`` for a name that is not.
- "When TIMESTAMP_STRATEGY=server, the server MUST generate strictly increasing timestamps even
  under concurrency": a stream's timestamps come from the wall clock in milliseconds, and from
  ``<tail ms>-<tail seq + 1>`` when the clock has not moved past the tail (or went back). Both
  backends run every store operation to completion on one thread, so no two APPENDs interleave.
- "When TIMESTAMP_STRATEGY=client, the server MUST reject APPENDs whose timestamps are ≤ the
  last appended timestamp" (``ERR_BAD_FORMAT``). The tail starts at ``0-0``, so ``0-0`` itself is
  never accepted (a record there could never be read: READ's default MIN_TIMESTAMP is ``0-0``
  and returns records strictly after it).
- An APPEND of several records gives them consecutive timestamps: the first gets the generated
  (or client-given) timestamp, each next one the same ms and seq + 1; the reply carries the last.
  A client timestamp whose seq would overflow 64 bits across the batch is ``ERR_BAD_FORMAT``.
- READ returns up to COUNT (default: ``--default-count``) records strictly after MIN_TIMESTAMP.
  With none and BLOCK > 0 it waits, woken by any APPEND to that stream, and answers an empty
  array when BLOCK milliseconds pass without a newer record. A DELETE wakes it too; it then
  answers ``ERR_UNKNOWN_STREAM`` like any READ of a missing stream. While it waits, the server
  watches the connection (``receive_ahead``, up to ``READ_AHEAD`` bytes of what the client
  pipelines meanwhile, kept in order for later): a client that closes is let go at once, its
  READ dropped with it, as Redis does for a blocked client, instead of holding the connection
  until BLOCK runs out. A client that only half-closes is let go the same way.
- TRIM removes records strictly before UNTIL; the tail (and so the next timestamp) is kept.
- v0.2.0 (``--s3p-version 0.2.0``): records have IDs ``<ms>-<seq>`` and every stream works the
  same way. An APPEND without ``ID`` gets the wall clock's ms, or the last ID's ms with seq + 1
  when the clock has not moved past it or went backwards ("keep the last <ms> and increment
  <seq>"). An APPEND with ``ID`` (the ms alone): lower than the last ID's ms is
  ``ERR_NON_MONOTONIC_ID``; equal continues the last seq; higher starts at seq 0. READ returns
  records from MIN_ID *inclusive* (default ``0-0``); TRIM removes records strictly before
  MIN_ID. ``ERR_STREAM_EXISTS``, ``ERR_UNKNOWN_STREAM`` and ``ERR_NON_MONOTONIC_ID`` are
  recoverable: the codec keeps the connection open and the next pipelined requests are served.
- Connection limits (spec section 11, RECOMMENDED): ``--idle-timeout`` closes a connection that
  sent no request for that many seconds (a READ blocked on the server is not idle);
  ``--request-timeout`` closes one whose request has been arriving for that long (a client that
  trickles bytes is never idle, yet never asks for anything); at ``--max-connections`` a new
  connection sheds the one idle the longest, so idle or slow clients cannot lock new ones out,
  and is itself closed without a reply only when every connection is busy (there is no S3P
  error for it, and a reply nobody asked for would break the client's pairing);
  ``--max-connections-per-address`` applies the same rule among one IP address's connections.

Every limit of spec section 11 is a flag; see ``--help``.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import logging
import signal
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import attrs
import trio

from examples import _cli, _policy
from s3p_codec import NEED_DATA, NeedData, RemoteProtocolError, Role, s3p
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.asyncio import AsyncioConnection
from s3p_codec.io.asyncio import serve as asyncio_serve
from s3p_codec.io.trio import TrioConnection
from s3p_codec.io.trio import serve as trio_serve

__all__ = ["Server", "Store", "main", "run_asyncio", "run_trio"]

log = logging.getLogger("s3p_server")
_FIRST = asyncio.FIRST_COMPLETED

_SEQ_BITS = 64
_SEQ_MASK = (1 << _SEQ_BITS) - 1
_new_timestamp = tuple.__new__  # Timestamp is a NamedTuple: skip its Python-level __new__


def _key(timestamp: s3p.Timestamp) -> int:
    """A timestamp as one int that orders like ``(ms, seq)``: cheap to compare and bisect."""
    return (timestamp.ms << _SEQ_BITS) | timestamp.seq


def _timestamp(key: int) -> s3p.Timestamp:
    return _new_timestamp(s3p.Timestamp, (key >> _SEQ_BITS, key & _SEQ_MASK))


def wall_clock_ms() -> int:
    """Milliseconds since the epoch: the ``<ms>`` part of server timestamps, as in Redis."""
    return time.time_ns() // 1_000_000


@attrs.define(eq=False)
class Stream:
    """One stream: parallel lists of timestamp keys and payloads, oldest first.

    ``start`` is the index of the first live record: TRIM moves it forward and the dead prefix
    is dropped only once it is half of the list, so trimming costs O(1) amortised per record.
    """

    strategy: s3p.TimestampStrategy
    keys: list[int] = attrs.Factory(list)
    records: list[bytes] = attrs.Factory(list)
    start: int = 0
    tail: int = 0  # key of the last timestamp ever appended (0-0 before the first; v0.2.0: -1)
    waiters: set[Callable[[], None]] = attrs.Factory(set)

    def wake(self) -> None:
        waiters, self.waiters = self.waiters, set()
        for wake in waiters:
            wake()


class Store:
    """The protocol semantics of a server: in-memory streams, shared by both backends.

    ``execute`` answers any request at once and never blocks; a READ that found nothing and
    asked to BLOCK is finished by :func:`answer_blocking` with a backend's way to wait. The
    clock is an argument so tests can drive it.
    """

    def __init__(
        self,
        limits: s3p.Limits,
        clock: Callable[[], int] = wall_clock_ms,
        version: str = "0.1.0",
    ) -> None:
        self.limits = limits
        self.clock = clock
        self.version = s3p.Version(version)
        self.v020 = self.version is s3p.Version.V0_2_0
        self.streams: dict[bytes, Stream] = {}

    def execute(self, request: s3p.Event) -> s3p.Reply:
        """The reply to ``request`` now (a blocking READ that found nothing gets ``()``).

        Typed for any S3P event because that is what a connection yields; a server-role codec
        yields requests only, so anything else is a bug (``TypeError``).
        """
        if type(request) is s3p.Append:
            return self.append(request)
        if type(request) is s3p.Read:
            return self.read(request)
        if type(request) is s3p.Create:
            return self.create(request)
        if type(request) is s3p.Trim:
            return self.trim(request)
        if type(request) is s3p.Delete:
            return self.delete(request)
        raise TypeError(f"not an S3P request: {request!r}")

    def create(self, request: s3p.Create) -> s3p.Reply:
        if request.stream in self.streams:
            return s3p.ErrorReply(s3p.ErrorCode.STREAM_EXISTS, "stream already exists")
        strategy = request.timestamp_strategy or s3p.TimestampStrategy.SERVER
        # v0.2.0: no record yet is below 0-0, so that the first APPEND may take ID 0.
        self.streams[request.stream] = Stream(strategy, tail=-1 if self.v020 else 0)
        return s3p.Ok()

    def append(self, request: s3p.Append) -> s3p.Reply:
        stream = self.streams.get(request.stream)
        if stream is None:
            return _unknown_stream()
        count = len(request.records)
        if self.v020 and request.id is not None:
            ms = stream.tail >> _SEQ_BITS if stream.tail >= 0 else -1
            if request.id < ms:
                return s3p.ErrorReply(
                    s3p.ErrorCode.NON_MONOTONIC_ID,
                    f"ID {request.id} is lower than the last ID {_timestamp(stream.tail)}",
                )
            # Equal: continue the last seq; higher: a new ms at seq 0.
            first = stream.tail + 1 if request.id == ms else request.id << _SEQ_BITS
        elif stream.strategy is s3p.TimestampStrategy.SERVER:
            if request.timestamp is not None:
                return s3p.ErrorReply(
                    s3p.ErrorCode.BAD_FORMAT,
                    "timestamp option present when strategy is set to server",
                )
            # Strictly increasing whatever the clock does: never below tail + 1.
            first = max(self.clock() << _SEQ_BITS, stream.tail + 1)
        else:
            if request.timestamp is None:
                return s3p.ErrorReply(s3p.ErrorCode.BAD_FORMAT, "missing timestamp option")
            first = _key(request.timestamp)
            if first <= stream.tail:
                return s3p.ErrorReply(
                    s3p.ErrorCode.BAD_FORMAT,
                    f"timestamp {request.timestamp} is not greater than the tail "
                    f"{_timestamp(stream.tail)}",
                )
            if request.timestamp.seq + count - 1 > _SEQ_MASK:
                return s3p.ErrorReply(
                    s3p.ErrorCode.BAD_FORMAT, "timestamp seq overflows across the records"
                )
        last = first + count - 1
        if count == 1:
            stream.keys.append(first)
        else:
            stream.keys.extend(range(first, last + 1))
        stream.records.extend(request.records)
        stream.tail = last
        if stream.waiters:
            stream.wake()
        return s3p.AppendReply(_timestamp(last))

    def read(self, request: s3p.Read) -> s3p.Reply:
        stream = self.streams.get(request.stream)
        if stream is None:
            return _unknown_stream()
        count = self.limits.default_count if request.count is None else request.count
        keys = stream.keys
        if request.min_id is not None:  # v0.2.0: inclusive
            begin = bisect.bisect_left(keys, _key(request.min_id), stream.start)
        elif request.min_timestamp is None:
            begin = stream.start
        else:
            begin = bisect.bisect_right(keys, _key(request.min_timestamp), stream.start)
        end = min(begin + count, len(keys))
        records = stream.records
        budget = self.limits.max_read_reply_bytes  # cut at a record boundary, as COUNT is
        for i in range(begin, end):
            budget -= len(records[i])
            if budget < 0 and i > begin:
                end = i
                break
        return s3p.ReadReply(tuple([(_timestamp(keys[i]), records[i]) for i in range(begin, end)]))

    def trim(self, request: s3p.Trim) -> s3p.Reply:
        stream = self.streams.get(request.stream)
        if stream is None:
            return _unknown_stream()
        bound = request.min_id if request.until is None else request.until
        assert bound is not None  # the codec requires UNTIL (v0.1.0) or MIN_ID (v0.2.0)
        stream.start = bisect.bisect_left(stream.keys, _key(bound), stream.start)
        if stream.start * 2 >= len(stream.keys):
            del stream.keys[: stream.start]
            del stream.records[: stream.start]
            stream.start = 0
        return s3p.Ok()

    def delete(self, request: s3p.Delete) -> s3p.Reply:
        stream = self.streams.pop(request.stream, None)
        if stream is None:
            return _unknown_stream()
        stream.wake()  # blocked READs re-run and find the stream gone
        return s3p.Ok()

    def watch(self, name: bytes, wake: Callable[[], None]) -> bool:
        """Call ``wake`` at the next APPEND to (or DELETE of) stream ``name``; False if none."""
        stream = self.streams.get(name)
        if stream is None:
            return False
        stream.waiters.add(wake)
        return True

    def unwatch(self, name: bytes, wake: Callable[[], None]) -> None:
        stream = self.streams.get(name)
        if stream is not None:
            stream.waiters.discard(wake)


def _unknown_stream() -> s3p.ErrorReply:
    return s3p.ErrorReply(s3p.ErrorCode.UNKNOWN_STREAM, "no stream with this name")


Lookout = Callable[[], Awaitable[bool]]
"""Returns True once the peer has closed, False when it stops watching (see ``Watch``)."""

Waiter = Callable[[Store, bytes, float, Lookout], Awaitable[bool]]
"""A backend's way to wait until stream ``name`` is woken or ``seconds`` pass, watching the
peer meanwhile: True if the lookout saw it leave."""

READ_AHEAD = 64 * 1024
"""Bytes a blocked READ's watch reads ahead of the request loop, at most; then it stops."""


@attrs.define
class Watch:
    """The lookout of one blocked READ: reads what the client sends meanwhile (the codec keeps
    it in order for the request loop) until the client closes or ``budget`` bytes came."""

    conn: ServerConnection
    budget: int = READ_AHEAD

    async def __call__(self) -> bool:
        while self.budget > 0:
            try:
                got = await self.conn.receive_ahead()
            except Exception as error:  # a reset: the next read would fail the same way
                log.debug("watching a blocked READ: %r", error)
                return True
            if not got:
                return True
            self.budget -= got
        return False


def must_block(request: s3p.Event, reply: s3p.Reply) -> bool:
    """A READ that found nothing and asked to wait (BLOCK > 0)."""
    return (
        type(reply) is s3p.ReadReply
        and not reply.records
        and type(request) is s3p.Read
        and bool(request.block_ms)
    )


async def answer_blocking(
    store: Store, request: s3p.Read, wait: Waiter, lookout: Lookout
) -> s3p.Reply | None:
    """Finish a blocking READ: wait for a newer record for up to BLOCK ms, else ``[]``; None if
    the client left meanwhile.

    "If none exist and BLOCK > 0, wait up to BLOCK milliseconds for new records; return an
    empty array if none arrive." An APPEND of records not newer than MIN_TIMESTAMP (possible
    with client timestamps) wakes us for nothing: wait again for the time that is left.
    """
    assert request.block_ms is not None
    deadline = time.monotonic() + request.block_ms / 1000
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return s3p.ReadReply(())
        if await wait(store, request.stream, left, lookout):
            return None
        reply = store.execute(request)
        if not must_block(request, reply):
            return reply


class WatchedCodec(s3p.Connection):
    """The server-role codec, noting since when the bytes of an unfinished request arrive.

    ``partial_since`` is the clock reading at the first byte received after the last complete
    request (None while nothing is pending): the request-progress time-out reads it, so a client
    that trickles a request (slowloris) is let go however often it sends a byte.
    """

    def __init__(self, server: Server) -> None:
        super().__init__(Role.SERVER, limits=server.store.limits, version=server.store.version)
        self.clock = server.clock
        self.partial_since: float | None = None

    def receive_data(self, data: bytes) -> None:
        if data and self.partial_since is None:
            self.partial_since = self.clock()
        super().receive_data(data)

    def next_event(self) -> s3p.Event | NeedData:
        event = super().next_event()
        if event is not NEED_DATA:
            self.partial_since = None
        return event


@attrs.define
class Server:
    """Configuration and shared state of one running server, whatever the backend.

    The connection policy (spec section 11 recommends limits on connections and idle time):
    ``idle_timeout`` closes a connection that asked for nothing that long; ``request_timeout``
    closes one whose request has been arriving for that long (slow senders hold a connection
    without ever being idle); at ``max_connections`` a new connection sheds the one idle the
    longest, and is refused only when every connection is busy (a blocked READ);
    ``max_connections_per_address`` does the same among the connections of one IP address.
    """

    store: Store
    idle_timeout: float | None = None
    max_connections: int | None = None
    request_timeout: float | None = None
    max_connections_per_address: int | None = None
    clock: Callable[[], float] = time.monotonic
    gatekeeper: _policy.Gatekeeper = attrs.field(init=False)
    """Admission at the caps, shared with the other example servers (``examples/_policy.py``);
    the time-outs run on one timer per connection (``Activity.next_check``)."""

    def __attrs_post_init__(self) -> None:
        self.gatekeeper = _policy.Gatekeeper(self.policy)  # admission only: no sweeps here

    @property
    def policy(self) -> _policy.ConnectionPolicy:
        return _policy.ConnectionPolicy(
            idle_timeout=self.idle_timeout,
            request_timeout=self.request_timeout,
            max_connections=self.max_connections,
            max_connections_per_address=self.max_connections_per_address,
        )

    @property
    def limits(self) -> s3p.Limits:
        return self.store.limits

    @property
    def shed(self) -> Counter[str]:
        """Why the policy closed connections (or refused them), counted."""
        return self.gatekeeper.shed

    @property
    def connections(self) -> int:
        """Connections open now."""
        return len(self.gatekeeper)

    @property
    def watched(self) -> bool:
        """Whether connections need a watchdog (a time-out is set)."""
        return self.policy.timed

    def codec(self) -> s3p.Connection:
        return WatchedCodec(self)

    def admit(self, activity: Activity, address: str, close: Callable[[], None]) -> int | None:
        """Count a new connection in (an id for ``leave``), shedding the idlest at a cap; None
        when every connection that could make room is busy (then close the new one)."""
        return self.gatekeeper.admit(activity, address, lambda _reason: close())

    def leave(self, key: int) -> None:
        self.gatekeeper.leave(key)  # a no-op if the cap shed it already


class ServerConnection(Protocol):
    """What the request loop needs of a connection: the asyncio and trio adapters both fit."""

    async def next_event(self) -> s3p.Event: ...

    async def send(self, event: s3p.Event, *, flush: bool = True) -> None: ...

    async def flush(self) -> None: ...

    async def receive_ahead(self) -> int: ...


@attrs.define
class Activity:
    """When a connection last asked for something, for the idle time-out.

    A request costs one clock reading stored here; one timer per connection looks at it only
    when it fires (and re-arms for the time left), instead of a timer set and cancelled around
    every request. A READ blocked on the server is ``busy``: waiting for us is not idleness.
    """

    last: float
    busy: bool = False
    codec: WatchedCodec | None = None
    writing_since: float | None = None
    """Since when a reply has waited for the client without progress (None: not waiting), as
    last sampled from ``writer``."""
    writer: _policy.WriteProgress | None = None
    """The adapter whose write progress is watched (``bytes_written``, ``write_waiting``)."""
    _written_seen: int = 0

    @property
    def stalled_since(self) -> float | None:
        """A connection whose reply is not taken counts as idle for shedding: since the last
        sample that found the write waiting, if it still waits with no byte taken since.

        The sample may be up to ``request_timeout`` old (the timer looks that rarely), and on
        trio even a write the kernel takes at once waits across a checkpoint: a sample taken
        then must not outlive that write, or a READ blocked since looks idle and is shed.
        """
        writer = self.writer
        if writer is None or not writer.write_waiting:
            return None
        if writer.bytes_written != self._written_seen:
            return None  # moved since the sample: progress
        return self.writing_since

    def _sample(self, now: float) -> None:
        """A waiting write whose byte count moved since the last look is making progress."""
        writer = self.writer
        if writer is None or not writer.write_waiting:
            self.writing_since = None
            return
        written = writer.bytes_written
        if self.writing_since is None or written != self._written_seen:
            self._written_seen = written
            self.writing_since = now

    def overdue(self, now: float, policy: _policy.ConnectionPolicy) -> str | None:
        """Why the connection must close now (``"idle"``, ``"request too slow"``,
        ``"response not taken"``), or None."""
        self._sample(now)
        idle, slow = policy.idle_timeout, policy.request_timeout
        partial = self.codec.partial_since if self.codec is not None else None
        if slow and partial is not None and now - partial >= slow:
            return "request too slow"
        if slow and self.writing_since is not None and now - self.writing_since >= slow:
            return "response not taken"
        if idle and not self.busy and partial is None and now - self.last >= idle:
            return "idle"
        return None

    def next_check(self, now: float, policy: _policy.ConnectionPolicy) -> float:
        """Seconds until ``overdue`` may say something new. A request that starts arriving
        between two checks is caught at most ``slow`` late: checks come at least that often."""
        self._sample(now)
        idle, slow = policy.idle_timeout, policy.request_timeout
        waits = [slow] if slow else []
        if idle:
            waits.append(idle if self.busy else max(self.last + idle - now, 0.0))
        partial = self.codec.partial_since if self.codec is not None else None
        if slow and partial is not None:
            waits.append(max(partial + slow - now, 0.0))
        if slow and self.writing_since is not None:
            waits.append(max(self.writing_since + slow - now, 0.0))
        return max(min(waits), 0.001)


async def serve_requests(
    conn: ServerConnection,
    store: Store,
    wait: Waiter,
    activity: Activity | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Answer requests in order until the peer closes (``ConnectionClosed``) or errs.

    Replies to a pipelined burst are kept and go out in one write when the burst is done (the
    adapter writes them before it waits for more requests); a blocking READ first sends the
    replies before it, so they do not wait for it.
    """
    while True:
        request = await conn.next_event()
        if activity is not None:
            activity.last = clock()
        reply = store.execute(request)
        if must_block(request, reply):
            assert type(request) is s3p.Read
            await conn.flush()
            if activity is not None:
                activity.busy = True
            try:
                answer = await answer_blocking(store, request, wait, Watch(conn))
            finally:
                if activity is not None:
                    activity.busy = False
                    activity.last = clock()
            if answer is None:
                raise ConnectionClosed("the client left during a blocking READ")
            reply = answer
        await conn.send(reply, flush=False)


# --- asyncio backend -----------------------------------------------------------------------


async def _asyncio_wait(store: Store, name: bytes, seconds: float, lookout: Lookout) -> bool:
    loop = asyncio.get_running_loop()
    woken = loop.create_future()

    def wake() -> None:
        if not woken.done():
            woken.set_result(None)

    if not store.watch(name, wake):
        return False
    watching = asyncio.ensure_future(lookout())
    waiting: set[asyncio.Future[Any]] = {woken, watching}
    deadline = loop.time() + seconds
    try:
        while True:
            left = max(0.0, deadline - loop.time())
            done, _ = await asyncio.wait(waiting, timeout=left, return_when=_FIRST)
            if watching in done and watching.result():
                return True
            if woken in done or not done:
                return False
            waiting = {woken}  # the lookout stopped watching: wait for the rest
    finally:
        store.unwatch(name, wake)
        if not watching.done():
            watching.cancel()
            await asyncio.wait({watching})  # its read is over before the loop reads again


async def serve_asyncio(server: Server, host: str, port: int) -> asyncio.Server:
    """Start listening; returns the ``asyncio.Server`` (its first socket gives the port)."""
    store = server.store
    policy = server.policy
    loop = asyncio.get_running_loop()
    server.clock = loop.time

    async def handle(conn: AsyncioConnection[s3p.Event, s3p.Event]) -> None:
        task = asyncio.current_task()
        assert task is not None
        codec = conn.conn
        activity = Activity(loop.time(), codec=codec if isinstance(codec, WatchedCodec) else None)
        closing: list[str] = []  # why the policy closes this connection, once it does

        def close(reason: str = "shed") -> None:
            closing.append(reason)
            task.cancel()

        activity.writer = conn  # its write progress (bytes_written, write_waiting) is watched
        peer = conn.writer.get_extra_info("peername")
        key = server.admit(activity, str(peer[0]) if isinstance(peer, tuple) else "", close)
        if key is None:
            return
        timer: asyncio.TimerHandle | None = None

        def check() -> None:
            nonlocal timer
            reason = activity.overdue(loop.time(), policy)
            if reason is not None:
                log.info("closing a connection: %s", reason)
                server.shed[reason] += 1
                server.leave(key)
                close(reason)
            else:
                timer = loop.call_later(activity.next_check(loop.time(), policy), check)

        if server.watched:
            timer = loop.call_later(activity.next_check(loop.time(), policy), check)
        try:
            await serve_requests(conn, store, _asyncio_wait, activity, loop.time)
        except ConnectionClosed:
            return
        except asyncio.CancelledError:
            if not closing:
                raise
            task.uncancel()
        finally:
            if timer is not None:
                timer.cancel()
            server.leave(key)

    return await asyncio_serve(server.codec, handle, host, port)


async def run_asyncio(server: Server, host: str, port: int) -> None:
    """Serve on asyncio until cancelled."""
    listener = await serve_asyncio(server, host, port)
    address = listener.sockets[0].getsockname()
    log.info("S3P server (asyncio) listening on %s:%d", address[0], address[1])
    async with listener:
        await listener.serve_forever()


# --- trio backend --------------------------------------------------------------------------


async def _trio_wait(store: Store, name: bytes, seconds: float, lookout: Lookout) -> bool:
    woken = trio.Event()
    if not store.watch(name, woken.set):
        return False
    left = False
    try:
        with trio.move_on_after(seconds):
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    nonlocal left
                    if await lookout():
                        left = True
                        nursery.cancel_scope.cancel()

                nursery.start_soon(watch)
                await woken.wait()
                nursery.cancel_scope.cancel()
    finally:
        store.unwatch(name, woken.set)
    return left


async def _trio_watchdog(server: Server, activity: Activity, scope: trio.CancelScope) -> None:
    policy = server.policy
    while (reason := activity.overdue(trio.current_time(), policy)) is None:
        await trio.sleep(activity.next_check(trio.current_time(), policy))
    log.info("closing a connection: %s", reason)
    server.shed[reason] += 1
    scope.cancel()


async def _trio_serve_quietly(
    conn: TrioConnection[s3p.Event, s3p.Event],
    store: Store,
    activity: Activity | None,
) -> None:
    # Inside a nursery every exception would come out wrapped in an ExceptionGroup: end here.
    try:
        await serve_requests(conn, store, _trio_wait, activity, trio.current_time)
    except ConnectionClosed:
        pass
    except (RemoteProtocolError, trio.BrokenResourceError) as error:
        log.debug("connection ended: %r", error)


def _trio_peer(conn: TrioConnection[s3p.Event, s3p.Event]) -> object:
    """The peer's address, or None when it is unknown or already gone."""
    sock = getattr(conn.stream, "socket", None)
    try:
        return sock.getpeername() if sock is not None else None
    except OSError:  # the client left before we looked
        return None


async def serve_trio(
    server: Server,
    host: str,
    port: int,
    *,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve on trio until cancelled; use with ``nursery.start`` to learn the listeners."""
    store = server.store
    server.clock = trio.current_time

    async def handle(conn: TrioConnection[s3p.Event, s3p.Event]) -> None:
        codec = conn.conn
        activity = Activity(
            trio.current_time(), codec=codec if isinstance(codec, WatchedCodec) else None
        )
        activity.writer = conn  # its write progress (bytes_written, write_waiting) is watched
        with trio.CancelScope() as scope:
            peer = _trio_peer(conn)
            key = server.admit(
                activity, str(peer[0]) if isinstance(peer, tuple) else "", scope.cancel
            )
            if key is None:
                return
            try:
                if not server.watched:
                    await _trio_serve_quietly(conn, store, activity)
                    return
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_trio_watchdog, server, activity, scope)
                    await _trio_serve_quietly(conn, store, activity)
                    nursery.cancel_scope.cancel()
            finally:
                server.leave(key)

    await trio_serve(server.codec, handle, host, port, task_status=task_status)


async def run_trio(server: Server, host: str, port: int) -> None:
    """Serve on trio until cancelled."""
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(serve_trio, server, host, port)
        address = listeners[0].socket.getsockname()
        log.info("S3P server (trio) listening on %s:%d", address[0], address[1])


# --- command line --------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    defaults = s3p.Limits()
    parser = argparse.ArgumentParser(
        prog="python -m examples.s3p_server", description="An in-memory S3P server."
    )
    parser.add_argument(
        "--s3p-version",
        choices=[version.value for version in s3p.Version],
        default="0.1.0",
        help="the S3P version spoken (0.1.0); S3P has no handshake: clients must match",
    )
    _cli.add_address(parser, 7500, server=True)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    limits = parser.add_argument_group("limits (spec section 11)")
    for field in attrs.fields(s3p.Limits):
        limits.add_argument(
            "--" + field.name.replace("_", "-"),
            type=int,
            default=getattr(defaults, field.name),
            metavar="N",
            help=f"(default {getattr(defaults, field.name)})",
        )
    limits.add_argument(
        "--idle-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="close connections silent this long; 0 disables (300)",
    )
    limits.add_argument(
        "--request-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="close a connection whose request takes this long to arrive; 0 disables (30)",
    )
    limits.add_argument(
        "--max-connections",
        type=int,
        default=1024,
        metavar="N",
        help="at this many connections a new one closes the one idle the longest, or is "
        "closed itself when all are busy; 0 disables (1024)",
    )
    limits.add_argument(
        "--max-connections-per-address",
        type=int,
        default=0,
        metavar="N",
        help="the same among the connections of one IP address; 0 disables (0)",
    )
    _cli.add_verbose(parser)
    return parser.parse_args(argv)


def build_server(args: argparse.Namespace) -> Server:
    limits = s3p.Limits(**{f.name: getattr(args, f.name) for f in attrs.fields(s3p.Limits)})
    return Server(
        Store(limits, version=args.s3p_version),
        idle_timeout=args.idle_timeout or None,
        max_connections=args.max_connections or None,
        request_timeout=args.request_timeout or None,
        max_connections_per_address=args.max_connections_per_address or None,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    _cli.setup_logging(args.verbose)
    try:
        server = build_server(args)
    except ValueError as error:
        print(f"s3p_server: {error}", file=sys.stderr)
        return 2
    # Ctrl-C stops the server even if it was started with SIGINT ignored (a background job).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if args.backend == "trio":
            trio.run(run_trio, server, args.host, args.port)
        else:
            asyncio.run(run_asyncio(server, args.host, args.port))
    except* KeyboardInterrupt:  # trio delivers it inside an exception group
        log.info("stopped")
    return 0


if __name__ == "__main__":
    from examples._cli import run as run_cli

    sys.exit(run_cli(main, "python -m examples.s3p_server"))
