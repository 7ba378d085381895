"""The cursor algorithm: 20-second intervals from 2024-10-09, jitter on collision."""

from __future__ import annotations

import datetime

from hypothesis import given
from hypothesis import strategies as st

from s3p_codec.durable import cursor

EPOCH = datetime.datetime(2024, 10, 9, tzinfo=datetime.UTC).timestamp()


def never(a: int, b: int) -> int:
    raise AssertionError("no jitter expected")


def test_the_epoch_is_october_9_2024_utc_and_the_interval_20_seconds() -> None:
    assert cursor.CURSOR_EPOCH == EPOCH
    assert cursor.CURSOR_INTERVAL_SECONDS == 20


def test_cursor_is_the_interval_number_as_a_decimal_string() -> None:
    now = EPOCH + 20_000 + 19.9
    assert cursor.current_interval(now) == 1000
    assert cursor.response_cursor(None, now, never) == "1000"


def test_an_older_client_cursor_gets_the_current_interval() -> None:
    assert cursor.response_cursor("999", EPOCH + 20_000, never) == "1000"


def test_the_spec_example_flow_1000_then_1050() -> None:
    # "If still in same interval, server adds jitter and returns advanced cursor": a jitter of
    # 1000 s is 50 intervals of 20 s.
    def jitter(low: int, high: int) -> int:
        assert (low, high) == (1, 3600)
        return 1000

    assert cursor.response_cursor("1000", EPOCH + 20_000, jitter) == "1050"


@given(
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=0, max_value=10**7),
    st.integers(min_value=1, max_value=3600),
)
def test_a_cursor_at_or_past_the_clock_must_come_back_strictly_greater(
    interval: int, ahead: int, jitter: int
) -> None:
    now = EPOCH + interval * 20
    echoed = interval + ahead
    answer = int(cursor.response_cursor(str(echoed), now, lambda a, b: jitter))
    assert answer > echoed
    assert answer - echoed == max(1, -(-jitter // 20))
    assert answer - echoed <= 180  # at most 3600 s of jitter


@given(st.text(max_size=30))
def test_a_garbage_cursor_is_treated_as_absent(text: str) -> None:
    now = EPOCH + 12_345
    result = cursor.response_cursor(text, now, lambda a, b: 1)
    assert result.isdigit()
    if not (text.isascii() and text.isdigit()) or len(text) > 20:
        assert result == str(cursor.current_interval(now))
