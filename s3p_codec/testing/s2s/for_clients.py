"""The client direction: S2S server frames, their bytes, and responses a client refuses.

Kept apart from ``for_servers`` because a client is fuzzed with what a server writes: each case
carries the requests the client must have sent (``pending``) before its bytes arrive.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from s3p_codec import Role, s2s
from s3p_codec.testing._strategies import MalformedReply, Valid
from s3p_codec.testing.s2s._wire import (
    HEAD,
    STREAM,
    TOKEN,
    E,
    _bomb,
    _chunk,
    _encode,
    _frame,
    _gzip,
    _pad,
    _varint,
    _zstd,
    headers,
)
from s3p_codec.testing.s2s._wire import U64 as _U64

#: Largest u64.
U64 = _U64


def positions() -> st.SearchStrategy[s2s.StreamPosition]:
    """Strategy: any ``StreamPosition`` (sequence number and timestamp in u64 range)."""
    return st.builds(s2s.StreamPosition, st.integers(0, U64), st.integers(0, U64))


def sequenced_records() -> st.SearchStrategy[s2s.SequencedRecord]:
    """Records as a read session delivers them: any sequence number and timestamp (u64), a
    body of up to 300 bytes, up to three ``headers()``."""
    return st.builds(
        s2s.SequencedRecord,
        st.integers(0, U64),
        st.integers(0, U64),
        st.binary(max_size=300),
        st.lists(headers(), max_size=3).map(tuple),
    )


def read_batches() -> st.SearchStrategy[s2s.ReadBatch]:
    """ReadBatch frames with 1-8 ``sequenced_records()`` and an optional ``tail`` (a batch
    without records is a heartbeat)."""
    records = st.lists(sequenced_records(), min_size=1, max_size=8).map(tuple)
    return st.builds(s2s.ReadBatch, records, st.none() | positions())


def terminals() -> st.SearchStrategy[s2s.Terminal]:
    """Terminal frames: any HTTP status of 100-599, a code of ``s2s.ErrorCode`` or none, any
    message, and the optional ``seq_num_mismatch``, ``fencing_token_mismatch`` and ``tail``
    that a 412 or a 416 carries (drawn with any status: a client reads them whatever the
    status). A client must end the session on every one."""
    return st.builds(
        s2s.Terminal,
        status=st.integers(100, 599),
        code=st.sampled_from(["", *[c.value for c in s2s.ErrorCode]]),
        message=st.text(max_size=40),
        seq_num_mismatch=st.none() | st.integers(0, U64),
        fencing_token_mismatch=st.none() | st.text(max_size=10),
        tail=st.none() | positions(),
    )


def replies() -> st.SearchStrategy[s2s.Heartbeat | s2s.ReadBatch | s2s.Terminal]:
    """What a server sends in a read session (for fuzzing clients): ``read_batches()``,
    heartbeats and ``terminals()``."""
    return st.one_of(read_batches(), st.builds(s2s.Heartbeat, positions()), terminals())


def acks_for(inputs: Sequence[s2s.AppendInput]) -> st.SearchStrategy[list[s2s.AppendAck]]:
    """The ``AppendAck`` frames a server may send, in order, for ``inputs`` sent in order.

    Each acknowledges as many records as its input holds: ``end`` is ``start`` plus that count,
    the next ack starts at this ``end`` or later (other writers may append in between), and
    ``tail`` is at or after ``end``. Timestamps do not go back. The other direction of
    ``requests_for(ack)``.
    """

    @st.composite
    def build(draw: st.DrawFn) -> list[s2s.AppendAck]:
        seq = draw(st.integers(0, 1 << 40))
        stamp = draw(st.integers(0, 1 << 45))
        acks = []
        for event in inputs:
            seq += draw(st.just(0) | st.integers(1, 3))
            stamp += draw(st.just(0) | st.integers(1, 1000))
            start = s2s.StreamPosition(seq, stamp)
            seq += len(event.records)
            end = s2s.StreamPosition(seq, stamp)
            ahead = draw(st.just(0) | st.integers(1, 1000))
            acks.append(s2s.AppendAck(start, end, s2s.StreamPosition(seq + ahead, stamp)))
        return acks

    return build()


#: The append session request the client cases start with.
APPEND_REQUEST = s2s.SessionRequest(s2s.Session.APPEND, STREAM, token=TOKEN)
#: The read session request the client cases start with.
READ_REQUEST = s2s.SessionRequest(s2s.Session.READ, STREAM, token=TOKEN)
#: The last chunk of a chunked HTTP/1.1 body.
END = b"0\r\n\r\n"


def _response_head() -> bytes:
    server = s2s.Http1Connection(Role.SERVER)
    server.receive_data(HEAD)
    server.next_event()
    return server.send(s2s.SessionResponse())


#: The session response head our server-role codec writes.
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
