"""Every protocol's Observer saves and restores itself (``Checkpointable``), and a snapshot is
only ever restored as the class it was made of."""

from __future__ import annotations

import pytest

import s3p_codec
from s3p_codec import Direction, SnapshotError


@pytest.mark.parametrize("protocol", s3p_codec.PROTOCOLS)
def test_an_observer_resumes_from_its_snapshot(protocol: str) -> None:
    observer_class = getattr(s3p_codec, protocol).Observer
    observer = observer_class()
    observer.observe(Direction.CLIENT_TO_SERVER, b"")
    restored = observer_class.restore(observer.snapshot())
    assert type(restored) is observer_class
    assert restored is not observer


@pytest.mark.parametrize("protocol", s3p_codec.PROTOCOLS)
def test_a_snapshot_is_restored_only_as_its_own_class(protocol: str) -> None:
    others = [p for p in s3p_codec.PROTOCOLS if p != protocol]
    blob = getattr(s3p_codec, others[0]).Observer().snapshot()
    with pytest.raises(SnapshotError, match="not a"):
        getattr(s3p_codec, protocol).Observer.restore(blob)
