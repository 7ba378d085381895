"""Hypothesis strategies for S2S peers: append inputs, their frames, malformed frames.

S2S frames ride in HTTP bodies. A malformed case here is a whole HTTP/1.1 append session: the
request head (``POST /v1/streams/fuzz/records``, ``Content-Type: s2s/proto``, chunked body) and
body chunks holding the broken frames. "After receiving or sending a terminal frame, the session
must be closed": every frame error is fatal and answered by a terminal frame whose JSON ``code``
is the case's ``code`` (``bad_frame`` 400 for framing and compression, ``bad_proto`` 400 for a
protobuf that does not decode, ``invalid`` 422 for a message that breaks a rule). A bad request
head gets a plain HTTP error response instead (``bad_header``, ``bad_path``, ``bad_query``).
"Fatal" here means the session ends (the response body ends); HTTP/1.1 may keep the connection.

Compression bombs: zstd and gzip payloads of a few hundred bytes that inflate past the
2 MiB - 1 payload limit; a strict peer stops decompressing at the cap. Every limit is also hit
exactly (``edge_cases``: must be accepted) and by one more (``malformed``): the 2 MiB frame
length (padded with an unknown protobuf field, which "Unknown fields are skipped" allows), the
decompressed payload, "1000 records or 1 MiB of metered data" per AppendInput.

Client direction (fuzz your own S2S client): ``reply_wire()`` gives server frames as this
library's server-role codec writes them (ReadBatch and Heartbeat with compression none, zstd
and gzip; AppendAck; Terminal), ``requests_for(event)`` what the client sent first;
``malformed_replies()`` gives whole HTTP/1.1 responses a strict client must refuse (framing,
truncation after every byte of a frame, bombs, bad protobuf, acks in illegal orders, a wrong
content type), each with the ``code`` this library's client-role codec raises and ``pending``,
the requests the client sent first; ``reply_edge_cases()`` responses it must accept.
"""

from __future__ import annotations

import gzip

import attrs
import zstandard
from hypothesis import strategies as st

from s3p_codec import ProtocolError, Role, s2s
from s3p_codec.testing.strategies import Answer, Malformed, MalformedReply, Valid

__all__ = [
    "Target",
    "append_inputs",
    "edge_cases",
    "malformed",
    "malformed_replies",
    "positions",
    "read_batches",
    "replies",
    "reply_edge_cases",
    "reply_wire",
    "request_wire",
    "requests",
    "requests_for",
]

E = s2s.ErrorCode
STREAM = "fuzz"
TOKEN = "fuzz"
U64 = (1 << 64) - 1


def _client() -> s2s.Http1Connection:
    return s2s.Http1Connection(Role.CLIENT, host="127.0.0.1")


def session_head(stream: str = STREAM) -> bytes:
    """The HTTP/1.1 head that opens an append session on ``stream`` (chunked body)."""
    return _client().send(s2s.SessionRequest(s2s.Session.APPEND, stream, token=TOKEN))


HEAD = session_head()


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data) if data else b""


def _frame(flags: int, payload: bytes) -> bytes:
    return (len(payload) + 1).to_bytes(3, "big") + bytes([flags]) + payload


# --- valid -------------------------------------------------------------------------------------


def append_records() -> st.SearchStrategy[s2s.AppendRecord]:
    headers = st.lists(
        st.builds(s2s.Header, st.binary(min_size=1, max_size=8), st.binary(max_size=8)),
        max_size=2,
    ).map(tuple)
    return st.builds(s2s.AppendRecord, st.binary(max_size=64), headers=headers)


def append_inputs() -> st.SearchStrategy[s2s.AppendInput]:
    """AppendInput of 1-8 records (the spec allows 1..1000 and 1 MiB)."""
    return st.builds(s2s.AppendInput, st.lists(append_records(), min_size=1, max_size=8).map(tuple))


def requests() -> st.SearchStrategy[s2s.AppendInput]:
    """What a client sends in an append session."""
    return append_inputs()


