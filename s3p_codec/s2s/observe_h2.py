"""The S2S HTTP/2 Observer's module under its old name: it is ``s3p_codec.s2s.observer_h2`` now,
named as the other Observer modules are. Kept so that
``from s3p_codec.s2s.observe_h2 import Http2Observer`` still works.
"""

from s3p_codec.s2s.observer_h2 import (
    MAX_HEADER_BLOCK,
    MAX_OPEN_SESSIONS,
    MAX_RESET_STREAMS,
    PREFACE,
    FrameType,
    Http2ErrorCode,
    Http2Observer,
)

__all__ = [
    "MAX_HEADER_BLOCK",
    "MAX_OPEN_SESSIONS",
    "MAX_RESET_STREAMS",
    "PREFACE",
    "FrameType",
    "Http2ErrorCode",
    "Http2Observer",
]
