"""Send one recorded conversation again over a real socket and collect the live answers.

Blocking sockets with a deadline per answer, one thread per conversation: the answer to a
request is complete when the protocol's dialect says so, when the target closes, or when the
time bound passes (server-pushed data that never comes). The io adapters are not used because
they wait for one event without a bound; here every wait has one.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError
from s3p_codec.replay._compare import Pairing, first_difference, translate
from s3p_codec.replay._conversations import Conversation, Exchange
from s3p_codec.replay._dialects import Dialect

__all__ = ["Target", "Live", "open_live"]

_RECEIVE = 65536


@runtime_checkable
class _Transport(Protocol):
    """A client codec that owes its peer bytes after receiving (the HTTP/2 client)."""

    ended: str | None

    def data_to_send(self) -> bytes: ...


@attrs.frozen
class Target:
    """A server to replay to: ``host:port`` and the pairings of its assigned values."""

    host: str
    port: int
    pairing: Pairing = attrs.field(factory=Pairing, eq=False)

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@attrs.define
class Live:
    """One conversation's connection to one target, request after request."""

    target: Target
    dialect: Dialect
    sock: socket.socket | None
    codec: Any
    closed: str | None = None

    def ask(
        self,
        exchange: Exchange,
        timeout: float,
        progress: Callable[[int], None],
        grace: float = 0.0,
    ) -> tuple[tuple[object, ...], str | None]:
        """Send the exchange's request, return the live answer and how it differs (or None).

        A request with no recorded answer is still given ``grace`` seconds for a live one, so
        that a late answer to it is not taken for the next request's.
        """
        recorded = self._meaningful(exchange.answer)
        request = translate(exchange.request, self.dialect.assigned, self.target.pairing)
        if self.closed is not None:
            live: tuple[object, ...] = ()
            note: str | None = self.closed
        else:
            live, note = self._exchange(request, recorded, timeout if recorded else grace,
                                        progress)  # fmt: skip
        difference = first_difference(
            self.dialect.fold(recorded), self.dialect.fold(live), self.dialect.assigned,
            self.target.pairing, self.dialect.loose,
        )  # fmt: skip
        if note is not None and not live and recorded:
            difference = f"no answer: {note}"
        elif difference is not None and note is not None:
            difference = f"{difference} ({note})"
        elif note is not None and len(live) < len(recorded):
            difference = note
        return live, difference

    def _meaningful(self, events: Sequence[object]) -> tuple[object, ...]:
        return tuple(e for e in events if not isinstance(e, self.dialect.noise))

    def _exchange(
        self,
        request: object,
        recorded: tuple[object, ...],
        timeout: float,
        progress: Callable[[int], None],
    ) -> tuple[tuple[object, ...], str | None]:
        assert self.sock is not None
        try:
            data = self.codec.send(request)
            data += b"".join(self.codec.send(then) for then in self.dialect.after(request))
        except LocalProtocolError as exc:
            if getattr(self.codec, "finished", False):  # a fatal error reply ended it
                self.closed = "the connection ended after the previous answer"
                return (), self.closed
            return (), f"the client codec would not send it: {exc}"
        try:
            self.sock.sendall(data)
        except OSError as exc:
            self.closed = f"the target closed the connection ({exc.strerror or exc})"
            return (), self.closed
        live: list[object] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                live.extend(self._drain())
            except RemoteProtocolError as exc:
                self.closed = f"the target's bytes broke the protocol: {exc}"
                return tuple(live), self.closed
            progress(len(live))
            if self.dialect.answer_done(recorded, live) and (recorded or live):
                return tuple(live), None  # unrecorded: the first live answer ends the grace
            if self.closed is not None:
                return tuple(live), self.closed
            remaining = deadline - time.monotonic()
            if remaining <= 0 and not recorded:
                return tuple(live), None  # the grace for an unanswered request is over
            if remaining <= 0:
                return tuple(live), f"no complete answer within {timeout:g} s"
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(_RECEIVE)
            except TimeoutError:
                continue
            except OSError as exc:
                chunk = b""
                self.closed = f"the target closed the connection ({exc.strerror or exc})"
            if not chunk and self.closed is None:
                self.closed = "the target closed the connection"
            self.codec.receive_data(chunk)
            self._answer_transport()

    def _answer_transport(self) -> None:
        """HTTP/2 owes its peer bytes after receiving (acknowledgements, window updates), and
        a GOAWAY ends the conversation as a close does."""
        if not isinstance(self.codec, _Transport):
            return
        if self.codec.ended is not None and self.closed is None:
            self.closed = self.codec.ended
        owed = self.codec.data_to_send()
        if owed and self.sock is not None:
            try:
                self.sock.sendall(owed)
            except OSError as exc:
                self.closed = self.closed or f"the target closed the connection ({exc})"

    def _drain(self) -> list[object]:
        events: list[object] = []
        while (event := self.codec.next_event()) is not NEED_DATA:
            if not isinstance(event, self.dialect.noise):
                events.append(event)
        return events

    def close(self) -> None:
        """Close the socket (the codec needs no goodbye: the recording ended here too)."""
        if self.sock is not None:
            self.sock.close()


def open_live(target: Target, dialect: Dialect, conversation: Conversation, timeout: float) -> Live:
    """Connect to the target; ``OSError`` (refused, unreachable, timed out) goes to the caller."""
    sock = socket.create_connection((target.host, target.port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    codec = dialect.client(conversation, target.host, target.port)
    return Live(target, dialect, sock, codec)
