"""The official Pravega client (``pravega_client``, the Rust client) against the example store.

The store + controller run as their own process for the module
(``pravega_official_support.StoreProcess``); each test uses its own scope. What the store holds
is checked through our own codec (``GetStreamSegmentInfo``, ``ReadSegment``). Every wait is
bounded, and the store process is stopped at the end of the module.
"""

from __future__ import annotations

import asyncio
import collections
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

pravega_client = pytest.importorskip("pravega_client")
pytest.importorskip("grpc")

from examples.pravega_controller import segment_name, transaction_segment_name  # noqa: E402
from s3p_codec import pravega  # noqa: E402
from s3p_codec.pravega import NoSuchSegment  # noqa: E402
from tests.examples.pravega_official_support import StoreProcess, events_of  # noqa: E402

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def server() -> Iterator[StoreProcess]:
    with StoreProcess("--tail-wait", "0.2", "--restart-pause", "0.5") as running:
        yield running


@pytest.fixture
def manager(server: StoreProcess) -> Any:
    return pravega_client.StreamManager(server.controller_uri)


def new_scope(manager: Any) -> str:
    scope = "s" + uuid.uuid4().hex[:12]
    assert manager.create_scope(scope) is True
    return scope


def read_events(
    manager: Any, scope: str, stream: str, count: int, timeout: float = 30.0
) -> list[bytes]:
    """Read ``count`` events through a new reader group (fails if they do not all come)."""
    group = manager.create_reader_group("rg" + uuid.uuid4().hex[:8], scope, stream)
    reader = group.create_reader("reader1")

    async def read() -> list[bytes]:
        events: list[bytes] = []
        while len(events) < count:
            segment_slice = await reader.get_segment_slice_async()
            events.extend(bytes(event.data()) for event in segment_slice)
            reader.release_segment(segment_slice)
        return events

    try:
        return asyncio.run(asyncio.wait_for(read(), timeout))
    finally:
        reader.reader_offline()


def test_create_scope_and_stream_make_one_segment_per_fixed_segment(
    server: StoreProcess, manager: Any
) -> None:
    scope = new_scope(manager)
    assert manager.create_scope(scope) is False  # already there
    assert manager.create_stream(scope, "orders", 3) is True
    assert manager.create_stream(scope, "orders", 3) is False
    for i in range(3):
        info = server.segment_info(segment_name(scope, "orders", i))
        assert (info.exists, info.is_sealed, info.write_offset) == (True, False, 0)
    assert segment_name(scope, "orders", 2) == f"{scope}/orders/2.#epoch.0"


def test_writer_10000_events_across_routing_keys_read_back_in_order_per_key(
    server: StoreProcess, manager: Any
) -> None:
    scope, keys, total = new_scope(manager), 7, 10_000
    manager.create_stream(scope, "events", 4)
    writer = manager.create_writer(scope, "events")
    for i in range(total):
        key = f"key{i % keys}"
        writer.write_event(f"{key}:{i // keys}", routing_key=key)
    writer.flush()

    stored = [events_of(server.read_segment(segment_name(scope, "events", i))) for i in range(4)]
    assert sum(len(s) for s in stored) == total  # each event stored once
    keys_by_segment = [{e.split(b":")[0] for e in s} for s in stored]
    for i, keys_here in enumerate(keys_by_segment):  # a routing key stays in one segment
        for other in keys_by_segment[i + 1 :]:
            assert not keys_here & other

    events = read_events(manager, scope, "events", total)
    assert len(events) == total
    by_key: dict[str, list[int]] = collections.defaultdict(list)
    for event in events:
        key, number = event.decode().split(":")
        by_key[key].append(int(number))
    assert len(by_key) == keys
    for key, numbers in by_key.items():
        expected = len(range(int(key[3:]), total, keys))
        assert numbers == list(range(expected)), key


