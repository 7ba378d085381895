"""The connection policy of the asyncio example servers: who may hold a connection, and for
how long.

A server that never closes a connection is held by anyone who opens enough of them and then
says nothing (idle), or says a request one byte at a time (slowloris). Four bounds, each a flag
of every server that uses this module, each off with 0:

- ``idle_timeout`` (300 s): a connection waiting for its client's next request that long is
  closed. Waiting *for the server* (a long poll, a blocking read, a response being sent, an
  S2S session) is not idleness.
- ``request_timeout`` (30 s): a request whose first bytes arrived that long ago and which is
  still not complete closes its connection, however often another byte trickles in. The same
  bound is the write-progress time-out: a response the client has not taken for that long
  (the server waiting to write) closes its connection.
- ``max_connections`` (1024): at the cap a new connection closes the one idle the longest;
  only when every connection is busy is the newcomer closed instead, so idle sockets can
  never lock clients out. Busy means making progress: a connection whose server waits on its
  client (for a request body that does not come, or to write a response the client does not
  read) counts as idle since it began to wait.
- ``max_connections_per_address`` (off: clients behind one NAT share an address): the same,
  among the connections of the newcomer's IP address.

One sweeper task per server reads the clock a few times per shortest time-out (at most once a
second) instead of a timer per request, so a connection closes at most a quarter of its
time-out (or a second) late. The codec side needs nothing of the protocol: ``WatchedCodec``
wraps any server-role ``Connection`` and learns "a request is arriving" from
``receive_data`` and "a request is complete" from ``next_event``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Generic, Protocol, TypeVar, cast

import attrs

from s3p_codec import NEED_DATA, NeedData, RemoteProtocolError, Role
from s3p_codec._core.connection import Connection
from s3p_codec.io.asyncio import AsyncioConnection, serve

__all__ = [
    "Activity",
    "ConnectionPolicy",
    "Gatekeeper",
    "Watched",
    "WatchedCodec",
    "WriteProgress",
    "add_arguments",
    "peer_address",
    "serve_guarded",
]

log = logging.getLogger("policy")

SendT = TypeVar("SendT")
EventT = TypeVar("EventT")


@attrs.frozen
class ConnectionPolicy:
    """The four bounds (see the module docstring); ``None`` or 0 turns one off."""

    idle_timeout: float | None = 300.0
    request_timeout: float | None = 30.0
    max_connections: int | None = 1024
    max_connections_per_address: int | None = None

    def __attrs_post_init__(self) -> None:
        for name, value in attrs.asdict(self).items():
            if value is not None and value < 0:
                raise ValueError(f"{name} must not be negative")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ConnectionPolicy:
        """The policy the flags of ``add_arguments`` ask for."""
        return cls(
            idle_timeout=args.idle_timeout or None,
            request_timeout=args.request_timeout or None,
            max_connections=args.max_connections or None,
            max_connections_per_address=args.max_connections_per_address or None,
        )

    @property
    def timed(self) -> bool:
        """Whether a time-out is set (then a sweeper runs)."""
        return bool(self.idle_timeout or self.request_timeout)

    @property
    def tick(self) -> float:
        """Seconds between two sweeps: a quarter of the shortest time-out, at most 1 s."""
        bounds = [t for t in (self.idle_timeout, self.request_timeout) if t]
        return min(1.0, min(bounds) / 4) if bounds else 1.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The policy's four flags, worded and defaulted the same in every example server."""
    defaults = ConnectionPolicy()
    group = parser.add_argument_group("connection policy (0 turns a bound off)")
    group.add_argument(
        "--idle-timeout",
        type=float,
        default=defaults.idle_timeout,
        metavar="SECONDS",
        help="close a connection that waits this long for its client's next request (%(default)s)",
    )
    group.add_argument(
        "--request-timeout",
        type=float,
        default=defaults.request_timeout,
        metavar="SECONDS",
        help="close a connection whose request is still incomplete this long after its first "
        "bytes arrived (%(default)s)",
    )
    group.add_argument(
        "--max-connections",
        type=int,
        default=defaults.max_connections,
        metavar="N",
        help="at this many connections a new one closes the one idle the longest, or is closed "
        "itself when all are busy (%(default)s)",
    )
    group.add_argument(
        "--max-connections-per-address",
        type=int,
        default=0,
        metavar="N",
        help="the same among the connections of one IP address (%(default)s)",
    )


