"""The segment-store commands the codec leaves ``Opaque``, and the table segments they act on.

The codec types the append path, reads and the segment lifecycle; the official client also
sends table-segment commands (reader-group state), ``MergeSegments`` (large events),
``CreateTransientSegment`` and segment attributes (byte streams). They reach the example store
as ``pravega.Opaque(code, payload)``; this module reads their fields and writes the replies,
following ``WireCommands.java``: i64/i32 big-endian, strings as u16 length + (modified) UTF-8,
UUIDs as two i64, byte arrays and lists as an i32 count first. A table key travels as
``i32 payload size, i32 length, bytes, i64 version``; a value as ``i32 payload size, i32 length,
bytes``. Trailing fields a sender may leave out (the Rust client sends fewer than the Java one
for ``CreateTableSegment`` and ``MergeSegments``) are read only if present.

Table semantics (``TableSegment``): a key's version is the table offset where its latest update
went; ``NO_VERSION`` updates unconditionally, ``NOT_EXISTS`` only if the key is absent, any
other version only if it matches. A batch applies whole or not at all.
"""

from __future__ import annotations

import struct
import uuid

import attrs

from s3p_codec import pravega

__all__ = ["NOT_EXISTS", "NO_VERSION", "FieldReader", "MalformedCommand", "TableSegment"]

NO_VERSION = -(1 << 63)
"""A key version meaning "whatever the current one is" (unconditional)."""
NOT_EXISTS = -1
"""A key version meaning "the key must not exist"."""

_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")


class MalformedCommand(Exception):
    """An ``Opaque`` payload shorter than its fields, or with a bad length or string."""


class FieldReader:
    """Reads the fields of one command payload in order; every read checks the bounds."""

    def __init__(self, payload: bytes) -> None:
        self.data = payload
        self.pos = 0

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def _take(self, n: int) -> bytes:
        if n < 0 or n > self.remaining:
            raise MalformedCommand(f"needs {n} bytes at {self.pos}, has {self.remaining}")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def i64(self) -> int:
        return int(_I64.unpack(self._take(8))[0])

    def i32(self) -> int:
        return int(_I32.unpack(self._take(4))[0])

    def flag(self) -> bool:
        return self._take(1) != b"\x00"

    def uid(self) -> uuid.UUID:
        return uuid.UUID(bytes=self._take(16))

    def string(self) -> str:
        size = int.from_bytes(self._take(2), "big")
        try:
            return self._take(size).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedCommand(f"string at {self.pos - size} is not UTF-8") from exc

    def blob(self) -> bytes:
        return self._take(self.i32())

    def key(self) -> tuple[bytes, int]:
        self.i32()  # payload size: implied by what follows
        data = self.blob()
        return data, self.i64()

    def value(self) -> bytes:
        self.i32()
        return self.blob()

    def keys(self) -> list[tuple[bytes, int]]:
        return [self.key() for _ in range(self._count())]

    def entries(self) -> list[tuple[bytes, int, bytes]]:
        out = []
        for _ in range(self._count()):
            key, version = self.key()
            out.append((key, version, self.value()))
        return out

    def _count(self) -> int:
        count = self.i32()
        if not 0 <= count <= self.remaining // 8:  # a key is at least 8 bytes of headers
            raise MalformedCommand(f"count {count} does not fit the payload")
        return count


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(2, "big") + data


def _entries(entries: list[tuple[bytes, int, bytes]]) -> bytes:
    out = [_I32.pack(len(entries))]
    for key, version, value in entries:
        out += [_I32.pack(4 + len(key) + 8), _I32.pack(len(key)), key, _I64.pack(version)]
        out += [_I32.pack(4 + len(value)), _I32.pack(len(value)), value]
    return b"".join(out)


def reply(code: pravega.CommandType, *parts: bytes) -> pravega.Opaque:
    """An untyped reply frame built from already-encoded fields."""
    return pravega.Opaque(code, b"".join(parts))


def table_entries_updated(request_id: int, versions: list[int]) -> pravega.Opaque:
    """``TableEntriesUpdated``: the new version of each updated key, in request order."""
    return reply(
        pravega.CommandType.TABLE_ENTRIES_UPDATED,
        _I64.pack(request_id),
        _I32.pack(len(versions)),
        *(_I64.pack(v) for v in versions),
    )


def table_keys_removed(request_id: int, segment: str) -> pravega.Opaque:
    """``TableKeysRemoved``."""
    return reply(pravega.CommandType.TABLE_KEYS_REMOVED, _I64.pack(request_id), _string(segment))


def table_read(
    request_id: int, segment: str, entries: list[tuple[bytes, int, bytes]]
) -> pravega.Opaque:
    """``TableRead``: one entry per requested key (an absent key: version ``NOT_EXISTS``)."""
    return reply(
        pravega.CommandType.TABLE_READ, _I64.pack(request_id), _string(segment), _entries(entries)
    )


def table_entries_read(
    request_id: int, segment: str, entries: list[tuple[bytes, int, bytes]], token: bytes
) -> pravega.Opaque:
    """``TableEntriesRead``: a page of entries and the token of the next page."""
    return reply(
        pravega.CommandType.TABLE_ENTRIES_READ,
        _I64.pack(request_id),
        _string(segment),
        _entries(entries),
        _I32.pack(len(token)),
        token,
    )


