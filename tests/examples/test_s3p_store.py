"""The example server's ``Store``: the S3P semantics only a server with state decides.

No sockets here; the clock is driven by the test. The same rules are checked over real sockets
in ``test_s3p_server.py``.
"""

from __future__ import annotations

import asyncio

import pytest

from examples.s3p_server import Lookout, Store, answer_blocking, must_block
from s3p_codec import s3p

TS = s3p.Timestamp
CLIENT = s3p.TimestampStrategy.CLIENT


class Clock:
    def __init__(self, now: int = 1_700_000_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def store_with(*names: bytes, strategy: s3p.TimestampStrategy | None = None) -> Store:
    store = Store(s3p.Limits(default_count=3), Clock())
    for name in names:
        assert store.execute(s3p.Create(name, strategy)) == s3p.Ok()
    return store


def error_code(reply: s3p.Reply) -> s3p.ErrorCode:
    assert isinstance(reply, s3p.ErrorReply), reply
    return reply.code


def test_create_of_an_existing_stream_is_err_stream_exists() -> None:
    store = store_with(b"orders")
    assert error_code(store.execute(s3p.Create(b"orders"))) is s3p.ErrorCode.STREAM_EXISTS


@pytest.mark.parametrize(
    "request_",
    [
        s3p.Append(b"nope", (b"x",)),
        s3p.Read(b"nope"),
        s3p.Trim(b"nope", TS(1, 0)),
        s3p.Delete(b"nope"),
    ],
    ids=lambda r: type(r).__name__,
)
def test_operation_on_a_missing_stream_is_err_unknown_stream(request_: s3p.Request) -> None:
    store = store_with(b"orders")
    assert error_code(store.execute(request_)) is s3p.ErrorCode.UNKNOWN_STREAM


def test_server_timestamps_are_strictly_increasing_when_the_clock_stalls_or_goes_back() -> None:
    store = store_with(b"s")
    clock = store.clock
    assert isinstance(clock, Clock)
    seen = []
    for now in (1000, 1000, 999, 1000, 1001, 500):
        clock.now = now
        reply = store.execute(s3p.Append(b"s", (b"r",)))
        assert isinstance(reply, s3p.AppendReply)
        seen.append(reply.timestamp)
    assert seen == [TS(1000, 0), TS(1000, 1), TS(1000, 2), TS(1000, 3), TS(1001, 0), TS(1001, 1)]


def test_records_of_one_append_get_consecutive_timestamps_and_the_reply_is_the_last() -> None:
    store = store_with(b"s")
    reply = store.execute(s3p.Append(b"s", (b"a", b"b", b"c")))
    now = Clock().now
    assert reply == s3p.AppendReply(TS(now, 2))
    assert store.execute(s3p.Read(b"s", count=10)) == s3p.ReadReply(
        ((TS(now, 0), b"a"), (TS(now, 1), b"b"), (TS(now, 2), b"c"))
    )


def test_client_timestamp_must_be_strictly_greater_than_the_tail() -> None:
    store = store_with(b"c", strategy=CLIENT)
    assert error_code(store.execute(s3p.Append(b"c", (b"x",), TS(0, 0)))) is (
        s3p.ErrorCode.BAD_FORMAT
    )
    assert store.execute(s3p.Append(b"c", (b"x", b"y"), TS(10, 5))) == s3p.AppendReply(TS(10, 6))
    for stale in (TS(10, 6), TS(10, 5), TS(9, 99)):  # equal to the tail, or below it
        fresh = store_with(b"c", strategy=CLIENT)
        fresh.execute(s3p.Append(b"c", (b"x", b"y"), TS(10, 5)))
        assert error_code(fresh.execute(s3p.Append(b"c", (b"z",), stale))) is (
            s3p.ErrorCode.BAD_FORMAT
        )
    assert store.execute(s3p.Append(b"c", (b"z",), TS(10, 7))) == s3p.AppendReply(TS(10, 7))
    # "9-0" < "10-0" as integers, not as strings.
    assert store.execute(s3p.Append(b"c", (b"w",), TS(100, 0))) == s3p.AppendReply(TS(100, 0))


def test_client_timestamp_seq_overflow_across_the_records_is_bad_format() -> None:
    store = store_with(b"c", strategy=CLIENT)
    top = (1 << 64) - 1
    reply = store.execute(s3p.Append(b"c", (b"a", b"b"), TS(5, top)))
    assert error_code(reply) is s3p.ErrorCode.BAD_FORMAT
    assert store.execute(s3p.Read(b"c")) == s3p.ReadReply(())  # nothing half-done


def test_timestamp_option_with_server_strategy_is_bad_format() -> None:
    store = store_with(b"s")
    reply = store.execute(s3p.Append(b"s", (b"x",), TS(1, 0)))
    assert error_code(reply) is s3p.ErrorCode.BAD_FORMAT


def test_missing_timestamp_with_client_strategy_is_bad_format() -> None:
    store = store_with(b"c", strategy=CLIENT)
    assert error_code(store.execute(s3p.Append(b"c", (b"x",)))) is s3p.ErrorCode.BAD_FORMAT


def test_read_honours_count_min_timestamp_and_the_default_count() -> None:
    store = store_with(b"c", strategy=CLIENT)
    for ms in range(1, 11):
        store.execute(s3p.Append(b"c", (b"r%d" % ms,), TS(ms, 0)))
    default = store.execute(s3p.Read(b"c"))  # default_count=3
    assert isinstance(default, s3p.ReadReply)
    assert [ts for ts, _ in default.records] == [TS(1, 0), TS(2, 0), TS(3, 0)]
    after = store.execute(s3p.Read(b"c", count=4, min_timestamp=TS(5, 0)))  # strictly after
    assert isinstance(after, s3p.ReadReply)
    assert after.records == (
        (TS(6, 0), b"r6"),
        (TS(7, 0), b"r7"),
        (TS(8, 0), b"r8"),
        (TS(9, 0), b"r9"),
    )
    assert store.execute(s3p.Read(b"c", min_timestamp=TS(10, 0))) == s3p.ReadReply(())


def test_trim_removes_records_strictly_before_until_and_keeps_the_tail() -> None:
    store = store_with(b"c", strategy=CLIENT)
    for ms in range(1, 6):
        store.execute(s3p.Append(b"c", (b"x",), TS(ms, 0)))
    assert store.execute(s3p.Trim(b"c", TS(4, 0))) == s3p.Ok()
    reply = store.execute(s3p.Read(b"c", count=10))
    assert isinstance(reply, s3p.ReadReply)
    assert [ts for ts, _ in reply.records] == [TS(4, 0), TS(5, 0)]
    assert store.execute(s3p.Trim(b"c", TS(99, 0))) == s3p.Ok()
    assert store.execute(s3p.Read(b"c")) == s3p.ReadReply(())
    # The tail survives trimming: timestamps still only go up.
    assert error_code(store.execute(s3p.Append(b"c", (b"x",), TS(5, 0)))) is (
        s3p.ErrorCode.BAD_FORMAT
    )


def test_delete_removes_the_stream_and_the_name_can_be_created_again() -> None:
    store = store_with(b"s")
    store.execute(s3p.Append(b"s", (b"x",)))
    assert store.execute(s3p.Delete(b"s")) == s3p.Ok()
    assert error_code(store.execute(s3p.Read(b"s"))) is s3p.ErrorCode.UNKNOWN_STREAM
    assert store.execute(s3p.Create(b"s")) == s3p.Ok()
    assert store.execute(s3p.Read(b"s")) == s3p.ReadReply(())


async def _asyncio_wait(store: Store, name: bytes, seconds: float, lookout: Lookout) -> bool:
    """The simplest waiter: a wake-up or the time-out; the client never leaves."""
    woken = asyncio.Event()
    if store.watch(name, woken.set):
        try:
            async with asyncio.timeout(seconds):
                await woken.wait()
        except TimeoutError:
            pass
        finally:
            store.unwatch(name, woken.set)
    return False


async def _stays() -> bool:
    await asyncio.sleep(3600)
    return False


def test_blocking_read_is_woken_by_an_append_and_skips_records_not_newer() -> None:
    store = store_with(b"c", strategy=CLIENT)
    read = s3p.Read(b"c", block_ms=5000, min_timestamp=TS(50, 0))
    assert must_block(read, store.execute(read))

    async def main() -> s3p.Reply:
        waiting = asyncio.create_task(answer_blocking(store, read, _asyncio_wait, _stays))
        await asyncio.sleep(0.01)
        store.execute(s3p.Append(b"c", (b"old",), TS(10, 0)))  # wakes it, but not newer
        await asyncio.sleep(0.01)
        assert not waiting.done()
        store.execute(s3p.Append(b"c", (b"new",), TS(60, 0)))
        return await asyncio.wait_for(waiting, 2)

    assert asyncio.run(main()) == s3p.ReadReply(((TS(60, 0), b"new"),))


def test_blocking_read_answers_an_empty_array_when_block_ms_pass() -> None:
    store = store_with(b"s")
    read = s3p.Read(b"s", block_ms=50)
    assert asyncio.run(answer_blocking(store, read, _asyncio_wait, _stays)) == s3p.ReadReply(())


def test_delete_wakes_a_blocking_read_which_then_finds_the_stream_gone() -> None:
    store = store_with(b"s")
    read = s3p.Read(b"s", block_ms=5000)

    async def main() -> s3p.Reply:
        waiting = asyncio.create_task(answer_blocking(store, read, _asyncio_wait, _stays))
        await asyncio.sleep(0.01)
        store.execute(s3p.Delete(b"s"))
        return await asyncio.wait_for(waiting, 2)

    assert error_code(asyncio.run(main())) is s3p.ErrorCode.UNKNOWN_STREAM


def test_a_blocking_read_whose_client_left_has_no_answer() -> None:
    store = store_with(b"s")
    read = s3p.Read(b"s", block_ms=5000)

    async def leaves(store: Store, name: bytes, seconds: float, lookout: Lookout) -> bool:
        return True  # the lookout saw the client close

    assert asyncio.run(answer_blocking(store, read, leaves, _stays)) is None


def test_a_read_without_block_never_waits() -> None:
    store = store_with(b"s")
    for block in (None, 0):
        read = s3p.Read(b"s", block_ms=block)
        assert not must_block(read, store.execute(read))