@attrs.define(eq=False)
class Activity:
    """What the policy knows of one connection: three clock readings and a flag.

    The transport calls ``bytes_arrived`` when bytes come in, ``request_arrived`` when they
    made a complete request (the server is busy with it from then on) and ``waiting`` when the
    server waits for the client's next request again.
    """

    clock: Callable[[], float]
    last: float = attrs.field()
    """When the connection last began to wait for its client (idle since then)."""
    busy: bool = False
    """A request is being served: the client waits for us, which is not idleness."""
    partial_since: float | None = None
    """When the first bytes of a request still incomplete arrived (None: none pending)."""
    reading_since: float | None = None
    """Since when the server has waited for more of a request body the client does not send
    (an append session between two inputs): waiting for the client, so idle."""
    writing_since: float | None = None
    """Since when the server has waited for the client to take a response (None: not)."""
    writer: WriteProgress | None = None
    """The adapter whose write progress is watched (``serve_guarded`` sets it)."""
    _reads: int = 0
    _writes: int = 0
    _written_seen: int = 0
    _write_stall: float | None = None

    def _writer_stalled_since(self) -> float | None:
        """Since when ``writer`` has waited without its byte count moving, sampled at each
        look (so a stall is seen at most one sweep late)."""
        writer = self.writer
        if writer is None or not writer.write_waiting:
            self._write_stall = None
            return None
        written = writer.bytes_written
        if self._write_stall is None or written != self._written_seen:
            self._written_seen = written
            self._write_stall = self.clock()
        return self._write_stall

    @property
    def write_stalled_since(self) -> float | None:
        """Since when a response has waited for the client without progress (None: not)."""
        waits = [t for t in (self.writing_since, self._writer_stalled_since()) if t is not None]
        return min(waits) if waits else None

    @last.default
    def _now(self) -> float:
        return self.clock()

    @property
    def stalled_since(self) -> float | None:
        """Since when the server has waited on its client without progress (for shedding)."""
        waits = [t for t in (self.reading_since, self.write_stalled_since) if t is not None]
        return min(waits) if waits else None

    @contextlib.contextmanager
    def waiting_to_read(self) -> Iterator[None]:
        """Around a wait for request-body bytes: the time counts as idleness."""
        if not self._reads:
            self.reading_since = self.clock()
        self._reads += 1
        try:
            yield
        finally:
            self._reads -= 1
            self.reading_since = self.clock() if self._reads else None

    @contextlib.contextmanager
    def waiting_to_write(self) -> Iterator[None]:
        """Around a wait for the client to take bytes (``drain``, a flow-control window).
        Any one finished counts as progress for the connection: the others restart."""
        if not self._writes:
            self.writing_since = self.clock()
        self._writes += 1
        try:
            yield
        finally:
            self._writes -= 1
            self.writing_since = self.clock() if self._writes else None

    def bytes_arrived(self) -> None:
        if self.partial_since is None:
            self.partial_since = self.clock()

    def request_arrived(self) -> None:
        self.partial_since = None
        self.busy = True

    def serving(self, busy: bool) -> None:
        """Whether the server has requests in hand (HTTP/2: streams open) from now on."""
        if busy:
            self.busy = True
        else:
            self.waiting()

    def waiting(self) -> None:
        if self.busy:
            self.busy = False
            self.last = self.clock()

    def overdue(self, now: float, policy: ConnectionPolicy) -> str | None:
        """Why the connection must close now (``"request too slow"``, ``"idle"``), or None."""
        slow, idle = policy.request_timeout, policy.idle_timeout
        partial = self.partial_since
        if slow and partial is not None and now - partial >= slow:
            return "request too slow"
        stalled = self.write_stalled_since
        if slow and stalled is not None and now - stalled >= slow:
            return "response not taken"
        if idle and self.reading_since is not None and now - self.reading_since >= idle:
            return "idle"
        if idle and not self.busy and partial is None and now - self.last >= idle:
            return "idle"
        return None


