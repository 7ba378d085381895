"""What both directions of the Durable Streams cases share: codes, the stream, content types.

Requests name the fuzzed stream and its content types, responses answer requests on that
same stream, and both directions write requests with one client-role codec, so these live
here, below ``for_servers`` and ``for_clients``.
"""

from __future__ import annotations

from s3p_codec import Role, durable

C = durable.ErrorCode
STREAM = "/v1/stream/fuzz"
TYPES = ("text/plain", "application/octet-stream", "application/json")


def _client() -> durable.Connection:
    return durable.Connection(Role.CLIENT, host="127.0.0.1")
