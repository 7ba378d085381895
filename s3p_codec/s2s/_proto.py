"""Protobuf wire code for the seven ``s2.v1`` messages, written by hand.

Why by hand and not the protobuf runtime, decided by measurement (``benchmarks/s2s_bench.py``,
CPU time, best of alternating rounds): decoding a ReadBatch frame to typed events costs
1.25-1.37x the runtime's ``ParseFromString`` plus building the same events for 100 records of
1 KiB, and 1.04-1.14x for 1,000 records of 64 bytes, with two headers per record or none,
plain or zstd (target: at most 1.5x). The runtime parses in C, but reading each field back
into Python and building the events (``attrs`` constructors), which both paths pay, is most of
the cost; records in the runtimes' field order take a straight-line path here, headers
included (through the general loop alone, records with headers cost about 2x). The runtime
would buy that margin at the price of a runtime dependency (it is test-only here), a generated
schema module, and errors we do not control (``DecodeError`` carries no code and no position).
So the codec owns its wire code, and ``tests/s2s/test_proto.py`` proves both directions agree
with the official runtime on random messages, byte for byte on encode.

Semantics follow proto3 as the runtime implements it:

- implicit-presence scalars equal to their default are not written; ``optional`` fields are
  written whenever they are set ("a match_seq_num of 0 is written");
- on decode, the last value of a repeated scalar field wins, a message field that appears twice
  is merged, and unknown fields (and fields whose wire type does not match) are skipped,
  groups included;
- a ``string`` must be valid UTF-8; varints longer than 10 bytes or above 2**64 - 1, truncated
  fields and field number 0 are errors (``bad_proto``).

One known divergence from the Python runtime (upb), found by differential fuzzing: upb keeps the
low 64 bits of a 10-byte varint whose last byte is above 1; here it is ``bad_proto``, as in
prost (the Rust decoder S2 itself uses) and protobuf-go, which check for that overflow. No
encoder writes such a varint.
"""

from __future__ import annotations

from s3p_codec._core import LocalProtocolError, RemoteProtocolError
from s3p_codec.s2s._events import (
    AppendAck,
    AppendInput,
    AppendRecord,
    ErrorCode,
    Header,
    ReadBatch,
    SequencedRecord,
    StreamPosition,
)

__all__ = [
    "decode_append_ack",
    "decode_append_input",
    "decode_read_batch",
    "encode_append_ack",
    "encode_append_input",
    "encode_read_batch",
    "validate_append_ack",
    "validate_append_input",
    "validate_read_batch",
]

_U64 = 1 << 64
_SMALL = [bytes([i]) for i in range(128)]


# ---------------------------------------------------------------------------------------------
# Encoding


