"""S2S (S2 Streaming): the framed protobuf sessions of S2, sans-IO.

    from s3p_codec import s2s, Role
    conn = s2s.Connection(Role.CLIENT, s2s.Session.APPEND, compression=s2s.Compression.ZSTD)
    body = conn.send(s2s.AppendInput(records=(s2s.AppendRecord(b"hello"),)))
    conn.receive_data(response_body_chunk)
    for event in conn.events(): ...          # AppendAck, ReconnectAdvised

``s2s.http`` builds and checks the HTTP requests and responses that open sessions;
``s2s.Observer`` decodes captured HTTP/1.1 or cleartext HTTP/2 exchanges that carry S2S bodies.
The protobuf messages alone (``encode_append_input``, ``decode_read_batch``, ...) serve S2's
unary endpoints, whose bodies are one message without session framing.
"""

from s3p_codec.s2s._compression import Compression, negotiate
from s3p_codec.s2s._connection import Connection, Session, terminal_error
from s3p_codec.s2s._errors import (
    AppendConditionFailed,
    ReadUnwritten,
    SessionTerminated,
    Status,
    status_of,
)
from s3p_codec.s2s._events import (
    AppendAck,
    AppendInput,
    AppendRecord,
    ErrorCode,
    Event,
    Header,
    Heartbeat,
    ReadBatch,
    ReconnectAdvised,
    SequencedRecord,
    StreamPosition,
    Terminal,
    metered_bytes,
)
from s3p_codec.s2s._http1 import EndOfBody, Http1Connection
from s3p_codec.s2s._limits import MAX_FRAME_LENGTH, Limits
from s3p_codec.s2s._observer import Observer
from s3p_codec.s2s._proto import (
    decode_append_ack,
    decode_append_input,
    decode_read_batch,
    encode_append_ack,
    encode_append_input,
    encode_read_batch,
)
from s3p_codec.s2s._state import ConnectionState
from s3p_codec.s2s.http import (
    ErrorResponse,
    ReadQuery,
    SessionRequest,
    SessionResponse,
)

__all__ = [
    "MAX_FRAME_LENGTH",
    "AppendAck",
    "AppendConditionFailed",
    "AppendInput",
    "AppendRecord",
    "Compression",
    "Connection",
    "ConnectionState",
    "EndOfBody",
    "ErrorResponse",
    "Http1Connection",
    "ReadQuery",
    "SessionRequest",
    "SessionResponse",
    "ErrorCode",
    "Event",
    "Header",
    "Heartbeat",
    "Limits",
    "Observer",
    "ReadBatch",
    "ReadUnwritten",
    "ReconnectAdvised",
    "SequencedRecord",
    "Session",
    "SessionTerminated",
    "Status",
    "StreamPosition",
    "Terminal",
    "decode_append_ack",
    "decode_append_input",
    "decode_read_batch",
    "encode_append_ack",
    "encode_append_input",
    "encode_read_batch",
    "metered_bytes",
    "negotiate",
    "status_of",
    "terminal_error",
]
