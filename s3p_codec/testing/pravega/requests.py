"""Hypothesis strategies for Pravega segment-store peers: valid commands, frames, bad frames.

Pravega has no error reply for a broken frame: "a real segment store logs an
``InvalidMessageException`` and closes the connection". So every malformed case here is fatal
with ``reply=False``: the server must close, and ``code`` names the case (``pravega.ErrorCode``)
as this library's server-role codec raises it. Every case starts with a valid ``Hello``, so the
frame after it is judged by the framing, not by a missing handshake; the server's ``Hello`` in
answer is not counted as an answer to the case.

Limits are hit exactly (``edge_cases``: must be accepted) and by one more (``malformed``): the
frame length ("Max payload 0xFFFFFF"), a 65535-byte string, ``Limits.max_writers``, and the
sizes inside an append block that must add up ("0 <= sizeOfWholeEvents <= block content", "the
rest of the block is exactly one PARTIAL_EVENT or PADDING frame", numEvents, dataLen).

Client direction (fuzz your own Pravega client): ``reply_wire()`` gives replies as this
library's server-role codec writes them, ``requests_for(reply)`` what the client sent first;
``malformed_replies()`` gives server byte streams a strict client must refuse (lengths off by
one, over the limit from the header alone, cut after every field, undefined or request type
codes, bad modified UTF-8, incompatible Hello), each with the ``code`` this library's
client-role codec raises and ``pending``, the requests sent first; ``reply_edge_cases()``
replies it must accept. This library's client does not track appends, so acks in illegal orders
(a DataAppended for a writer never set up) are not among them.
"""

from __future__ import annotations

import struct
import uuid

from hypothesis import strategies as st

from s3p_codec import Role, pravega
from s3p_codec.testing.strategies import Malformed, MalformedReply, Valid
from s3p_codec.testing.target import CodecReader

__all__ = [
    "Target",
    "edge_cases",
    "malformed",
    "malformed_replies",
    "replies",
    "reply_edge_cases",
    "reply_wire",
    "request_wire",
    "requests",
    "requests_for",
]

E = pravega.ErrorCode
HELLO = pravega.encode(pravega.Hello())
I64 = st.integers(-(1 << 63), (1 << 63) - 1)


def _frame(code: int, payload: bytes) -> bytes:
    return struct.pack(">ii", code, len(payload)) + payload


def _string(raw: bytes) -> bytes:
    return len(raw).to_bytes(2, "big") + raw


# --- valid -------------------------------------------------------------------------------------


def segments() -> st.SearchStrategy[str]:
    """Segment names, any Unicode (encoded as modified UTF-8 on the wire)."""
    return st.text(min_size=1, max_size=24)


def requests() -> st.SearchStrategy[pravega.Command]:
    """Requests a client sends that stand alone (no append session needed)."""
    ids = st.integers(0, (1 << 63) - 1)
    return st.one_of(
        st.just(pravega.KeepAlive()),
        st.builds(pravega.CreateSegment, ids, segments()),
        st.builds(pravega.GetStreamSegmentInfo, ids, segments()),
        st.builds(pravega.ReadSegment, segments(), st.integers(0, 1 << 40), st.integers(0, 4096)),
        st.builds(pravega.SealSegment, ids, segments()),
        st.builds(pravega.TruncateSegment, ids, segments(), st.integers(0, 1 << 40)),
        st.builds(pravega.DeleteSegment, ids, segments()),
        st.builds(pravega.SetupAppend, ids, st.uuids(), segments()),
    )


