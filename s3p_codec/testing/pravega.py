"""Hypothesis strategies for Pravega segment-store peers: valid commands, frames, bad frames.

Pravega has no error reply for a broken frame: "a real segment store logs an
``InvalidMessageException`` and closes the connection". So every malformed case here is fatal
with ``reply=False``: the server must close, and ``code`` names the case (``pravega.ErrorCode``)
as this library's server-role codec raises it. Every case starts with a valid ``Hello``, so the
frame after it is judged by the framing, not by a missing handshake; the server's ``Hello`` in
answer is not counted as an answer to the case.
"""

from __future__ import annotations

import struct
import uuid

import attrs
from hypothesis import strategies as st

from s3p_codec import ProtocolError, Role, pravega
from s3p_codec.testing.strategies import Answer, Malformed, Valid

__all__ = ["Target", "malformed", "replies", "request_wire", "requests"]

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
    return st.one_of(_framing(lim), _strings(), _orders(), _truncated())


# --- live target -------------------------------------------------------------------------------


class _Reader:
    def __init__(self, sent: Malformed | Valid) -> None:
        self._conn = pravega.Connection(Role.CLIENT)
        self._conn.send(pravega.Hello())
        self._answer = Answer()

    def feed(self, data: bytes) -> Answer:
        if self._answer.problem:
            return self._answer
        try:
            self._conn.receive_data(data)
            for event in self._conn.events():
                if (
                    isinstance(event, pravega.Hello | pravega.KeepAlive)
                    and not self._answer.complete
                ) and isinstance(event, pravega.Hello):
                    continue  # the answer to our Hello, not to the case
                self._answer = Answer(True, None, False, None, repr(event)[:200])
        except ProtocolError as exc:
            self._answer = attrs.evolve(self._answer, finished=True, problem=str(exc)[:200])
            return self._answer
        if not data:
            self._answer = attrs.evolve(self._answer, finished=True)
        return self._answer


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
