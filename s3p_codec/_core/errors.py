"""The two error classes every codec raises, and nothing else.

``LocalProtocolError`` means *we* were asked to send something the protocol forbids;
``RemoteProtocolError`` means the peer's bytes broke the protocol. Both carry the protocol's own
error code (``ERR_BAD_FORMAT``, ``400``, ``bad_frame``, ...) so that a caller can answer the peer
the way the spec requires, and ``fatal`` so that it knows whether the connection survives.

On a server-role connection a remote error also carries ``reply``: the typed event the server
must send before closing (or, for a recoverable error, before carrying on).
"""

from __future__ import annotations

import enum

from s3p_codec._core.checkpoint import allow

__all__ = ["LocalProtocolError", "ProtocolError", "RemoteProtocolError"]


class ProtocolError(Exception):
    """Base class of every error a codec raises on purpose.

    ``code`` is the protocol's own error code: always a member of one of the protocol's enums
    (its ``ErrorCode``, which subclasses ``str`` or ``int``, or S2S's ``Status``), so a typo at
    a raise cannot pass unnoticed and a caller can match on members. ``fatal`` says whether the
    connection is now in its ERROR state. ``reply`` is the event a server should send in answer,
    or ``None``.
    """

    code: enum.Enum
    fatal: bool
    reply: object | None

    def __init__(
        self,
        message: str,
        *,
        code: enum.Enum,
        fatal: bool = True,
        reply: object | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.fatal = fatal
        self.reply = reply

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.message!r}, code={self.code!r}, "
            f"fatal={self.fatal!r}, reply={self.reply!r})"
        )

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only arguments defeat Exception's default pickling; Spark workers pickle errors.
        return (_rebuild, (type(self), self.message, self.code, self.fatal, self.reply))


@allow  # snapshots of Observers hold the last error of a direction
def _rebuild(
    cls: type[ProtocolError], message: str, code: enum.Enum, fatal: bool, reply: object | None
) -> ProtocolError:
    return cls(message, code=code, fatal=fatal, reply=reply)


class LocalProtocolError(ProtocolError):
    """We were asked to send (or do) something the protocol forbids; nothing was emitted."""


class RemoteProtocolError(ProtocolError):
    """The peer's bytes broke the protocol."""
