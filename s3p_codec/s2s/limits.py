"""The bounds an S2S session enforces, all from real S2."""

from __future__ import annotations

import attrs

__all__ = ["MAX_FRAME_LENGTH", "Limits"]

MAX_FRAME_LENGTH = 2 * 1024 * 1024
"""The 3-byte length counts flags + payload; "Maximum: 2 MiB (enforced limit)"."""


@attrs.frozen(slots=True)
class Limits:
    """``max_frame_length`` bounds the 3-byte length (flag byte included) and, minus one, the
    decompressed payload; ``max_records_per_append`` and ``max_append_bytes`` are "1000 records
    or 1 MiB of metered data"; ``heartbeat_timeout`` is the 20 s after which a read client gives
    up on a silent server; ``compression_threshold`` is the 1 KiB below which nothing is
    compressed."""

    max_frame_length: int = MAX_FRAME_LENGTH
    """Largest frame, flag byte included; minus one, the largest (decompressed) payload."""
    max_records_per_append: int = 1000
    """Most records in one ``AppendInput``."""
    max_append_bytes: int = 1024 * 1024
    """Most metered bytes in one ``AppendInput``."""
    heartbeat_timeout: float = 20.0
    """Seconds of silence after which a read client gives up (``check_heartbeat``)."""
    compression_threshold: int = 1024
    """Payloads smaller than this many bytes are sent uncompressed."""

    @property
    def max_payload(self) -> int:
        """The largest payload (compressed or not) a frame may carry."""
        return self.max_frame_length - 1
