"""A capture over 2 GiB decodes whole, from a local file and from ``s3://`` (a real
S3-compatible server on 127.0.0.1, ``tests/s3_support.py``): offsets past 2**31 in the file
reader and in ranged GETs, a conversation whose packets lie on both sides of the 2 GiB mark.

The file is sparse: S3P conversations, then ~2.1 GiB of records of 256 KiB (MAX_RECORD) whose
frames are holes (zeros, not IP: no rows), then the rest of the conversations. On disk it takes
~35 MB. Local decode: ~5 s. From ``s3://``: ~2.5 min and ~10 GiB of RSS in the test process,
all of it the test server's (moto keeps the object in temporary files, ~2.2 GiB of disk while
the test runs, and reads the whole object for every ranged GET); skipped below 16 GiB of
available memory."""

from __future__ import annotations

import struct
import time
from pathlib import Path
from typing import Any

import pytest

from s3p_codec import capture
from s3p_codec.capture import _remote
from s3p_codec.capture._pcap import MAX_RECORD
from tests.s3_support import s3, s3_server, upload
from tests.spark.captures import s3p_packets

__all__ = ["s3", "s3_server"]  # fixtures used by the tests below

pytestmark = pytest.mark.slow

PAST = (1 << 31) + (64 << 20)
"""Where the second half of the conversations starts: past 2 GiB."""


def _sparse_capture(path: Path) -> Path:
    """The S3P conversations with a hole of zero-filled records between their halves."""
    packets = s3p_packets()
    half = len(packets) // 2
    record = struct.Struct("<IIII")

    def write(f: Any, ts: float, frame: bytes) -> None:
        sec = int(ts)
        f.write(record.pack(sec, round((ts - sec) * 1e6), len(frame), len(frame)) + frame)

    with path.open("wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, MAX_RECORD, 1))
        for ts, frame in packets[:half]:
            write(f, ts, frame)
        ts = packets[half - 1][0]
        sec = int(ts)
        filler = record.pack(sec, round((ts - sec) * 1e6), MAX_RECORD, MAX_RECORD)
        while f.tell() < PAST:
            f.write(filler)
            f.seek(MAX_RECORD, 1)  # the frame: a hole, read as zeros
        for ts, frame in packets[half:]:
            write(f, ts, frame)
    return path


def _without_packet_numbers(rows: list[capture.Row]) -> list[str]:
    """Rows as compared with the capture without the hole (whose packets are numbered
    differently): every column but the packet numbers, the file's name left out."""
    return [repr(row.as_tuple()[3:]).replace(row.file, "FILE") for row in rows]


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The > 2 GiB capture and the rows of the same conversations without the hole."""
    folder = tmp_path_factory.mktemp("large")
    path = _sparse_capture(folder / "large.pcap")
    assert path.stat().st_size > 1 << 31
    assert path.stat().st_blocks * 512 < 64 << 20  # sparse: the hole takes no disk
    small = folder / "small.pcap"
    from tests.spark._pcaps import write_pcap

    write_pcap(small, s3p_packets())
    return path, _without_packet_numbers(list(capture.decode_files([str(small)])))


def test_a_local_capture_over_2_gib_decodes_whole(large: tuple[Path, list[str]]) -> None:
    path, expected = large
    started = time.monotonic()
    rows = list(capture.decode_files([str(path)]))
    assert not [r for r in rows if r.kind == "capture_error"]
    assert _without_packet_numbers(rows) == expected
    assert max(r.last_packet for r in rows) > 8000  # events from past the hole
    assert time.monotonic() - started < 120


def _available_memory() -> int:
    """Bytes of memory available (Linux), or 0 when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) << 10
    except OSError:
        pass
    return 0


@pytest.mark.heavy  # ~2.5 min and ~13 GiB in the local S3 server, which copies the object per read
def test_an_s3_object_over_2_gib_decodes_whole(
    large: tuple[Path, list[str]], s3: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    if _available_memory() < 16 << 30:
        pytest.skip("the S3 test server needs ~10 GiB of memory for a 2.2 GiB object")
    # The test server answers each ranged GET by reading the whole object (~1 s for 2.2 GiB):
    # blocks of 64 MiB keep that to ~35 GETs. The ranges still start past 2**31.
    monkeypatch.setattr(_remote, "BLOCK_SIZE", 64 << 20)
    path, expected = large
    upload(s3, [path], "caps")
    url = "s3://caps/large.pcap"
    rows = list(capture.decode_files([url]))
    assert not [r for r in rows if r.kind == "capture_error"]
    assert _without_packet_numbers(rows) == expected
    assert {r.file for r in rows} == {url}