def _varint(value: int) -> bytes:
    if value < 0x80:
        return _SMALL[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _position(position: StreamPosition) -> bytes:
    parts = b""
    if position.seq_num:
        parts = b"\x08" + _varint(position.seq_num)
    if position.timestamp:
        parts += b"\x10" + _varint(position.timestamp)
    return parts


def _header(header: Header) -> bytes:
    name, value = header.name, header.value
    out = b""
    if name:
        out = b"\x0a" + _varint(len(name)) + name
    if value:
        out += b"\x12" + _varint(len(value)) + value
    return out


def _append_record(record: AppendRecord) -> bytes:
    parts: list[bytes] = []
    if record.timestamp is not None:
        parts += (b"\x08", _varint(record.timestamp))
    for header in record.headers:
        encoded = _header(header)
        parts += (b"\x12", _varint(len(encoded)), encoded)
    if record.body:
        parts += (b"\x1a", _varint(len(record.body)), record.body)
    return b"".join(parts)


def encode_append_input(message: AppendInput) -> bytes:
    """``AppendInput`` as protobuf bytes (field order = field numbers, like the runtime)."""
    parts: list[bytes] = []
    for record in message.records:
        encoded = _append_record(record)
        parts += (b"\x0a", _varint(len(encoded)), encoded)
    if message.match_seq_num is not None:
        parts += (b"\x10", _varint(message.match_seq_num))
    if message.fencing_token is not None:
        token = message.fencing_token.encode("utf-8")
        parts += (b"\x1a", _varint(len(token)), token)
    return b"".join(parts)


def encode_append_ack(message: AppendAck) -> bytes:
    """``AppendAck``: start, end and tail are always written (the server always sets them)."""
    parts: list[bytes] = []
    fields = ((b"\x0a", message.start), (b"\x12", message.end), (b"\x1a", message.tail))
    for tag, position in fields:
        encoded = _position(position)
        parts += (tag, _varint(len(encoded)), encoded)
    return b"".join(parts)


def _sequenced_record(record: SequencedRecord) -> bytes:
    parts: list[bytes] = []
    if record.seq_num:
        parts += (b"\x08", _varint(record.seq_num))
    if record.timestamp:
        parts += (b"\x10", _varint(record.timestamp))
    for header in record.headers:
        encoded = _header(header)
        parts += (b"\x1a", _varint(len(encoded)), encoded)
    if record.body:
        parts += (b"\x22", _varint(len(record.body)), record.body)
    return b"".join(parts)


def encode_read_batch(message: ReadBatch) -> bytes:
    """``ReadBatch`` as protobuf bytes; ``tail`` is written when set."""
    parts: list[bytes] = []
    for record in message.records:
        encoded = _sequenced_record(record)
        parts += (b"\x0a", _varint(len(encoded)), encoded)
    if message.tail is not None:
        encoded = _position(message.tail)
        parts += (b"\x12", _varint(len(encoded)), encoded)
    return b"".join(parts)


# ---------------------------------------------------------------------------------------------
# Validation of user-built events (the parser's events are trusted)


def _bad(what: str) -> LocalProtocolError:
    return LocalProtocolError(what, code=ErrorCode.INVALID, fatal=False)


def _check_u64(value: object, what: str) -> None:
    if type(value) is not int or not 0 <= value < _U64:
        raise _bad(f"{what} must be an int in [0, 2**64), not {value!r}")


def _check_bytes(value: object, what: str) -> None:
    if type(value) is not bytes:
        raise _bad(f"{what} must be bytes, not {type(value).__name__}")


def _check_headers(headers: object, what: str) -> None:
    if type(headers) is not tuple:
        raise _bad(f"{what}.headers must be a sequence of Header, got {type(headers).__name__}")
    for header in headers:
        if type(header) is not Header:
            raise _bad(f"{what}.headers must hold Header, not {type(header).__name__}")
        _check_bytes(header.name, f"{what} header name")
        _check_bytes(header.value, f"{what} header value")


def check_position(position: object, what: str) -> None:
    """A user-built ``StreamPosition`` has two u64 fields."""
    if type(position) is not StreamPosition:
        raise _bad(f"{what} must be a StreamPosition, not {type(position).__name__}")
    _check_u64(position.seq_num, f"{what}.seq_num")
    _check_u64(position.timestamp, f"{what}.timestamp")


def validate_append_input(message: AppendInput) -> None:
    """Types and ranges of a user-built ``AppendInput`` (counts are the session's business)."""
    if type(message.records) is not tuple:
        raise _bad(
            "AppendInput.records must be a sequence of AppendRecord, "
            f"got {type(message.records).__name__}"
        )
    for record in message.records:
        if type(record) is not AppendRecord:
            raise _bad(f"AppendInput.records must hold AppendRecord, not {type(record).__name__}")
        _check_bytes(record.body, "AppendRecord.body")
        _check_headers(record.headers, "AppendRecord")
        if record.timestamp is not None:
            _check_u64(record.timestamp, "AppendRecord.timestamp")
    if message.match_seq_num is not None:
        _check_u64(message.match_seq_num, "AppendInput.match_seq_num")
    token = message.fencing_token
    if token is not None:
        if type(token) is not str:
            raise _bad("AppendInput.fencing_token must be a str")
        try:
            token.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _bad("AppendInput.fencing_token is not encodable as UTF-8") from exc


def validate_append_ack(message: AppendAck) -> None:
    """Types and ranges of a user-built ``AppendAck``."""
    check_position(message.start, "AppendAck.start")
    check_position(message.end, "AppendAck.end")
    check_position(message.tail, "AppendAck.tail")


def validate_read_batch(message: ReadBatch) -> None:
    """Types and ranges of a user-built ``ReadBatch``."""
    if type(message.records) is not tuple:
        raise _bad(
            "ReadBatch.records must be a sequence of SequencedRecord, "
            f"got {type(message.records).__name__}"
        )
    for record in message.records:
        if type(record) is not SequencedRecord:
            raise _bad(f"ReadBatch.records must hold SequencedRecord, not {type(record).__name__}")
        _check_u64(record.seq_num, "SequencedRecord.seq_num")
        _check_u64(record.timestamp, "SequencedRecord.timestamp")
        _check_bytes(record.body, "SequencedRecord.body")
        _check_headers(record.headers, "SequencedRecord")
    if message.tail is not None:
        check_position(message.tail, "ReadBatch.tail")


# ---------------------------------------------------------------------------------------------
# Decoding


def _error(what: str) -> RemoteProtocolError:
    return RemoteProtocolError(f"bad protobuf: {what}", code=ErrorCode.BAD_PROTO)


def _read_varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    # Unrolled for the common sizes (lengths: 1-3 bytes; seq_num and ms timestamps: up to 6),
    # which is where decoding spends its time; the loop below takes the rest.
    if end - pos >= 6:
        b = data[pos]
        if b < 0x80:
            return b, pos + 1
        result = b & 0x7F
        b = data[pos + 1]
        if b < 0x80:
            return result | b << 7, pos + 2
        result |= (b & 0x7F) << 7
        b = data[pos + 2]
        if b < 0x80:
            return result | b << 14, pos + 3
        result |= (b & 0x7F) << 14
        b = data[pos + 3]
        if b < 0x80:
            return result | b << 21, pos + 4
        result |= (b & 0x7F) << 21
        b = data[pos + 4]
        if b < 0x80:
            return result | b << 28, pos + 5
        result |= (b & 0x7F) << 28
        b = data[pos + 5]
        if b < 0x80:
            return result | b << 35, pos + 6
    return _read_varint_slow(data, pos, end)


def _read_varint_slow(data: bytes, pos: int, end: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while pos < end:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if result >= _U64:
                raise _error("varint above 2**64 - 1")
            return result, pos
        shift += 7
        if shift >= 70:
            raise _error("varint longer than 10 bytes")
    raise _error("truncated varint")


def _read_tag(data: bytes, pos: int, end: int) -> tuple[int, int]:
    tag = data[pos]
    if tag < 0x80:
        pos += 1
    else:
        tag, pos = _read_varint(data, pos, end)
    if tag >> 3 == 0 or tag >= 1 << 32:
        raise _error("field number 0 or out of range")
    return tag, pos


def _read_length(data: bytes, pos: int, end: int) -> tuple[int, int]:
    size = data[pos] if pos < end else 0x80
    if size < 0x80:
        pos += 1
    else:
        size, pos = _read_varint(data, pos, end)
    if size > end - pos:
        raise _error("length-delimited field runs past its end")
    return size, pos + size


def _skip(data: bytes, pos: int, end: int, tag: int) -> int:
    """Skip the unknown field whose tag was just read; groups are skipped whole."""
    open_groups: list[int] = []
    while True:
        wire_type = tag & 7
        if wire_type == 0:
            _, pos = _read_varint(data, pos, end)
        elif wire_type == 1:
            pos += 8
        elif wire_type == 2:
            _, pos = _read_length(data, pos, end)
        elif wire_type == 5:
            pos += 4
        elif wire_type == 3:
            open_groups.append(tag >> 3)
        elif wire_type == 4:
            if not open_groups or open_groups.pop() != tag >> 3:
                raise _error("unmatched end-group")
        else:
            raise _error(f"wire type {wire_type}")
        if pos > end:
            raise _error("fixed-size field runs past its end")
        if not open_groups:
            return pos
        if pos >= end:
            raise _error("unterminated group")
        tag, pos = _read_tag(data, pos, end)


def _decode_position(
    data: bytes, pos: int, end: int, base: StreamPosition | None = None
) -> StreamPosition:
    seq_num, timestamp = (base.seq_num, base.timestamp) if base is not None else (0, 0)
    while pos < end:
        tag, pos = _read_tag(data, pos, end)
        if tag == 0x08:
            seq_num, pos = _read_varint(data, pos, end)
        elif tag == 0x10:
            timestamp, pos = _read_varint(data, pos, end)
        else:
            pos = _skip(data, pos, end, tag)
    return StreamPosition(seq_num, timestamp)


def _decode_header(data: bytes, pos: int, end: int) -> Header:
    name = value = b""
    while pos < end:
        tag, pos = _read_tag(data, pos, end)
        if tag == 0x0A:
            start = pos
            _, pos = _read_length(data, pos, end)
            name = _payload(data, start, pos)
        elif tag == 0x12:
            start = pos
            _, pos = _read_length(data, pos, end)
            value = _payload(data, start, pos)
        else:
            pos = _skip(data, pos, end, tag)
    return Header(name, value)


def _payload(data: bytes, length_at: int, end: int) -> bytes:
    """The bytes of the length-delimited field whose length varint starts at ``length_at``."""
    size = data[length_at]
    if size < 0x80:
        return data[length_at + 1 : end]
    size, start = _read_varint(data, length_at, end)
    return data[start:end]


def _decode_sequenced_record(data: bytes, pos: int, end: int) -> SequencedRecord:
    """A record as the runtimes write it (fields in field-number order, each at most once:
    seq_num, timestamp, headers, body; any of them absent when at its default) in straight-line
    code, which is where a read session spends its time. Anything else (another field order,
    a repeated scalar, unknown fields, a header over 127 bytes, any doubt) is parsed again from
    the start by the general loop. Reading past ``end`` only ever leads to that fallback (or to
    an IndexError off the end of ``data``, which the caller turns into bad_proto)."""
    start = pos
    seq_num = timestamp = seq_shift = ts_shift = 0
    if pos < end and data[pos] == 0x08:
        seq_num = data[pos + 1]
        pos += 2
        if seq_num >= 0x80:
            seq_num &= 0x7F
            while True:
                seq_shift += 7
                byte = data[pos]
                pos += 1
                seq_num |= (byte & 0x7F) << seq_shift
                if byte < 0x80:
                    break
    if pos < end and data[pos] == 0x10:
        timestamp = data[pos + 1]
        pos += 2
        if timestamp >= 0x80:
            timestamp &= 0x7F
            while True:
                ts_shift += 7
                byte = data[pos]
                pos += 1
                timestamp |= (byte & 0x7F) << ts_shift
                if byte < 0x80:
                    break
    headers: tuple[Header, ...] = ()
    if pos < end and data[pos] == 0x1A:
        found: list[Header] = []
        while pos < end and data[pos] == 0x1A:
            # One Header, its length and both field lengths one byte each (under 128 bytes).
            stop = pos + 2 + data[pos + 1]
            if data[pos + 1] >= 0x80 or stop > end:
                return _decode_sequenced_record_any(data, start, end)
            pos += 2
            name = value = b""
            if pos < stop and data[pos] == 0x0A:
                size = data[pos + 1]
                pos += 2
                name = data[pos : pos + size]
                pos += size
            if pos < stop and data[pos] == 0x12:
                size = data[pos + 1]
                pos += 2
                value = data[pos : pos + size]
                pos += size
            if pos != stop:  # a long field, an unknown one, a repeat: the general loop
                return _decode_sequenced_record_any(data, start, end)
            found.append(Header(name, value))
        headers = tuple(found)
    body = b""
    if pos < end and data[pos] == 0x22:
        size = data[pos + 1]
        if size < 0x80:
            pos += 2
        elif data[pos + 2] < 0x80:
            size = (size & 0x7F) | data[pos + 2] << 7
            pos += 3
        else:
            size, pos = _read_varint(data, pos + 1, end)
        body = data[pos : pos + size]
        pos += size
    if (
        pos == end
        and seq_shift <= 63
        and ts_shift <= 63
        and seq_num < _U64
        and timestamp < _U64
    ):
        return SequencedRecord(seq_num, timestamp, body, headers)
    return _decode_sequenced_record_any(data, start, end)


def _decode_sequenced_record_any(data: bytes, pos: int, end: int) -> SequencedRecord:
    # The hot loop of a read session: varints of up to 3 bytes are decoded inline, since a
    # function call costs as much as the decoding itself.
    seq_num = timestamp = 0
    body = b""
    headers: list[Header] | None = None
    while pos < end:
        tag = data[pos]
        if tag < 0x80 and tag >= 0x08:
            pos += 1
        else:
            tag, pos = _read_tag(data, pos, end)
        if tag in (0x08, 0x10):
            # An IndexError past the end of ``data`` is turned into bad_proto by the caller.
            value = data[pos]
            pos += 1
            if value >= 0x80:
                value &= 0x7F
                shift = 7
                while True:
                    byte = data[pos]
                    pos += 1
                    value |= (byte & 0x7F) << shift
                    if byte < 0x80:
                        break
                    shift += 7
                    if shift >= 70:
                        raise _error("varint longer than 10 bytes")
                if value >= _U64:
                    raise _error("varint above 2**64 - 1")
            if pos > end:
                raise _error("varint runs past its record")
            if tag == 0x08:
                seq_num = value
            else:
                timestamp = value
        elif tag == 0x22:
            size = data[pos] if pos < end else 0x80
            if size < 0x80:
                pos += 1
            elif end - pos >= 2 and data[pos + 1] < 0x80:
                size = (size & 0x7F) | data[pos + 1] << 7
                pos += 2
            else:
                size, pos = _read_varint(data, pos, end)
            if size > end - pos:
                raise _error("record body runs past its end")
            body = data[pos : pos + size]
            pos += size
        elif tag == 0x1A:
            start = pos
            pos = _read_length(data, pos, end)[1]
            if headers is None:
                headers = []
            headers.append(_decode_header(data, start + _varint_size(data, start), pos))
        else:
            pos = _skip(data, pos, end, tag)
    return SequencedRecord(seq_num, timestamp, body, () if headers is None else tuple(headers))


def _varint_size(data: bytes, pos: int) -> int:
    size = 1
    while data[pos] >= 0x80:
        pos += 1
        size += 1
    return size


def _decode_append_record(data: bytes, pos: int, end: int) -> AppendRecord:
    timestamp: int | None = None
    body = b""
    headers: list[Header] = []
    while pos < end:
        tag, pos = _read_tag(data, pos, end)
        if tag == 0x08:
            timestamp, pos = _read_varint(data, pos, end)
        elif tag == 0x12:
            start = pos
            pos = _read_length(data, pos, end)[1]
            headers.append(_decode_header(data, start + _varint_size(data, start), pos))
        elif tag == 0x1A:
            start = pos
            pos = _read_length(data, pos, end)[1]
            body = _payload(data, start, pos)
        else:
            pos = _skip(data, pos, end, tag)
    return AppendRecord(body, tuple(headers), timestamp)


def _too_many(what: str, limit: int) -> RemoteProtocolError:
    return RemoteProtocolError(
        f"{what} carries more than {limit} records", code=ErrorCode.INVALID
    )


def decode_read_batch(data: bytes, max_records: int | None = None) -> ReadBatch:
    """Parse a ``ReadBatch``; raises ``RemoteProtocolError(bad_proto)`` on malformed bytes and
    ``RemoteProtocolError(invalid)`` as soon as a record past ``max_records`` is met (records
    are counted while decoding: a small compressed payload can hold a million empty ones)."""
    try:
        return _decode_read_batch(data, max_records)
    except IndexError as exc:  # a varint of a record's last field ran off the end
        raise _error("truncated message") from exc


def _decode_read_batch(data: bytes, max_records: int | None) -> ReadBatch:
    limit = len(data) if max_records is None else max_records
    records: list[SequencedRecord] = []
    tail: StreamPosition | None = None
    pos, end = 0, len(data)
    while pos < end:
        tag = data[pos]
        if tag == 0x0A:
            pos += 1
            size = data[pos] if pos < end else 0x80
            if size < 0x80:
                pos += 1
            elif end - pos >= 2 and data[pos + 1] < 0x80:
                size = (size & 0x7F) | data[pos + 1] << 7
                pos += 2
            else:
                size, pos = _read_varint(data, pos, end)
            if size > end - pos:
                raise _error("record runs past the end of the batch")
            if len(records) == limit:
                raise _too_many("a ReadBatch", limit)
            records.append(_decode_sequenced_record(data, pos, pos + size))
            pos += size
            continue
        tag, pos = _read_tag(data, pos, end)
        if tag == 0x0A:
            start = pos
            pos = _read_length(data, pos, end)[1]
            if len(records) == limit:
                raise _too_many("a ReadBatch", limit)
            records.append(_decode_sequenced_record(data, start + _varint_size(data, start), pos))
        elif tag == 0x12:
            start = pos
            pos = _read_length(data, pos, end)[1]
            tail = _decode_position(data, start + _varint_size(data, start), pos, tail)
        else:
            pos = _skip(data, pos, end, tag)
    return ReadBatch(tuple(records), tail)


def decode_append_input(data: bytes, max_records: int | None = None) -> AppendInput:
    """Parse an ``AppendInput``; raises ``RemoteProtocolError(bad_proto)`` on malformed bytes and
    ``RemoteProtocolError(invalid)`` as soon as a record past ``max_records`` is met, before
    building the rest (a 206-byte zstd frame can expand into a million empty records)."""
    limit = len(data) if max_records is None else max_records
    records: list[AppendRecord] = []
    match_seq_num: int | None = None
    fencing_token: str | None = None
    pos, end = 0, len(data)
    while pos < end:
        tag, pos = _read_tag(data, pos, end)
        if tag == 0x0A:
            start = pos
            pos = _read_length(data, pos, end)[1]
            if len(records) == limit:
                raise _too_many("an AppendInput", limit)
            records.append(_decode_append_record(data, start + _varint_size(data, start), pos))
        elif tag == 0x10:
            match_seq_num, pos = _read_varint(data, pos, end)
        elif tag == 0x1A:
            start = pos
            pos = _read_length(data, pos, end)[1]
            try:
                fencing_token = _payload(data, start, pos).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _error("fencing_token is not valid UTF-8") from exc
        else:
            pos = _skip(data, pos, end, tag)
    return AppendInput(tuple(records), match_seq_num, fencing_token)


def decode_append_ack(data: bytes) -> AppendAck:
    """Parse an ``AppendAck``; absent positions read as (0, 0), as the runtime's getters do."""
    found: list[StreamPosition | None] = [None, None, None]
    pos, end = 0, len(data)
    while pos < end:
        tag, pos = _read_tag(data, pos, end)
        if tag in (0x0A, 0x12, 0x1A):
            index = (tag >> 3) - 1
            start = pos
            pos = _read_length(data, pos, end)[1]
            found[index] = _decode_position(
                data, start + _varint_size(data, start), pos, found[index]
            )
        else:
            pos = _skip(data, pos, end, tag)
    zero = StreamPosition(0, 0)
    return AppendAck(found[0] or zero, found[1] or zero, found[2] or zero)
