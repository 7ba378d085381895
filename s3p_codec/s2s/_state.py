"""The S2S session states and every legal move between them, in one table.

A session is ``OPEN`` once its HTTP exchange carries frames. In words, as ``TRANSITIONS``
holds it:

- ``TERMINAL_RECEIVED`` and ``TERMINAL_SENT``: "After receiving or sending a terminal frame,
  the session must be closed. No further frames should be sent or expected": ``TERMINATED``.
  Our own terminal may still follow the clean end of the peer's body (``CLOSED``). A server in
  ``ERROR`` sends its terminal as the reply it owes, and stays in ``ERROR``.
- ``PEER_CLOSED``: "A normal end of session has no terminal frame: the HTTP body just ends"
  (with no frame cut short, and, on an append client, every input acknowledged): ``CLOSED``.
- ``FATAL_ERROR``: the peer's frames broke the protocol: ``ERROR``.
- ``HEARTBEAT_TIMEOUT``: a read client saw no frame for 20 s ("clients give up after 20 s
  without a frame"): ``ERROR``.
- ``TERMINATED`` and ``ERROR`` are final; ``CLOSED`` ends only the peer's body, and its one way
  out is our terminal frame.
"""

from __future__ import annotations

import enum
from typing import Final

from s3p_codec._core.transitions import StateEnum, Transitions

__all__ = ["TRANSITIONS", "ConnectionState", "Trigger"]


class ConnectionState(StateEnum):
    """``OPEN`` carries frames; ``CLOSED`` is a clean end of the peer's body; ``TERMINATED``
    follows a terminal frame either way; ``ERROR`` follows a fatal protocol error."""

    OPEN = "open"
    CLOSED = "closed"
    TERMINATED = "terminated"
    ERROR = "error"


class Trigger(enum.Enum):
    """What happens to an S2S session that may move its state."""

    TERMINAL_SENT = "terminal sent"
    TERMINAL_RECEIVED = "terminal received"
    PEER_CLOSED = "peer closed"
    FATAL_ERROR = "fatal error"
    HEARTBEAT_TIMEOUT = "heartbeat timeout"


_S = ConnectionState
_T = Trigger

TRANSITIONS: Final = Transitions[ConnectionState, Trigger](
    "s2s",
    _S.OPEN,
    {
        _S.OPEN: {
            _T.TERMINAL_SENT: _S.TERMINATED,
            _T.TERMINAL_RECEIVED: _S.TERMINATED,
            _T.PEER_CLOSED: _S.CLOSED,
            _T.FATAL_ERROR: _S.ERROR,
            _T.HEARTBEAT_TIMEOUT: _S.ERROR,
        },
        _S.CLOSED: {_T.TERMINAL_SENT: _S.TERMINATED},  # our body may still end with one
        _S.ERROR: {_T.TERMINAL_SENT: _S.ERROR},  # the reply a server owes
        _S.TERMINATED: {},
    },
)
"""Every legal move of an S2S session: ``{state: {trigger: next state}}``."""