class WriteProgress(Protocol):
    """What the policy reads of an adapter's writes (``s3p_codec.io``'s async adapters)."""

    @property
    def bytes_written(self) -> int: ...

    @property
    def write_waiting(self) -> bool: ...


class WatchedCodec(Generic[SendT, EventT]):
    """Any server-role codec, reporting to an ``Activity`` as it parses; everything else is
    the wrapped codec's own (attributes are looked up on it)."""

    def __init__(self, codec: Connection[SendT, EventT], activity: Activity) -> None:
        self.codec = codec
        self.activity = activity
        self.send = codec.send

    @property
    def role(self) -> Role:
        return self.codec.role

    @property
    def state(self) -> Any:
        return self.codec.state

    @property
    def finished(self) -> bool:
        return self.codec.finished

    def receive_data(self, data: bytes) -> None:
        if data:
            self.activity.bytes_arrived()
        self.codec.receive_data(data)

    def next_event(self) -> EventT | NeedData:
        try:
            event = self.codec.next_event()
        except RemoteProtocolError:
            self.activity.partial_since = None  # answered (or closing): not a slow request
            raise
        if event is NEED_DATA:
            self.activity.waiting()
        else:
            self.activity.request_arrived()
        return event

    def events(self) -> Iterator[EventT]:
        """Every complete event, through ``next_event`` (so the activity sees each one)."""
        while (event := self.next_event()) is not NEED_DATA:
            yield cast(EventT, event)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.codec, name)


class Watched(Protocol):
    """What the policy reads of a connection: an ``Activity``, or a server's own session."""

    last: float

    @property
    def busy(self) -> bool: ...

    @property
    def stalled_since(self) -> float | None:
        """Since when a busy connection has waited on its client (then it counts as idle)."""

    def overdue(self, now: float, policy: ConnectionPolicy) -> str | None: ...


@attrs.define(eq=False)
class _Client:
    activity: Watched
    address: str
    close: Callable[[str], None]


