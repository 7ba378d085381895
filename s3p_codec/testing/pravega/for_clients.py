"""The client direction: valid Pravega replies, their frames, and frames a client refuses.

Kept apart from ``for_servers`` because a client is fuzzed with what a segment store writes: each
case carries the requests the client must have sent (``pending``) before its bytes arrive.
"""

from __future__ import annotations

import struct

from hypothesis import strategies as st

from s3p_codec import Role, pravega
from s3p_codec.testing._strategies import MalformedReply, Valid
from s3p_codec.testing.pravega._wire import (
    HELLO,
    SEGMENT,
    WRITER,
    E,
    _block,
    _event,
    _frame,
    _string,
    segments,
)

#: Strategy: any signed 64-bit integer.
I64 = st.integers(-(1 << 63), (1 << 63) - 1)


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


def requests_for(reply: pravega.Command) -> tuple[pravega.Event, ...]:
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
