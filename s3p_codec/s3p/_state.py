"""The S3P connection states and every legal move between them, in one table.

S3P has no handshake and no states on the wire: a connection is ``OPEN`` from the start, and
what ends it are errors and the end of a stream. In words, as ``TRANSITIONS`` holds it:

- ``CLOSING_ERROR_SENT``: a server sent an Error reply that closes the connection ("After
  sending any Error reply, servers MUST close the connection immediately"; in v0.2.0 only the
  unrecoverable codes close): ``CLOSED``. From ``OPEN``; from ``ERROR``, where that reply is the
  one the server owes for the peer's violation; and from ``CLOSED``, when the peer had closed
  cleanly and the server answers what it read before.
- ``CLOSING_ERROR_RECEIVED``: a client read such an Error reply ("the server MUST close the
  connection and any pipelined replies not yet read by the client are lost"): ``CLOSED``.
- ``PEER_CLOSED``: the peer's stream ended between frames: ``CLOSED``.
- ``FATAL_ERROR``: the peer's bytes broke the protocol (or ended mid-frame): ``ERROR``
  ("Connections MUST be closed upon error to avoid ambiguous state").
- ``CLOSED`` is final. ``ERROR`` carries no traffic; its only way out is the one Error reply a
  server owes (to ``CLOSED``).
"""

from __future__ import annotations

import enum
from typing import Final

from s3p_codec._core.transitions import StateEnum, Transitions

__all__ = ["TRANSITIONS", "ConnectionState", "Trigger"]


class ConnectionState(StateEnum):
    """OPEN carries traffic; CLOSED and ERROR are final."""

    OPEN = "open"
    CLOSED = "closed"
    """An Error reply was sent (server) or received (client), or the peer closed cleanly."""
    ERROR = "error"
    """The peer broke the protocol; a server may still send the error's reply, once (which
    moves it to CLOSED)."""


class Trigger(enum.Enum):
    """What happens to an S3P connection that may move its state."""

    CLOSING_ERROR_SENT = "closing error sent"
    CLOSING_ERROR_RECEIVED = "closing error received"
    PEER_CLOSED = "peer closed"
    FATAL_ERROR = "fatal error"


_S = ConnectionState
_T = Trigger

TRANSITIONS: Final = Transitions[ConnectionState, Trigger](
    "s3p",
    _S.OPEN,
    {
        _S.OPEN: {
            _T.CLOSING_ERROR_SENT: _S.CLOSED,
            _T.CLOSING_ERROR_RECEIVED: _S.CLOSED,
            _T.PEER_CLOSED: _S.CLOSED,
            _T.FATAL_ERROR: _S.ERROR,
        },
        _S.ERROR: {_T.CLOSING_ERROR_SENT: _S.CLOSED},  # the one reply a server owes
        _S.CLOSED: {_T.CLOSING_ERROR_SENT: _S.CLOSED},  # answering after the peer's clean end
    },
)
"""Every legal move of an S3P connection: ``{state: {trigger: next state}}``."""
