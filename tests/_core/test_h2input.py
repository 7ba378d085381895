"""``_core.h2input``: the passive HTTP/2 reader on its own, with a subclass that knows no protocol
above HTTP (it follows the streams whose ``:path`` starts with ``/follow`` and records what it is
told). The S2S mapping on top of it is tested in ``tests/s2s/test_observe_h2.py``."""

from __future__ import annotations

import hpack
import pytest

from s3p_codec._core import Direction, Observed, ObservedError
from s3p_codec._core.h2input import PREFACE, H2Headers, H2Input, H2Stream, Http2ErrorCode

C2S, S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
SETTINGS = bytes(3) + b"\x04\x00" + bytes(4)  # an empty SETTINGS frame


def _frame(kind: int, flags: int, sid: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + sid.to_bytes(4, "big") + payload


def _request(path: bytes) -> list[tuple[bytes, bytes]]:
    return [(b":method", b"GET"), (b":scheme", b"http"), (b":path", path), (b"x-a", b"1")]


class _Recorder(H2Input[H2Stream, str]):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[object, ...]] = []

    def _follow(self, headers: H2Headers) -> H2Stream | None:
        if not headers.pseudo.get(b":path", b"").startswith(b"/follow"):
            return None
        return H2Stream()

    def _opened(self, stream: H2Stream, headers: H2Headers) -> None:
        self.calls.append(("opened", stream.pair, headers.pseudo[b":path"], headers.regular))
        self._out.append(Observed(C2S, "request", headers.start, headers.end, stream.pair))

    def _response(self, stream: H2Stream, status: int, headers: H2Headers) -> None:
        self.calls.append(("response", stream.pair, status))

    def _data(self, direction: Direction, stream: H2Stream, data: bytes, at: int) -> None:
        self.calls.append(("data", direction, stream.pair, data, at))

    def _ended(self, direction: Direction, stream: H2Stream, end: int) -> None:
        self.calls.append(("ended", direction, stream.pair, end))

    def _reset_side(self, direction: Direction, stream: H2Stream) -> None:
        self.calls.append(("reset", direction, stream.pair))


def test_a_followed_stream_reaches_every_hook_with_its_offsets() -> None:
    encoder = hpack.Encoder()
    skipped = _frame(1, 0x4 | 0x1, 1, encoder.encode(_request(b"/other")))
    followed = _frame(1, 0x4, 3, encoder.encode(_request(b"/follow")))
    padded = _frame(0, 0x8 | 0x1, 3, b"\x02body\x00\x00")  # pad length 2, END_STREAM
    client = PREFACE + SETTINGS + skipped + followed + padded
    interim = _frame(1, 0x4, 3, hpack.Encoder().encode([(b":status", b"100")]))
    final = _frame(1, 0x4, 3, b"\x88")  # :status 200 from the static table
    server = SETTINGS + _frame(0, 0, 1, b"ignored") + interim + final + _frame(0, 1, 3, b"ok")
    reader = _Recorder()
    out = [*reader.observe(C2S, client), *reader.observe(S2C, server)]
    followed_at = len(PREFACE + SETTINGS + skipped)
    padded_at = followed_at + len(followed)
    assert out == [Observed(C2S, "request", followed_at, padded_at, 0)]
    assert reader.calls == [
        ("opened", 0, b"/follow", [(b"x-a", b"1")]),
        ("data", C2S, 0, b"body", padded_at + 10),  # after the header and the pad length
        ("ended", C2S, 0, len(client)),
        ("response", 0, 200),
        ("data", S2C, 0, b"ok", len(server) - 2),
        ("ended", S2C, 0, len(server)),
    ]
    assert reader._streams == {}  # over on both sides: forgotten


def test_a_reset_side_is_dropped_and_the_other_side_still_decodes() -> None:
    block = hpack.Encoder().encode(_request(b"/follow"))
    client = PREFACE + SETTINGS + _frame(1, 0x4, 1, block) + _frame(3, 0, 1, bytes(4))
    reader = _Recorder()
    reader.observe(C2S, client)
    server = SETTINGS + _frame(1, 0x4, 1, b"\x88") + _frame(0, 0, 1, b"late")
    reader.observe(S2C, server)
    assert [c[0] for c in reader.calls] == ["opened", "reset", "response", "data"]
    assert list(reader._reset_streams) == [1]


@pytest.mark.parametrize(
    ("frames", "code"),
    [
        (_frame(0, 0, 0, b"x"), Http2ErrorCode.PROTOCOL_ERROR),
        (_frame(6, 0, 0, b"1234567"), Http2ErrorCode.FRAME_SIZE_ERROR),
        (_frame(1, 0x4, 1, b"\xff\xff\xff\xff\x0f"), Http2ErrorCode.COMPRESSION_ERROR),
    ],
)
def test_broken_framing_abandons_the_direction_with_a_typed_error(
    frames: bytes, code: Http2ErrorCode
) -> None:
    reader = _Recorder()
    (error,) = reader.observe(C2S, PREFACE + SETTINGS + frames)
    assert isinstance(error, ObservedError)
    assert (error.error.code, error.start, error.resynchronized) == (
        code, len(PREFACE + SETTINGS), False
    )  # fmt: skip
    assert reader.observe(C2S, SETTINGS) == []


def test_data_after_end_stream_is_an_error_of_that_stream_only() -> None:
    block = hpack.Encoder().encode(_request(b"/follow"))
    late = _frame(0, 0, 1, b"x")
    client = PREFACE + SETTINGS + _frame(1, 0x4 | 0x1, 1, block) + late
    reader = _Recorder()
    out = reader.observe(C2S, client)
    assert isinstance(out[-1], ObservedError)
    assert out[-1].error.code is Http2ErrorCode.STREAM_CLOSED
    assert (out[-1].start, out[-1].resynchronized) == (len(client) - len(late), True)
