"""The adapter core: every decision the three adapters share, and the one order they run in.

``AdapterCore`` wraps one codec ``Connection`` and decides, with no I/O of its own, when held
bytes are written, what a ``RemoteProtocolError`` on a server-role connection costs (its reply is
queued, and a fatal error closes), what the end of stream means (the ``Connection`` protocol's
contract: after EOF, ``NEED_DATA`` is a clean close) and what a close writes last.

``Driver`` runs those decisions in order, written once with ``await``. An adapter subclasses it
and only moves bytes with its library (``_write``, ``_receive``, ``_shutdown``): asyncio and trio
directly; the blocking adapter with coroutines that never suspend, which it runs to their end in
one step (``run_blocking``). So a fix in the sequencing is made once, for the three.

Close sequencing, for every adapter: mark closed (later sends raise ``ConnectionClosed``), write
the bytes still held, close the write side (the peer reads every byte, then EOF), close the
transport. The write and the half-close together get ``close_timeout`` seconds: a peer that
stopped reading must not keep a closing connection, or its task, alive for ever. That bound also
covers the last reply of a connection the codec ``finished`` and the reply to a fatal error,
which go out through the close for that reason.
"""

from __future__ import annotations

import contextlib
import enum
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from types import TracebackType
from typing import Generic, Self, TypeVar, cast

from s3p_codec._core.connection import Connection
from s3p_codec._core.errors import ProtocolError, RemoteProtocolError
from s3p_codec._core.types import NEED_DATA, Role
from s3p_codec.io import ConnectionClosed

__all__ = [
    "CLOSE",
    "CLOSE_TIMEOUT",
    "DEFAULT_RECEIVE_SIZE",
    "END",
    "FAILED",
    "FLUSH_SIZE",
    "HOLD",
    "RECEIVE",
    "WRITE",
    "WRITE_PIECE",
    "AdapterCore",
    "After",
    "Driver",
    "Step",
    "error_reply_bytes",
    "run_blocking",
]

SendT = TypeVar("SendT")
EventT = TypeVar("EventT")
T = TypeVar("T")

DEFAULT_RECEIVE_SIZE = 64 * 1024
"""Bytes asked of the transport per read: large enough that a pipelined burst is one syscall."""

CLOSE_TIMEOUT = 5.0
"""Seconds a close waits for the peer to take the last bytes; then the socket is just closed.

A peer that never reads must not keep a closing connection (and its task) alive for ever.
"""

FLUSH_SIZE = 64 * 1024
"""Bytes kept by ``send(..., flush=False)`` before they are written anyway (bounded memory)."""

WRITE_PIECE = 64 * 1024
"""Bytes the asyncio and trio adapters hand their transport at a time, waiting for each to be
taken before the next: the transport never holds much more than this of a large write, and
``Driver.bytes_written`` moves as the peer reads."""


def error_reply_bytes(conn: Connection[SendT, EventT], error: RemoteProtocolError) -> bytes:
    """The bytes of the reply a server owes the peer for ``error``, or ``b""`` if none.

    Only a server-role connection answers, and only when the codec attached a ``reply``. If the
    codec refuses to send it (its state forbids it), nothing is sent: the codec is the authority.
    """
    if conn.role is not Role.SERVER or error.reply is None:
        return b""
    try:
        return conn.send(cast(SendT, error.reply))
    except ProtocolError:
        return b""


def run_blocking(step: Coroutine[object, None, T]) -> T:
    """Run a ``Driver`` step whose awaits never suspend (blocking I/O) to its end, at once."""
    try:
        step.send(None)
    except StopIteration as stop:
        return cast(T, stop.value)
    step.close()
    raise RuntimeError("a blocking adapter step suspended")  # its I/O never awaits anything


class Step(enum.Enum):
    """What ``AdapterCore.next_event`` asks of the adapter when it has no event to give."""

    RECEIVE = "receive"
    """Write the held bytes (the peer may wait for them), read, pass the data to ``received``."""
    END = "end"
    """The stream is over (clean EOF, or closed here): close and raise ``ConnectionClosed``."""
    FAILED = "failed"
    """The codec raised ``AdapterCore.error``; its reply is held: close (if ``must_close``) or
    write it, then raise the error."""