def positions() -> st.SearchStrategy[s2s.StreamPosition]:
    return st.builds(s2s.StreamPosition, st.integers(0, U64), st.integers(0, U64))


def read_batches() -> st.SearchStrategy[s2s.ReadBatch]:
    """ReadBatch frames with 1-4 records (a batch without records is a heartbeat)."""
    records = st.lists(
        st.builds(
            s2s.SequencedRecord, st.integers(0, U64), st.integers(0, U64), st.binary(max_size=32)
        ),
        min_size=1,
        max_size=4,
    ).map(tuple)
    return st.builds(s2s.ReadBatch, records, st.none() | positions())


def replies() -> st.SearchStrategy[s2s.Heartbeat | s2s.ReadBatch | s2s.Terminal]:
    """What a server sends in a read session (for fuzzing clients)."""
    codes = st.sampled_from(list(s2s.ErrorCode))
    terminals = codes.map(lambda c: s2s.Terminal(s2s.status_of(c), c.value, "fuzz"))
    return st.one_of(read_batches(), st.builds(s2s.Heartbeat, positions()), terminals)


def request_wire() -> st.SearchStrategy[tuple[s2s.AppendInput, bytes]]:
    """``(AppendInput, its exact frame)`` as a client-role session writes it."""

    def encode(event: s2s.AppendInput) -> tuple[s2s.AppendInput, bytes]:
        session = s2s.Connection(Role.CLIENT, s2s.Session.APPEND)
        return event, session.send(event)

    return append_inputs().map(encode)


# --- malformed ---------------------------------------------------------------------------------


def _case(label: str, body: bytes, code: E, *, end: bool = False) -> Malformed:
    data = HEAD + _chunk(body) + (b"0\r\n\r\n" if end else b"")
    return Malformed(label, data, code.value, fatal=True, reply=True)


def _bomb(compression: str) -> bytes:
    zeros = b"\0" * (3 << 20)
    if compression == "zstd":
        return zstandard.ZstdCompressor(level=3).compress(zeros)
    return gzip.compress(zeros, compresslevel=9)


def _framing(lim: s2s.Limits) -> st.SearchStrategy[Malformed]:
    ack = s2s.Connection(Role.CLIENT, s2s.Session.APPEND).send(
        s2s.AppendInput((s2s.AppendRecord(b"hello"),))
    )
    return st.sampled_from(
        [
            _case("frame length 0", b"\0\0\0", E.BAD_FRAME),
            _case(
                "frame length over 2 MiB (header only)",
                (lim.max_frame_length + 1).to_bytes(3, "big"),
                E.BAD_FRAME,
            ),
            _case("frame length 2^24-1 (header only)", b"\xff\xff\xff", E.BAD_FRAME),
            _case("compression value 3", _frame(0x60, b"\x0a\x00"), E.BAD_FRAME),
            _case("body ends inside a frame", ack[:-1], E.BAD_FRAME, end=True),
            _case("body ends inside a frame header", ack[:2], E.BAD_FRAME, end=True),
            _case("zstd bomb", _frame(0x20, _bomb("zstd")), E.BAD_FRAME),
            _case("gzip bomb", _frame(0x40, _bomb("gzip")), E.BAD_FRAME),
            _case("corrupt zstd", _frame(0x20, b"\x28\xb5\x2f\xfd garbage"), E.BAD_FRAME),
            _case("corrupt gzip", _frame(0x40, b"\x1f\x8b garbage"), E.BAD_FRAME),
            _case("length -1 byte", (len(ack) - 4).to_bytes(3, "big") + ack[3:], E.BAD_PROTO),
        ]
    )


def _protobuf() -> st.SearchStrategy[Malformed]:
    cases = [
        ("truncated varint", b"\x10\xff"),
        ("length-delimited field past the end", b"\x0a\x10ab"),
        ("wire type 7", b"\x0f"),
        ("field number 0", b"\x02\x00"),
        ("record body past the end", b"\x0a\x04\x1a\x09ab"),
        ("varint of 11 bytes", b"\x10" + b"\xff" * 10 + b"\x01"),
        ("fencing token not UTF-8", b"\x0a\x02\x1a\x00\x1a\x01\xff"),
    ]
    return st.sampled_from(
        [_case(f"protobuf: {label}", _frame(0, p), E.BAD_PROTO) for label, p in cases]
    )


