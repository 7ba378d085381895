"""What both directions of the Pravega cases share: the Hello, frame builders, names.

Both directions start with a ``Hello``, build frames from the same header and length-prefixed
strings, name the same writer and segment, and lay typed commands out the same way
(``commands()``), so these live here, below ``for_servers`` and ``for_clients``.
"""

from __future__ import annotations

import struct
import typing
import uuid
from typing import Any

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


#: What each wire kind of a command's ``FIELDS`` may hold, over its whole range.
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

#: Every typed command class, in type code order.
_TYPED: tuple[type[Any], ...] = tuple(
    sorted(typing.get_args(pravega.Command), key=lambda cls: int(cls.TYPE))
)


def _command(cls: type[Any]) -> st.SearchStrategy[pravega.Command]:
    if cls is pravega.Hello:  # compatible versions only: the others end the connection
        return st.builds(
            pravega.Hello,
            st.integers(pravega.OLDEST_COMPATIBLE_VERSION, (1 << 31) - 1),
            st.integers(-5, pravega.WIRE_VERSION),
        )
    if cls is pravega.Padding:  # its length is not a payload field
        return st.builds(pravega.Padding, st.integers(0, 64))
    return st.builds(cls, *(_KINDS[field[1]] for field in cls.FIELDS))


def commands(*types: type[pravega.Command]) -> st.SearchStrategy[pravega.Command]:
    """Any instance of the typed command classes ``types`` (of every class of
    ``pravega.Command``, both directions and the append block frames, when none is given).

    Each field is drawn over its whole wire range, as the class's ``FIELDS`` lay it out: any
    long, int and byte (negative ones included), any UUID, any text (modified UTF-8 on the
    wire), any bytes. ``Hello`` only carries versions a peer accepts (a high version of at
    least ``OLDEST_COMPATIBLE_VERSION``, a low one of at most ``WIRE_VERSION``: others end the
    connection). For a codec of one's own: every command must encode to a frame that decodes
    back to it. ``requests()`` and ``replies()`` draw what a live peer makes sense of instead.

    Raises ``ValueError`` for a class that is not a typed command.
    """
    for cls in types:
        if cls not in _TYPED:
            raise ValueError(f"not a typed Pravega command: {cls!r}")
    return st.sampled_from(types or _TYPED).flatmap(_command)


WRITER = uuid.UUID(int=0xF022)
SEGMENT = "fuzz/fuzz/0"


def _event(data: bytes) -> bytes:
    """A nested EVENT frame: "i32 0, i32 len, data"."""
    return struct.pack(">ii", 0, len(data)) + data


def _block(content: bytes, writer: uuid.UUID = WRITER) -> bytes:
    """An AppendBlock frame: "writerId UUID, then raw block content (length = 16 + content)"."""
    return _frame(3, writer.bytes + content)
