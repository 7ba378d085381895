"""The example RustLog broker: its state machine directly, then over loopback as users run it.

The broker runs as ``python -m examples.rustlog_broker --port 0`` in its own process (the port
is read from its first line of output) and is killed at the end of the module. Clients use the
asyncio adapter; every network test is bounded by ``asyncio.timeout`` and pytest's time-out.
"""

from __future__ import annotations

import asyncio
import json
import re
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from examples.rustlog_broker import MAX_READABLE_RECORD, Broker, fetch_frame_size
from s3p_codec import LocalProtocolError, Role, rustlog
from s3p_codec.io.asyncio import AsyncioConnection, connect

ROOT = Path(__file__).resolve().parents[2]
Code = rustlog.ErrorCode


# --- the broker's state, without I/O --------------------------------------------------------


def broker_with_topic(partitions: int = 2, **kwargs: Any) -> Broker:
    broker = Broker(clock=lambda: 1641024000000000, **kwargs)
    assert broker.handle(rustlog.CreateTopic("logs", partitions)) == rustlog.CreateTopicResponse(
        True, partitions
    )
    return broker


def test_produce_assigns_consecutive_offsets_from_base_offset() -> None:
    broker = broker_with_topic()
    assert broker.handle(rustlog.Produce("logs", 0, (b"a", b"b"))) == rustlog.ProduceResponse(0, 2)
    assert broker.handle(rustlog.Produce("logs", 0, (b"c",))) == rustlog.ProduceResponse(2, 1)
    assert broker.handle(rustlog.Produce("logs", 1, (b"z",))) == rustlog.ProduceResponse(0, 1)
    response = broker.handle(rustlog.Fetch("g", "logs", 0, 0, 1 << 20))
    assert response == rustlog.FetchResponse(
        tuple(rustlog.Record(i, 1641024000000000, p) for i, p in enumerate((b"a", b"b", b"c"))),
        3,
    )


def test_produce_to_a_missing_topic_or_partition() -> None:
    broker = broker_with_topic()
    missing = broker.handle(rustlog.Produce("nope", 0, (b"a",)))
    assert missing == rustlog.Error(
        Code.TOPIC_NOT_FOUND, "Topic 'nope' not found", {"available_topics": ["logs"]}
    )
    wrong = broker.handle(rustlog.Produce("logs", 2, (b"a",)))
    assert isinstance(wrong, rustlog.Error)
    assert wrong.code == Code.PARTITION_NOT_FOUND


def test_segments_roll_by_size_and_retention_moves_log_start_offset() -> None:
    broker = broker_with_topic(1, segment_bytes=10, retention_bytes=25)
    for _ in range(3):
        broker.handle(rustlog.Produce("logs", 0, (b"12345", b"12345")))  # 10 bytes: one segment
    described = broker.handle(rustlog.DescribePartition("logs", 0))
    assert isinstance(described, rustlog.DescribePartitionResponse)
    # 30 bytes in three segments exceed 25: the oldest sealed segment was dropped.
    assert (described.high_watermark, described.log_start_offset, described.segment_count) == (
        6,
        2,
        2,
    )
    below = broker.handle(rustlog.Fetch("g", "logs", 0, 1, 100))
    assert below == rustlog.Error(
        Code.OFFSET_OUT_OF_RANGE,
        "Offset 1 out of range",
        {"valid_range": {"start": 2, "end": 6}, "high_watermark": 6},
    )
    at_start = broker.handle(rustlog.Fetch("g", "logs", 0, 2, 1 << 20))
    assert isinstance(at_start, rustlog.FetchResponse)
    assert [r.offset for r in at_start.records] == [2, 3, 4, 5]


def test_fetch_beyond_the_high_watermark_is_empty() -> None:
    broker = broker_with_topic()
    broker.handle(rustlog.Produce("logs", 0, (b"a",)))
    assert broker.handle(rustlog.Fetch("g", "logs", 0, 1, 10)) == rustlog.FetchResponse((), 1)
    assert broker.handle(rustlog.Fetch("g", "logs", 0, 50, 10)) == rustlog.FetchResponse((), 50)


