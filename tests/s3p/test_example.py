"""The runnable conversation example, and the spec's rules about stream state, which its store
keeps (they need to know the streams, so they belong to a server's store, not to the codec)."""

from __future__ import annotations

import pytest

from examples.s3p_conversation import Store, main
from s3p_codec.s3p import (
    Append,
    AppendReply,
    Create,
    Delete,
    ErrorCode,
    ErrorReply,
    Ok,
    Read,
    ReadReply,
    Timestamp,
    TimestampStrategy,
    Trim,
)


def test_the_example_prints_the_conversation_and_ends_with_closed_connections(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert r"*3\r\n$6\r\nDELETE\r\n$6\r\norders\r\n*0\r\n" in out
    assert r"$15\r\n1700000001235-0\r\n" in out
    assert "ReadReply [1700000001234-0=b'hello', 1700000001234-1=b'world']" in out
    assert "1 pipelined request(s) never read" in out
    assert r"-ERR_BAD_FORMAT unknown option MAX_SIZE\r\n" in out
    assert out.count("CLOSED, finished=True") == 3


def store_with(strategy: TimestampStrategy | None, clock: list[int] | None = None) -> Store:
    store = Store(clock_ms=iter(clock) if clock else None)
    assert store.handle(Create(b"s", strategy)) == Ok()
    return store


def test_clients_must_not_provide_a_timestamp_option_when_the_strategy_is_server() -> None:
    reply = store_with(None).handle(Append(b"s", (b"a",), Timestamp(5, 0)))
    assert isinstance(reply, ErrorReply)
    assert reply.code is ErrorCode.BAD_FORMAT


def test_clients_must_provide_a_timestamp_option_when_the_strategy_is_client() -> None:
    store = store_with(TimestampStrategy.CLIENT)
    reply = store.handle(Append(b"s", (b"a",)))
    assert isinstance(reply, ErrorReply)
    assert reply.code is ErrorCode.BAD_FORMAT
    assert store.handle(Append(b"s", (b"a",), Timestamp(5, 0))) == AppendReply(Timestamp(5, 0))


def test_the_provided_timestamp_must_be_strictly_greater_than_the_last_appended() -> None:
    store = store_with(TimestampStrategy.CLIENT)
    assert store.handle(Append(b"s", (b"a", b"b"), Timestamp(5, 0))) == AppendReply(Timestamp(5, 1))
    for stamp in (Timestamp(5, 1), Timestamp(5, 0), Timestamp(4, 9)):
        reply = store.handle(Append(b"s", (b"c",), stamp))
        assert isinstance(reply, ErrorReply)
        assert reply.code is ErrorCode.BAD_FORMAT
    assert store.handle(Append(b"s", (b"c",), Timestamp(5, 2))) == AppendReply(Timestamp(5, 2))


def test_the_server_must_generate_strictly_increasing_timestamps_even_if_its_clock_goes_back() -> (
    None
):
    store = store_with(TimestampStrategy.SERVER, clock=[100, 100, 90, 200])
    stamps = []
    for _ in range(4):
        reply = store.handle(Append(b"s", (b"x",)))
        assert isinstance(reply, AppendReply)
        stamps.append(reply.timestamp)
    assert stamps == sorted(set(stamps))
    assert stamps[-1] == Timestamp(200, 0)


def test_within_a_single_stream_timestamps_must_be_strictly_increasing_and_read_in_order() -> None:
    store = store_with(None)
    store.handle(Append(b"s", (b"a", b"b", b"c")))
    store.handle(Append(b"s", (b"d",)))
    reply = store.handle(Read(b"s"))
    assert isinstance(reply, ReadReply)
    stamps = [stamp for stamp, _ in reply.records]
    assert stamps == sorted(set(stamps))
    assert [record for _, record in reply.records] == [b"a", b"b", b"c", b"d"]


def test_stream_exists_unknown_stream_trim_and_delete() -> None:
    store = store_with(TimestampStrategy.CLIENT)
    assert store.handle(Create(b"s")) == ErrorReply(
        ErrorCode.STREAM_EXISTS, "stream already exists: s"
    )
    assert isinstance(store.handle(Read(b"nope")), ErrorReply)
    store.handle(Append(b"s", (b"a", b"b", b"c"), Timestamp(1, 0)))
    assert store.handle(Trim(b"s", Timestamp(1, 2))) == Ok()
    assert store.handle(Read(b"s", count=5)) == ReadReply(((Timestamp(1, 2), b"c"),))
    assert store.handle(Read(b"s", min_timestamp=Timestamp(1, 2))) == ReadReply(())
    assert store.handle(Delete(b"s")) == Ok()
    reply = store.handle(Delete(b"s"))
    assert isinstance(reply, ErrorReply)
    assert reply.code is ErrorCode.UNKNOWN_STREAM


def test_the_v020_example_keeps_both_codecs_open_through_recoverable_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--s3p-version", "0.2.0"]) == 0
    out = capsys.readouterr().out
    assert r"-ERR_STREAM_EXISTS stream already exists: orders\r\n" in out
    assert "ErrorReply ERR_NON_MONOTONIC_ID" in out
    assert "AppendReply 1700000009000-2" in out  # an equal ID continues the seq
    assert "ReadReply [1700000009000-1=b'b', 1700000009000-2=b'c']" in out  # MIN_ID inclusive
    assert out.count("OPEN, finished=False") == 2


def test_the_v020_store_keeps_the_last_ms_when_the_clock_goes_back() -> None:
    store = Store(clock_ms=iter([100, 90, 200]), version="0.2.0")
    assert store.handle(Create(b"s")) == Ok()
    stamps = [store.handle(Append(b"s", (b"x",))) for _ in range(3)]
    assert stamps == [
        AppendReply(Timestamp(100, 0)),
        AppendReply(Timestamp(100, 1)),  # "keep the last <ms> and increment <seq>"
        AppendReply(Timestamp(200, 0)),
    ]
    low = store.handle(Append(b"s", (b"y",), id=150))
    assert isinstance(low, ErrorReply)
    assert low.code is ErrorCode.NON_MONOTONIC_ID
