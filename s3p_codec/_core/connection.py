"""The shape every protocol's ``Connection`` has, so that drivers are written once.

Drivers (``s3p_codec.io``, ``capture``, ``spark``) are typed against these Protocols and never
against a concrete codec: a fix in a protocol never touches a driver.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Sequence
from typing import ClassVar, Protocol, TypeVar, runtime_checkable

from s3p_codec._core.types import NEED_DATA, Direction, NeedData, Role

__all__ = ["Connection", "Observer", "drain"]

SendT_contra = TypeVar("SendT_contra", contravariant=True)
EventT_co = TypeVar("EventT_co", covariant=True)


@runtime_checkable
class Connection(Protocol[SendT_contra, EventT_co]):
    """A sans-IO protocol state machine for one end of one connection.

    ``send`` turns an event into the bytes to write (raising ``LocalProtocolError``, with
    nothing emitted, if the protocol forbids it now). ``receive_data`` buffers bytes from the peer
    (``b""`` means the peer closed). ``next_event`` parses one event or returns ``NEED_DATA``;
    it raises ``RemoteProtocolError`` when the peer broke the protocol.

    End of stream: after ``receive_data(b"")`` the events already complete still come out; then,
    if a partial frame is left, ``next_event`` raises ``RemoteProtocolError`` (the peer closed
    mid-frame); otherwise the state becomes final and ``next_event`` returns ``NEED_DATA`` for
    ever. A driver that has fed EOF and gets ``NEED_DATA`` therefore knows the peer closed
    cleanly.
    """

    @property
    def role(self) -> Role:
        """Which end this is: ``Role.CLIENT`` or ``Role.SERVER``."""
        ...

    @property
    def state(self) -> enum.Enum:
        """The protocol's own state enum; its ``ERROR`` and ``CLOSED`` members are final."""
        ...

    @property
    def finished(self) -> bool:
        """True once the connection can carry no more traffic: close the transport.

        A server that has just caught a fatal ``RemoteProtocolError`` may still ``send`` the
        error's ``reply`` once; after that (or after any other fatal error) this is True.
        """
        ...

    def send(self, event: SendT_contra) -> bytes:
        """The bytes to write for ``event``. Raises ``LocalProtocolError`` for an event the
        protocol forbids now; nothing is emitted then."""
        ...

    def receive_data(self, data: bytes) -> None:
        """Buffer received bytes, in any split; ``b""`` says the peer closed."""
        ...

    def next_event(self) -> EventT_co | NeedData:
        """The next complete event, or ``NEED_DATA``. Raises ``RemoteProtocolError`` when the
        peer's bytes break the protocol."""
        ...

    def events(self) -> Iterator[EventT_co]:
        """Every event that the buffered bytes complete, until ``NEED_DATA``."""
        ...


EventT = TypeVar("EventT")


def drain(next_event: Callable[[], EventT | NeedData]) -> Iterator[EventT]:
    """Every event ``next_event`` gives until ``NEED_DATA``: the ``events`` of every codec.

    The bound method is looked up once, not per event (it runs per message).
    """
    while (event := next_event()) is not NEED_DATA:
        yield event


ObservedT_co = TypeVar("ObservedT_co", covariant=True)


@runtime_checkable
class Observer(Protocol[ObservedT_co]):
    """A passive decoder of both directions of one recorded conversation (captures).

    ``observe`` is fed the bytes seen travelling one way and returns what they complete, tagged
    with direction (see ``s3p_codec._core.observe``). ``gap`` says that ``size`` bytes were lost
    in one direction (a missing TCP segment): the Observer resynchronises where the protocol
    allows and says so. ``close`` says that no more bytes come in a direction.

    ``resynchronizes`` says whether the Observer can find a frame start again after a gap (S3P
    at a line start, the length-prefixed protocols at a plausible header). A capture that begins
    in the middle of a connection starts such an Observer with a zero-size ``gap``, so that it
    hunts instead of misreading the middle of a frame; HTTP Observers are fed as they are.
    """

    resynchronizes: ClassVar[bool]

    def observe(self, direction: Direction, data: bytes) -> Sequence[ObservedT_co]:
        """Bytes seen travelling ``direction``: what they complete. Never raises for bad
        bytes: a broken stream gives an ``ObservedError``."""
        ...

    def gap(self, direction: Direction, size: int) -> Sequence[ObservedT_co]:
        """``size`` bytes were lost in ``direction``: an ``ObservedGap``, and a hunt for the
        next frame where the protocol allows one."""
        ...

    def close(self, direction: Direction) -> Sequence[ObservedT_co]:
        """No more bytes come in ``direction``: what its end completes."""
        ...
