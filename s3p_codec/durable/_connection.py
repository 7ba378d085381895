"""``Connection(role)``: one end of a Durable Streams conversation, like the other four packages.

HTTP/1.1 makes the two ends different machines (a client sends requests and reads responses, a
server the reverse), so each role's logic lives in its own private class (``client.py``,
``server.py``). ``Connection`` picks one from the role and forwards to it: one public class
whose type does not depend on the role. The role-only members (``host``, ``queued`` and
``expect_response`` of a client; ``message_start`` and ``request_line`` of a server) raise
``AttributeError`` on the other role, as a missing attribute would.
"""

from __future__ import annotations

from collections.abc import Iterator

from s3p_codec._core.connection import drain
from s3p_codec._core.errors import LocalProtocolError
from s3p_codec._core.types import NeedData, Role
from s3p_codec.durable._client import _ClientConnection
from s3p_codec.durable._events import ConnectionErrorCode, Event, Request
from s3p_codec.durable._limits import Limits
from s3p_codec.durable._server import _ServerConnection
from s3p_codec.durable._spans import EventSpans
from s3p_codec.durable._state import ConnectionState

__all__ = ["Connection"]


class Connection:
    """One end of a Durable Streams HTTP/1.1 connection: ``Connection(Role.CLIENT, limits,
    host=..., spans=...)`` (``host`` is its ``Host`` header, ``spans`` an optional
    ``EventSpans`` measuring where each response event lies in the server's bytes) or
    ``Connection(Role.SERVER, limits)``. A client sends requests and yields responses and SSE
    events; a server yields requests and sends responses. Raises TypeError for ``spans`` with
    the server role, ValueError for a ``host`` no request can carry (anything but printable
    ASCII without spaces).
    """

    __slots__ = ("_client", "_impl", "_server")

    def __init__(
        self,
        role: Role,
        limits: Limits | None = None,
        *,
        host: str = "localhost",
        spans: EventSpans | None = None,
    ) -> None:
        impl: _ClientConnection | _ServerConnection
        # Exactly one of the two is set: the role-only members check theirs without isinstance.
        self._client: _ClientConnection | None = None
        self._server: _ServerConnection | None = None
        if role is Role.CLIENT:
            impl = self._client = _ClientConnection(limits, host=host, spans=spans)
        else:
            if spans is not None:
                raise TypeError("spans measure the responses a client reads; a server reads none")
            impl = self._server = _ServerConnection(limits)
        self._impl = impl

    def __repr__(self) -> str:
        return f"<durable.Connection {self.role.name} {self.state.name}>"

    # -- what both roles have (the shared ``Connection`` Protocol) --------------------------

    @property
    def limits(self) -> Limits:
        """The bounds this connection enforces."""
        return self._impl.limits

    @property
    def role(self) -> Role:
        """``Role.CLIENT`` or ``Role.SERVER``, as given."""
        return self._impl.role

    @property
    def state(self) -> ConnectionState:
        """Where the connection is: IDLE, busy with an exchange, streaming SSE, CLOSED or ERROR."""
        return self._impl.state

    @property
    def finished(self) -> bool:
        """True once no more traffic can flow and every queued event was taken: close the
        transport (a server first sends the reply a fatal error still owes)."""
        return self._impl.finished

    @property
    def request(self) -> Request | None:
        """A client's request whose response is arriving, a server's request the next response
        answers; None when there is none."""
        return self._impl.request

    def send(self, event: Event) -> bytes:
        """The bytes of ``event``: a request for a client; a response, or one SSE event of a
        streaming response, for a server. Raises ``LocalProtocolError`` when the event is
        invalid, early, or not the role's to send (nothing is emitted)."""
        client = self._client
        if client is not None:
            if isinstance(event, Request):
                return client.send(event)
            raise LocalProtocolError(
                f"a client sends requests, not {type(event).__name__}",
                code=ConnectionErrorCode.STATE,
                fatal=False,
            )
        if isinstance(event, Request):
            raise LocalProtocolError(
                f"a server sends responses, not {type(event).__name__}",
                code=ConnectionErrorCode.STATE,
                fatal=False,
            )
        server = self._server
        assert server is not None  # one of the two roles is always set
        return server.send(event)

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes from the peer; ``b""`` means it closed."""
        self._impl.receive_data(data)

    def next_event(self) -> Event | NeedData:
        """The next event (a response or SSE event for a client, a request for a server), or
        ``NEED_DATA``. Raises ``RemoteProtocolError`` when the peer breaks HTTP or the protocol
        (a server's carries the ``ErrorResponse`` to send as ``reply``), and
        ``LocalProtocolError`` when called again after a fatal error."""
        return self._impl.next_event()

    def events(self) -> Iterator[Event]:
        """Every event the buffered bytes complete, until ``NEED_DATA``."""
        return drain(self._impl.next_event)  # the role's method itself: no forwarding per event

    # -- a client's only --------------------------------------------------------------------

    @property
    def host(self) -> str:
        """A client's ``Host`` header value; AttributeError for a server."""
        return self._client_only("host").host

    @property
    def queued(self) -> int:
        """How many events the bytes a client already read completed, waiting for
        ``next_event``; AttributeError for a server."""
        return self._client_only("queued").queued

    def expect_response(self, request: Request | None, method: bytes, target: bytes) -> None:
        """For a passive client-role reader (a capture's Observer): the response to ``method
        target``, a request seen on the wire rather than sent here, comes next. ``request`` types
        it (None for a request the server could not parse). Raises ``LocalProtocolError`` unless
        the connection is IDLE, AttributeError for a server."""
        self._client_only("expect_response").expect_response(request, method, target)

    # -- a server's only --------------------------------------------------------------------

    @property
    def message_start(self) -> int:
        """Stream offset where the request a server is reading begins (once it is complete, where
        the next one begins); AttributeError for a client."""
        return self._server_only("message_start").message_start

    @property
    def request_line(self) -> tuple[bytes, bytes] | None:
        """Method and target of the request head a server read last, until its answer is sent;
        AttributeError for a client."""
        return self._server_only("request_line").request_line

    def _client_only(self, name: str) -> _ClientConnection:
        if self._client is None:
            raise AttributeError(f"{name} is a client-role connection's only", name=name, obj=self)
        return self._client

    def _server_only(self, name: str) -> _ServerConnection:
        if self._server is None:
            raise AttributeError(f"{name} is a server-role connection's only", name=name, obj=self)
        return self._server
