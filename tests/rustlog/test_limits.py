"""The spec's constants and the configurable limits."""

from __future__ import annotations

import pytest

from s3p_codec import rustlog


def test_constants_are_the_spec_values() -> None:
    assert rustlog.MAX_FRAME_SIZE == 10_485_760  # "MAX_FRAME_SIZE: 10,485,760 bytes (10MB)"
    assert rustlog.MIN_FRAME_SIZE == 1
    assert rustlog.MAX_RECORDS_PER_PRODUCE == 1000
    assert rustlog.MAX_RECORD_SIZE == 10_485_760
    assert rustlog.MAX_TOPIC_LENGTH == 255
    assert rustlog.MAX_PARTITION_COUNT == 1000


def test_limits_are_validated() -> None:
    assert rustlog.Limits().max_frame_size == rustlog.MAX_FRAME_SIZE == 10_485_760
    with pytest.raises(ValueError, match="max_frame_size"):
        rustlog.Limits(max_frame_size=0)
    with pytest.raises(ValueError, match="max_records_per_produce"):
        rustlog.Limits(max_records_per_produce=0)
