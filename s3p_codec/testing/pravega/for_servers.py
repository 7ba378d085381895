"""The server direction: valid Pravega requests, their frames, and frames a server refuses.

Every malformed case is fatal with no reply (a segment store logs the broken frame and closes)
and starts with a valid ``Hello``; ``edge_cases`` holds the frames exactly at every limit that
a strict server must still accept.
"""

from __future__ import annotations

import struct
import uuid

from hypothesis import strategies as st

from s3p_codec import pravega
from s3p_codec.testing._strategies import Malformed, Valid
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


def request_rules() -> dict[str, st.SearchStrategy[pravega.Command]]:
    """What ``requests()`` draws from, by type name: each type is a rule of the live fuzzer."""
    ids = st.integers(0, (1 << 63) - 1)
    return {
        "KeepAlive": st.just(pravega.KeepAlive()),
        "CreateSegment": st.builds(pravega.CreateSegment, ids, segments()),
        "GetStreamSegmentInfo": st.builds(pravega.GetStreamSegmentInfo, ids, segments()),
        "ReadSegment": st.builds(
            pravega.ReadSegment, segments(), st.integers(0, 1 << 40), st.integers(0, 4096)
        ),
        "SealSegment": st.builds(pravega.SealSegment, ids, segments()),
        "TruncateSegment": st.builds(
            pravega.TruncateSegment, ids, segments(), st.integers(0, 1 << 40)
        ),
        "DeleteSegment": st.builds(pravega.DeleteSegment, ids, segments()),
        "SetupAppend": st.builds(pravega.SetupAppend, ids, st.uuids(), segments()),
    }


def requests() -> st.SearchStrategy[pravega.Command]:
    """Requests a client sends that stand alone (no append session needed)."""
    return st.one_of(*request_rules().values())


def request_wire() -> st.SearchStrategy[tuple[pravega.Command, bytes]]:
    """``(command, its exact frame)``."""
    return requests().map(lambda c: (c, pravega.encode(c)))


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


def malformed_rules(
    limits: pravega.Limits | None = None,
) -> dict[str, st.SearchStrategy[Malformed]]:
    """The rule families of ``malformed()`` by name: the live fuzzer runs each once before
    repeating any."""
    lim = limits or pravega.Limits()
    return {
        "framing": _framing(lim),
        "strings": _strings(),
        "frames in a forbidden order": _orders(),
        "frame cut by end of stream": _truncated(),
        "sizes and counts that add up wrong": _aggregates(lim),
    }


def malformed(limits: pravega.Limits | None = None) -> st.SearchStrategy[Malformed]:
    """Malformed frames (after a valid Hello), each naming the error a strict server raises."""
    return st.one_of(*malformed_rules(limits).values())


#: The ``SetupAppend`` frame for ``WRITER`` on ``SEGMENT``, sent before append cases.
SETUP = pravega.encode(pravega.SetupAppend(1, WRITER, SEGMENT))


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
