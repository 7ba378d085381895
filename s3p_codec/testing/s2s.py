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
2 MiB - 1 payload limit; a strict peer stops decompressing at the cap.
"""

from __future__ import annotations

import gzip

import attrs
import zstandard
from hypothesis import strategies as st

from s3p_codec import ProtocolError, Role, s2s
from s3p_codec.testing.strategies import Answer, Malformed, Valid

__all__ = [
    "Target",
    "append_inputs",
    "edge_cases",
    "malformed",
    "positions",
    "read_batches",
    "replies",
    "request_wire",
    "requests",
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


def malformed(limits: s2s.Limits | None = None) -> st.SearchStrategy[Malformed]:
    """Malformed append sessions, each with the JSON error code it must end with."""
    lim = limits or s2s.Limits()
    return st.one_of(_framing(lim), _protobuf(), _rules(), _heads())


def _encode(event: s2s.AppendInput) -> bytes:
    return s2s.Connection(Role.CLIENT, s2s.Session.APPEND).send(event)


def edge_cases() -> st.SearchStrategy[Valid]:
    """Append frames a strict server must accept: reserved flag bits 3-0 set ("reserved and
    ignored on decode"), an unknown protobuf field ("Unknown fields are skipped"), 1000
    records, a record with an empty body."""
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
    return st.sampled_from(
        [Valid(label, HEAD + _chunk(data), event, forbidden) for label, data, event in cases]
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