def replies() -> st.SearchStrategy[pravega.Command]:
    """Replies a segment store sends (for fuzzing clients)."""
    ids = st.integers(0, (1 << 63) - 1)
    seg = segments()
    text = st.text(max_size=16)
    return st.one_of(
        st.builds(pravega.AppendSetup, ids, seg, st.uuids(), I64),
        st.builds(pravega.DataAppended, st.uuids(), I64, I64, ids, I64),
        st.builds(
            pravega.SegmentRead,
            seg,
            st.integers(0, 1 << 40),
            st.booleans(),
            st.booleans(),
            st.binary(max_size=64),
            ids,
        ),
        st.builds(pravega.SegmentCreated, ids, seg),
        st.builds(
            pravega.StreamSegmentInfo,
            ids,
            seg,
            st.booleans(),
            st.booleans(),
            st.booleans(),
            I64,
            I64,
            I64,
        ),
        st.builds(pravega.SegmentSealed, ids, seg),
        st.builds(pravega.SegmentDeleted, ids, seg),
        st.builds(pravega.SegmentTruncated, ids, seg),
        st.builds(pravega.NoSuchSegment, ids, seg, text),
        st.builds(pravega.SegmentAlreadyExists, ids, seg, text),
        st.builds(pravega.SegmentIsSealed, ids, seg, text),
        st.builds(pravega.WrongHost, ids, seg, text, text),
        st.builds(pravega.ConditionalCheckFailed, st.uuids(), I64, ids),
        st.builds(pravega.OperationUnsupported, ids, text, text),
        st.builds(pravega.ErrorMessage, ids, seg, text),
        st.builds(pravega.InvalidEventNumber, st.uuids(), ids, text),
        st.builds(pravega.SegmentIsTruncated, ids, seg, st.integers(0, 1 << 40), text),
        st.builds(pravega.AuthTokenCheckFailed, ids, text),
        st.just(pravega.KeepAlive()),
    )


def request_wire() -> st.SearchStrategy[tuple[pravega.Command, bytes]]:
    """``(command, its exact frame)``."""
    return requests().map(lambda c: (c, pravega.encode(c)))


# --- malformed ---------------------------------------------------------------------------------


def _case(label: str, frame: bytes, code: E, *, half_close: bool = False) -> Malformed:
    return Malformed(label, HELLO + frame, code, fatal=True, reply=False, half_close=half_close)


def _framing(lim: pravega.Limits) -> st.SearchStrategy[Malformed]:
    info = struct.pack(">q", 1) + _string(b"seg") + _string(b"")
    return st.sampled_from(
        [
            _case("negative length", struct.pack(">ii", 100, -1), E.BAD_FRAME),
            _case(
                "length over the limit (header only)",
                struct.pack(">ii", 11, lim.max_frame + 1),
                E.BAD_FRAME,
            ),
            _case("length 2^31-1 (header only)", struct.pack(">ii", 11, 0x7FFFFFFF), E.BAD_FRAME),
            _case("length -1 byte", struct.pack(">ii", 11, len(info) - 1) + info, E.MALFORMED),
            _case("undefined type code", _frame(1000, b""), E.UNKNOWN_COMMAND),
            _case("undefined negative type code", _frame(-50, b""), E.UNKNOWN_COMMAND),
            _case("a reply sent to a server", _frame(7, b"\0" * 48), E.UNEXPECTED_COMMAND),
            _case("bare EVENT", _frame(0, b"abc"), E.UNEXPECTED_COMMAND),
            _case("payload shorter than its fields", _frame(11, b"\0\5"), E.MALFORMED),
            _case(
                "string longer than the payload",
                _frame(11, struct.pack(">q", 1) + b"\0\x09ab"),
                E.MALFORMED,
            ),
            _case(
                "incompatible Hello", pravega.encode(pravega.Hello(4, 1)), E.INCOMPATIBLE_VERSION
            ),
        ]
    )


def _strings() -> st.SearchStrategy[Malformed]:
    cases = [
        ("4-byte UTF-8 form", b"\xf0\x9f\x98\x80"),
        ("raw NUL byte", b"a\x00"),
        ("lone continuation byte", b"\x80"),
        ("truncated 2-byte form", b"a\xc3"),
        ("invalid start byte", b"\xff"),
    ]
    return st.sampled_from(
        [
            _case(
                f"modified UTF-8: {label}",
                _frame(11, struct.pack(">q", 1) + _string(raw) + _string(b"")),
                E.BAD_STRING,
            )
            for label, raw in cases
        ]
    )


