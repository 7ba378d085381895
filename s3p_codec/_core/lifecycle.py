"""When a connection is finished, and the one reply a server may send after a fatal error.

Every protocol has the same two rules, and drivers (``s3p_codec.io``) rely on all five codecs
keeping them alike:

- After a fatal remote error, a *server* may send one reply: the error's ``reply`` (an S3P
  ``ErrorReply``, a RustLog ``Error``, an S2S ``Terminal``, a Pravega error command, a Durable
  Streams error response). Nothing else, and nothing after it. ``ReplyAfterError`` keeps that
  debt.
- A connection is *finished* (close the transport) when no reply is owed and either it ended
  (a fatal error, a terminal frame) or its stream closed with nothing left outstanding
  (requests unanswered, appends unacknowledged, events not yet taken). ``finished`` is that
  formula; each codec says what "ended", "closed" and "outstanding" mean for it.
"""

from __future__ import annotations

__all__ = ["ReplyAfterError", "finished"]


class ReplyAfterError:
    """The reply a server still owes after a fatal remote error (or nothing).

    ``owe`` records it when the error is raised; ``pay`` is asked by ``send`` whether the event
    being sent is that reply (and, if so, settles the debt); ``forgive`` drops a debt that can
    no longer be paid (the transport closed, or something else answered).
    """

    __slots__ = ("_reply",)

    def __init__(self) -> None:
        self._reply: object | None = None

    def __repr__(self) -> str:
        return f"<ReplyAfterError owed={self._reply!r}>"

    @property
    def owed(self) -> bool:
        """True while the reply may still be sent."""
        return self._reply is not None

    @property
    def reply(self) -> object | None:
        """The reply owed, or None."""
        return self._reply

    def owe(self, reply: object | None) -> None:
        """A fatal error was raised on a server: ``reply`` may be sent once (None: nothing)."""
        self._reply = reply

    def pay(self, event: object, *, exact: bool = False) -> bool:
        """True, and the debt settled, if ``event`` is the reply owed.

        The event must have the reply's type (a server may word its error its own way), or,
        with ``exact``, equal it (protocols whose error reply carries nothing to choose).
        """
        reply = self._reply
        if reply is None:
            return False
        if (event == reply) if exact else (type(event) is type(reply)):
            self._reply = None
            return True
        return False

    def forgive(self) -> None:
        """The reply can no longer be sent: owe nothing."""
        self._reply = None


def finished(
    gate: ReplyAfterError, *, ended: bool, closed: bool = False, outstanding: bool = False
) -> bool:
    """The ``finished`` property of every codec.

    ``ended``: the connection reached a state after which no traffic flows (ERROR, a terminal
    frame either way). ``closed``: the peer's stream ended cleanly. ``outstanding``: the peer
    still waits for something only we can send (answers to its requests, acks to its appends),
    or events remain to be taken.
    """
    if gate.owed:
        return False
    return ended or (closed and not outstanding)
