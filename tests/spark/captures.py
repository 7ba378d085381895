"""The capture sets the Spark tests share: S3P conversations rotated over several files."""

from __future__ import annotations

from pathlib import Path

from tests.spark._pcaps import conversation, interleave, s3p_exchanges, write_pcap, write_rotated

FLOWS = 4
APPENDS = 6


def s3p_packets() -> list[tuple[float, bytes]]:
    """``FLOWS`` concurrent S3P connections on port 7500, their packets interleaved."""
    flows = [
        conversation(
            ("10.0.0.1", 40000 + i),
            ("10.0.0.2", 7500),
            s3p_exchanges(b"stream-%d" % i, APPENDS),
            start=1_700_000_000.0 + i * 0.0003,
        )
        for i in range(FLOWS)
    ]
    return interleave(*flows)


def rotated_set(folder: Path, per_file: int = 9) -> list[Path]:
    """The S3P capture split like ``tcpdump -C`` does: every flow spans several files."""
    return write_rotated(folder, "cap.pcap", s3p_packets(), per_file)


def single_file(folder: Path) -> Path:
    return write_pcap(folder / "whole.pcap", s3p_packets())