def _orders() -> st.SearchStrategy[Malformed]:
    """Valid frames in orders the append state machine forbids."""
    writer = uuid.UUID(int=0xF022).bytes
    end = struct.pack(">ii", 0, 0) + struct.pack(">iqq", 1, 0, 1)
    return st.sampled_from(
        [
            _case(
                "AppendBlock before SetupAppend", _frame(3, writer + b"\0" * 8), E.INVALID_APPEND
            ),
            _case("AppendBlockEnd before SetupAppend", _frame(4, writer + end), E.INVALID_APPEND),
            # "It is not valid to attempt to start a new partial message before completing the
            # previous one": AppendBlock "is followed directly by AppendBlockEnd".
            _case(
                "AppendBlock directly after an AppendBlock",
                SETUP + _block(_TWO) + _block(_TWO),
                E.INVALID_APPEND,
            ),
            _case(
                "another command between AppendBlock and AppendBlockEnd",
                SETUP + _block(_TWO) + pravega.encode(pravega.KeepAlive()),
                E.INVALID_APPEND,
            ),
            _case(
                "AppendBlockEnd of another writer",
                SETUP
                + pravega.encode(pravega.SetupAppend(2, uuid.UUID(int=2), SEGMENT))
                + _block(_TWO)
                + pravega.encode(pravega.AppendBlockEnd(uuid.UUID(int=2), len(_TWO), b"", 2, 1)),
                E.INVALID_APPEND,
            ),
            _case(
                "PARTIAL_EVENT outside an append block",
                SETUP + _frame(-2, b"abc"),
                E.UNEXPECTED_COMMAND,
            ),
            _case(
                "end of stream inside an append block",
                SETUP + _block(_TWO),
                E.BAD_FRAME,
                half_close=True,
            ),
        ]
    )


def _truncated() -> st.SearchStrategy[Malformed]:
    """A frame cut inside its header or payload, then end of stream."""

    def build(command: pravega.Command, data: st.DataObject) -> Malformed:
        wire = pravega.encode(command)
        cut = data.draw(st.integers(1, len(wire) - 1))
        return _case("frame cut by end of stream", wire[:cut], E.BAD_FRAME, half_close=True)

    return st.builds(build, requests(), st.data())


def malformed(limits: pravega.Limits | None = None) -> st.SearchStrategy[Malformed]:
    """Malformed frames (after a valid Hello), each naming the error a strict server raises."""
    lim = limits or pravega.Limits()
    return st.one_of(_framing(lim), _strings(), _orders(), _truncated(), _aggregates(lim))


# --- limits and aggregate sizes ----------------------------------------------------------------

WRITER = uuid.UUID(int=0xF022)
SEGMENT = "fuzz/fuzz/0"
SETUP = pravega.encode(pravega.SetupAppend(1, WRITER, SEGMENT))


def _event(data: bytes) -> bytes:
    """A nested EVENT frame: "i32 0, i32 len, data"."""
    return struct.pack(">ii", 0, len(data)) + data


def _block(content: bytes, writer: uuid.UUID = WRITER) -> bytes:
    """An AppendBlock frame: "writerId UUID, then raw block content (length = 16 + content)"."""
    return _frame(3, writer.bytes + content)


def _block_end(whole: int, data: bytes, events: int, last: int) -> bytes:
    return pravega.encode(pravega.AppendBlockEnd(WRITER, whole, data, events, last, 1))


def _block_end_raw(whole: int, data_len: int, data: bytes, events: int, last: int) -> bytes:
    """An AppendBlockEnd whose dataLen field says ``data_len`` whatever ``data`` holds."""
    tail = struct.pack(">iqq", events, last, 1)
    return _frame(4, WRITER.bytes + struct.pack(">ii", whole, data_len) + data + tail)


def _setups(count: int) -> bytes:
    return b"".join(
        pravega.encode(pravega.SetupAppend(i, uuid.UUID(int=i + 1), SEGMENT)) for i in range(count)
    )


_TWO = _event(b"abc") + _event(b"defg")