class Gatekeeper:
    """The policy applied to one server's connections: admission at the caps, and the sweeps
    that close idle and slow ones. ``shed`` counts why connections were closed."""

    def __init__(
        self, policy: ConnectionPolicy, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.policy = policy
        self.clock = clock
        self.clients: dict[int, _Client] = {}
        self.shed: Counter[str] = Counter()
        self._next_key = 0
        self._sweepers: set[asyncio.Task[None]] = set()  # held: the loop keeps weak references

    def __len__(self) -> int:
        return len(self.clients)

    def admit(self, activity: Watched, address: str, close: Callable[[str], None]) -> int | None:
        """Count a new connection in (a key for ``leave``), shedding the idlest at a cap; None
        when every connection that could make room is busy (then close the newcomer)."""
        per_address = self.policy.max_connections_per_address
        if per_address:
            same = [key for key, c in self.clients.items() if c.address == address]
            if len(same) >= per_address and not self._shed_idlest(same, "per-address cap"):
                self.shed["refused"] += 1
                return None
        cap = self.policy.max_connections
        if cap and len(self.clients) >= cap and not self._shed_idlest(list(self.clients), "cap"):
            log.info("refusing a connection: %d open and none idle", len(self.clients))
            self.shed["refused"] += 1
            return None
        self._next_key += 1
        self.clients[self._next_key] = _Client(activity, address, close)
        return self._next_key

    def _shed_idlest(self, keys: list[int], why: str) -> bool:
        idle = [
            (since, k) for k in keys if (since := _idle_since(self.clients[k].activity)) is not None
        ]
        if not idle:
            return False
        _, key = min(idle)
        log.info("at the %s: closing the connection idle the longest", why)
        self.shed["idlest"] += 1
        self.clients.pop(key).close("idlest")
        return True

    def leave(self, key: int) -> None:
        """The connection ended (a no-op if the policy closed it)."""
        self.clients.pop(key, None)

    def sweep(self, now: float | None = None) -> None:
        """Close every connection an ``overdue`` time-out has caught."""
        now = self.clock() if now is None else now
        for key, client in list(self.clients.items()):
            reason = client.activity.overdue(now, self.policy)
            if reason is not None:
                log.info("closing a connection: %s", reason)
                self.shed[reason] += 1
                del self.clients[key]
                client.close(reason)

    async def sweeper(self, server: asyncio.Server) -> None:
        """Sweep every ``policy.tick`` seconds while ``server`` listens."""
        if not self.policy.timed:
            return
        while server.is_serving():
            await asyncio.sleep(self.policy.tick)
            self.sweep()

    def start_sweeper(self, server: asyncio.Server) -> asyncio.Task[None]:
        """Run ``sweeper`` in a task, held here until it ends (a server started again after a
        restart gets its own)."""
        task = asyncio.get_running_loop().create_task(self.sweeper(server))
        self._sweepers.add(task)
        task.add_done_callback(self._sweepers.discard)
        return task

    def guard(self, address: str, activity: Watched) -> _Guard:
        """A context for one connection's task: admitted on entry (``refused`` tells whether
        it was not), counted out on exit, and a policy close cancels the task and ends the
        block quietly."""
        return _Guard(self, address, activity)


def _idle_since(activity: Watched) -> float | None:
    """Since when a connection has made no progress: waiting for its client's next request,
    or, while busy, waiting on its client (a body that does not come, a response not read).
    None while it makes progress."""
    if not activity.busy:
        return activity.last
    return activity.stalled_since


class _Guard:
    """See ``Gatekeeper.guard``."""

    def __init__(self, gatekeeper: Gatekeeper, address: str, activity: Watched) -> None:
        self.gatekeeper = gatekeeper
        self.address = address
        self.activity = activity
        self.key: int | None = None
        self.reason: str | None = None
        self.task: asyncio.Task[Any] | None = None

    @property
    def refused(self) -> bool:
        return self.key is None

    def _close(self, reason: str) -> None:
        self.reason = reason
        if self.task is not None:
            self.task.cancel()

    async def __aenter__(self) -> _Guard:
        self.task = asyncio.current_task()
        self.key = self.gatekeeper.admit(self.activity, self.address, self._close)
        return self

    async def __aexit__(self, kind: type[BaseException] | None, *_: object) -> bool:
        if self.key is not None:
            self.gatekeeper.leave(self.key)
        if kind is not None and issubclass(kind, asyncio.CancelledError) and self.reason:
            assert self.task is not None
            self.task.uncancel()
            return True  # closed by the policy: the connection just ends
        return False


def peer_address(writer: asyncio.StreamWriter) -> str:
    """The client's IP address (the per-address cap's key)."""
    peer = writer.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) else str(peer)


async def serve_guarded(
    gatekeeper: Gatekeeper,
    factory: Callable[[], Connection[SendT, EventT]],
    handler: Callable[[AsyncioConnection[SendT, EventT]], Awaitable[None]],
    host: str = "127.0.0.1",
    port: int = 0,
) -> asyncio.Server:
    """``s3p_codec.io.asyncio.serve`` under ``gatekeeper``'s policy: each codec is watched, each
    handler runs inside its guard, and the sweeper runs while the server listens."""
    loop = asyncio.get_running_loop()
    gatekeeper.clock = loop.time

    def watched() -> Connection[SendT, EventT]:
        return WatchedCodec(factory(), Activity(loop.time))

    async def guarded(conn: AsyncioConnection[SendT, EventT]) -> None:
        codec = conn.conn
        assert isinstance(codec, WatchedCodec)
        activity = codec.activity
        # A reader that never reads leaves the adapter's write waiting with its byte count
        # still: no progress, and the sweeper closes the connection after the request time-out.
        activity.writer = conn
        async with gatekeeper.guard(peer_address(conn.writer), activity) as guard:
            if not guard.refused:
                await handler(conn)

    server = await serve(watched, guarded, host, port)
    gatekeeper.start_sweeper(server)
    return server
