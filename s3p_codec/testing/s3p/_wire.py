"""What both directions of the S3P cases share: the error codes they expect and timestamps.

Commands carry timestamps (APPEND's TIMESTAMP, READ's MIN_TIMESTAMP, TRIM's UNTIL) and so do
replies, so the strategy lives here, below ``for_servers`` and ``for_clients``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from s3p_codec import s3p

BAD = s3p.ErrorCode.BAD_FORMAT
LIMITS = s3p.ErrorCode.LIMITS
U64 = (1 << 64) - 1


def timestamps() -> st.SearchStrategy[s3p.Timestamp]:
    """Any ``<ms>-<seq>`` with both parts unsigned 64-bit, small parts often (so that equal and
    adjacent timestamps, which order and bounds are about, come up)."""
    part = st.integers(0, 20) | st.integers(0, U64)
    return st.builds(s3p.Timestamp, part, part)
