"""Payloads built to cost far more than their size: each is refused within a bounded cost.

Memory is measured with tracemalloc (deterministic, unlike wall time on a shared machine); the
one time-shaped property (gzip members) compares two sizes of the same input, so a quadratic
decoder fails it on any machine.
"""

from __future__ import annotations

import gzip
import time
import tracemalloc
from collections.abc import Callable

import pytest
import zstandard

import s3p_codec
from s3p_codec import Direction, RemoteProtocolError, Role, s2s
from s3p_codec._extras import MissingExtra
from s3p_codec.s2s import _compression as compression
from s3p_codec.s2s._compression import Codec, Compression, decompress
from s3p_codec.s2s._events import ErrorCode
from s3p_codec.s2s._wire import encode_frame

EMPTY_RECORDS = b"\x0a\x00" * 1_000_000  # a million empty records: field 1, length 0


def _zstd(data: bytes) -> bytes:
    return bytes(zstandard.ZstdCompressor(level=19).compress(data))


def _peak(action: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        action()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def _refused(conn: s2s.Connection, frame: bytes) -> RemoteProtocolError:
    conn.receive_data(frame)
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    return info.value


def test_an_append_frame_of_a_million_empty_records_is_refused_while_decoding() -> None:
    frame = encode_frame(_zstd(EMPTY_RECORDS), Compression.ZSTD)
    assert len(frame) < 1024  # the attack: a tiny frame
    server = s2s.Connection(Role.SERVER, s2s.Session.APPEND)
    errors: list[RemoteProtocolError] = []
    peak = _peak(lambda: errors.append(_refused(server, frame)))
    assert errors[0].code == ErrorCode.INVALID
    assert "more than 1000 records" in str(errors[0])
    # The 2 MB decompressed payload is the cost; a million records built first cost ~84 MB.
    assert peak < 12 * 1024 * 1024


def test_a_read_batch_of_a_million_records_is_refused_at_the_client_limit() -> None:
    read_batch = b"\x0a\x00" * 1_000_000  # ReadBatch.records, field 1, empty records
    frame = encode_frame(gzip.compress(read_batch, mtime=0), Compression.GZIP)
    client = s2s.Connection(Role.CLIENT, s2s.Session.READ)
    errors: list[RemoteProtocolError] = []
    peak = _peak(lambda: errors.append(_refused(client, frame)))
    assert errors[0].code == ErrorCode.INVALID
    assert "more than 1000 records" in str(errors[0])
    assert peak < 12 * 1024 * 1024


def test_the_client_batch_limit_is_configurable_and_a_batch_at_it_passes() -> None:
    limits = s2s.Limits(max_records_per_batch=3)
    batch = s2s.ReadBatch(tuple(s2s.SequencedRecord(i, 0, b"x") for i in range(3)))
    server = s2s.Connection(Role.SERVER, s2s.Session.READ)
    client = s2s.Connection(Role.CLIENT, s2s.Session.READ, limits=limits)
    client.receive_data(server.send(batch))
    assert client.next_event() == batch
    four = s2s.ReadBatch(tuple(s2s.SequencedRecord(i, 0, b"x") for i in range(4)))
    client = s2s.Connection(Role.CLIENT, s2s.Session.READ, limits=limits)
    assert _refused(client, server.send(four)).code == ErrorCode.INVALID


def _members_time(count: int) -> float:
    data = gzip.compress(b"", mtime=0) * count
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        assert decompress(data, Compression.GZIP, 1024) == b""
        best = min(best, time.perf_counter() - start)
    return best


def test_gzip_decoding_is_linear_in_the_number_of_members() -> None:
    # Quadratic copying of the rest per member made 4x the members cost ~16x the time.
    small, large = _members_time(10_000), _members_time(40_000)
    assert large / small < 8


def test_gzip_members_decode_whole_across_window_boundaries() -> None:
    parts = [bytes([i % 251]) * (i * 97 % 70_000) for i in range(40)]
    data = b"".join(gzip.compress(p, mtime=0) for p in parts)
    assert decompress(data, Compression.GZIP, 2 * 1024 * 1024) == b"".join(parts)
    with pytest.raises(RemoteProtocolError, match="truncated gzip member"):
        decompress(data[:-3], Compression.GZIP, 2 * 1024 * 1024)


def _large_window_frame() -> bytes:
    params = zstandard.ZstdCompressionParameters.from_level(
        3, window_log=27, write_content_size=0
    )
    compressor = zstandard.ZstdCompressor(compression_params=params)
    writer = compressor.compressobj()
    return bytes(writer.compress(b"a" * 4096) + writer.flush())


def test_a_zstd_frame_asking_for_a_128_mib_window_is_refused() -> None:
    frame = _large_window_frame()
    with pytest.raises(RemoteProtocolError) as info:
        Codec().decompress(frame, Compression.ZSTD, 2 * 1024 * 1024)
    assert info.value.code == ErrorCode.BAD_FRAME
    with pytest.raises(RemoteProtocolError) as info:
        decompress(frame, Compression.ZSTD, 2 * 1024 * 1024)
    assert info.value.code == ErrorCode.BAD_FRAME
    # The same frame passes when the limit allows its window: the refusal is the window's.
    assert Codec(max_window=1 << 27).decompress(frame, Compression.ZSTD, 1 << 20) == b"a" * 4096


def test_zstd_without_its_extra_fails_the_same_way_whatever_the_record_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compression, "_zstd", None)
    # A missing package is MissingExtra everywhere (issue 31, item 12), not a protocol error.
    with pytest.raises(MissingExtra, match=r"pip install 's3p-codec\[zstd\]'"):
        s2s.Connection(Role.CLIENT, s2s.Session.APPEND, compression=Compression.ZSTD)
    with pytest.raises(MissingExtra, match=r"s3p-codec\[zstd\]"):
        compression.compress(b"x", Compression.ZSTD)


