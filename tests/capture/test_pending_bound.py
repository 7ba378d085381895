"""Issue 29.11: requests that are never answered cost what pairing needs, not their payload, and
at most ``max_pending`` of them are kept per conversation; a row says when the bound is hit."""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest

from s3p_codec import Direction, Role, durable, rustlog, s3p
from s3p_codec import pravega as p
from s3p_codec._core import Observed, ObservedError
from s3p_codec.capture import decode_segments, segments_from_bytes
from tests.capture.synth import Flow, write_capture
from tests.rustlog.frames import frame

C2S = Direction.CLIENT_TO_SERVER
S2C = Direction.SERVER_TO_CLIENT


def _peak(observer: Any, chunks: list[bytes]) -> int:
    """Peak bytes allocated while ``observer`` decodes ``chunks`` (client to server) and keeps
    its outputs' events alive only as long as one chunk's."""
    tracemalloc.start()
    try:
        for chunk in chunks:
            observer.observe(C2S, chunk)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_s3p_unanswered_appends_keep_no_records() -> None:
    append = s3p.Connection(Role.CLIENT).send(s3p.Append(b"orders", (b"x" * 65536,)))
    observer = s3p.Observer()
    peak = _peak(observer, [append] * 400)  # 26 MB of records, never answered
    assert peak < 2_000_000  # was 27 MB: every request kept whole
    assert len(observer._pending) == 400
    # Pairing still works: the replies pair in order with what was kept.
    reply = s3p.Connection(Role.SERVER)
    reply.receive_data(append)
    next(reply.events())
    answer = reply.send(s3p.AppendReply(s3p.Timestamp(1, 0)))
    (out,) = observer.observe(S2C, answer)
    assert isinstance(out, Observed)
    assert out.pair_id == 0


def test_s3p_a_read_reply_is_still_checked_against_the_kept_count() -> None:
    client = s3p.Connection(Role.CLIENT)
    observer = s3p.Observer()
    observer.observe(C2S, client.send(s3p.Read(b"orders", count=1)))
    two = b"*4\r\n$3\r\n1-0\r\n$1\r\na\r\n$3\r\n1-1\r\n$1\r\nb\r\n"  # two records for COUNT 1
    (out, *_) = observer.observe(S2C, two)
    assert isinstance(out, ObservedError)


def _overflow(observer: Any, requests: list[bytes]) -> tuple[list[Any], Any]:
    """Feed ``requests``; the outputs and the restored copy of the observer (it pickles)."""
    out = [o for request in requests for o in observer.observe(C2S, request)]
    return out, type(observer).restore(observer.snapshot())


def _errors(out: list[Any]) -> list[str]:
    return [str(o.error) for o in out if isinstance(o, ObservedError)]


def test_rustlog_pending_is_bounded_with_one_error() -> None:
    observer = rustlog.Observer(max_pending=10)
    out, restored = _overflow(observer, [frame({"type": "Ping"})] * 25)
    (said,) = _errors(out)
    assert "more than 10 requests await a reply (max_pending)" in said
    assert len(observer._pending) == 10
    assert len(restored._pending) == 10
    # The oldest were forgotten: the next Pong answers request 15.
    (pong,) = observer.observe(S2C, frame({"type": "Pong"}))
    assert isinstance(pong, Observed)
    assert pong.pair_id == 15


def test_durable_pending_is_bounded_and_responses_stop_with_one_error() -> None:
    append = durable.Connection(Role.CLIENT).send(durable.Append("/s", b"x" * 65536, "text/plain"))
    observer = durable.Observer(max_pending=10)
    out, restored = _overflow(observer, [append] * 25)
    (said,) = _errors(out)
    assert "more than 10 requests await a response (max_pending)" in said
    assert "responses are no longer decoded" in said
    assert len([o for o in out if isinstance(o, Observed)]) == 25  # requests still decoded
    assert not observer._pending
    assert not restored._pending


def test_durable_keeps_no_body_while_waiting() -> None:
    append = durable.Connection(Role.CLIENT).send(durable.Append("/s", b"x" * 65536, "text/plain"))
    observer = durable.Observer()
    peak = _peak(observer, [append] * 200)  # 13 MB of bodies
    assert peak < 3_000_000
    assert all(len(r.body) <= 1 for r, _, _ in observer._pending if r is not None)


def test_pravega_pairing_table_is_bounded_with_one_error() -> None:
    observer = p.Observer(max_pending=10)
    requests = [p.encode(p.CreateSegment(i, f"s{i}")) for i in range(25)]
    out, restored = _overflow(observer, requests)
    (said,) = _errors(out)
    assert "more than 10 requests await a reply (max_pending)" in said
    assert len(observer._pairs) == 10
    assert len(restored._pairs) == 10
    (old,) = observer.observe(S2C, p.encode(p.SegmentCreated(0, "s0")))
    assert isinstance(old, Observed)
    assert old.pair_id is None  # forgotten
    (new,) = observer.observe(S2C, p.encode(p.SegmentCreated(24, "s24")))
    assert isinstance(new, Observed)
    assert new.pair_id is not None


def test_the_capture_says_so_in_an_error_row(monkeypatch: pytest.MonkeyPatch) -> None:
    kwdefaults = s3p.Observer.__init__.__kwdefaults__
    assert kwdefaults is not None
    monkeypatch.setitem(kwdefaults, "max_pending", 5)
    flow = Flow()
    append = s3p.Connection(Role.CLIENT).send(s3p.Append(b"orders", (b"x" * 100,)))
    frames = flow.handshake()
    for _ in range(12):
        frames += flow.send(True, append)
    rows = list(decode_segments(segments_from_bytes(write_capture(frames))))
    errors = [r for r in rows if r.kind == "error"]
    assert len(errors) == 1
    assert errors[0].error_code == "ERR_LIMITS"
    assert "more than 5 requests await a reply (max_pending)" in (errors[0].detail or "")
    assert len([r for r in rows if r.kind == "event"]) == 12
