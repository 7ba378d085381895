"""The streaming source of new objects (``spark stream`` over ``s3://``): which objects a
trigger takes, in what order, and what the offset keeps. The query itself runs against a real
S3-compatible server in ``test_remote.py``."""

from __future__ import annotations

from typing import Any

from s3p_codec.capture import new_objects

MS = 1_000_000  # ns


def test_new_objects_are_taken_oldest_first_and_in_capture_order_within_a_tick() -> None:
    listing = [("s3://c/cap10", 5 * MS), ("s3://c/cap2", 5 * MS), ("s3://c/cap1", 3 * MS)]
    batch, seen = new_objects(listing, [], late_ms=1000, max_files=None)
    assert batch == [[3, "s3://c/cap1"], [5, "s3://c/cap2"], [5, "s3://c/cap10"]]
    assert seen == sorted(batch)


def test_a_limit_takes_the_oldest_and_the_rest_come_next() -> None:
    listing = [(f"s3://c/cap{n}", n * MS) for n in range(1, 6)]
    first, seen = new_objects(listing, [], late_ms=1000, max_files=2)
    assert [url for _, url in first] == ["s3://c/cap1", "s3://c/cap2"]
    second, seen = new_objects(listing, seen, late_ms=1000, max_files=2)
    assert [url for _, url in second] == ["s3://c/cap3", "s3://c/cap4"]
    third, seen = new_objects(listing, seen, late_ms=1000, max_files=2)
    assert [url for _, url in third] == ["s3://c/cap5"]
    assert new_objects(listing, seen, late_ms=1000, max_files=2)[0] == []


def test_an_object_older_than_the_newest_taken_is_still_taken_within_late() -> None:
    """A multipart upload keeps the time it began: it may be listed after a newer object."""
    _, seen = new_objects([("s3://c/b", 10_000 * MS)], [], late_ms=5000, max_files=None)
    batch, seen = new_objects(
        [("s3://c/b", 10_000 * MS), ("s3://c/a", 7_000 * MS), ("s3://c/old", 1_000 * MS)],
        seen, late_ms=5000, max_files=None,
    )  # fmt: skip
    assert batch == [[7_000, "s3://c/a"]]  # "old" is past ``late``: left, as documented


def test_the_offset_keeps_only_the_objects_of_the_late_window() -> None:
    """What an offset holds follows the traffic of ``late`` seconds, not the query's age."""
    seen: list[list[Any]] = []
    for n in range(100):
        listing = [(f"s3://c/cap{k}", k * 1000 * MS) for k in range(n + 1)]
        batch, seen = new_objects(listing, seen, late_ms=10_000, max_files=None)
        assert [url for _, url in batch] == [f"s3://c/cap{n}"]
    assert len(seen) == 11  # the newest and the ten seconds before it