def _rules() -> st.SearchStrategy[Malformed]:
    none = b"\x10\x05"  # match_seq_num 5, no records
    many = b"\x0a\x00" * 1001
    return st.sampled_from(
        [
            _case("AppendInput with no records", _frame(0, none), E.INVALID),
            _case("AppendInput with 1001 records", _frame(0, many), E.INVALID),
        ]
    )


def _heads() -> st.SearchStrategy[Malformed]:
    def head(label: str, raw: bytes, code: E) -> Malformed:
        # No session opens; HTTP/1.1 lets the server close after an error response.
        return Malformed(label, raw, code.value, fatal=True, reply=True)

    return st.sampled_from(
        [
            head(
                "append session without s2s/proto",
                HEAD.replace(b"content-type: s2s/proto", b"content-type: text/plain"),
                E.BAD_HEADER,
            ),
            head(
                "Authorization that is not Bearer",
                HEAD.replace(b"Bearer fuzz", b"Basic eA=="),
                E.UNAUTHORIZED,
            ),
        ]
    )


# --- limits: frame length, decompressed size, batch size -------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _pad(message: bytes, total: int) -> bytes:
    """``message`` plus one unknown length-delimited field (number 15), ``total`` bytes in all
    ("Unknown fields are skipped"): a message exactly at a size limit that is otherwise small."""
    room = total - len(message) - 1  # the tag byte 0x7a
    for size in range(1, 5):
        if len(_varint(room - size)) == size:
            return message + b"\x7a" + _varint(room - size) + bytes(room - size)
    raise ValueError(f"cannot pad {len(message)} bytes to {total}")


def _zstd(data: bytes, *, declare: bool = True) -> bytes:
    return bytes(zstandard.ZstdCompressor(write_content_size=declare).compress(data))


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


_ONE = s2s.AppendInput((s2s.AppendRecord(b"edge"),))


def _metered(size: int) -> s2s.AppendInput:
    """One record of exactly ``size`` metered bytes ("8 + len(body)" for no headers)."""
    return s2s.AppendInput((s2s.AppendRecord(bytes(size - 8)),))


