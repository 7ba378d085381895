"""Pravega commands split by direction, as this codec's own tables say (test-only).

The commands themselves come from ``s3p_codec.testing.pravega.commands()``; what is left here
needs the codec's private direction tables (``REQUESTS``, ``REPLIES``): which typed commands a
client sends outside an append block, which a server sends, and the real reply codes this
library keeps as ``Opaque``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from s3p_codec import pravega
from s3p_codec.pravega._events import REPLIES, REQUESTS, TYPED
from s3p_codec.testing.pravega import commands

ALL_TYPED: list[type[Any]] = sorted(TYPED.values(), key=lambda cls: int(cls.TYPE))
_BLOCK = {pravega.AppendBlock, pravega.AppendBlockEnd, pravega.PartialEvent, pravega.Padding,
          pravega.EventCommand}  # fmt: skip
CLIENT_SENDS = [cls for cls in ALL_TYPED if cls.TYPE in REQUESTS and cls not in _BLOCK]
SERVER_SENDS = [cls for cls in ALL_TYPED if cls.TYPE in REPLIES]

client_request = commands(*CLIENT_SENDS)
server_reply = commands(*SERVER_SENDS)
opaque_reply = st.builds(
    pravega.Opaque,
    st.sampled_from([c for c in REPLIES if c not in TYPED]),
    st.binary(max_size=30),
)