def table_keys_read(
    request_id: int, segment: str, keys: list[tuple[bytes, int]], token: bytes
) -> pravega.Opaque:
    """``TableKeysRead``: a page of keys and the token of the next page."""
    parts = [_I64.pack(request_id), _string(segment), _I32.pack(len(keys))]
    for key, version in keys:
        parts += [_I32.pack(4 + len(key) + 8), _I32.pack(len(key)), key, _I64.pack(version)]
    return reply(pravega.CommandType.TABLE_KEYS_READ, *parts, _I32.pack(len(token)), token)


def table_entries_delta_read(
    request_id: int,
    segment: str,
    entries: list[tuple[bytes, int, bytes]],
    reached_end: bool,
    last_position: int,
) -> pravega.Opaque:
    """``TableEntriesDeltaRead``: entries changed since a position, and where to go on from."""
    return reply(
        pravega.CommandType.TABLE_ENTRIES_DELTA_READ,
        _I64.pack(request_id),
        _string(segment),
        _entries(entries),
        b"\x00",  # shouldClear: this store never compacts a table away
        b"\x01" if reached_end else b"\x00",
        _I64.pack(last_position),
    )


def table_key_error(code: pravega.CommandType, request_id: int, segment: str) -> pravega.Opaque:
    """``TableKeyDoesNotExist`` or ``TableKeyBadVersion``."""
    return reply(code, _I64.pack(request_id), _string(segment), _string(""))


def segments_merged(request_id: int, target: str, source: str, offset: int) -> pravega.Opaque:
    """``SegmentsMerged``: the target's write offset after the merge."""
    return reply(
        pravega.CommandType.SEGMENTS_MERGED,
        _I64.pack(request_id),
        _string(target),
        _string(source),
        _I64.pack(offset),
    )


def segment_attribute(request_id: int, value: int) -> pravega.Opaque:
    """``SegmentAttribute``: an attribute's value (``NO_VERSION`` when it was never set)."""
    return reply(pravega.CommandType.SEGMENT_ATTRIBUTE, _I64.pack(request_id), _I64.pack(value))


def segment_attribute_updated(request_id: int, success: bool) -> pravega.Opaque:
    """``SegmentAttributeUpdated``: whether the compare-and-set happened."""
    return reply(
        pravega.CommandType.SEGMENT_ATTRIBUTE_UPDATED,
        _I64.pack(request_id),
        b"\x01" if success else b"\x00",
    )


def _entry_size(key: bytes, value: bytes) -> int:
    """How far an update moves the table's offset (its key, value and two headers)."""
    return 16 + len(key) + len(value)


@attrs.define
class _Entry:
    value: bytes
    version: int


class TableSegment:
    """Keys and values with versions; the versions are offsets in an update log."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.entries: dict[bytes, _Entry] = {}
        self.length = 0  # grows with every update: the next version

    def check(self, keys: list[tuple[bytes, int]]) -> pravega.CommandType | None:
        """The error code a conditional batch fails with, or None if every condition holds."""
        for key, version in keys:
            current = self.entries.get(key)
            if version == NO_VERSION:
                continue
            if version == NOT_EXISTS:
                if current is not None:
                    return pravega.CommandType.TABLE_KEY_BAD_VERSION
            elif current is None:
                return pravega.CommandType.TABLE_KEY_DOES_NOT_EXIST
            elif current.version != version:
                return pravega.CommandType.TABLE_KEY_BAD_VERSION
        return None

    def update(self, entries: list[tuple[bytes, int, bytes]]) -> list[int]:
        """Store every entry (conditions already checked); the new versions."""
        versions = []
        for key, _, value in entries:
            version = self.length
            self.length += _entry_size(key, value)
            self.entries[key] = _Entry(value, version)
            versions.append(version)
        return versions

    def remove(self, keys: list[tuple[bytes, int]]) -> None:
        for key, _ in keys:
            if self.entries.pop(key, None) is not None:
                self.length += 8 + len(key)

    def get(self, key: bytes) -> tuple[bytes, int, bytes]:
        entry = self.entries.get(key)
        if entry is None:
            return key, NOT_EXISTS, b""
        return key, entry.version, entry.value

    def since(self, position: int, limit: int) -> tuple[list[tuple[bytes, int, bytes]], int]:
        """Live entries whose version is at or after ``position``, oldest first, at most
        ``limit``; and the position to read from next (the table's length once all are out)."""
        newer = sorted(
            (e.version, k, e) for k, e in self.entries.items() if e.version >= position
        )
        page = newer[: max(1, limit)]
        entries = [(k, v, e.value) for v, k, e in page]
        if len(page) == len(newer):
            return entries, max(position, self.length)
        last = page[-1][2]
        return entries, last.version + _entry_size(page[-1][1], last.value)

    def page(self, token: bytes, limit: int) -> tuple[list[tuple[bytes, int, bytes]], bytes]:
        """Entries in key order after ``token`` (the last key of the previous page)."""
        keys = sorted(k for k in self.entries if not token or k > token[1:])
        chosen = keys[: max(1, limit)]
        entries = [self.get(k) for k in chosen]
        next_token = b"k" + chosen[-1] if chosen else token
        return entries, next_token
