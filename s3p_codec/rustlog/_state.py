"""The RustLog connection states and every legal move between them, in one table.

The spec's "Connection Lifecycle"::

    TCP_CONNECTING → CONNECTED → REQUEST_ACTIVE → CONNECTED → CLOSED
                          ↑            ↓
                          └── ERROR ←──┘

In words, as ``TRANSITIONS`` holds it:

- A codec starts in ``CONNECTED`` ("Socket established, ready for frames"):
  ``TCP_CONNECTING`` is the transport's business.
- ``REQUEST_SENT`` (client) and ``REQUEST_RECEIVED`` (server) lead to ``REQUEST_ACTIVE``
  ("Processing request, response pending"), from ``CONNECTED`` or from ``REQUEST_ACTIVE``
  itself (pipelined requests).
- ``ALL_ANSWERED``: the last request in flight got its answer (sent by a server, received by a
  client): back to ``CONNECTED``. A server that answers after the peer closed stays ``CLOSED``.
- ``PEER_CLOSED``: the peer's stream ended between frames: ``CLOSED`` ("Connection
  terminated"), with or without requests in flight.
- ``FATAL_ERROR``: a "protocol violation that terminates the connection" (a frame length over
  ``MAX_FRAME_SIZE``, invalid UTF-8, malformed JSON), or a response that breaks the pairing:
  ``ERROR`` ("Protocol violation, connection terminated"). Recoverable errors ("Unknown request
  type", "Invalid request fields": "return Error response") never move the state.
- ``ERROR`` and ``CLOSED`` are final. The diagram's arrow from ERROR back to CONNECTED
  contradicts ERROR's own definition ("connection terminated"), so there is none here.
"""

from __future__ import annotations

import enum
from typing import Final

from s3p_codec._core.transitions import StateEnum, Transitions

__all__ = ["TRANSITIONS", "ConnectionState", "State", "Trigger"]


class ConnectionState(StateEnum):
    """The spec's connection states (``TCP_CONNECTING`` is the transport's business)."""

    CONNECTED = "CONNECTED"
    REQUEST_ACTIVE = "REQUEST_ACTIVE"
    ERROR = "ERROR"
    CLOSED = "CLOSED"


State = ConnectionState
"""The name this enum had before the five packages agreed on ``ConnectionState``."""


class Trigger(enum.Enum):
    """What happens to a RustLog connection that may move its state."""

    REQUEST_SENT = "request sent"
    REQUEST_RECEIVED = "request received"
    ALL_ANSWERED = "all answered"
    PEER_CLOSED = "peer closed"
    FATAL_ERROR = "fatal error"


_S = ConnectionState
_T = Trigger

TRANSITIONS: Final = Transitions[ConnectionState, Trigger](
    "rustlog",
    _S.CONNECTED,
    {
        _S.CONNECTED: {
            _T.REQUEST_SENT: _S.REQUEST_ACTIVE,
            _T.REQUEST_RECEIVED: _S.REQUEST_ACTIVE,
            _T.PEER_CLOSED: _S.CLOSED,
            _T.FATAL_ERROR: _S.ERROR,
        },
        _S.REQUEST_ACTIVE: {
            _T.REQUEST_SENT: _S.REQUEST_ACTIVE,
            _T.REQUEST_RECEIVED: _S.REQUEST_ACTIVE,
            _T.ALL_ANSWERED: _S.CONNECTED,
            _T.PEER_CLOSED: _S.CLOSED,
            _T.FATAL_ERROR: _S.ERROR,
        },
        _S.CLOSED: {_T.ALL_ANSWERED: _S.CLOSED},  # a server answers what it read before the end
        _S.ERROR: {},
    },
)
"""Every legal move of a RustLog connection: ``{state: {trigger: next state}}``."""
