"""The few decisions every adapter makes alike, kept in one place so the three never drift."""

from __future__ import annotations

from typing import TypeVar, cast

from s3p_codec._core.connection import Connection
from s3p_codec._core.errors import ProtocolError, RemoteProtocolError
from s3p_codec._core.types import Role

__all__ = ["CLOSE_TIMEOUT", "DEFAULT_RECEIVE_SIZE", "FLUSH_SIZE", "error_reply_bytes"]

SendT = TypeVar("SendT")
EventT = TypeVar("EventT")

DEFAULT_RECEIVE_SIZE = 64 * 1024
"""Bytes asked of the transport per read: large enough that a pipelined burst is one syscall."""

CLOSE_TIMEOUT = 5.0
"""Seconds a close waits for the peer to take the last bytes; then the socket is just closed.

A peer that never reads must not keep a closing connection (and its task) alive for ever.
"""

FLUSH_SIZE = 64 * 1024
"""Bytes kept by ``send(..., flush=False)`` before they are written anyway (bounded memory)."""


def error_reply_bytes(conn: Connection[SendT, EventT], error: RemoteProtocolError) -> bytes:
    """The bytes of the reply a server owes the peer for ``error``, or ``b""`` if none.

    Only a server-role connection answers, and only when the codec attached a ``reply``. If the
    codec refuses to send it (its state forbids it), nothing is sent: the codec is the authority.
    """
    if conn.role is not Role.SERVER or error.reply is None:
        return b""
    try:
        return conn.send(cast(SendT, error.reply))
    except ProtocolError:
        return b""