def test_transaction_commit_merges_and_abort_discards(server: StoreProcess, manager: Any) -> None:
    scope, per_txn = new_scope(manager), 300
    manager.create_stream(scope, "txns", 2)
    writer = manager.create_transaction_writer(scope, "txns", 1)
    committed, aborted = writer.begin_txn(), writer.begin_txn()
    for i in range(per_txn):
        key = f"k{i % 5}"
        committed.write_event(f"{key}:{i // 5}", routing_key=key)
        aborted.write_event(f"x{key}:{i // 5}", routing_key=key)
    assert committed.is_open()
    assert aborted.is_open()
    ids = [committed.get_txn_id(), aborted.get_txn_id()]
    assert ids[0] != ids[1]
    txn_segments = [
        transaction_segment_name(segment_name(scope, "txns", i), uuid.UUID(int=txn))
        for i in range(2)
        for txn in ids
    ]
    for name in txn_segments:  # open transactions have their own segments (being written)
        assert server.segment_info(name).exists
    committed.commit()
    aborted.abort()
    assert not committed.is_open()
    assert not aborted.is_open()

    parents = [segment_name(scope, "txns", i) for i in range(2)]
    stored = [e for name in parents for e in events_of(server.read_segment(name))]
    assert sorted(stored) == sorted(f"k{i % 5}:{i // 5}".encode() for i in range(per_txn))
    for name in txn_segments:  # no transaction segment is left behind
        assert isinstance(server.ask(pravega.GetStreamSegmentInfo(1, name)), NoSuchSegment)

    events = read_events(manager, scope, "txns", per_txn)
    by_key: dict[str, list[int]] = collections.defaultdict(list)
    for event in events:
        key, number = event.decode().split(":")
        by_key[key].append(int(number))
    assert sorted(by_key) == [f"k{i}" for i in range(5)]  # nothing of the aborted one
    for numbers in by_key.values():
        assert numbers == list(range(per_txn // 5))


def test_byte_stream_writes_seeks_reads_and_truncates(server: StoreProcess, manager: Any) -> None:
    scope = new_scope(manager)
    manager.create_stream(scope, "bytes", 1)
    stream = manager.create_byte_stream(scope, "bytes")
    data = bytes(range(256)) * 1200  # 307,200 bytes
    assert stream.write(data) == len(data)
    stream.flush()
    assert stream.current_tail_offset() == len(data)
    assert stream.current_head_offset() == 0
    # the segment holds the raw bytes: a byte stream has no Event frames
    assert server.read_segment(segment_name(scope, "bytes", 0)) == data

    stream.seek(1000, 0)
    assert stream.tell() == 1000
    buffer = bytearray(5000)
    count = stream.readinto(buffer)
    assert 0 < count <= 5000
    assert bytes(buffer[:count]) == data[1000 : 1000 + count]

    stream.truncate(2000)
    assert stream.current_head_offset() == 2000
    assert server.segment_info(segment_name(scope, "bytes", 0)).start_offset == 2000
    stream.seek(2500, 0)
    buffer = bytearray(100)
    count = stream.readinto(buffer)
    assert bytes(buffer[:count]) == data[2500 : 2500 + count]
    assert count > 0


def test_events_of_1_mib_and_8_mib_round_trip(server: StoreProcess, manager: Any) -> None:
    scope = new_scope(manager)
    manager.create_stream(scope, "big", 1)
    writer = manager.create_writer(scope, "big")
    sizes = [1 << 20, 8 << 20]  # 8 MiB is the client's largest event
    payloads = [bytes([i + 1]) * size + b"end" for i, size in enumerate(sizes)]
    payloads[1] = payloads[1][:-3]
    payloads[0] = payloads[0][:-3]
    for payload in payloads:
        writer.write_event_bytes(payload)
    writer.flush()
    assert events_of(server.read_segment(segment_name(scope, "big", 0))) == payloads
    assert read_events(manager, scope, "big", 2) == payloads


def test_store_restart_mid_write_loses_and_duplicates_nothing(
    server: StoreProcess, manager: Any
) -> None:
    scope, keys, total = new_scope(manager), 3, 6000
    manager.create_stream(scope, "restart", 2)
    writer = manager.create_writer(scope, "restart")
    for i in range(total):
        if i == total // 2:
            server.restart()  # drops every connection; back in half a second, data kept
        key = f"key{i % keys}"
        writer.write_event(f"{key}:{i // keys}:" + "x" * 200, routing_key=key)
    writer.flush()
    dropped = re.search(r"dropped (\d+) connections", server.log)
    assert dropped is not None
    assert int(dropped.group(1)) >= 2  # the writer's connections were open mid-write

    stored = [
        e
        for i in range(2)
        for e in events_of(server.read_segment(segment_name(scope, "restart", i)))
    ]
    assert len(stored) == total  # nothing lost, nothing stored twice
    events = read_events(manager, scope, "restart", total)
    by_key: dict[str, list[int]] = collections.defaultdict(list)
    for event in events:
        key, number, _ = event.decode().split(":")
        by_key[key].append(int(number))
    for numbers in by_key.values():
        assert numbers == list(range(total // keys))


def test_list_seal_and_delete_streams_and_scopes(server: StoreProcess, manager: Any) -> None:
    scope, empty = new_scope(manager), new_scope(manager)
    manager.create_stream(scope, "kept", 2)
    manager.create_stream(scope, "gone", 1)
    assert {scope, empty} <= set(manager.list_scope())
    assert sorted(manager.list_stream(scope)) == ["gone", "kept"]
    with pytest.raises(ValueError, match="DeleteStream"):  # Pravega deletes sealed streams only
        manager.delete_stream(scope, "kept")
    assert manager.seal_stream(scope, "gone") is True
    assert server.segment_info(segment_name(scope, "gone", 0)).is_sealed
    assert manager.delete_stream(scope, "gone") is True
    gone = server.ask(pravega.GetStreamSegmentInfo(1, segment_name(scope, "gone", 0)))
    assert isinstance(gone, NoSuchSegment)
    assert sorted(manager.list_stream(scope)) == ["kept"]
    with pytest.raises(ValueError, match="DeleteScope"):  # it still holds a stream
        manager.delete_scope(scope)
    assert manager.delete_scope(empty) is True
    assert empty not in set(manager.list_scope())