def _aggregates(lim: pravega.Limits) -> st.SearchStrategy[Malformed]:
    """Sizes and counts that add up wrong: a block's declared sizes against its content, a
    frame's inner lengths against the frame, writers against ``Limits.max_writers``."""
    two = _TWO
    part = _event(b"hijkl")
    split = struct.pack(">ii", -2, 3) + part[:3]  # "its first bytes go into a PARTIAL_EVENT"
    cases = [
        _case(
            "AppendBlock over the frame limit (header only)",
            SETUP + struct.pack(">ii", 3, lim.max_frame + 1),
            E.BAD_FRAME,
        ),
        _case("AppendBlock shorter than its writer id", SETUP + _frame(3, b"\0" * 15), E.MALFORMED),
        _case(
            "sizeOfWholeEvents one over the block content",
            SETUP + _block(two) + _block_end(len(two) + 1, b"", 2, 1),
            E.INVALID_APPEND,
        ),
        _case(
            "sizeOfWholeEvents -1",
            SETUP + _block(two) + _block_end(-1, b"", 2, 1),
            E.INVALID_APPEND,
        ),
        _case(
            "sizeOfWholeEvents one under the whole events (rest is not one frame)",
            SETUP + _block(two) + _block_end(len(two) - 1, b"", 2, 1),
            E.INVALID_APPEND,
        ),
        _case(
            "numEvents one over the events carried",
            SETUP + _block(two) + _block_end(len(two), b"", 3, 2),
            E.INVALID_APPEND,
        ),
        _case(
            "numEvents one under the events carried",
            SETUP + _block(two) + _block_end(len(two), b"", 1, 1),
            E.INVALID_APPEND,
        ),
        _case(
            "numEvents 0", SETUP + _block(two) + _block_end(len(two), b"", 0, 1), E.INVALID_APPEND
        ),
        _case(
            "lastEventNumber goes back",
            SETUP
            + _block(two)
            + _block_end(len(two), b"", 2, 5)
            + _block(two)
            + _block_end(len(two), b"", 2, 4),
            E.INVALID_APPEND,
        ),
        _case(
            "PARTIAL_EVENT declares one byte more than the block holds",
            SETUP
            + _block(two + struct.pack(">ii", -2, 4) + part[:3])
            + _block_end(len(two), part[3:], 3, 3),
            E.INVALID_APPEND,
        ),
        _case(
            "PARTIAL_EVENT declares one byte less than the block holds",
            SETUP
            + _block(two + struct.pack(">ii", -2, 2) + part[:3])
            + _block_end(len(two), part[3:], 3, 3),
            E.INVALID_APPEND,
        ),
        _case(
            "AppendBlockEnd data one byte short of the split event",
            SETUP + _block(two + split) + _block_end(len(two), part[3:-1], 3, 3),
            E.INVALID_APPEND,
        ),
        _case(
            "AppendBlockEnd data one byte over the split event",
            SETUP + _block(two + split) + _block_end(len(two), part[3:] + b"x", 3, 3),
            E.INVALID_APPEND,
        ),
        _case(
            "PADDING closing a block followed by AppendBlockEnd data",
            SETUP
            + _block(two + struct.pack(">ii", -1, 2) + b"\0\0")
            + _block_end(len(two), part, 3, 3),
            E.INVALID_APPEND,
        ),
        _case(
            "Event length one over the whole events",
            SETUP + _block(struct.pack(">ii", 0, 4) + b"abc") + _block_end(11, b"", 1, 1),
            E.INVALID_APPEND,
        ),
        _case(
            "Event length -1 inside a block",
            SETUP + _block(struct.pack(">ii", 0, -1) + b"abc") + _block_end(11, b"", 1, 1),
            E.INVALID_APPEND,
        ),
        _case(
            "AppendBlockEnd dataLen one over its frame",
            SETUP + _block(two) + _block_end_raw(len(two), 20 + 1, b"", 2, 1),
            E.MALFORMED,
        ),
        _case(
            "AppendBlockEnd dataLen -1",
            SETUP + _block(two) + _block_end_raw(len(two), -1, b"", 2, 1),
            E.MALFORMED,
        ),
        _case(
            "ConditionalAppend nested Event length one over its frame",
            SETUP
            + _frame(
                5, WRITER.bytes + struct.pack(">qqii", 0, 0, 0, 4 + 8 + 1) + b"abcd" + bytes(8)
            ),
            E.MALFORMED,
        ),
        _case(
            f"one writer over max_writers ({lim.max_writers + 1} SetupAppends)",
            _setups(lim.max_writers + 1),
            E.INVALID_APPEND,
        ),
    ]
    return st.sampled_from(cases)