def test_fetch_max_bytes_is_a_soft_limit() -> None:
    broker = broker_with_topic()
    broker.handle(rustlog.Produce("logs", 0, (b"x" * 10,) * 5))
    some = broker.handle(rustlog.Fetch("g", "logs", 0, 0, 25))
    assert isinstance(some, rustlog.FetchResponse)
    assert len(some.records) == 3  # stops once 25 is reached: 30, slightly over
    assert some.next_offset == 3
    one = broker.handle(rustlog.Fetch("g", "logs", 0, 0, 0))
    assert isinstance(one, rustlog.FetchResponse)
    assert len(one.records) == 1  # at least one record, so a consumer always progresses


def test_offset_commits_are_per_group_topic_partition() -> None:
    broker = broker_with_topic()
    assert broker.handle(rustlog.OffsetCommit("a", "logs", 0, 5)) == rustlog.OffsetCommitResponse(
        True
    )
    broker.handle(rustlog.OffsetCommit("b", "logs", 0, 7))
    broker.handle(rustlog.OffsetCommit("a", "logs", 1, 9))
    assert broker.handle(rustlog.OffsetFetch("a", "logs", 0)) == rustlog.OffsetFetchResponse(5)
    assert broker.handle(rustlog.OffsetFetch("b", "logs", 0)) == rustlog.OffsetFetchResponse(7)
    assert broker.handle(rustlog.OffsetFetch("a", "logs", 1)) == rustlog.OffsetFetchResponse(9)
    assert broker.handle(rustlog.OffsetFetch("c", "logs", 0)) == rustlog.OffsetFetchResponse(None)
    # "success: false if topic/partition doesn't exist"
    assert broker.handle(rustlog.OffsetCommit("a", "nope", 0, 1)) == (
        rustlog.OffsetCommitResponse(False)
    )
    assert broker.handle(rustlog.OffsetCommit("a", "logs", 9, 1)) == (
        rustlog.OffsetCommitResponse(False)
    )


def test_create_topic_that_exists_fails_and_admin_views() -> None:
    broker = broker_with_topic(3)
    assert broker.handle(rustlog.CreateTopic("logs", 1)) == rustlog.CreateTopicResponse(False, 0)
    broker.handle(rustlog.CreateTopic("a-topic", 1))
    assert broker.handle(rustlog.ListTopics()) == rustlog.ListTopicsResponse(
        (rustlog.TopicInfo("a-topic", 1), rustlog.TopicInfo("logs", 3))
    )
    described = broker.handle(rustlog.DescribeTopic("logs"))
    assert described == rustlog.DescribeTopicResponse(
        "logs", tuple(rustlog.PartitionInfo(i, 0, 0, 1) for i in range(3))
    )
    missing = broker.handle(rustlog.DescribeTopic("nope"))
    assert isinstance(missing, rustlog.Error)
    assert missing.code == Code.TOPIC_NOT_FOUND
    assert broker.handle(rustlog.Ping()) == rustlog.Pong()


def test_metrics_count_requests_records_and_groups() -> None:
    broker = broker_with_topic()
    broker.handle(rustlog.Produce("logs", 0, (b"abc",)))
    broker.handle(rustlog.Fetch("readers", "logs", 0, 0, 100))
    broker.handle(rustlog.Fetch("readers", "nope", 0, 0, 100))
    metrics = broker.handle(rustlog.MetricsFetch())
    assert isinstance(metrics, rustlog.MetricsFetchResponse)
    values = metrics.metrics
    assert values["records_produced"] == 1
    assert values["records_fetched"] == 1
    assert values["bytes_in"] == 3
    assert values["errors_total"] == 1
    assert values["fetches_by_group"] == {"readers": 2}
    # The MetricsFetch itself is counted before it is answered.
    assert values["requests_by_type"] == {
        "CreateTopic": 1,
        "Fetch": 2,
        "MetricsFetch": 1,
        "Produce": 1,
    }


def test_a_record_whose_fetch_frame_would_not_fit_is_413() -> None:
    assert fetch_frame_size([MAX_READABLE_RECORD]) <= rustlog.MAX_FRAME_SIZE
    assert fetch_frame_size([MAX_READABLE_RECORD + 3]) > rustlog.MAX_FRAME_SIZE
    broker = broker_with_topic()
    too_big = broker.handle(rustlog.Produce("logs", 0, (bytes(MAX_READABLE_RECORD + 1),)))
    assert isinstance(too_big, rustlog.Error)
    assert too_big.code == Code.RECORD_TOO_LARGE