class After(enum.Enum):
    """What ``AdapterCore.send`` asks of the adapter once the event's bytes are held."""

    HOLD = "hold"
    """Nothing yet: the bytes go out with later ones."""
    WRITE = "write"
    """Write every held byte now."""
    CLOSE = "close"
    """The codec finished: close, which writes the held bytes within ``close_timeout``."""


# Module-level names for the members: a global is read faster than an enum class attribute,
# and these are compared once or twice per event.
RECEIVE, END, FAILED = Step.RECEIVE, Step.END, Step.FAILED
HOLD, WRITE, CLOSE = After.HOLD, After.WRITE, After.CLOSE


class AdapterCore(Generic[SendT, EventT]):
    """The sans-IO part of an adapter: held bytes, end of stream, error replies, closed state."""

    __slots__ = (
        "_encode",
        "_pending",
        "_pending_size",
        "closed",
        "conn",
        "eof",
        "error",
        "must_close",
        "parse",
    )

    def __init__(self, conn: Connection[SendT, EventT]) -> None:
        self.conn = conn
        self._encode = conn.send  # bound once: these two run for every event
        self.parse = conn.next_event
        """The codec's own ``next_event``; its answer goes to ``need_data`` or ``failed``."""
        self.eof = False
        """The transport said end of stream, and the codec was told (``receive_data(b"")``)."""
        self.closed = False
        """A close began: nothing more is written, and ``send`` raises ``ConnectionClosed``."""
        self._pending: list[bytes] = []  # encoded, not yet written, in the protocol's order
        self._pending_size = 0
        self.error: RemoteProtocolError | None = None
        """The codec's last ``RemoteProtocolError`` (see ``Step.FAILED``)."""
        self.must_close = False
        """After ``Step.FAILED``: the error was fatal (or the codec finished), close now."""

    @property
    def pending(self) -> bool:
        """True while encoded bytes wait to be written."""
        return bool(self._pending)

    def send(self, event: SendT, flush: bool) -> After:
        """Encode ``event`` and hold its bytes; say whether to write now, wait, or close.

        The codec raises ``LocalProtocolError`` (and nothing is held) if the protocol forbids the
        event now. Held bytes are written on ``flush``, once ``FLUSH_SIZE`` bytes are held, and
        before the adapter waits for the peer (``Step.RECEIVE``).
        """
        if self.closed:
            raise ConnectionClosed("send on a closed connection")
        data = self._encode(event)
        if data:
            self._pending.append(data)
            self._pending_size += len(data)
        if self.conn.finished:
            return CLOSE
        if flush or self._pending_size >= FLUSH_SIZE:
            return WRITE
        return HOLD

    def take(self) -> bytes:
        """Every held byte, in order, as one buffer (one write, one syscall); none held after."""
        pending = self._pending
        if not pending:
            return b""
        data = b"".join(pending) if len(pending) > 1 else pending[0]
        pending.clear()
        self._pending_size = 0
        return data

    def unsent(self, data: bytes) -> None:
        """Hold again the tail of a write the transport did not take, before anything newer."""
        if data:
            self._pending.insert(0, data)
            self._pending_size += len(data)

    def next_event(self) -> EventT | Step:
        """The next event the codec completes, or what the adapter must do to get one.

        End of stream, per the ``Connection`` protocol: after ``receive_data(b"")`` the complete
        events still come out, a partial frame raises ``RemoteProtocolError``, and then
        ``NEED_DATA`` means the peer closed cleanly (see ``need_data``). A
        ``RemoteProtocolError`` becomes ``Step.FAILED`` (see ``failed``).
        """
        try:
            event = self.parse()
        except RemoteProtocolError as error:
            return self.failed(error)
        return self.need_data() if event is NEED_DATA else event

    def need_data(self) -> Step:
        """The codec said ``NEED_DATA``: ``Step.END`` if the stream is over, else ``RECEIVE``."""
        if self.eof or self.closed or self.conn.finished:
            return END
        return RECEIVE

    def received(self, data: bytes) -> None:
        """Pass bytes read from the transport to the codec; ``b""`` is the end of stream."""
        if not data:
            self.eof = True
        self.conn.receive_data(data)

    def failed(self, error: RemoteProtocolError) -> Step:
        """The codec raised ``error``: hold the reply a server owes, keep the error, and decide
        whether the transport must close now (``must_close``); ``Step.FAILED``.

        The reply goes after every reply still held: their order is the protocol's. A fatal
        error (or a codec that finished with that reply) closes, and the close writes the reply.
        """
        if not self.closed:
            reply = error_reply_bytes(self.conn, error)
            if reply:
                self._pending.append(reply)
                self._pending_size += len(reply)
        self.error = error
        self.must_close = error.fatal or self.conn.finished
        return FAILED

    def begin_close(self) -> bytes | None:
        """Start the close: the bytes to write last, or ``None`` if a close already began."""
        if self.closed:
            return None
        self.closed = True
        return self.take()

    def abandon(self) -> None:
        """The byte stream is no longer whole (a write stopped part-way): carry nothing more."""
        self.closed = True
        self._pending.clear()
        self._pending_size = 0


