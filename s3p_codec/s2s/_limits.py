"""The bounds an S2S session enforces, all from real S2."""

from __future__ import annotations

import attrs

__all__ = ["MAX_FRAME_LENGTH", "MAX_ZSTD_WINDOW", "Limits"]

MAX_ZSTD_WINDOW = 8 * 1024 * 1024
"""The largest zstd window a decoder reserves memory for by default. A frame's window, not its
content, sets what a decoder allocates, and a hostile frame may ask for 128 MiB or more; 8 MiB
is what RFC 8878 asks every decoder to support, far above what a 2 MiB payload needs."""

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
    max_records_per_batch: int = 1000
    """Most records a read client accepts in one ``ReadBatch`` ("Maximum batch size: 1000
    records"); counted while decoding, so a small compressed frame cannot build a million."""
    max_zstd_window: int = MAX_ZSTD_WINDOW
    """Largest zstd window a decoder reserves memory for (8 MiB, the size every zstd decoder
    must support); a frame asking for more is refused."""
    heartbeat_timeout: float = 20.0
    """Seconds of silence after which a read client gives up (``check_heartbeat``)."""
    compression_threshold: int = 1024
    """Payloads smaller than this many bytes are sent uncompressed."""

    @property
    def max_payload(self) -> int:
        """The largest payload (compressed or not) a frame may carry."""
        return self.max_frame_length - 1
