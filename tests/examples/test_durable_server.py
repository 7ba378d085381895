"""The example Durable Streams server's decisions, driven directly (no sockets) with a fake clock.

The conformance suite (tests/durable/test_conformance.py) checks the server over HTTP; these
tests pin the rules it relies on, one by one, deterministically: TTL and expiry, closure,
producers, Stream-Seq, ETags, offset=now, long-poll, forks and soft delete.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from examples.durable_server import App, Settings, Store
from s3p_codec import RemoteProtocolError, durable
from s3p_codec.durable import ErrorCode, LiveMode

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self) -> None:
        self.now = 1_750_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app(clock: Clock) -> App:
    server = App(Settings(long_poll_timeout=0.05, max_chunk=64), Store(clock))
    server.randint = lambda low, high: 20  # jitter of one interval
    return server


def create(app: App, path: str = "/s", **kwargs: object) -> durable.Created:
    created = app.respond(durable.Create(path, **kwargs))  # type: ignore[arg-type]
    assert isinstance(created, durable.Created), created
    return created


def append(app: App, path: str, body: bytes, **kwargs: object) -> durable.Response:
    kwargs.setdefault("content_type", "text/plain")
    return app.respond(durable.Append(path, body, **kwargs))  # type: ignore[arg-type]


def read(app: App, path: str, offset: str | None = None, **kwargs: object) -> durable.Response:
    return asyncio.run(app.read(durable.Read(path, offset, **kwargs)))  # type: ignore[arg-type]


def status(response: durable.Response) -> int:
    assert isinstance(response, durable.ErrorResponse), response
    return response.status


def test_offsets_are_strictly_increasing_and_never_sentinels(app: App) -> None:
    created = create(app, content_type="text/plain")
    seen = [created.next_offset]
    for body in (b"a", b"bb", b"ccc"):
        appended = append(app, "/s", body)
        assert isinstance(appended, durable.Appended)
        assert appended.next_offset is not None
        seen.append(appended.next_offset)
    assert seen == sorted(seen)
    assert len(set(seen)) == len(seen)
    assert not any(durable.offsets.is_sentinel(offset) for offset in seen)


def test_sliding_ttl_is_reset_by_reads_and_writes_but_not_by_head(app: App, clock: Clock) -> None:
    create(app, content_type="text/plain", ttl_seconds=10)
    clock.now += 8
    assert isinstance(app.respond(durable.Head("/s")), durable.StreamInfo)
    clock.now += 3  # 11 s since the last read or write: HEAD did not reset the countdown
    assert status(app.respond(durable.Head("/s"))) == ErrorCode.NOT_FOUND
    create(app, content_type="text/plain", ttl_seconds=10)
    clock.now += 8
    assert isinstance(read(app, "/s"), durable.Chunk)
    clock.now += 8
    assert isinstance(append(app, "/s", b"x"), durable.Appended)
    clock.now += 8
    assert isinstance(app.respond(durable.Head("/s")), durable.StreamInfo)


def test_expires_at_is_absolute(app: App, clock: Clock) -> None:
    create(app, content_type="text/plain", expires_at="2025-06-15T15:06:50Z")  # now + 10 s
    clock.now += 9
    assert isinstance(read(app, "/s"), durable.Chunk)
    clock.now += 2
    assert status(read(app, "/s")) == ErrorCode.NOT_FOUND


def test_create_is_idempotent_only_with_the_same_configuration(app: App) -> None:
    create(app, content_type="text/plain", ttl_seconds=60)
    again = create(app, content_type="TEXT/plain; charset=utf-8", ttl_seconds=60)
    assert again.existed
    for different in (
        durable.Create("/s", content_type="application/json", ttl_seconds=60),
        durable.Create("/s", content_type="text/plain", ttl_seconds=61),
        durable.Create("/s", content_type="text/plain", ttl_seconds=60, closed=True),
    ):
        assert status(app.respond(different)) == ErrorCode.CONFLICT


def test_append_checks_closed_first_then_content_type_then_seq(app: App) -> None:
    create(app, content_type="text/plain")
    assert status(append(app, "/s", b"x", content_type="application/json")) == 409
    assert isinstance(append(app, "/s", b"a", seq="2"), durable.Appended)
    assert status(append(app, "/s", b"b", seq="10")) == 409  # "10" < "2" byte-wise
    assert isinstance(append(app, "/s", b"c", seq="3"), durable.Appended)
    closed = append(app, "/s", b"", close=True)
    assert isinstance(closed, durable.Appended)
    assert closed.closed
    refused = append(app, "/s", b"d", content_type="application/json", seq="1")
    assert isinstance(refused, durable.ErrorResponse)
    assert refused.closed  # the closed check came first
    assert refused.next_offset == closed.next_offset


def test_closing_again_is_idempotent_and_the_closing_producer_is_deduplicated(app: App) -> None:
    create(app, content_type="text/plain")
    producer = durable.Producer("p", 0, 0)
    final = append(app, "/s", b"last", producer=producer, close=True)
    assert isinstance(final, durable.Appended)
    assert (final.closed, final.producer_seq, final.duplicate) == (True, 0, False)
    retry = append(app, "/s", b"last", producer=producer, close=True)
    assert isinstance(retry, durable.Appended)
    assert retry.duplicate
    other = append(app, "/s", b"x", producer=durable.Producer("p", 0, 1))
    assert status(other) == ErrorCode.CONFLICT
    assert isinstance(append(app, "/s", b"", close=True), durable.Appended)


def test_a_failed_json_append_does_not_advance_the_producer(app: App) -> None:
    create(app, content_type="application/json")
    producer = durable.Producer("p", 0, 0)
    with pytest.raises(RemoteProtocolError):
        append(app, "/s", b"{bad", content_type="application/json", producer=producer)
    accepted = append(app, "/s", b"[1,2]", content_type="application/json", producer=producer)
    assert isinstance(accepted, durable.Appended)
    assert not accepted.duplicate


def test_etags_vary_with_closure_and_match_for_304(app: App) -> None:
    create(app, content_type="text/plain", body=b"data")
    first = read(app, "/s")
    assert isinstance(first, durable.Chunk)
    assert first.etag is not None
    assert isinstance(read(app, "/s", if_none_match=first.etag), durable.NotModified)
    append(app, "/s", b"", close=True)
    after = read(app, "/s")
    assert isinstance(after, durable.Chunk)
    assert after.closed
    assert after.etag != first.etag  # "ETags MUST vary with the stream's closure status"


def test_offset_now_gives_the_tail_uncached_and_an_empty_json_array(app: App) -> None:
    created = create(app, content_type="application/json", body=b"[1,2]")
    now = read(app, "/s", "now")
    assert isinstance(now, durable.Chunk)
    assert (now.data, now.next_offset, now.up_to_date) == (b"[]", created.next_offset, True)
    assert now.cache_control == "no-store"
    assert now.etag is None


def test_chunks_are_bounded_and_up_to_date_only_at_the_tail(app: App) -> None:
    create(app, content_type="application/octet-stream")
    for _ in range(3):
        append(app, "/s", b"x" * 40, content_type="application/octet-stream")
    first = read(app, "/s")
    assert isinstance(first, durable.Chunk)
    assert (len(first.data), first.up_to_date) == (40, False)
    rest = read(app, "/s", first.next_offset)
    assert isinstance(rest, durable.Chunk)
    assert not rest.up_to_date
    last = read(app, "/s", rest.next_offset)
    assert isinstance(last, durable.Chunk)
    assert last.up_to_date


def test_long_poll_times_out_with_a_cursor_and_returns_at_once_when_closed(app: App) -> None:
    created = create(app, content_type="text/plain")
    timeout = read(app, "/s", created.next_offset, live=LiveMode.LONG_POLL)
    assert isinstance(timeout, durable.LongPollTimeout)
    assert timeout.cursor is not None
    assert not timeout.closed
    echoed = read(app, "/s", created.next_offset, live=LiveMode.LONG_POLL, cursor=timeout.cursor)
    assert isinstance(echoed, durable.LongPollTimeout)
    assert echoed.cursor is not None
    assert int(echoed.cursor) > int(timeout.cursor)  # "strictly greater than the client's"
    append(app, "/s", b"", close=True)
    app.settings = Settings(long_poll_timeout=60)  # would hang if the server waited
    closed = read(app, "/s", created.next_offset, live=LiveMode.LONG_POLL)
    assert closed == durable.LongPollTimeout(created.next_offset, closed=True)


def test_a_waiting_long_poll_wakes_on_append(app: App) -> None:
    created = create(app, content_type="text/plain")
    app.settings = Settings(long_poll_timeout=5)

    async def scenario() -> durable.Response:
        waiting = asyncio.create_task(
            app.read(durable.Read("/s", created.next_offset, LiveMode.LONG_POLL))
        )
        await asyncio.sleep(0.01)
        append(app, "/s", b"news")
        return await asyncio.wait_for(waiting, 1)

    chunk = asyncio.run(scenario())
    assert isinstance(chunk, durable.Chunk)
    assert chunk.data == b"news"


def test_forks_inherit_up_to_the_offset_and_sub_offset(app: App) -> None:
    created = create(app, content_type="text/plain", body=b"abc")
    append(app, "/s", b"defg")
    fork = create(app, "/f", forked_from="/s", fork_offset=created.next_offset, fork_sub_offset=2)
    assert fork.content_type == "text/plain"
    append(app, "/f", b"XY")
    chunk = read(app, "/f")
    assert isinstance(chunk, durable.Chunk)
    assert chunk.data == b"abcdeXY"
    overshoot = durable.Create(
        "/g", forked_from="/s", fork_offset=created.next_offset, fork_sub_offset=5
    )
    assert status(app.respond(overshoot)) == ErrorCode.BAD_REQUEST
    beyond = durable.Create("/g", forked_from="/s", fork_offset="0000000000000009_0000000000000000")
    assert status(app.respond(beyond)) == ErrorCode.BAD_REQUEST
    missing = durable.Create("/g", forked_from="/nope")
    assert status(app.respond(missing)) == ErrorCode.NOT_FOUND
    mismatch = durable.Create("/g", forked_from="/s", content_type="application/json")
    assert status(app.respond(mismatch)) == ErrorCode.CONFLICT


def test_deleting_a_source_with_forks_is_a_soft_delete_until_the_last_fork_goes(app: App) -> None:
    create(app, content_type="text/plain", body=b"src")
    create(app, "/f", forked_from="/s")
    assert isinstance(app.respond(durable.Delete("/s")), durable.Deleted)
    for request in (durable.Head("/s"), durable.Delete("/s")):
        assert status(app.respond(request)) == ErrorCode.GONE
    assert status(read(app, "/s")) == ErrorCode.GONE
    assert status(append(app, "/s", b"x")) == ErrorCode.GONE
    assert status(app.respond(durable.Create("/s", content_type="text/plain"))) == 409
    assert status(app.respond(durable.Create("/g", forked_from="/s"))) == ErrorCode.CONFLICT
    still = read(app, "/f")
    assert isinstance(still, durable.Chunk)
    assert still.data == b"src"
    app.respond(durable.Delete("/f"))  # the last fork: the source is collected too
    assert status(app.respond(durable.Head("/s"))) == ErrorCode.NOT_FOUND
    create(app, content_type="text/plain")  # the path is free again


def test_the_server_starts_on_an_os_chosen_port_and_answers_http() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "examples.durable_server", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        assert line.startswith("listening on http://127.0.0.1:")
        url = line.split()[-1] + "/v1/stream/cli"
        put = urllib.request.Request(
            url, data=b"hi", method="PUT", headers={"Content-Type": "text/plain"}
        )
        with urllib.request.urlopen(put, timeout=5) as response:
            assert response.status == 201
            assert response.headers["X-Content-Type-Options"] == "nosniff"
        with urllib.request.urlopen(url, timeout=5) as response:
            assert response.read() == b"hi"
            assert response.headers["Stream-Up-To-Date"] == "true"
    finally:
        process.terminate()
        process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()


def test_forks_must_not_inherit_producer_or_stream_seq_state(app: App) -> None:
    create(app, content_type="text/plain")
    append(app, "/s", b"a", producer=durable.Producer("p", 3, 0), seq="5")
    create(app, "/f", forked_from="/s")
    # On the source, epoch 0 is stale and seq "1" a regression; the fork starts fresh.
    assert status(append(app, "/s", b"x", producer=durable.Producer("p", 0, 0))) == 403
    fresh = append(app, "/f", b"b", producer=durable.Producer("p", 0, 0), seq="1")
    assert isinstance(fresh, durable.Appended)
    assert not fresh.duplicate


def test_close_only_requests_must_not_be_rejected_for_their_content_type(app: App) -> None:
    # "When the request body is empty, servers MUST NOT reject based on Content-Type"
    create(app, content_type="application/json")
    closed = append(app, "/s", b"", content_type="text/html", close=True)
    assert isinstance(closed, durable.Appended)
    assert closed.closed


def test_append_and_close_to_a_closed_stream_must_be_409_with_stream_closed(app: App) -> None:
    create(app, content_type="text/plain", closed=True)
    refused = append(app, "/s", b"late", close=True)
    assert isinstance(refused, durable.ErrorResponse)
    assert refused.stream_closed
