"""The example store's answers to the commands the codec leaves ``Opaque``: table segments,
``MergeSegments``, ``CreateTransientSegment`` and segment attributes.

Requests are laid out here by hand from ``WireCommands.java`` (not with the store's own helpers)
and the replies are read back the same way, so a layout mistake on either side shows.
"""

from __future__ import annotations

import asyncio
import struct
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from examples import pravega_segment_store as store_module
from examples.pravega_store_commands import NO_VERSION, NOT_EXISTS, FieldReader, TableSegment
from s3p_codec import Role, pravega
from s3p_codec.io.asyncio import connect

pytestmark = pytest.mark.network

T = pravega.CommandType
TABLE = "scope/rg_kvtable/0.#epoch.0"


def s(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">H", len(data)) + data


def key(data: bytes, version: int) -> bytes:
    return struct.pack(">ii", 4 + len(data) + 8, len(data)) + data + struct.pack(">q", version)


def value(data: bytes) -> bytes:
    return struct.pack(">ii", 4 + len(data), len(data)) + data


def update(request_id: int, entries: list[tuple[bytes, int, bytes]], offset: int = -1) -> Any:
    body = struct.pack(">i", len(entries)) + b"".join(key(k, v) + value(d) for k, v, d in entries)
    payload = struct.pack(">q", request_id) + s(TABLE) + s("") + body + struct.pack(">q", offset)
    return pravega.Opaque(T.UPDATE_TABLE_ENTRIES, payload)


def keys_command(code: T, request_id: int, keys: list[tuple[bytes, int]], tail: bytes) -> Any:
    body = struct.pack(">i", len(keys)) + b"".join(key(k, v) for k, v in keys)
    return pravega.Opaque(code, struct.pack(">q", request_id) + s(TABLE) + s("") + body + tail)


def read_entries(reply: Any) -> tuple[int, str, list[tuple[bytes, int, bytes]], FieldReader]:
    fields = FieldReader(reply.payload)
    request_id, segment = fields.i64(), fields.string()
    return request_id, segment, fields.entries(), fields


Scenario = Callable[[Callable[[Any], Awaitable[Any]], store_module.Store], Awaitable[None]]


def run(scenario: Scenario) -> None:
    async def main() -> None:
        server, store = await store_module.start(store_module.Store(0.1))
        port = server.sockets[0].getsockname()[1]
        conn: Any = await connect(pravega.Connection(Role.CLIENT), "127.0.0.1", port)
        try:
            async with asyncio.timeout(20), conn:
                await conn.send(pravega.Hello())
                await conn.next_event()

                async def ask(request: Any) -> Any:
                    await conn.send(request)
                    return await conn.next_event()

                await scenario(ask, store)
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(main())


def create_table() -> Any:
    return pravega.Opaque(T.CREATE_TABLE_SEGMENT, struct.pack(">q", 1) + s(TABLE) + s(""))


def test_table_updates_are_conditional_on_key_versions_and_all_or_nothing() -> None:
    async def scenario(ask: Any, store: store_module.Store) -> None:
        assert await ask(create_table()) == pravega.SegmentCreated(1, TABLE)
        assert await ask(create_table()) == pravega.SegmentAlreadyExists(1, TABLE)
        created = await ask(update(2, [(b"a", NOT_EXISTS, b"1"), (b"b", NO_VERSION, b"2")]))
        assert created.type is T.TABLE_ENTRIES_UPDATED
        fields = FieldReader(created.payload)
        assert fields.i64() == 2
        versions = [fields.i64() for _ in range(fields.i32())]
        assert len(versions) == 2
        assert versions[0] < versions[1]
        assert fields.remaining == 0
        # "must not exist" on an existing key: bad version, and nothing of the batch applies
        refused = await ask(update(3, [(b"c", NO_VERSION, b"3"), (b"a", NOT_EXISTS, b"x")]))
        assert refused.type is T.TABLE_KEY_BAD_VERSION
        assert FieldReader(refused.payload).i64() == 3
        assert b"c" not in store.tables[TABLE].entries
        # a stale version: bad version; a version for a missing key: key does not exist
        stale = await ask(update(4, [(b"a", versions[0] + 1, b"y")]))
        assert stale.type is T.TABLE_KEY_BAD_VERSION
        missing = await ask(update(5, [(b"zz", versions[0], b"y")]))
        assert missing.type is T.TABLE_KEY_DOES_NOT_EXIST
        # the right version wins and gets a new one
        moved = await ask(update(6, [(b"a", versions[0], b"new")]))
        assert moved.type is T.TABLE_ENTRIES_UPDATED
        # a table offset that is not the table's length: refused
        offset = await ask(update(7, [(b"q", NO_VERSION, b"1")], offset=1))
        assert offset.type is T.TABLE_KEY_BAD_VERSION

    run(scenario)


def test_read_table_gives_an_absent_key_version_not_exists_and_an_empty_value() -> None:
    async def scenario(ask: Any, store: store_module.Store) -> None:
        await ask(create_table())
        await ask(update(2, [(b"k", NO_VERSION, b"value")]))
        reply = await ask(keys_command(T.READ_TABLE, 3, [(b"k", NO_VERSION), (b"gone", -1)], b""))
        assert reply.type is T.TABLE_READ
        request_id, segment, entries, rest = read_entries(reply)
        assert (request_id, segment, rest.remaining) == (3, TABLE, 0)
        assert entries[0][0] == b"k"
        assert entries[0][2] == b"value"
        assert entries[0][1] == store.tables[TABLE].entries[b"k"].version
        assert entries[1] == (b"gone", NOT_EXISTS, b"")

    run(scenario)


