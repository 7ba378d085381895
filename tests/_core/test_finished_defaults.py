"""``finished`` when a codec leaves ``closed`` or ``outstanding`` out: the stream is taken as
still open and nothing as outstanding, so only ``ended`` or a clean close finishes."""

from __future__ import annotations

from s3p_codec._core.lifecycle import ReplyAfterError, finished


def test_an_open_stream_is_not_finished_unless_it_ended() -> None:
    gate = ReplyAfterError()
    assert finished(gate, ended=False) is False
    assert finished(gate, ended=True) is True


def test_a_clean_close_with_nothing_said_outstanding_is_finished() -> None:
    assert finished(ReplyAfterError(), ended=False, closed=True) is True