def edge_cases(limits: pravega.Limits | None = None) -> st.SearchStrategy[Valid]:
    """Frames a strict server must accept: lengths exactly at every limit, split events,
    forward-compatible layouts. ``event`` is the last event the server reads from ``data``."""
    lim = limits or pravega.Limits()
    forbidden = tuple(code.value for code in E if code not in (E.INVALID_FIELD, E.STATE))
    big = bytes(lim.max_frame - 16 - 8)  # one event filling a block at the frame limit
    part = _event(b"hijkl")
    cases: list[tuple[str, bytes, object]] = [
        ("payload exactly at the frame limit (KeepAlive)", _frame(100, bytes(lim.max_frame)),
         pravega.KeepAlive()),
        ("AppendBlock exactly at the frame limit",
         SETUP + _block(_event(big)) + _block_end(len(big) + 8, b"", 1, 0),
         pravega.Append(WRITER, 0, (big,), 1)),
        (f"exactly max_writers ({lim.max_writers}) writers", _setups(lim.max_writers),
         pravega.SetupAppend(lim.max_writers - 1, uuid.UUID(int=lim.max_writers), SEGMENT)),
        ("sizeOfWholeEvents equal to the block content",
         SETUP + _block(_TWO) + _block_end(len(_TWO), b"", 2, 1),
         pravega.Append(WRITER, 1, (b"abc", b"defg"), 1)),
        ("event split inside its 8-byte header",
         SETUP + _block(_TWO + struct.pack(">ii", -2, 3) + part[:3])
         + _block_end(len(_TWO), part[3:], 3, 2),
         pravega.Append(WRITER, 2, (b"abc", b"defg", b"hijkl"), 1)),
        ("block broken off by PADDING",
         SETUP + _block(_TWO + struct.pack(">ii", -1, 5) + bytes(5))
         + _block_end(len(_TWO), b"", 2, 1),
         pravega.Append(WRITER, 1, (b"abc", b"defg"), 1)),
        ("AppendBlockEnd with no AppendBlock (all events in its data)",
         SETUP + _block_end(0, _TWO, 2, 1), pravega.Append(WRITER, 1, (b"abc", b"defg"), 1)),
        ("missing optional trailing requestId (ReadSegment)",
         _frame(9, _string(b"seg") + struct.pack(">qi", 7, 10) + _string(b"")),
         pravega.ReadSegment("seg", 7, 10)),
        ("unread trailing bytes inside a frame are skipped",
         _frame(11, struct.pack(">q", 3) + _string(b"seg") + _string(b"") + b"\1\2\3"),
         pravega.GetStreamSegmentInfo(3, "seg")),
        ("Hello with a wider version range", pravega.encode(pravega.Hello(99, 1)),
         pravega.Hello(99, 1)),
        ("modified UTF-8: NUL as C0 80, a surrogate pair as two 3-byte forms",
         pravega.encode(pravega.GetStreamSegmentInfo(4, "a\0\U0001f600")),
         pravega.GetStreamSegmentInfo(4, "a\0\U0001f600")),
    ]  # fmt: skip
    longest = pravega.GetStreamSegmentInfo(5, "s" * 0xFFFF)
    if lim.max_frame >= 8 + 2 + 0xFFFF + 2:
        cases.append(("string of exactly 65535 bytes", pravega.encode(longest), longest))
    return st.sampled_from(
        [Valid(label, HELLO + data, event, forbidden) for label, data, event in cases]
    )


# --- client direction: replies, and replies a strict client must refuse -----------------------


def _bad_reply(
    label: str,
    data: bytes,
    code: E,
    pending: tuple[object, ...] = (),
    *,
    half_close: bool = False,
) -> MalformedReply:
    """A case after the client's Hello; ``half_close``: the server then ends the stream."""
    return MalformedReply(
        label, data, code, True, (pravega.Hello(), *pending), half_close=half_close
    )