def test_fetch_responses_stay_within_one_frame() -> None:
    broker = broker_with_topic()
    broker.handle(rustlog.Produce("logs", 0, (bytes(3_000_000),) * 3))
    response = broker.handle(rustlog.Fetch("g", "logs", 0, 0, 1 << 40))
    assert isinstance(response, rustlog.FetchResponse)
    assert len(response.records) == 2
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(rustlog.Connection(Role.CLIENT).send(rustlog.Fetch("g", "logs", 0, 0, 1)))
    server.next_event()
    assert len(server.send(response)) <= rustlog.MAX_FRAME_SIZE + 4


# --- over loopback ----------------------------------------------------------------------------


@attrs.frozen
class Running:
    port: int
    process: subprocess.Popen[bytes]


def start_broker(*flags: str) -> Iterator[Running]:
    with tempfile.TemporaryFile() as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "examples.rustlog_broker", "--port=0", *flags],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                sink.seek(0)
                found = re.search(rb"listening on 127\.0\.0\.1:(\d+)", sink.read())
                if found:
                    break
                if process.poll() is not None or time.monotonic() > deadline:
                    sink.seek(0)
                    raise RuntimeError(f"the broker did not start: {sink.read()!r}")
                time.sleep(0.05)
            yield Running(int(found.group(1)), process)
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture(scope="module")
def broker() -> Iterator[Running]:
    yield from start_broker()


@pytest.fixture(scope="module")
def small_broker() -> Iterator[Running]:
    yield from start_broker("--segment-bytes", "100", "--retention-bytes", "250")


Conn = AsyncioConnection[rustlog.Event, rustlog.Event]
_topics = iter(range(1_000_000))


def fresh_topic() -> str:
    return f"t{next(_topics)}-{time.monotonic_ns()}"


async def open_client(port: int, **kwargs: Any) -> Conn:
    return await connect(rustlog.Connection(Role.CLIENT, **kwargs), "127.0.0.1", port)


async def ask(conn: Conn, request: rustlog.Request) -> rustlog.Event:
    await conn.send(request)
    return await conn.next_event()


def run(coro: Any, seconds: float = 30) -> Any:
    async def bounded() -> Any:
        async with asyncio.timeout(seconds):
            return await coro

    return asyncio.run(bounded())


