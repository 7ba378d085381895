"""What both directions of the RustLog cases share: the frame, its JSON, codes and topics.

Requests and responses are the same frame (a 4-byte big-endian length, then one JSON object)
and name topics the same way, and both directions write requests with one pipelining
client-role codec, so these live here, below ``for_servers`` and ``for_clients``.
"""

from __future__ import annotations

import json
import string

from hypothesis import strategies as st

from s3p_codec import Role, rustlog

BAD = rustlog.ErrorCode.INVALID_REQUEST
TOO_LARGE = rustlog.ErrorCode.RECORD_TOO_LARGE
U32 = (1 << 32) - 1
U64 = (1 << 64) - 1


def _frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


TOPIC_CHARS = string.ascii_letters + string.digits + "_-"


def topics() -> st.SearchStrategy[str]:
    """Topic names: 1-255 characters of ``[A-Za-z0-9_-]``."""
    return st.text(TOPIC_CHARS, min_size=1, max_size=40)


def _client() -> rustlog.Connection:
    return rustlog.Connection(Role.CLIENT, pipelining=True)
