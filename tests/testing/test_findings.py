"""Disagreements the fuzzer found in this library's codecs, kept as failing regression tests.

An open finding is marked ``xfail(strict=True)`` with its reason, so the suite turns red (and
the mark must go) as soon as the codec is fixed; a fixed finding stays here as a regression test.
"""

from __future__ import annotations

import pytest

from s3p_codec import RemoteProtocolError, Role, durable

HEAD = b"GET /v1/stream/fuzz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: " + b"a" * 1900 + b"\r\n\r\n"
SMALL = durable.Limits(max_header_size=1024)


def test_durable_head_over_the_limit_is_refused_in_one_piece() -> None:
    conn = durable.Connection(Role.SERVER, SMALL)
    conn.receive_data(HEAD)
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.code == durable.ErrorCode.REQUEST_HEADER_FIELDS_TOO_LARGE


def _feed_in_pieces(conn: durable.Connection, data: bytes, size: int) -> None:
    for at in range(0, len(data), size):
        conn.receive_data(data[at : at + size])
        conn.next_event()


def test_durable_head_over_the_limit_is_refused_when_it_arrives_in_pieces() -> None:
    # The same head, read 100 bytes at a time, is refused: the outcome depends on chunking.
    conn = durable.Connection(Role.SERVER, SMALL)
    with pytest.raises(RemoteProtocolError) as caught:
        _feed_in_pieces(conn, HEAD, 100)
    assert caught.value.code == durable.ErrorCode.REQUEST_HEADER_FIELDS_TOO_LARGE
