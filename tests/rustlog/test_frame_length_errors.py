"""A frame header alone condemns a frame of length 0 or over ``max_frame_size``: the error is
fatal at once, with the spec's words and its code, whether the header came whole or in pieces.
(Mutation testing found no test reading these messages.)"""

from __future__ import annotations

import struct

import pytest

from s3p_codec import RemoteProtocolError, Role, rustlog
from s3p_codec.rustlog import ErrorCode

LIMITS = rustlog.Limits(max_frame_size=4096)


def _refused(header: bytes, chunks: int) -> RemoteProtocolError:
    conn = rustlog.Connection(Role.SERVER, limits=LIMITS)
    step = max(1, len(header) // chunks)
    for at in range(0, len(header), step):
        conn.receive_data(header[at : at + step])
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    return caught.value


@pytest.mark.parametrize("chunks", [1, 4])
def test_an_empty_frame_is_refused_by_min_frame_size(chunks: int) -> None:
    error = _refused(struct.pack(">I", 0), chunks)
    assert error.message == "empty frame: MIN_FRAME_SIZE is 1 byte"
    assert error.code is ErrorCode.INVALID_REQUEST
    assert error.fatal


@pytest.mark.parametrize("chunks", [1, 4])
def test_a_frame_one_byte_over_max_frame_size_is_refused_from_its_header(chunks: int) -> None:
    error = _refused(struct.pack(">I", 4097), chunks)
    assert error.message == "Frame length exceeds MAX_FRAME_SIZE: 4097 > 4096"
    assert error.code is ErrorCode.RECORD_TOO_LARGE
    assert error.fatal
