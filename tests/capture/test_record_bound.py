"""Issue 29.12: a classic pcap record is bounded by ``MAX_RECORD`` (libpcap's 256 KiB), whatever
the snap length of the file header; a record over it is a ``capture_error`` row, in both readers
(the in-place one of plain files and the general one of gzip and pipes)."""

from __future__ import annotations

import gzip
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from s3p_codec.capture import decode_files
from s3p_codec.capture._pcap import MAX_RECORD, CaptureFileError, read_packets
from s3p_codec.capture._scan import SegmentReader
from tests.capture.synth import Flow, write_capture

SNAPLEN_2GIB = 0x7FFFFFFF


def _claiming(size: int, present: int) -> bytes:
    """A classic pcap that trusts a 2 GiB snap length: one good handshake packet, then a record
    claiming ``size`` bytes of which ``present`` follow."""
    good = write_capture(Flow().handshake()[:1])
    header = good[:16] + struct.pack("<II", SNAPLEN_2GIB, 1)
    return header + good[24:] + struct.pack("<IIII", 1, 0, size, size) + bytes(present)


def test_max_record_is_libpcaps_maximum_snaplen() -> None:
    assert MAX_RECORD == 262_144


@pytest.mark.parametrize("compressed", [False, True])
def test_a_record_over_max_record_is_refused_though_the_file_holds_it(
    tmp_path: Path, compressed: bool
) -> None:
    data = _claiming(MAX_RECORD + 1, MAX_RECORD + 1)  # all there: only the bound refuses it
    path = tmp_path / ("big.pcap.gz" if compressed else "big.pcap")
    path.write_bytes(gzip.compress(data) if compressed else data)
    message = f"broken at packet 2 (claims {MAX_RECORD + 1} bytes, over the {MAX_RECORD} bytes"
    reader = SegmentReader(str(path))
    with pytest.raises(CaptureFileError, match=r"broken at packet 2 \(claims"):
        list(reader)
    assert reader.packets == 1  # the good packet before it was read
    with pytest.raises(CaptureFileError, match=r"broken at packet 2 \(claims"):
        list(read_packets(str(path)))
    rows = list(decode_files([str(path)]))
    assert rows[-1].kind == "capture_error"
    assert message in (rows[-1].detail or "")


def test_a_record_of_max_record_is_read(tmp_path: Path) -> None:
    path = tmp_path / "edge.pcap"
    path.write_bytes(_claiming(MAX_RECORD, MAX_RECORD))
    assert len(list(read_packets(str(path)))) == 2
    reader = SegmentReader(str(path))
    list(reader)
    assert reader.packets == 2


def test_a_gzip_claiming_2_gib_of_zeros_is_one_line_not_a_memory_error(tmp_path: Path) -> None:
    """Before: 9 MB of gzip whose record claims 2 GiB (all there, zeros) ended in a MemoryError
    traceback, exit 1. Here 64 MiB of zeros under a 1 GiB address-space limit."""
    path = tmp_path / "bomb.pcap.gz"
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write(_claiming(SNAPLEN_2GIB, 0))
        zeros = bytes(1 << 20)
        for _ in range(64):
            out.write(zeros)
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30));"
        "import runpy; sys.argv = ['s3p-codec', 'decode', sys.argv[1]];"
        "runpy.run_module('s3p_codec', run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode in {0, 2}, done.stderr  # 2 when no row came before the break
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"claims {SNAPLEN_2GIB} bytes, over the {MAX_RECORD} bytes" in lines[0]