def _limits(lim: s2s.Limits) -> st.SearchStrategy[Malformed]:
    """Sizes one over each limit: the decompressed payload (2 MiB - 1), the metered bytes of a
    batch (1 MiB). The frame length and record count are in ``_framing`` and ``_rules``."""
    message = _encode(_ONE)[4:]
    over = _pad(message, lim.max_payload + 1)
    return st.sampled_from(
        [
            _case("zstd payload inflating one byte over the cap (size declared)",
                  _frame(0x20, _zstd(over)), E.BAD_FRAME),
            _case("zstd payload inflating one byte over the cap (no size declared)",
                  _frame(0x20, _zstd(over, declare=False)), E.BAD_FRAME),
            _case("gzip payload inflating one byte over the cap", _frame(0x40, _gzip(over)),
                  E.BAD_FRAME),
            _case("zstd payload of two frames inflating one byte over the cap together",
                  _frame(0x20, _zstd(over[: len(over) // 2]) + _zstd(over[len(over) // 2 :])),
                  E.BAD_FRAME),
            _case(f"AppendInput of {lim.max_append_bytes} + 1 metered bytes",
                  _frame(0, _encode_unchecked(_metered(lim.max_append_bytes + 1))), E.INVALID),
        ]
    )  # fmt: skip


def _encode_unchecked(event: s2s.AppendInput) -> bytes:
    """The protobuf of ``event`` even when it breaks the batch limits (a bigger client limit)."""
    big = s2s.Limits(max_append_bytes=1 << 30, max_records_per_append=1 << 20)
    return s2s.Connection(Role.CLIENT, s2s.Session.APPEND, limits=big).send(event)[4:]


def malformed(limits: s2s.Limits | None = None) -> st.SearchStrategy[Malformed]:
    """Malformed append sessions, each with the JSON error code it must end with."""
    lim = limits or s2s.Limits()
    return st.one_of(_framing(lim), _protobuf(), _rules(), _heads(), _limits(lim))


def _encode(event: s2s.AppendInput) -> bytes:
    return s2s.Connection(Role.CLIENT, s2s.Session.APPEND).send(event)


def edge_cases(limits: s2s.Limits | None = None) -> st.SearchStrategy[Valid]:
    """Append frames a strict server must accept: reserved flag bits 3-0 set ("reserved and
    ignored on decode"), an unknown protobuf field ("Unknown fields are skipped"), 1000
    records, a record with an empty body, and every size exactly at its limit: a frame length
    of 2 MiB, zstd and gzip payloads inflating to exactly 2 MiB - 1, 1 MiB of metered bytes."""
    lim = limits or s2s.Limits()
    forbidden = (E.BAD_FRAME.value, E.BAD_PROTO.value, E.INVALID.value)
    one = s2s.AppendInput((s2s.AppendRecord(b"edge"),))
    frame = s2s.Connection(Role.CLIENT, s2s.Session.APPEND).send(one)
    payload = frame[4:]
    thousand = s2s.AppendInput((s2s.AppendRecord(b""),) * 1000)
    empty = s2s.AppendInput((s2s.AppendRecord(b""),))
    cases = [
        ("reserved flag bits set", _frame(0x0F, payload), one),
        ("unknown protobuf field", _frame(0, payload + b"\xf8\x07\x01"), one),
        ("1000 records", _encode(thousand), thousand),
        ("record with an empty body", _encode(empty), empty),
    ]
    at_cap = _pad(_encode(_ONE)[4:], lim.max_payload)
    metered = _metered(lim.max_append_bytes)
    cases += [
        (f"frame length exactly {lim.max_frame_length}", _frame(0, at_cap), _ONE),
        ("zstd payload inflating to exactly the cap", _frame(0x20, _zstd(at_cap)), _ONE),
        ("zstd payload inflating to exactly the cap (no size declared)",
         _frame(0x20, _zstd(at_cap, declare=False)), _ONE),
        ("gzip payload inflating to exactly the cap", _frame(0x40, _gzip(at_cap)), _ONE),
        (f"exactly {lim.max_append_bytes} metered bytes", _encode(metered), metered),
    ]  # fmt: skip
    return st.sampled_from(
        [Valid(label, HEAD + _chunk(data), event, forbidden) for label, data, event in cases]
    )


# --- client direction: server frames, and server bytes a strict client must refuse -------------


APPEND_REQUEST = s2s.SessionRequest(s2s.Session.APPEND, STREAM, token=TOKEN)
READ_REQUEST = s2s.SessionRequest(s2s.Session.READ, STREAM, token=TOKEN)
END = b"0\r\n\r\n"


def _response_head() -> bytes:
    server = s2s.Http1Connection(Role.SERVER)
    server.receive_data(HEAD)
    server.next_event()
    return server.send(s2s.SessionResponse())


RESPONSE_HEAD = _response_head()


def _inputs(*counts: int) -> tuple[s2s.AppendInput, ...]:
    return tuple(s2s.AppendInput((s2s.AppendRecord(b"r"),) * count) for count in counts)


def _position(seq_num: int) -> s2s.StreamPosition:
    return s2s.StreamPosition(seq_num, 1000 + seq_num)


def _ack(start: int, end: int) -> s2s.AppendAck:
    return s2s.AppendAck(_position(start), _position(end), _position(end))


def _server_frames(inputs: tuple[s2s.AppendInput, ...], acks: list[s2s.AppendAck]) -> bytes:
    """Acks as our server-role codec writes them, after it read ``inputs``."""
    server = s2s.Connection(Role.SERVER, s2s.Session.APPEND)
    for event in inputs:
        server.receive_data(_encode(event))
        server.next_event()
    return b"".join(server.send(ack) for ack in acks)


def _read_frame(event: s2s.ReadBatch | s2s.Heartbeat, compression: s2s.Compression) -> bytes:
    return s2s.Connection(Role.SERVER, s2s.Session.READ, compression=compression).send(event)


def requests_for(
    reply: s2s.Event,
) -> tuple[s2s.SessionRequest | s2s.AppendInput, ...]:
    """What a client has sent before ``reply`` makes sense: the session's request, and for an
    ``AppendAck`` an input of as many records as it acknowledges."""
    if isinstance(reply, s2s.AppendAck):
        return (APPEND_REQUEST, *_inputs(reply.end.seq_num - reply.start.seq_num))
    return (READ_REQUEST,)


def _big_batches() -> st.SearchStrategy[s2s.ReadBatch]:
    """Batches over the 1 KiB compression threshold (so zstd and gzip are really used)."""
    record = st.builds(
        lambda seq, byte, size: s2s.SequencedRecord(seq, seq, bytes([byte]) * size),
        st.integers(0, U64),
        st.integers(0, 255),
        st.integers(1024, 4096),
    )
    return st.builds(s2s.ReadBatch, st.lists(record, min_size=1, max_size=2).map(tuple))


def reply_wire() -> st.SearchStrategy[tuple[s2s.Event, bytes]]:
    """``(event, its exact frame)`` as our server-role codec writes it: read sessions'
    ``ReadBatch`` and ``Heartbeat`` with compression none, zstd and gzip, append sessions'
    ``AppendAck``, and ``Terminal`` frames. ``requests_for(event)`` says what the client sent."""
    compressions = st.sampled_from(list(s2s.Compression))
    reads = st.builds(
        lambda event, c: (event, _read_frame(event, c)),
        st.one_of(read_batches(), _big_batches(), st.builds(s2s.Heartbeat, positions())),
        compressions,
    )

    def ack(start: int, count: int, more: int) -> tuple[s2s.Event, bytes]:
        end = start + count
        event = s2s.AppendAck(_position(start), _position(end), _position(end + more))
        return event, _server_frames(_inputs(count), [event])

    acks = st.builds(ack, st.integers(0, 1 << 40), st.integers(1, 1000), st.integers(0, 1 << 20))
    codes = st.sampled_from(list(s2s.ErrorCode))
    terminals = st.one_of(
        codes.map(lambda c: s2s.Terminal(s2s.status_of(c), c.value, "fuzz")),
        st.builds(lambda n: s2s.Terminal(412, "seq_num_mismatch", seq_num_mismatch=n),
                  st.integers(0, U64)),
        st.builds(lambda p: s2s.Terminal(416, "range_not_satisfiable", tail=p), positions()),
    )  # fmt: skip
    ended = terminals.map(lambda t: (t, _read_frame_terminal(t)))
    return st.one_of(reads, acks, ended)


def _read_frame_terminal(terminal: s2s.Terminal) -> bytes:
    return s2s.Connection(Role.SERVER, s2s.Session.READ).send(terminal)


def _reply(
    label: str, body: bytes, code: E, pending: tuple[object, ...], *, end: bool = False
) -> MalformedReply:
    data = RESPONSE_HEAD + _chunk(body) + (END if end else b"")
    return MalformedReply(label=label, data=data, code=code.value, fatal=True, pending=pending)


def _reply_framing(lim: s2s.Limits) -> list[MalformedReply]:
    one = (APPEND_REQUEST, *_inputs(1))
    ack = _server_frames(_inputs(1), [_ack(0, 1)])
    read = (READ_REQUEST,)
    batch = _read_frame(s2s.ReadBatch((s2s.SequencedRecord(5, 6, b"hello"),)), s2s.Compression.NONE)
    return [
        _reply("frame length 0", b"\0\0\0", E.BAD_FRAME, one),
        _reply("frame length one over the limit (header only)",
               (lim.max_frame_length + 1).to_bytes(3, "big"), E.BAD_FRAME, read),
        _reply("frame length 2^24-1 (header only)", b"\xff\xff\xff", E.BAD_FRAME, read),
        _reply("compression value 3", _frame(0x60, batch[4:]), E.BAD_FRAME, read),
        _reply("compression value 3 with every other non-terminal bit set",
               _frame(0x7F, ack[4:]), E.BAD_FRAME, one),
        _reply("terminal frame shorter than its 2-byte status", _frame(0x80, b"\x01"),
               E.BAD_FRAME, read),
        _reply("terminal frame with an empty payload", _frame(0x80, b""), E.BAD_FRAME, read),
        _reply("AppendAck length -1 byte", (len(ack) - 4).to_bytes(3, "big") + ack[3:],
               E.BAD_PROTO, one),
        _reply("ReadBatch length -1 byte", (len(batch) - 4).to_bytes(3, "big") + batch[3:],
               E.BAD_PROTO, read),
        _reply("ReadBatch length +1 byte, then end of body",
               (len(batch) - 2).to_bytes(3, "big") + batch[3:], E.BAD_FRAME, read, end=True),
        _reply("zstd bomb", _frame(0x20, _bomb("zstd")), E.BAD_FRAME, read),
        _reply("gzip bomb", _frame(0x40, _bomb("gzip")), E.BAD_FRAME, read),
        _reply("corrupt zstd", _frame(0x20, b"\x28\xb5\x2f\xfd garbage"), E.BAD_FRAME, read),
        _reply("corrupt gzip", _frame(0x40, b"\x1f\x8b garbage"), E.BAD_FRAME, read),
        _reply("zstd ReadBatch inflating one byte over the cap",
               _frame(0x20, _zstd(_pad(batch[4:], lim.max_payload + 1))), E.BAD_FRAME, read),
        _reply("zstd ReadBatch inflating one byte over the cap (no size declared)",
               _frame(0x20, _zstd(_pad(batch[4:], lim.max_payload + 1), declare=False)),
               E.BAD_FRAME, read),
        _reply("gzip ReadBatch inflating one byte over the cap",
               _frame(0x40, _gzip(_pad(batch[4:], lim.max_payload + 1))), E.BAD_FRAME, read),
    ]  # fmt: skip


def _reply_cuts() -> list[MalformedReply]:
    """Each server frame cut after every byte (every field boundary among them), then the
    body ends."""
    one = (APPEND_REQUEST, *_inputs(1))
    samples = [
        ("AppendAck", _server_frames(_inputs(1), [_ack(0, 1)]), one),
        ("ReadBatch", _read_frame(s2s.ReadBatch((s2s.SequencedRecord(5, 6, b"hi"),)),
                                  s2s.Compression.NONE), (READ_REQUEST,)),
        ("Heartbeat", _read_frame(s2s.Heartbeat(_position(9)), s2s.Compression.NONE),
         (READ_REQUEST,)),
        ("Terminal", _read_frame_terminal(s2s.Terminal(404, "stream_not_found")),
         (READ_REQUEST,)),
    ]  # fmt: skip
    return [
        _reply(f"{name} cut after byte {at} of {len(frame)}, then end of body", frame[:at],
               E.BAD_FRAME, pending, end=True)
        for name, frame, pending in samples
        for at in range(1, len(frame))
    ]  # fmt: skip


def _reply_protobuf() -> list[MalformedReply]:
    one = (APPEND_REQUEST, *_inputs(1))
    cases = [
        ("truncated varint", b"\x0a\x02\x08\xff"),
        ("length-delimited field past the end", b"\x0a\x10ab"),
        ("wire type 7", b"\x0f"),
        ("field number 0", b"\x02\x00"),
        ("varint of 11 bytes", b"\x0a\x0c\x08" + b"\xff" * 10 + b"\x01"),
    ]
    return [
        *(_reply(f"AppendAck protobuf: {label}", _frame(0, p), E.BAD_PROTO, one)
          for label, p in cases),
        *(_reply(f"ReadBatch protobuf: {label}", _frame(0, p), E.BAD_PROTO, (READ_REQUEST,))
          for label, p in cases),
        _reply("ReadBatch with no records and no tail", _frame(0, b""), E.INVALID,
               (READ_REQUEST,)),
    ]  # fmt: skip


def _reply_orders() -> list[MalformedReply]:
    """Valid acks in orders the append session forbids."""
    one = _server_frames(_inputs(1), [_ack(0, 1)])
    two = _server_frames(_inputs(2), [_ack(0, 2)])
    backwards = _server_frames(_inputs(1), [_ack(5, 6)])
    return [
        _reply("AppendAck with no AppendInput pending", one, E.INVALID, (APPEND_REQUEST,)),
        _reply("AppendAck for more records than the input had", two, E.INVALID,
               (APPEND_REQUEST, *_inputs(1))),
        _reply("AppendAck for fewer records than the input had", one, E.INVALID,
               (APPEND_REQUEST, *_inputs(2))),
        _reply("second AppendAck starting before the first one's end",
               backwards + one, E.INVALID, (APPEND_REQUEST, *_inputs(1, 1))),
        _reply("one AppendAck more than the inputs sent", one + _server_frames(
            _inputs(1), [_ack(1, 2)]), E.INVALID, (APPEND_REQUEST, *_inputs(1))),
        _reply("body ends with an input unacknowledged", one, E.INVALID,
               (APPEND_REQUEST, *_inputs(1, 1)), end=True),
        _reply("AppendAck end before start", _frame(0, _ack_bytes(3, 2)), E.INVALID,
               (APPEND_REQUEST, *_inputs(1))),
    ]  # fmt: skip


def _ack_bytes(start: int, end: int) -> bytes:
    """An AppendAck protobuf with any start and end (our codec refuses to write end < start)."""

    def position(field: int, seq_num: int) -> bytes:
        inner = b"\x08" + _varint(seq_num) + b"\x10" + _varint(seq_num)
        return bytes([field << 3 | 2, len(inner)]) + inner

    return position(1, start) + position(2, end) + position(3, end)


def _reply_heads() -> list[MalformedReply]:
    wrong_type = RESPONSE_HEAD.replace(b"s2s/proto", b"application/json")
    ack = _server_frames(_inputs(1), [_ack(0, 1)])
    return [
        MalformedReply(
            label="200 without Content-Type s2s/proto",
            data=wrong_type + _chunk(ack),
            code=E.BAD_HEADER.value,
            fatal=True,
            pending=(APPEND_REQUEST, *_inputs(1)),
        ),
        MalformedReply(
            label="status line that is not HTTP",
            data=b"S2S/1 200 OK\r\n\r\n",
            code=E.BAD_HEADER.value,
            fatal=True,
            pending=(READ_REQUEST,),
        ),
    ]


def malformed_replies(limits: s2s.Limits | None = None) -> st.SearchStrategy[MalformedReply]:
    """Server responses a strict client must refuse, each with the code our client raises."""
    lim = limits or s2s.Limits()
    return st.one_of(
        st.sampled_from(_reply_framing(lim)),
        st.sampled_from(_reply_cuts()),
        st.sampled_from(_reply_protobuf()),
        st.sampled_from(_reply_orders()),
        st.sampled_from(_reply_heads()),
    )


def reply_edge_cases(limits: s2s.Limits | None = None) -> st.SearchStrategy[Valid]:
    """Read-session responses a strict client must accept: sizes exactly at the limits,
    reserved flag bits, an unknown field, "reconnect advised". ``event`` is among the events
    the client reads; ``READ_REQUEST`` is what it sent."""
    lim = limits or s2s.Limits()
    forbidden = (E.BAD_FRAME.value, E.BAD_PROTO.value, E.INVALID.value)
    event = s2s.ReadBatch((s2s.SequencedRecord(5, 6, b"hello"),))
    message = _read_frame(event, s2s.Compression.NONE)[4:]
    at_cap = _pad(message, lim.max_payload)
    cases = [
        (f"frame length exactly {lim.max_frame_length}", _frame(0, at_cap)),
        ("zstd payload inflating to exactly the cap", _frame(0x20, _zstd(at_cap))),
        ("zstd payload inflating to exactly the cap (no size declared)",
         _frame(0x20, _zstd(at_cap, declare=False))),
        ("gzip payload inflating to exactly the cap", _frame(0x40, _gzip(at_cap))),
        ("reserved flag bits set", _frame(0x0F, message)),
        ("reconnect advised", _frame(0x10, message)),
        ("unknown protobuf field", _frame(0, message + b"\xf8\x07\x01")),
    ]  # fmt: skip
    return st.sampled_from(
        [
            Valid(label, RESPONSE_HEAD + _chunk(body) + END, event, forbidden)
            for label, body in cases
        ]
    )


# --- live target -------------------------------------------------------------------------------


class _Reader:
    def __init__(self, sent: Malformed | Valid) -> None:
        self._conn = _client()
        self._conn.send(s2s.SessionRequest(s2s.Session.APPEND, STREAM, token=TOKEN))
        self._answer = Answer()
        self._setup = isinstance(sent, Valid) and sent.event is None
        if isinstance(sent, Valid) and isinstance(sent.event, s2s.AppendInput):
            self._conn.send(sent.event)  # so that its AppendAck is expected
        self._head = b""

    def feed(self, data: bytes) -> Answer:
        if self._setup:  # a plain REST call: any complete HTTP status line and head is enough
            self._head += data
            done = b"\r\n\r\n" in self._head or not data
            self._answer = Answer(done, None, not data, None, self._head[:60].decode("latin-1"))
            return self._answer
        if self._answer.problem or self._answer.finished:
            return self._answer
        try:
            self._conn.receive_data(data)
            for event in self._conn.events():
                if isinstance(event, s2s.SessionResponse):
                    continue
                self._answer = Answer(True, None, False, None, repr(event)[:200])
        except s2s.SessionTerminated as exc:
            summary = f"{exc.terminal.status} {exc.terminal.code}: {exc.terminal.message}"
            self._answer = Answer(True, exc.terminal.code, True, None, summary[:200])
        except ProtocolError as exc:
            self._answer = attrs.evolve(self._answer, finished=True, problem=str(exc)[:200])
        if not data and not self._answer.finished:
            self._answer = attrs.evolve(self._answer, finished=True)
        return self._answer


class Target:
    """S2S (append sessions over HTTP/1.1) as the live fuzzer drives it."""

    name = "s2s"
    default_port = 8080

    def __init__(self, limits: s2s.Limits | None = None) -> None:
        self.limits = limits or s2s.Limits()

    def setup(self) -> list[Valid]:
        ensure = (
            b"PUT /v1/streams/%s HTTP/1.1\r\nhost: 127.0.0.1\r\n"
            b"authorization: Bearer fuzz\r\ncontent-length: 0\r\n\r\n"
        )
        return [Valid("ensure stream", ensure % STREAM.encode(), None)]

    def malformed(self) -> st.SearchStrategy[Malformed]:
        return malformed(self.limits)

    def _valid(self, event: s2s.AppendInput) -> Valid:
        session = s2s.Connection(Role.CLIENT, s2s.Session.APPEND)
        return Valid("AppendInput", HEAD + _chunk(session.send(event)), event)

    def valid(self) -> st.SearchStrategy[Valid]:
        return st.one_of(append_inputs().map(self._valid), edge_cases())

    def probe(self) -> Valid:
        return self._valid(s2s.AppendInput((s2s.AppendRecord(b"probe"),)))

    def reader(self, sent: Malformed | Valid) -> _Reader:
        return _Reader(sent)

    def follow_up(self, sent: Malformed | Valid) -> Valid | None:
        return None
