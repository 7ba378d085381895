"""What both directions of the Pravega cases share: the Hello, frame builders, names.

Both directions start with a ``Hello``, build frames from the same header and length-prefixed
strings, and name the same writer and segment, so these live here, below ``for_servers`` and
``for_clients``.
"""

from __future__ import annotations

import struct
import uuid

from hypothesis import strategies as st

from s3p_codec import pravega

E = pravega.ErrorCode
HELLO = pravega.encode(pravega.Hello())


def _frame(code: int, payload: bytes) -> bytes:
    return struct.pack(">ii", code, len(payload)) + payload


def _string(raw: bytes) -> bytes:
    return len(raw).to_bytes(2, "big") + raw


def segments() -> st.SearchStrategy[str]:
    """Segment names, any Unicode (encoded as modified UTF-8 on the wire)."""
    return st.text(min_size=1, max_size=24)


WRITER = uuid.UUID(int=0xF022)
SEGMENT = "fuzz/fuzz/0"


def _event(data: bytes) -> bytes:
    """A nested EVENT frame: "i32 0, i32 len, data"."""
    return struct.pack(">ii", 0, len(data)) + data


def _block(content: bytes, writer: uuid.UUID = WRITER) -> bytes:
    """An AppendBlock frame: "writerId UUID, then raw block content (length = 16 + content)"."""
    return _frame(3, writer.bytes + content)