def reply_wire() -> st.SearchStrategy[tuple[pravega.Command, bytes]]:
    """``(reply, its exact frame)`` as our server-role codec writes it."""
    return st.one_of(replies(), st.just(pravega.Hello())).map(
        lambda r: (r, pravega.Connection(Role.SERVER).send(r))
    )


def requests_for(reply: pravega.Command) -> tuple[pravega.PravegaEvent, ...]:
    """What a client has sent before ``reply`` makes sense (Hello first)."""
    writer = getattr(reply, "writer_id", WRITER)
    if isinstance(reply, pravega.DataAppended):
        # A client refuses an acknowledgement of an event it never sent: send that event.
        setup = pravega.SetupAppend(1, writer, SEGMENT)
        sent = pravega.ConditionalAppend(writer, reply.event_number, 0, b"e", 1)
        return (pravega.Hello(), setup, sent)
    if isinstance(reply, pravega.ConditionalCheckFailed):
        setup = pravega.SetupAppend(1, writer, SEGMENT)
        return (pravega.Hello(), setup, pravega.Append(writer, 0, (b"e",)), pravega.FlushAppends())
    if isinstance(reply, pravega.AppendSetup):
        return (pravega.Hello(), pravega.SetupAppend(reply.request_id, writer, reply.segment))
    return (pravega.Hello(),)


_SAMPLES: list[pravega.Command] = [
    pravega.AppendSetup(1, "seg", WRITER, 0),
    pravega.DataAppended(WRITER, 0, -1, 1, 13),
    pravega.SegmentRead("seg", 0, True, False, b"event", 2),
    pravega.SegmentCreated(3, "seg"),
    pravega.NoSuchSegment(4, "seg", "trace", 0),
    pravega.WrongHost(5, "seg", "host:1", "trace"),
]
_SIZES = {"long": 8, "int": 4, "uuid": 16, "bool": 1, "byte": 1}


def _boundaries(command: pravega.Command) -> list[tuple[str, int]]:
    """``(field, offset just after it)`` in the frame of ``command`` (ASCII strings only)."""
    marks = [("half of the type code", 2), ("type code", 4), ("length", 8)]
    pos = 8
    for field in type(command).FIELDS:
        name, kind = field[0], field[1]
        value = getattr(command, name)
        if kind == "str":
            marks.append((f"{name} length", pos + 2))
            pos += 2 + len(value)
        elif kind == "data":
            marks.append((f"{name} length", pos + 4))
            pos += 4 + len(value)
        else:
            pos += _SIZES[kind]
        marks.append((name, pos))
    return marks[:-1]  # the last field's end is the whole frame


def _cut_replies() -> list[MalformedReply]:
    cases = []
    for sample in _SAMPLES:
        wire = pravega.encode(sample)
        pending = requests_for(sample)[1:]
        for field, at in _boundaries(sample):
            cases.append(
                _bad_reply(
                    f"{type(sample).__name__} cut after {field}, then end of stream",
                    HELLO + wire[:at],
                    E.BAD_FRAME,
                    pending,
                    half_close=True,
                )
            )
    return cases


