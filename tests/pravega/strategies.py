"""Hypothesis strategies for Pravega events, built from each class's wire layout."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import strategies as st

from s3p_codec import pravega
from s3p_codec.pravega._events import REPLIES, REQUESTS, TYPED

_KINDS: dict[str, st.SearchStrategy[Any]] = {
    "long": st.integers(-(1 << 63), (1 << 63) - 1),
    "int": st.integers(-(1 << 31), (1 << 31) - 1),
    "byte": st.integers(-128, 127),
    "bool": st.booleans(),
    "uuid": st.uuids(),
    "str": st.text(max_size=12),
    "data": st.binary(max_size=40),
    "event": st.binary(max_size=40),
    "rest": st.binary(max_size=40),
}


def command(cls: type[Any]) -> st.SearchStrategy[Any]:
    """Any instance of one typed command class."""
    if cls is pravega.Hello:  # compatible ranges only: others end the connection
        return st.builds(pravega.Hello, st.integers(5, (1 << 31) - 1), st.integers(-5, 17))
    if cls is pravega.Padding:
        return st.builds(pravega.Padding, st.integers(0, 64))
    return st.builds(cls, *(_KINDS[field[1]] for field in cls.FIELDS))


ALL_TYPED = sorted(TYPED.values(), key=lambda cls: int(cls.TYPE))
_BLOCK = {pravega.AppendBlock, pravega.AppendBlockEnd, pravega.PartialEvent, pravega.Padding,
          pravega.EventCommand}  # fmt: skip
CLIENT_SENDS = [cls for cls in ALL_TYPED if cls.TYPE in REQUESTS and cls not in _BLOCK]
SERVER_SENDS = [cls for cls in ALL_TYPED if cls.TYPE in REPLIES]
_TYPED_CODES = set(TYPED)

any_command = st.sampled_from(ALL_TYPED).flatmap(command)
client_request = st.sampled_from(CLIENT_SENDS).flatmap(command)
server_reply = st.sampled_from(SERVER_SENDS).flatmap(command)
opaque_reply = st.builds(
    pravega.Opaque,
    st.sampled_from([c for c in REPLIES if c not in _TYPED_CODES]),
    st.binary(max_size=30),
)
writer_ids = st.uuids()
NIL = uuid.UUID(int=0)
