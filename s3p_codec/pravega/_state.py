"""The Pravega connection states and every legal move between them, in one table.

The wire protocol has no connection states of its own: a connection carries commands from its
first byte until it ends. In words, as ``TRANSITIONS`` holds it:

- A connection starts ``OPEN``.
- ``PEER_CLOSED``: the peer's stream ended between frames (and outside an append block):
  ``CLOSED``. Asked again at the end of the stream, it stays ``CLOSED``.
- ``FATAL_ERROR``: the peer broke a rule (an undefined type code, a length over the limit, a
  command this end never receives, an append out of order, incompatible versions, a stream
  ended inside a frame): ``ERROR``. The real segment store closes the connection then; a
  server may first send the error's reply (the ``Hello`` of a version mismatch).
- ``CLOSED`` and ``ERROR`` are final.
"""

from __future__ import annotations

import enum
from typing import Final

from s3p_codec._core.transitions import StateEnum, Transitions

__all__ = ["TRANSITIONS", "ConnectionState", "Trigger"]


class ConnectionState(StateEnum):
    """OPEN until the peer closes (CLOSED) or breaks the protocol (ERROR); both are final."""

    OPEN = "open"
    CLOSED = "closed"
    ERROR = "error"


class Trigger(enum.Enum):
    """What happens to a Pravega connection that may move its state."""

    PEER_CLOSED = "peer closed"
    FATAL_ERROR = "fatal error"


_S = ConnectionState
_T = Trigger

TRANSITIONS: Final = Transitions[ConnectionState, Trigger](
    "pravega",
    _S.OPEN,
    {
        _S.OPEN: {_T.PEER_CLOSED: _S.CLOSED, _T.FATAL_ERROR: _S.ERROR},
        _S.CLOSED: {_T.PEER_CLOSED: _S.CLOSED},  # the end of the stream, seen again
        _S.ERROR: {},
    },
)
"""Every legal move of a Pravega connection: ``{state: {trigger: next state}}``."""