def _reply_framing(lim: pravega.Limits) -> list[MalformedReply]:
    setup = pravega.encode(pravega.AppendSetup(1, "seg", WRITER, 0))
    created = pravega.encode(pravega.SegmentCreated(3, "seg"))
    asked = (pravega.SetupAppend(1, WRITER, "seg"),)
    read = pravega.encode(pravega.SegmentRead("seg", 0, True, False, b"event", 2))
    data_at = 8 + 2 + 3 + 8 + 1 + 1  # SegmentRead's dataLen field
    keep = pravega.encode(pravega.KeepAlive())

    def with_len(frame: bytes, length: int) -> bytes:
        return frame[:4] + struct.pack(">i", length) + frame[8:]

    def data_len(value: int) -> bytes:
        return read[:data_at] + struct.pack(">i", value) + read[data_at + 4 :]

    return [
        _bad_reply("negative length", HELLO + struct.pack(">ii", 7, -1), E.BAD_FRAME),
        _bad_reply(
            "length one over the limit (header only)",
            HELLO + struct.pack(">ii", 10, lim.max_frame + 1),
            E.BAD_FRAME,
        ),
        _bad_reply(
            "length 2^31-1 (header only)", HELLO + struct.pack(">ii", 10, 0x7FFFFFFF), E.BAD_FRAME
        ),
        _bad_reply(
            "AppendSetup length -1 byte",
            HELLO + with_len(setup, len(setup) - 9),
            E.MALFORMED,
            asked,
        ),
        _bad_reply(
            "SegmentCreated length -1 byte",
            HELLO + with_len(created, len(created) - 9),
            E.MALFORMED,
        ),
        _bad_reply(
            "SegmentCreated length +1 byte, then end of stream",
            HELLO + with_len(created, len(created) - 7),
            E.BAD_FRAME,
            half_close=True,
        ),
        _bad_reply(
            "SegmentCreated length +1 byte, the next headers read misaligned",
            HELLO + with_len(created, len(created) - 7) + keep + keep,
            E.UNKNOWN_COMMAND,
        ),
        _bad_reply(
            "SegmentRead dataLen one over its frame", HELLO + data_len(5 + 8 + 1), E.MALFORMED
        ),
        _bad_reply("SegmentRead dataLen -1", HELLO + data_len(-1), E.MALFORMED),
        _bad_reply("undefined type code", HELLO + _frame(1000, b""), E.UNKNOWN_COMMAND),
        _bad_reply("undefined negative type code", HELLO + _frame(-50, b""), E.UNKNOWN_COMMAND),
        _bad_reply(
            "a request sent to a client (SetupAppend)",
            HELLO + pravega.encode(pravega.SetupAppend(1, WRITER, "seg")),
            E.UNEXPECTED_COMMAND,
        ),
        _bad_reply(
            "AppendBlock sent to a client", HELLO + _block(_event(b"x")), E.UNEXPECTED_COMMAND
        ),
        _bad_reply("bare EVENT sent to a client", HELLO + _event(b"abc"), E.UNEXPECTED_COMMAND),
        _bad_reply(
            "incompatible Hello (versions 1..4)",
            pravega.encode(pravega.Hello(4, 1)),
            E.INCOMPATIBLE_VERSION,
        ),
        _bad_reply(
            "incompatible Hello (versions 18..20)",
            pravega.encode(pravega.Hello(20, 18)),
            E.INCOMPATIBLE_VERSION,
        ),
    ]


_BAD_MUTF8 = [
    ("4-byte UTF-8 form", b"\xf0\x9f\x98\x80"),
    ("raw NUL byte", b"a\x00"),
    ("lone continuation byte", b"\x80"),
    ("truncated 2-byte form", b"a\xc3"),
    ("invalid start byte", b"\xff"),
    ("overlong 2-byte form of '/'", b"\xc0\xaf"),
]


def _reply_strings() -> list[MalformedReply]:
    cases = []
    for label, raw in _BAD_MUTF8:
        cases.append(
            _bad_reply(
                f"modified UTF-8 in a segment name: {label}",
                HELLO + _frame(21, struct.pack(">q", 3) + _string(raw)),
                E.BAD_STRING,
            )
        )
        cases.append(
            _bad_reply(
                f"modified UTF-8 in an optional stack trace: {label}",
                HELLO + _frame(53, struct.pack(">q", 4) + _string(b"seg") + _string(raw)),
                E.BAD_STRING,
            )
        )
    return cases


def malformed_replies(limits: pravega.Limits | None = None) -> st.SearchStrategy[MalformedReply]:
    """Server byte streams (after the server's Hello) a strict client must refuse."""
    lim = limits or pravega.Limits()

    def cut_anywhere(reply: pravega.Command, data: st.DataObject) -> MalformedReply:
        wire = pravega.encode(reply)
        cut = data.draw(st.integers(1, len(wire) - 1))
        pending = requests_for(reply)[1:]
        return _bad_reply(
            "reply cut by end of stream", HELLO + wire[:cut], E.BAD_FRAME, pending, half_close=True
        )

    return st.one_of(
        st.sampled_from(_reply_framing(lim)),
        st.sampled_from(_reply_strings()),
        st.sampled_from(_cut_replies()),
        st.builds(cut_anywhere, replies(), st.data()),
    )


