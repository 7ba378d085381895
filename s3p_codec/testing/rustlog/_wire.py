"""What both directions of the RustLog cases share: the frame, its JSON, codes and topics.

Requests and responses are the same frame (a 4-byte big-endian length, then one JSON object),
name topics and carry free-form JSON the same way, and both directions write requests with one
pipelining client-role codec, so these live here, below ``for_servers`` and ``for_clients``.
"""

from __future__ import annotations

import json
import string

from hypothesis import strategies as st

from s3p_codec import Role, rustlog

BAD = rustlog.ErrorCode.INVALID_REQUEST
TOO_LARGE = rustlog.ErrorCode.RECORD_TOO_LARGE
U16 = (1 << 16) - 1
U32 = (1 << 32) - 1
U64 = (1 << 64) - 1


def _frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


TOPIC_CHARS = string.ascii_letters + string.digits + "_-"


def topics() -> st.SearchStrategy[str]:
    """Topic names: 1-255 characters of ``[A-Za-z0-9_-]``."""
    return st.text(TOPIC_CHARS, min_size=1, max_size=255)


def _texts(max_size: int = 40) -> st.SearchStrategy[str]:
    """Any text JSON can carry: every code point but lone surrogates (hypothesis' default)."""
    return st.text(max_size=max_size)


def json_values() -> st.SearchStrategy[rustlog.JsonValue]:
    """Free-form JSON values as RustLog events hold them (``rustlog.JsonValue``): null, bools,
    integers from -2^63 to u64, finite floats, any text, and arrays (tuples) and objects
    (``rustlog.JsonObject``) nesting them.

    What ``MetricsFetchResponse.metrics`` and ``Error.details`` hold, and what an unknown extra
    field of any message may hold ("Unknown extra fields are ignored"): add one to a request
    or response to check that a peer skips it.
    """
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(1 << 63), U64)
        | st.floats(allow_nan=False, allow_infinity=False)
        | _texts()
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=4).map(tuple)
            | st.dictionaries(_texts(), inner, max_size=4).map(rustlog.JsonObject)
        ),
        max_leaves=12,
    )


def _json_objects() -> st.SearchStrategy[rustlog.JsonObject]:
    return st.dictionaries(_texts(), json_values(), max_size=5).map(rustlog.JsonObject)


def _client() -> rustlog.Connection:
    return rustlog.Connection(Role.CLIENT, pipelining=True)
