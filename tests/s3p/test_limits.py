"""Limits: the project's defaults and their validation."""

from __future__ import annotations

import pytest

from s3p_codec import s3p


def test_the_defaults_are_those_of_the_project_notes() -> None:
    limits = s3p.Limits()
    assert limits.max_stream_name == 256
    assert limits.max_records_per_append == 1000
    assert limits.max_record_size == 1 << 20
    assert limits.max_append_size == 8 << 20
    assert limits.default_count == 100
    assert limits.max_count == 10_000
    assert limits.max_block_ms == 30_000


@pytest.mark.parametrize(
    "bad",
    [{"max_stream_name": 0}, {"max_record_size": -1}, {"max_count": 1.5}, {"max_block_ms": -1},
     {"default_count": 20, "max_count": 10}, {"max_records_per_append": True}],
)  # fmt: skip
def test_limits_refuse_nonsense(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - the messages differ per field
        s3p.Limits(**bad)  # type: ignore[arg-type]


def test_a_zero_block_maximum_is_allowed() -> None:
    assert s3p.Limits(max_block_ms=0).max_block_ms == 0