class Driver(ABC, Generic[SendT, EventT]):
    """``AdapterCore``'s decisions run in order, with ``await``: the body of every adapter.

    A subclass moves bytes with its library and nothing else: ``_write`` (all of it, waiting for
    back-pressure), ``_receive`` (some bytes, ``b""`` at EOF) and ``_shutdown`` (the close
    sequence described in this module's docstring). ``_GONE`` names the exceptions by which its
    library says that the peer is gone.
    """

    _GONE: tuple[type[BaseException], ...] = (OSError,)

    def __init__(
        self,
        conn: Connection[SendT, EventT],
        *,
        receive_size: int = DEFAULT_RECEIVE_SIZE,
        close_timeout: float = CLOSE_TIMEOUT,
    ) -> None:
        self._core: AdapterCore[SendT, EventT] = AdapterCore(conn)
        self._receive_size = receive_size
        self.close_timeout = close_timeout
        """Seconds a close waits for the peer to take the last bytes before it just closes."""
        self._written = 0
        self._writes_waiting = 0

    @property
    def bytes_written(self) -> int:
        """Bytes the transport has taken so far (asyncio: drained below its high-water mark;
        trio: accepted by ``send_all``). A server watches it to tell a slow reader, whose
        count moves, from one that never reads (write progress)."""
        return self._written

    @property
    def write_waiting(self) -> bool:
        """True while a write waits for the transport to take bytes (the peer to read)."""
        return self._writes_waiting > 0

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Around an adapter's wait for its transport (keeps ``write_waiting`` true)."""
        self._writes_waiting += 1
        try:
            yield
        finally:
            self._writes_waiting -= 1

    @property
    def conn(self) -> Connection[SendT, EventT]:
        """The codec this adapter drives."""
        return self._core.conn

    @property
    def closed(self) -> bool:
        """True once ``aclose()`` ran (by the caller, or because the codec finished)."""
        return self._core.closed

    @abstractmethod
    async def _write(self, data: bytes) -> None: ...

    @abstractmethod
    async def _receive(self, size: int) -> bytes: ...

    @abstractmethod
    async def _shutdown(self, final: bytes) -> None: ...

    async def send(self, event: SendT, *, flush: bool = True) -> None:
        """Encode ``event`` and write it; close the transport if the codec finished.

        The codec raises ``LocalProtocolError`` (and nothing is written) if the protocol forbids
        the event now. With ``flush=False`` the bytes are kept and written in one go with later
        ones: before ``next_event`` waits for the peer, on ``flush()``, on close, or once
        ``FLUSH_SIZE`` bytes are pending. A server answering a pipelined burst saves a system
        call per reply that way.
        """
        after = self._core.send(event, flush)
        if after is not HOLD:
            await self._act(after)

    async def _act(self, after: After) -> None:
        """Write or close, as ``AdapterCore.send`` decided."""
        if after is WRITE:
            await self._write(self._core.take())
        else:
            await self.aclose()

    async def flush(self) -> None:
        """Write every byte kept by ``send(..., flush=False)`` (and wait for back-pressure)."""
        if self._core.pending:
            await self._write(self._core.take())

    async def next_event(self) -> EventT:
        """Wait for the next event; raise ``ConnectionClosed`` at a clean end of stream.

        A ``RemoteProtocolError`` from the codec propagates; on a server-role connection its
        ``reply`` is sent first, and a fatal error closes the transport. Cancelling the wait loses
        nothing: bytes already read stay with the codec, and the next call goes on from there.
        """
        # The codec is asked directly (one call less per event than ``core.next_event``); only
        # its two other answers go through the core's decisions and the slow path.
        core = self._core
        try:
            event = core.parse()
        except RemoteProtocolError as error:
            return await self._wait(core.failed(error))
        if event is NEED_DATA:
            return await self._wait(core.need_data())
        return event

    async def _wait(self, step: Step) -> EventT:
        """Act on ``step`` and ask the codec again, until it gives an event (the slow path of
        ``next_event``, where the I/O is)."""
        core = self._core
        while True:
            if step is RECEIVE:
                if core.pending:
                    await self._write(core.take())  # the peer may wait for these first
                core.received(await self._receive(self._receive_size))
            elif step is END:
                await self.aclose()
                raise ConnectionClosed("the peer closed the connection")
            else:
                error = cast(RemoteProtocolError, core.error)  # Step.FAILED: the codec raised it
                core.error = None
                if core.must_close:
                    await self.aclose()
                elif core.pending:
                    # The peer may be gone already: the error still reaches the caller.
                    with contextlib.suppress(*self._GONE):
                        await self._write(core.take())
                raise error
            event = core.next_event()
            if not isinstance(event, Step):
                return event
            step = event

    async def receive_ahead(self) -> int:
        """Read once from the transport into the codec without asking it for events: the
        number of bytes read, 0 once the peer has closed (or this side has).

        For a server that waits on something else (a blocking read on its store) and wants to
        notice a peer that went away meanwhile. Nothing is lost or reordered: ``next_event``
        parses these bytes later, and a cancelled read loses nothing either. Reading ahead is
        the caller's to bound (the codec buffers what it is given).
        """
        core = self._core
        if core.eof or core.closed:
            return 0
        if core.pending:
            await self._write(core.take())  # the peer may wait for these first
        data = await self._receive(self._receive_size)
        core.received(data)
        return len(data)

    def __aiter__(self) -> AsyncIterator[EventT]:
        return self._events()

    async def _events(self) -> AsyncIterator[EventT]:
        while True:
            try:
                event = await self.next_event()
            except ConnectionClosed:
                return
            yield event

    async def aclose(self) -> None:
        """Write what is held, close the write side (the peer reads every byte, then EOF), then
        the transport; a peer that stopped reading gets ``close_timeout`` seconds."""
        final = self._core.begin_close()
        if final is not None:
            await self._shutdown(final)

    async def _serve(
        self, handler: Callable[[Self], Awaitable[None]], quiet: tuple[type[BaseException], ...]
    ) -> None:
        """Run a server's ``handler`` on this connection, then close it.

        ``ConnectionClosed``, ``RemoteProtocolError`` (already answered) and ``quiet`` (the
        library's way of saying the peer went away) end the handler without a trace.
        """
        ended: tuple[type[BaseException], ...] = (RemoteProtocolError, *quiet)
        try:
            await handler(self)
        except ConnectionClosed:
            pass
        except ended as error:
            logging.getLogger(type(self).__module__).debug("connection ended: %r", error)
        finally:
            await self.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