def test_removal_and_delta_reads_from_a_position() -> None:
    async def scenario(ask: Any, store: store_module.Store) -> None:
        await ask(create_table())
        first = await ask(update(2, [(b"a", NO_VERSION, b"1"), (b"b", NO_VERSION, b"2")]))
        fields = FieldReader(first.payload)
        fields.i64()
        va, vb = (fields.i64() for _ in range(fields.i32()))
        removed = await ask(
            keys_command(T.REMOVE_TABLE_KEYS, 3, [(b"a", va)], struct.pack(">q", -1))
        )
        assert removed.type is T.TABLE_KEYS_REMOVED
        stale = await ask(keys_command(T.REMOVE_TABLE_KEYS, 4, [(b"b", va)], struct.pack(">q", -1)))
        assert stale.type is T.TABLE_KEY_BAD_VERSION
        delta = pravega.Opaque(
            T.READ_TABLE_ENTRIES_DELTA,
            struct.pack(">q", 5) + s(TABLE) + s("") + struct.pack(">qi", 0, 10),
        )
        reply = await ask(delta)
        assert reply.type is T.TABLE_ENTRIES_DELTA_READ
        _, _, entries, rest = read_entries(reply)
        assert entries == [(b"b", vb, b"2")]  # "a" is gone
        should_clear, reached_end, last = rest.flag(), rest.flag(), rest.i64()
        assert (should_clear, reached_end, rest.remaining) == (False, True, 0)
        assert last > vb
        again = pravega.Opaque(
            T.READ_TABLE_ENTRIES_DELTA,
            struct.pack(">q", 6) + s(TABLE) + s("") + struct.pack(">qi", last, 10),
        )
        assert read_entries(await ask(again))[2] == []

    run(scenario)


def test_merge_appends_the_source_and_deletes_it() -> None:
    async def scenario(ask: Any, store: store_module.Store) -> None:
        for name in ("target", "source"):
            await ask(pravega.CreateSegment(1, name))
        store.segments["target"].append([b"abc"])
        store.segments["source"].append([b"defg"])
        merge = pravega.Opaque(
            T.MERGE_SEGMENTS, struct.pack(">q", 9) + s("target") + s("source") + s("")
        )
        reply = await ask(merge)
        assert reply.type is T.SEGMENTS_MERGED
        fields = FieldReader(reply.payload)
        assert (fields.i64(), fields.string(), fields.string(), fields.i64()) == (
            9, "target", "source", 7,
        )  # fmt: skip
        assert bytes(store.segments["target"].data) == b"abcdefg"
        assert "source" not in store.segments
        assert isinstance(await ask(merge), pravega.NoSuchSegment)

    run(scenario)


def test_transient_segments_and_attribute_compare_and_set() -> None:
    async def scenario(ask: Any, store: store_module.Store) -> None:
        await ask(pravega.CreateSegment(1, "parent"))
        writer = uuid.UUID(int=0xABC)
        transient = await ask(
            pravega.Opaque(
                T.CREATE_TRANSIENT_SEGMENT,
                struct.pack(">q", 2) + writer.bytes + s("parent") + s(""),
            )
        )
        assert transient == pravega.SegmentCreated(2, f"parent#transient.{writer.hex}")
        attribute = uuid.UUID(int=7)

        def get(request_id: int) -> Any:
            return pravega.Opaque(
                T.GET_SEGMENT_ATTRIBUTE,
                struct.pack(">q", request_id) + s("parent") + attribute.bytes + s(""),
            )

        def cas(request_id: int, new: int, expected: int) -> Any:
            return pravega.Opaque(
                T.UPDATE_SEGMENT_ATTRIBUTE,
                struct.pack(">q", request_id) + s("parent") + attribute.bytes
                + struct.pack(">qq", new, expected) + s(""),
            )  # fmt: skip

        assert (await ask(get(3))).payload == struct.pack(">qq", 3, NO_VERSION)
        assert (await ask(cas(4, 10, NO_VERSION))).payload == struct.pack(">q?", 4, True)
        assert (await ask(cas(5, 11, 9))).payload == struct.pack(">q?", 5, False)
        assert (await ask(get(6))).payload == struct.pack(">qq", 6, 10)

    run(scenario)


def test_a_table_command_too_short_for_its_fields_gets_an_error_message() -> None:
    async def scenario(ask: Any, store: store_module.Store) -> None:
        await ask(create_table())
        broken = struct.pack(">q", 4) + s(TABLE) + s("") + struct.pack(">i", 1_000_000)
        reply = await ask(pravega.Opaque(T.UPDATE_TABLE_ENTRIES, broken))
        assert isinstance(reply, pravega.ErrorMessage)
        assert reply.request_id == 4
        # the connection goes on
        assert await ask(pravega.KeepAlive()) == pravega.KeepAlive()

    run(scenario)


def test_delta_reads_page_through_every_entry_once_then_reach_the_end() -> None:
    table = TableSegment("t")
    for i in range(7):
        table.update([(b"k%d" % i, NO_VERSION, b"v%d" % i)])
    table.update([(b"k0", NO_VERSION, b"again")])  # k0 moves to the end
    seen, position, pages = [], 0, 0
    while True:
        entries, position = table.since(position, 3)
        if not entries:
            break
        pages += 1
        seen += [key for key, _, _ in entries]
    assert seen == [b"k1", b"k2", b"k3", b"k4", b"k5", b"k6", b"k0"]
    assert pages == 3
    assert position == table.length


def test_key_pages_follow_the_continuation_token() -> None:
    table = TableSegment("t")
    table.update([(b"k%d" % i, NO_VERSION, b"") for i in range(5)])
    keys, token = [], b""
    for _ in range(5):
        entries, token = table.page(token, 2)
        if not entries:
            break
        keys += [key for key, _, _ in entries]
    assert keys == [b"k0", b"k1", b"k2", b"k3", b"k4"]