def raw_frame(payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + payload


async def raw_exchange(port: int, data: bytes, expect: int) -> bytes:
    """Send raw bytes; read until ``expect`` frames came back or the broker closed."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    received = b""
    try:
        while len(decode_frames(received, partial=True)) < expect:
            chunk = await asyncio.wait_for(reader.read(65536), 5)
            if not chunk:
                break
            received += chunk
        # Whatever else comes (it should be nothing but the end of the stream) is kept too.
        received += await asyncio.wait_for(reader.read(65536), 0.2)
    except TimeoutError:
        pass
    writer.close()
    return received


def decode_frames(data: bytes, *, partial: bool = False) -> list[dict[str, Any]]:
    out = []
    while len(data) >= 4:
        (length,) = struct.unpack(">I", data[:4])
        if len(data) < 4 + length:
            break
        out.append(json.loads(data[4 : 4 + length]))
        data = data[4 + length :]
    assert partial or not data, data
    return out


@pytest.mark.network
def test_happy_path_produce_fetch_cycle(broker: Running) -> None:
    async def scenario() -> None:
        topic = fresh_topic()
        async with await open_client(broker.port) as conn:
            assert await ask(conn, rustlog.CreateTopic(topic, 2)) == (
                rustlog.CreateTopicResponse(True, 2)
            )
            records = (b"hello", "ünïcode ✓".encode(), bytes(range(256)))
            assert await ask(conn, rustlog.Produce(topic, 1, records)) == (
                rustlog.ProduceResponse(0, 3)
            )
            fetched = await ask(conn, rustlog.Fetch("g", topic, 1, 0, 1 << 20))
            assert isinstance(fetched, rustlog.FetchResponse)
            assert tuple(r.payload for r in fetched.records) == records
            assert [r.offset for r in fetched.records] == [0, 1, 2]
            assert fetched.next_offset == 3
            assert all(r.timestamp > 1_600_000_000_000_000 for r in fetched.records)  # µs
            assert await ask(conn, rustlog.Ping()) == rustlog.Pong()

    run(scenario())


@pytest.mark.network
def test_error_cases_over_the_wire(broker: Running, small_broker: Running) -> None:
    async def scenario() -> None:
        topic = fresh_topic()
        async with await open_client(broker.port) as conn:
            await ask(conn, rustlog.CreateTopic(topic, 1))
            missing = await ask(conn, rustlog.Produce("nope-" + topic, 0, (b"x",)))
            assert isinstance(missing, rustlog.Error)
            assert missing.code == Code.TOPIC_NOT_FOUND
            assert missing.details is not None
            assert topic in missing.details["available_topics"]  # type: ignore[operator]
            wrong = await ask(conn, rustlog.Fetch("g", topic, 3, 0, 10))
            assert isinstance(wrong, rustlog.Error)
            assert wrong.code == Code.PARTITION_NOT_FOUND
        async with await open_client(small_broker.port) as conn:
            await ask(conn, rustlog.CreateTopic(topic, 1))
            for _ in range(10):
                await ask(conn, rustlog.Produce(topic, 0, (bytes(50),)))
            described = await ask(conn, rustlog.DescribePartition(topic, 0))
            assert isinstance(described, rustlog.DescribePartitionResponse)
            assert described.log_start_offset > 0
            assert described.segment_count >= 2
            out_of_range = await ask(conn, rustlog.Fetch("g", topic, 0, 0, 10))
            assert isinstance(out_of_range, rustlog.Error)
            assert out_of_range.code == Code.OFFSET_OUT_OF_RANGE
            assert out_of_range.details == {
                "valid_range": {"start": described.log_start_offset, "end": 10},
                "high_watermark": 10,
            }

    run(scenario())


@pytest.mark.network
def test_invalid_request_is_answered_and_the_connection_stays_open(broker: Running) -> None:
    bad_fields = raw_frame(b'{"type":"Fetch","topic":"x"}')
    unknown = raw_frame(b'{"type":"Compact"}')
    ping = raw_frame(b'{"type":"Ping"}')
    answers = decode_frames(run(raw_exchange(broker.port, bad_fields + unknown + ping, 3)))
    assert [a["type"] for a in answers] == ["Error", "Error", "Pong"]
    assert [a.get("code") for a in answers[:2]] == [400, 400]


@pytest.mark.network
def test_a_protocol_violation_gets_an_error_then_the_connection_closes(broker: Running) -> None:
    ping = raw_frame(b'{"type":"Ping"}')
    for violation, code in (
        (raw_frame(b"{not json"), 400),
        (raw_frame(b'{"type":"Ping","x":"\xff"}'), 400),
        (raw_frame(b"[1]"), 400),
        (struct.pack(">I", rustlog.MAX_FRAME_SIZE + 1), 413),
        (b"\x00\x00\x00\x00", 400),
    ):
        answers = decode_frames(run(raw_exchange(broker.port, ping + violation + ping, 3)))
        # The Ping before is answered, the violation gets one Error, then the broker closes.
        assert [a["type"] for a in answers] == ["Pong", "Error"]
        assert answers[1]["code"] == code


@pytest.mark.network
def test_reconnect_after_disconnect_sees_the_same_data(broker: Running) -> None:
    async def scenario() -> None:
        topic = fresh_topic()
        conn = await open_client(broker.port)
        await ask(conn, rustlog.CreateTopic(topic, 1))
        await ask(conn, rustlog.Produce(topic, 0, (b"before",)))
        await ask(conn, rustlog.OffsetCommit("g", topic, 0, 1))
        conn.writer.transport.abort()  # drop the connection abruptly
        await asyncio.sleep(0.05)
        async with await open_client(broker.port) as again:
            await ask(again, rustlog.Produce(topic, 0, (b"after",)))
            assert await ask(again, rustlog.OffsetFetch("g", topic, 0)) == (
                rustlog.OffsetFetchResponse(1)
            )
            fetched = await ask(again, rustlog.Fetch("g", topic, 0, 0, 1 << 20))
            assert isinstance(fetched, rustlog.FetchResponse)
            assert [r.payload for r in fetched.records] == [b"before", b"after"]

    run(scenario())


def produce_overhead(topic: str) -> bytes:
    return f'{{"type":"Produce","topic":"{topic}","partition":0,"records":[""]}}'.encode()


@pytest.mark.network
@pytest.mark.timeout(120)
def test_maximum_frame_size_handling(broker: Running) -> None:
    topic = fresh_topic()
    while (rustlog.MAX_FRAME_SIZE - len(produce_overhead(topic))) % 4:
        topic += "x"  # so that a base64 record fills the frame to the last byte

    async def scenario() -> None:
        async with await open_client(broker.port) as conn:
            await ask(conn, rustlog.CreateTopic(topic, 1))
            # The largest record that can be fetched back in one frame is stored and read back.
            big = bytes(range(256)) * (MAX_READABLE_RECORD // 256) + b"x" * (
                MAX_READABLE_RECORD % 256
            )
            assert await ask(conn, rustlog.Produce(topic, 0, (big,))) == (
                rustlog.ProduceResponse(0, 1)
            )
            fetched = await ask(conn, rustlog.Fetch("g", topic, 0, 0, 1))
            assert isinstance(fetched, rustlog.FetchResponse)
            assert fetched.records[0].payload == big
            # A Produce frame of exactly MAX_FRAME_SIZE is a valid frame: the broker answers
            # 413 (its record could never be fetched back) and the connection stays open.
            raw = bytes((rustlog.MAX_FRAME_SIZE - len(produce_overhead(topic))) // 4 * 3)
            frame = rustlog.Connection(Role.CLIENT).send(rustlog.Produce(topic, 0, (raw,)))
            assert len(frame) - 4 == rustlog.MAX_FRAME_SIZE
            too_big = await ask(conn, rustlog.Produce(topic, 0, (raw,)))
            assert isinstance(too_big, rustlog.Error)
            assert too_big.code == Code.RECORD_TOO_LARGE
            assert await ask(conn, rustlog.Ping()) == rustlog.Pong()
            # One byte more cannot even be sent.
            with pytest.raises(LocalProtocolError):
                await conn.send(rustlog.Produce(topic, 0, (raw + bytes(3),)))

    run(scenario(), 90)


@pytest.mark.network
def test_unicode_topics_are_rejected_and_unicode_groups_accepted(broker: Running) -> None:
    async def scenario() -> None:
        async with await open_client(broker.port) as conn:
            with pytest.raises(LocalProtocolError):
                await conn.send(rustlog.CreateTopic("ログ", 1))
            topic = fresh_topic()
            await ask(conn, rustlog.CreateTopic(topic, 1))
            assert await ask(conn, rustlog.OffsetCommit("グループ-ä", topic, 0, 3)) == (
                rustlog.OffsetCommitResponse(True)
            )
            assert await ask(conn, rustlog.OffsetFetch("グループ-ä", topic, 0)) == (
                rustlog.OffsetFetchResponse(3)
            )

    run(scenario())
    for topic in ("ログ", "café", "a b", "x" * 256):
        request = {"type": "CreateTopic", "topic": topic, "partition_count": 1}
        payload = json.dumps(request, ensure_ascii=False).encode()
        (answer,) = decode_frames(run(raw_exchange(broker.port, raw_frame(payload), 1)))
        assert answer["type"] == "Error"
        assert answer["code"] == 400


@pytest.mark.network
def test_pipelining_client_gets_answers_in_order(broker: Running) -> None:
    async def scenario() -> None:
        topic = fresh_topic()
        async with await open_client(broker.port, pipelining=True) as conn:
            await conn.send(rustlog.CreateTopic(topic, 1), flush=False)
            for n in range(50):
                await conn.send(rustlog.Produce(topic, 0, (b"%d" % n,)), flush=False)
            await conn.send(rustlog.Fetch("g", topic, 0, 0, 1 << 20))
            assert await conn.next_event() == rustlog.CreateTopicResponse(True, 1)
            for n in range(50):
                assert await conn.next_event() == rustlog.ProduceResponse(n, 1)
            fetched = await conn.next_event()
            assert isinstance(fetched, rustlog.FetchResponse)
            assert [r.payload for r in fetched.records] == [b"%d" % n for n in range(50)]

    run(scenario())


PRODUCERS = 20
BATCHES = 500
PER_BATCH = 4


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_load_20_producers_500_batches_every_record_fetched_exactly_once(broker: Running) -> None:
    topic = fresh_topic()

    async def producer(number: int) -> list[tuple[int, int, int]]:
        """Pipeline every batch, then read every answer: (partition, base_offset, batch)."""
        async with await open_client(broker.port, pipelining=True) as conn:
            partition = number % 4
            for batch in range(BATCHES):
                records = tuple(b"p%02d-b%03d-r%d" % (number, batch, r) for r in range(PER_BATCH))
                await conn.send(rustlog.Produce(topic, partition, records), flush=False)
            await conn.flush()
            placed = []
            for batch in range(BATCHES):
                answer = await conn.next_event()
                assert isinstance(answer, rustlog.ProduceResponse), answer
                assert answer.record_count == PER_BATCH
                placed.append((partition, answer.base_offset, batch))
            return placed

    async def read_all(conn: Conn, partition: int) -> list[rustlog.Record]:
        out: list[rustlog.Record] = []
        offset = 0
        while True:
            answer = await ask(conn, rustlog.Fetch("loader", topic, partition, offset, 1 << 20))
            assert isinstance(answer, rustlog.FetchResponse), answer
            if not answer.records:
                return out
            out.extend(answer.records)
            offset = answer.next_offset

    async def scenario() -> None:
        async with await open_client(broker.port) as admin:
            await ask(admin, rustlog.CreateTopic(topic, 4))
        placements = await asyncio.gather(*(producer(n) for n in range(PRODUCERS)))
        async with await open_client(broker.port) as reader:
            records = {p: await read_all(reader, p) for p in range(4)}
        payloads = [r.payload for rs in records.values() for r in rs]
        expected = {
            b"p%02d-b%03d-r%d" % (n, b, r)
            for n in range(PRODUCERS)
            for b in range(BATCHES)
            for r in range(PER_BATCH)
        }
        assert len(payloads) == len(expected) == PRODUCERS * BATCHES * PER_BATCH
        assert set(payloads) == expected  # every record, exactly once
        # Each batch sits at the offsets its ProduceResponse named, consecutively.
        for number, placed in enumerate(placements):
            for partition, base, batch in placed:
                got = [r.payload for r in records[partition][base : base + PER_BATCH]]
                assert got == [b"p%02d-b%03d-r%d" % (number, batch, r) for r in range(PER_BATCH)]
        for rs in records.values():
            assert [r.offset for r in rs] == list(range(len(rs)))

    run(scenario(), 100)


@pytest.mark.network
def test_the_example_client_command_line(broker: Running) -> None:
    topic = fresh_topic()

    def client(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "examples.rustlog_client", "--port", str(broker.port), *args],
            cwd=ROOT,
            input=stdin,
            capture_output=True,
            timeout=30,
            check=False,
        )

    assert json.loads(client("create", topic, "--partitions", "2").stdout)["success"] is True
    again = client("create", topic, "--partitions", "2")  # the topic exists: a failure
    assert json.loads(again.stdout)["success"] is False
    assert again.returncode == 1
    produced = json.loads(client("produce", topic, "1", "-", stdin=b"one\ntwo\n").stdout)
    assert produced == {"type": "ProduceResponse", "base_offset": 0, "record_count": 2}
    consumed = client("consume", topic, "1", "--group", "cli", "--commit")
    lines = [json.loads(line) for line in consumed.stdout.splitlines()]
    assert [line.get("payload") for line in lines[:2]] == ["one", "two"]
    assert lines[2] == {"type": "OffsetCommitResponse", "success": True}
    # The next consume starts at the committed offset: nothing new.
    assert client("consume", topic, "1", "--group", "cli").stdout == b""
    described = json.loads(client("describe", topic, "--partition", "1").stdout)
    assert described["high_watermark"] == 2
    assert topic in client("list").stdout.decode()
    assert json.loads(client("metrics").stdout)["metrics"]["requests_total"] > 0
    failed = client("produce", "missing-" + topic, "0", "x")
    assert failed.returncode == 1
    assert b"error 404" in failed.stderr


def test_error_responses_decode_through_the_codec() -> None:
    # The broker's Error details survive the codec both ways.
    broker = broker_with_topic()
    error = broker.handle(rustlog.Fetch("g", "nope", 0, 0, 1))
    server = rustlog.Connection(Role.SERVER)
    client = rustlog.Connection(Role.CLIENT)
    server.receive_data(client.send(rustlog.Fetch("g", "nope", 0, 0, 1)))
    server.next_event()
    client.receive_data(server.send(error))
    assert client.next_event() == error
