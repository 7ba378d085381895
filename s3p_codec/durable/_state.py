"""The states shared by both roles of a Durable Streams connection, and every legal move
between them, in one table.

A connection is one HTTP/1.1 connection carrying one exchange (request, response) at a time.
In words, as ``TRANSITIONS`` holds it (the role that fires a trigger in brackets):

- ``REQUEST_SENT`` (client: a request written, or seen on the wire by a passive reader) and
  ``REQUEST_RECEIVED`` (server: a request head arrived) lead from ``IDLE`` to ``BUSY``.
- ``SSE_STARTED`` (either: the head of a ``text/event-stream`` response to a live SSE read):
  ``BUSY`` to ``STREAMING``.
- ``EXCHANGE_DONE`` (either: the response is complete and both ends of the HTTP exchange are
  done, so the next may begin): back to ``IDLE``. ``LAST_EXCHANGE_DONE``: the response is
  complete but the connection cannot carry another (``Connection: close``, a body read to the
  end of the stream): ``CLOSED``.
- ``PEER_CLOSED`` (either: the peer's stream ended where HTTP allows it): ``CLOSED``.
- ``FATAL_ERROR`` (either: the peer broke HTTP framing or a limit, or sent bytes that answer
  no request): ``ERROR``. A server still sends the error response it owes, then closes ("MUST
  close the connection after responding", RFC 9112 6.3, for the framings it refuses).
- ``SEND_FAILED`` (either: HTTP refused what this end tried to write): ``ERROR``; a server in
  ``ERROR`` whose owed reply fails stays there.
- ``CLOSED`` and ``ERROR`` are final. Errors in a well-framed exchange (a bad request, an
  invalid response) are not fatal and move no state.
"""

from __future__ import annotations

import enum
from typing import Final

from s3p_codec._core.transitions import StateEnum, Transitions

__all__ = ["TRANSITIONS", "ConnectionState", "Trigger"]


class ConnectionState(StateEnum):
    """Where one HTTP connection is (both roles).

    IDLE: between exchanges. BUSY: a request is in flight (client) or owed a response (server).
    STREAMING: an SSE response body is open. CLOSED and ERROR are final.
    """

    IDLE = "idle"
    BUSY = "busy"
    STREAMING = "streaming"
    CLOSED = "closed"
    ERROR = "error"


class Trigger(enum.Enum):
    """What happens to a Durable Streams connection that may move its state."""

    REQUEST_SENT = "request sent"
    REQUEST_RECEIVED = "request received"
    SSE_STARTED = "SSE started"
    EXCHANGE_DONE = "exchange done"
    LAST_EXCHANGE_DONE = "last exchange done"
    PEER_CLOSED = "peer closed"
    FATAL_ERROR = "fatal error"
    SEND_FAILED = "send failed"


_S = ConnectionState
_T = Trigger

TRANSITIONS: Final = Transitions[ConnectionState, Trigger](
    "durable",
    _S.IDLE,
    {
        _S.IDLE: {
            _T.REQUEST_SENT: _S.BUSY,
            _T.REQUEST_RECEIVED: _S.BUSY,
            _T.PEER_CLOSED: _S.CLOSED,
            _T.FATAL_ERROR: _S.ERROR,
            _T.SEND_FAILED: _S.ERROR,
        },
        _S.BUSY: {
            _T.SSE_STARTED: _S.STREAMING,
            _T.EXCHANGE_DONE: _S.IDLE,
            _T.LAST_EXCHANGE_DONE: _S.CLOSED,
            _T.PEER_CLOSED: _S.CLOSED,
            _T.FATAL_ERROR: _S.ERROR,
            _T.SEND_FAILED: _S.ERROR,
        },
        _S.STREAMING: {
            _T.EXCHANGE_DONE: _S.IDLE,
            _T.LAST_EXCHANGE_DONE: _S.CLOSED,
            _T.PEER_CLOSED: _S.CLOSED,
            _T.FATAL_ERROR: _S.ERROR,
        },
        _S.CLOSED: {},
        _S.ERROR: {_T.SEND_FAILED: _S.ERROR},  # the reply a server owes could not be written
    },
)
"""Every legal move of a Durable Streams connection: ``{state: {trigger: next state}}``."""
