"""S2S error codes' HTTP statuses and the typed errors a terminal frame turns into.

Real S2 ends a session on error with a terminal frame: a u16 HTTP status and a JSON body such
as ``{"code": "bad_frame", "message": "..."}``. A 412 body carries ``{"seq_num_mismatch": N}``
or ``{"fencing_token_mismatch": "..."}``, a 416 body ``{"tail": {"seq_num": N, "timestamp":
T}}``. Receiving one raises ``SessionTerminated`` (or its 412/416 subclasses); its ``code`` is the
HTTP status as a ``Status`` member, as in the spec's table of common error codes.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from s3p_codec._core import RemoteProtocolError
from s3p_codec.s2s._events import ErrorCode  # with the events, as in the other protocol packages

if TYPE_CHECKING:
    from s3p_codec.s2s._events import StreamPosition, Terminal

__all__ = [
    "AppendConditionFailed",
    "ReadUnwritten",
    "SessionTerminated",
    "Status",
    "status_of",
]


class Status(enum.IntEnum):
    """The HTTP status a terminal frame carries: the spec's table of common error codes, and the
    statuses S2 pairs with an ``ErrorCode``. A status outside them (the wire allows any u16) is
    an unnamed member (``STATUS_499``) equal to its number, so ``code`` is always a member."""

    BAD_REQUEST = 400
    UNAUTHORIZED = 401
    FORBIDDEN = 403
    NOT_FOUND = 404
    REQUEST_TIMEOUT = 408
    CONFLICT = 409
    PRECONDITION_FAILED = 412
    RANGE_NOT_SATISFIABLE = 416
    UNPROCESSABLE_CONTENT = 422
    INTERNAL_ERROR = 500
    SERVICE_UNAVAILABLE = 503

    @classmethod
    def _missing_(cls, value: object) -> Status | None:
        # Built per call and not registered: nothing is kept for the process.
        if type(value) is not int or not 0 <= value <= 0xFFFF:
            return None
        member = int.__new__(cls, value)
        member._name_ = f"STATUS_{value}"
        member._value_ = value
        return member


_STATUS = {
    ErrorCode.BAD_FRAME: 400,
    ErrorCode.BAD_PROTO: 400,
    ErrorCode.INVALID: 422,
    ErrorCode.HEARTBEAT_TIMEOUT: 408,
    ErrorCode.BAD_HEADER: 400,
    ErrorCode.BAD_PATH: 404,
    ErrorCode.BAD_QUERY: 400,
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.PERMISSION_DENIED: 403,
    ErrorCode.BASIN_NOT_FOUND: 404,
    ErrorCode.STREAM_NOT_FOUND: 404,
    ErrorCode.STREAM_EXISTS: 409,
    ErrorCode.SEQ_NUM_MISMATCH: 412,
    ErrorCode.FENCING_TOKEN_MISMATCH: 412,
    ErrorCode.RANGE_NOT_SATISFIABLE: 416,
    ErrorCode.SERVER_DRAINING: 503,
    ErrorCode.INTERNAL: 500,
}


def status_of(code: ErrorCode) -> int:
    """The HTTP status S2 pairs with ``code``."""
    return _STATUS[code]


class SessionTerminated(RemoteProtocolError):
    """The peer ended the session with a terminal frame.

    ``terminal`` is the decoded frame (status, code, message and the 412/416 details);
    ``code`` is its HTTP status. "After receiving or sending a terminal frame, the session must
    be closed": the connection is final once this is raised.
    """

    terminal: Terminal

    def __init__(self, terminal: Terminal) -> None:
        text = terminal.message or terminal.code or "session terminated"
        super().__init__(
            f"terminal frame {terminal.status}: {text}", code=Status(terminal.status)
        )
        self.terminal = terminal

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.terminal,))


class AppendConditionFailed(SessionTerminated):
    """412: ``match_seq_num`` or ``fencing_token`` did not match (see ``terminal``)."""

    @property
    def expected_seq_num(self) -> int | None:
        """The sequence number the stream expected, when ``match_seq_num`` failed the append."""
        return self.terminal.seq_num_mismatch

    @property
    def expected_fencing_token(self) -> str | None:
        """The fencing token the stream expected, when a fencing token mismatch failed the append.
        """
        return self.terminal.fencing_token_mismatch


class ReadUnwritten(SessionTerminated):
    """416: the read started beyond the tail; ``tail`` says where the stream ends."""

    @property
    def tail(self) -> StreamPosition | None:
        """The stream's tail position the server reported, when it did."""
        return self.terminal.tail
