"""S2S error codes and the typed errors a terminal frame turns into.

Real S2 ends a session on error with a terminal frame: a u16 HTTP status and a JSON body such
as ``{"code": "bad_frame", "message": "..."}``. A 412 body carries ``{"seq_num_mismatch": N}``
or ``{"fencing_token_mismatch": "..."}``, a 416 body ``{"tail": {"seq_num": N, "timestamp":
T}}``. Receiving one raises ``SessionTerminated`` (or its 412/416 subclasses); its ``code`` is the
HTTP status, as in the spec's table of common error codes.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from s3p_codec._core import RemoteProtocolError

if TYPE_CHECKING:
    from s3p_codec.s2s.events import StreamPosition, Terminal

__all__ = [
    "AppendConditionFailed",
    "ErrorCode",
    "ReadUnwritten",
    "SessionTerminated",
    "status_of",
]


class ErrorCode(enum.StrEnum):
    """The snake_case error codes of S2 (the ``code`` of a JSON error body).

    The codec raises the first four itself; the others are what an S2 server answers and are
    listed so that servers and clients spell them the same way.
    """

    BAD_FRAME = "bad_frame"  # 400: framing broken (length, flags, compression, leftovers)
    BAD_PROTO = "bad_proto"  # 400: the protobuf payload does not decode
    INVALID = "invalid"  # 422: a well-formed message that breaks a rule (1..1000 records)
    HEARTBEAT_TIMEOUT = "heartbeat_timeout"  # no frame for 20 s on a read session
    BAD_HEADER = "bad_header"  # 400: a request header is missing or wrong
    BAD_PATH = "bad_path"  # 400: no such route
    BAD_QUERY = "bad_query"  # 400: a query parameter is malformed
    UNAUTHORIZED = "unauthorized"  # 401
    PERMISSION_DENIED = "permission_denied"  # 403
    BASIN_NOT_FOUND = "basin_not_found"  # 404
    STREAM_NOT_FOUND = "stream_not_found"  # 404
    STREAM_EXISTS = "resource_already_exists"  # 409
    SEQ_NUM_MISMATCH = "seq_num_mismatch"  # 412
    FENCING_TOKEN_MISMATCH = "fencing_token_mismatch"  # 412
    RANGE_NOT_SATISFIABLE = "range_not_satisfiable"  # 416
    SERVER_DRAINING = "server_draining"  # 503
    INTERNAL = "internal"  # 500


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
        super().__init__(f"terminal frame {terminal.status}: {text}", code=terminal.status)
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