def test_the_example_server_caps_a_compressed_unary_body() -> None:
    from examples.s2_server import MAX_UNARY_BODY, decompress_body

    bomb = gzip.compress(b"\0" * (MAX_UNARY_BODY + 1), mtime=0)
    with pytest.raises(RemoteProtocolError, match="decompresses past"):
        decompress_body(bomb, b"gzip")
    with pytest.raises(RemoteProtocolError, match="more than"):
        decompress_body(_zstd(b"\0" * (MAX_UNARY_BODY + 1)), b"zstd")
    assert decompress_body(gzip.compress(b"ok", mtime=0), b"gzip") == b"ok"


def _http1_verdict(chunks: list[bytes]) -> str:
    server = s2s.Http1Connection(Role.SERVER)
    try:
        for chunk in chunks:
            server.receive_data(chunk)
            while server.next_event() is not s3p_codec.NEED_DATA:
                pass
    except RemoteProtocolError as exc:
        return f"refused {exc.code}"
    return "accepted"


def test_a_huge_http1_head_gets_the_same_verdict_whole_or_in_pieces() -> None:
    """A 1.1 MB head of 100k headers was accepted whole (h11 bounds only incomplete heads) and
    refused in pieces; fed to h11 in bounded slices, it is refused both ways."""
    head = (
        b"POST /v1/streams/s/records HTTP/1.1\r\nHost: x\r\n"
        + b"X-Pad: 0123\r\n" * 100_000
        + b"\r\n"
    )
    whole = _http1_verdict([head])
    pieces = _http1_verdict([head[i : i + 1000] for i in range(0, len(head), 1000)])
    assert whole == pieces
    assert whole.startswith("refused")


def _paused_seconds(size: int) -> float:
    """Time for an Observer to take ``size`` bytes of pipelined requests, in 1460-byte
    packets, behind a request whose response has not been seen (h11 waits meanwhile)."""
    request = b"GET /v1/streams/s/records HTTP/1.1\r\nHost: x\r\n\r\n"
    backlog = request * (size // len(request))
    best = float("inf")
    for _ in range(3):
        observer = s2s.Observer()
        observer.observe(Direction.CLIENT_TO_SERVER, request)
        start = time.perf_counter()
        for at in range(0, len(backlog), 1460):
            observer.observe(Direction.CLIENT_TO_SERVER, backlog[at : at + 1460])
        best = min(best, time.perf_counter() - start)
    return best


def test_bytes_waiting_behind_an_unanswered_request_cost_linear_time() -> None:
    # Waiting bytes kept as one bytes object, copied whole at every packet: four times the
    # bytes took ten times as long (8 MB: 1.3 s), now four (8 MB: 0.05 s).
    small, large = _paused_seconds(2_000_000), _paused_seconds(8_000_000)
    assert large / small < 7
