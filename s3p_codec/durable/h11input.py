"""Where Durable Streams' paced h11 input used to live: it is shared with S2S now."""

from s3p_codec._core.h11input import BODY_FEED_STEP, FEED_STEP, H11Input

__all__ = ["BODY_FEED_STEP", "FEED_STEP", "H11Input"]
