"""Compression: negotiation, the 1 KiB threshold, and capped, streamed decompression."""

from __future__ import annotations

import gzip
import zlib

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import RemoteProtocolError, Role, s2s
from s3p_codec.s2s._compression import Compression, compress, decompress, negotiate
from s3p_codec.s2s._proto import encode_read_batch

CAP = 2 * 1024 * 1024 - 1


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("zstd, gzip", Compression.ZSTD),
        ("gzip, zstd", Compression.ZSTD),
        ("gzip", Compression.GZIP),
        ("br, gzip;q=0.5", Compression.GZIP),
        ("zstd;q=0, gzip", Compression.GZIP),
        ("identity", Compression.NONE),
        ("", Compression.NONE),
        (None, Compression.NONE),
        (b"ZSTD", Compression.ZSTD),
        ("gzip;q=x", Compression.NONE),
    ],
)
def test_zstd_is_preferred_gzip_is_fallback_none_if_no_encoding(
    header: str | bytes | None, expected: Compression
) -> None:
    assert negotiate(header) is expected


def _sent_flags(compression: Compression, size: int) -> int:
    conn = s2s.Connection(Role.SERVER, s2s.Session.READ, compression=compression)
    # One record whose encoded ReadBatch is exactly ``size`` bytes (6 bytes of overhead).
    batch = s2s.ReadBatch((s2s.SequencedRecord(seq_num=0, timestamp=0, body=b"a" * (size - 6)),))
    assert len(encode_read_batch(batch)) == size
    frame = conn.send(batch)
    return frame[3]


@pytest.mark.parametrize("compression", [Compression.ZSTD, Compression.GZIP])
def test_messages_smaller_than_1_kib_are_not_compressed(compression: Compression) -> None:
    assert _sent_flags(compression, 1023) == 0x00
    assert _sent_flags(compression, 1024) == compression.value << 5


def test_no_compression_when_none_was_negotiated() -> None:
    assert _sent_flags(Compression.NONE, 5000) == 0


@pytest.mark.parametrize("compression", list(Compression))
@given(data=st.binary(max_size=5000))
def test_compress_then_decompress_round_trips(compression: Compression, data: bytes) -> None:
    if compression is not Compression.NONE and not data:
        return  # an empty compressed payload never occurs: the threshold is 1 KiB
    assert decompress(compress(data, compression), compression, CAP) == data


def test_zstd_frame_without_content_size_is_decompressed() -> None:
    payload = zstandard.ZstdCompressor(write_content_size=False).compress(b"q" * 100_000)
    assert zstandard.get_frame_parameters(payload).content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert decompress(payload, Compression.ZSTD, CAP) == b"q" * 100_000


def test_zstd_several_frames_are_decompressed_in_order() -> None:
    one = zstandard.ZstdCompressor().compress(b"a" * 3000)
    two = zstandard.ZstdCompressor(write_content_size=False).compress(b"b" * 3000)
    assert decompress(one + two, Compression.ZSTD, CAP) == b"a" * 3000 + b"b" * 3000


@pytest.mark.parametrize("content_size", [True, False])
def test_zstd_zip_bomb_is_refused_at_the_cap(content_size: bool) -> None:
    bomb = zstandard.ZstdCompressor(write_content_size=content_size).compress(b"\0" * (64 << 20))
    assert len(bomb) < 8192
    with pytest.raises(RemoteProtocolError) as caught:
        decompress(bomb, Compression.ZSTD, CAP)
    assert caught.value.code is s2s.ErrorCode.BAD_FRAME


def test_zstd_multi_frame_bomb_is_refused_at_the_cap() -> None:
    part = zstandard.ZstdCompressor(write_content_size=False).compress(b"\0" * (1 << 20))
    with pytest.raises(RemoteProtocolError, match="past"):
        decompress(part * 3, Compression.ZSTD, CAP)


def test_gzip_zip_bomb_is_refused_at_the_cap() -> None:
    bomb = gzip.compress(b"\0" * (64 << 20))
    with pytest.raises(RemoteProtocolError, match="past"):
        decompress(bomb, Compression.GZIP, CAP)


def test_exactly_the_cap_is_accepted() -> None:
    data = b"\0" * CAP
    assert decompress(gzip.compress(data), Compression.GZIP, CAP) == data
    for content_size in (True, False):
        squeezed = zstandard.ZstdCompressor(write_content_size=content_size).compress(data)
        assert decompress(squeezed, Compression.ZSTD, CAP) == data


def test_gzip_concatenated_members_are_one_payload() -> None:
    assert decompress(gzip.compress(b"ab") + gzip.compress(b"cd"), Compression.GZIP, CAP) == b"abcd"


@pytest.mark.parametrize(
    ("compression", "payload"),
    [
        (Compression.ZSTD, zstandard.ZstdCompressor().compress(b"x" * 5000)[:-2]),
        (Compression.ZSTD, zstandard.ZstdCompressor().compress(b"x" * 5000) + b"junk"),
        (Compression.ZSTD, b"not zstd at all"),
        (Compression.ZSTD, b""),
        (Compression.ZSTD, b"\x28\xb5\x2f\xfd\x00\x00\x07\x00\x00"),  # reserved block type
        (Compression.GZIP, gzip.compress(b"x" * 5000)[:-3]),
        (Compression.GZIP, gzip.compress(b"x" * 5000) + b"junk"),
        (Compression.GZIP, b"\x1f\x8b garbage"),
        (Compression.GZIP, b""),
        (Compression.GZIP, zlib.compress(b"raw zlib is not gzip")),
    ],
)
def test_corrupt_truncated_or_trailing_payloads_are_bad_frame(
    compression: Compression, payload: bytes
) -> None:
    with pytest.raises(RemoteProtocolError) as caught:
        decompress(payload, compression, CAP)
    assert caught.value.code is s2s.ErrorCode.BAD_FRAME


@given(payload=st.binary(max_size=200), which=st.sampled_from([Compression.ZSTD, Compression.GZIP]))
def test_random_compressed_payloads_give_data_or_our_error(
    payload: bytes, which: Compression
) -> None:
    try:
        out = decompress(payload, which, 4096)
    except RemoteProtocolError:
        return
    assert len(out) <= 4096


def test_compressed_frame_over_the_cap_is_refused_by_the_connection() -> None:
    bomb = gzip.compress(b"\0" * (4 << 20))
    frame = (1 + len(bomb)).to_bytes(3, "big") + b"\x40" + bomb
    conn = s2s.Connection(Role.CLIENT, s2s.Session.READ)
    conn.receive_data(frame)
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.code is s2s.ErrorCode.BAD_FRAME