def reply_edge_cases(limits: pravega.Limits | None = None) -> st.SearchStrategy[Valid]:
    """Replies a strict client must accept; ``event`` is the last event it reads."""
    lim = limits or pravega.Limits()
    forbidden = tuple(code.value for code in E if code not in (E.INVALID_FIELD, E.STATE))
    room = lim.max_frame - (2 + 3 + 8 + 1 + 1 + 4 + 8)  # payload exactly max_frame
    full = pravega.SegmentRead("seg", 0, False, True, bytes(room), 2)
    read = pravega.encode(pravega.SegmentRead("seg", 0, False, False, b"", 2))
    flags_at = 8 + 2 + 3 + 8
    cases: list[tuple[str, bytes, object]] = [
        ("payload exactly at the frame limit (SegmentRead)", pravega.encode(full), full),
        ("payload exactly at the frame limit (KeepAlive)", _frame(100, bytes(lim.max_frame)),
         pravega.KeepAlive()),
        ("boolean byte 2 reads as true",
         read[:flags_at] + b"\x02\xff" + read[flags_at + 2 :],
         pravega.SegmentRead("seg", 0, True, True, b"", 2)),
        ("missing optional trailing fields (DataAppended)",
         _frame(7, WRITER.bytes + struct.pack(">q", 9)), pravega.DataAppended(WRITER, 9)),
        ("unread trailing bytes inside a frame are skipped",
         _frame(21, struct.pack(">q", 3) + _string(b"seg") + b"\1\2\3"),
         pravega.SegmentCreated(3, "seg")),
        ("Hello with a wider version range", pravega.encode(pravega.Hello(99, 1)),
         pravega.Hello(99, 1)),
    ]  # fmt: skip
    return st.sampled_from(
        [Valid(label, HELLO + data, event, forbidden) for label, data, event in cases]
    )


# --- live target -------------------------------------------------------------------------------


class _Reader(CodecReader):
    def __init__(self, sent: Malformed | Valid) -> None:
        # The requests went out as raw bytes, not through this codec: read acks unchecked.
        conn = pravega.Connection(Role.CLIENT, check_acks=False)
        conn.send(pravega.Hello())
        # A malformed case's valid preamble (SetupAppend, a first good block) is answered
        # before the broken frame is seen; a server that accepts the broken frame is still
        # caught, as it does not close.
        preamble: tuple[type, ...] = (pravega.Hello, pravega.AppendSetup, pravega.DataAppended)
        super().__init__(conn, preamble if isinstance(sent, Malformed) else (pravega.Hello,))


class Target:
    """Pravega as the live fuzzer drives it."""

    name = "pravega"
    default_port = 12345

    def __init__(self, limits: pravega.Limits | None = None) -> None:
        self.limits = limits or pravega.Limits()

    def _valid(self, command: pravega.Command) -> Valid:
        return Valid(type(command).__name__, HELLO + pravega.encode(command), command)

    def setup(self) -> list[Valid]:
        return [self._valid(pravega.CreateSegment(1, "fuzz/fuzz/0"))]

    def malformed(self) -> st.SearchStrategy[Malformed]:
        return malformed(self.limits)

    def valid(self) -> st.SearchStrategy[Valid]:
        # ReadSegment of an open segment's tail waits for data: keep it out of live traffic.
        return requests().filter(lambda c: not isinstance(c, pravega.ReadSegment)).map(self._valid)

    def probe(self) -> Valid:
        return self._valid(pravega.GetStreamSegmentInfo(2, "fuzz/fuzz/0"))

    def reader(self, sent: Malformed | Valid) -> _Reader:
        return _Reader(sent)

    def follow_up(self, sent: Malformed | Valid) -> Valid | None:
        return None
