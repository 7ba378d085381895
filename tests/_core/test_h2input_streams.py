"""``_core.h2input`` at the stream and settings level: what the passive reader does with the
streams it follows and the SETTINGS it reads, and what it reports when a rule is broken
(``Http2ErrorCode``, the exact words, the direction, the offset, ``resynchronized``).

Request trailers ending the client's side (and a stream over on both sides forgotten), a second
head on the latest stream taken as trailers, not as a new stream; a client opening an even
stream; final response heads that end the stream, response trailers, a bad ``:status`` (one
error of that stream, later heads passed over as trailers); DATA after END_STREAM and HEADERS or
DATA on an idle stream in their words; RST_STREAM reported for the side that sent it, a stream
reset both ways forgotten, and ``MAX_RESET_STREAMS``; SETTINGS values at and past their bounds,
unknown settings ignored, every setting of a frame read, how much a side holds back while the
other side's SETTINGS may still raise SETTINGS_MAX_FRAME_SIZE; a direction closed inside the
preface, a frame or a header block, and what is left of a direction closed that way.
The frame-level rules are tested in ``test_h2input_frames.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import hpack
import pytest

from s3p_codec._core import Direction, ObservedError, ObservedGap, ObserverOutput
from s3p_codec._core.h2input import (
    MAX_RESET_STREAMS,
    PREFACE,
    H2Headers,
    H2Input,
    H2Stream,
    Http2ErrorCode,
)
from tests._core.h2_support import (
    AT,
    C2S,
    DATA,
    END_HEADERS,
    END_STREAM,
    HEADERS,
    RST_STREAM,
    S2C,
    SETTINGS,
    SETTINGS_TYPE,
    START,
)
from tests._core.h2_support import frame as _frame

PROTOCOL = Http2ErrorCode.PROTOCOL_ERROR
FLOW_CONTROL = Http2ErrorCode.FLOW_CONTROL_ERROR
STATUS_200, STATUS_204 = b"\x88", b"\x89"  # :status from the HPACK static table
MAX_WAIT = 4 * 1024 * 1024  # what a side holds back while the other side's SETTINGS may come


def _block(fields: list[tuple[bytes, bytes]]) -> bytes:
    """A header block from a fresh encoder (literals only: any decoder state reads it)."""
    return bytes(hpack.Encoder().encode(fields))


def _open(sid: int, path: bytes = b"/follow", flags: int = END_HEADERS) -> bytes:
    """A request HEADERS frame opening ``sid``."""
    fields = [(b":method", b"GET"), (b":scheme", b"http"), (b":path", path)]
    return _frame(HEADERS, flags, sid, _block(fields))


def _settings(*pairs: tuple[int, int]) -> bytes:
    payload = b"".join(i.to_bytes(2, "big") + v.to_bytes(4, "big") for i, v in pairs)
    return _frame(SETTINGS_TYPE, 0, 0, payload)


def _rst(sid: int) -> bytes:
    return _frame(RST_STREAM, 0, sid, (8).to_bytes(4, "big"))  # CANCEL


class _Recorder(H2Input[H2Stream, str]):
    """Follows the streams whose ``:path`` starts with ``/follow``; records every hook."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[object, ...]] = []

    def _follow(self, headers: H2Headers) -> H2Stream | None:
        if not headers.pseudo.get(b":path", b"").startswith(b"/follow"):
            return None
        return H2Stream()

    def _opened(self, stream: H2Stream, headers: H2Headers) -> None:
        self.calls.append(("opened", stream.pair, headers.stream_id))

    def _response(self, stream: H2Stream, status: int, headers: H2Headers) -> None:
        self.calls.append(("response", stream.pair, status))

    def _data(self, direction: Direction, stream: H2Stream, data: bytes, at: int) -> None:
        self.calls.append(("data", direction, stream.pair, data, at))

    def _ended(self, direction: Direction, stream: H2Stream, end: int) -> None:
        self.calls.append(("ended", direction, stream.pair, end))

    def _reset_side(self, direction: Direction, stream: H2Stream) -> None:
        self.calls.append(("reset", direction, stream.pair))


def _error(out: Sequence[ObserverOutput[str]]) -> tuple[object, ...]:
    """The one output, an error, as (direction, code, words, start, skipped, resynchronized)."""
    (error,) = out
    assert isinstance(error, ObservedError)
    return (
        error.direction,
        error.error.code,
        error.error.message,
        error.start,
        error.skipped,
        error.resynchronized,
    )


# -- requests --------------------------------------------------------------------------------------


def test_request_trailers_end_the_client_side_and_a_stream_over_both_ways_is_forgotten() -> None:
    reader = _Recorder()
    opening = START + _open(1) + _frame(DATA, 0, 1, b"a")
    assert reader.observe(C2S, opening) == []
    answer = _frame(HEADERS, END_HEADERS | END_STREAM, 1, STATUS_200)
    assert reader.observe(S2C, SETTINGS + answer) == []
    trailers = _frame(HEADERS, END_HEADERS | END_STREAM, 1, _block([(b"x-t", b"1")]))
    # Trailers on a stream nobody follows end nothing and report nothing.
    other = _open(3, b"/other") + _frame(HEADERS, END_HEADERS | END_STREAM, 3, _block([]))
    assert reader.observe(C2S, trailers + other) == []
    assert reader.calls == [
        ("opened", 0, 1),
        ("data", C2S, 0, b"a", len(opening) - 1),
        ("response", 0, 200),
        ("ended", S2C, 0, len(SETTINGS + answer)),
        ("ended", C2S, 0, len(opening) + len(trailers)),  # one head opened the stream, not two
    ]
    assert reader._streams == {}


def test_a_client_cannot_open_an_even_stream() -> None:
    reader = _Recorder()
    out = reader.observe(C2S, START + _open(2))
    assert _error(out) == (C2S, PROTOCOL, "HTTP/2: a client opened even stream 2", AT, 0, False)
    assert reader.calls == []
    assert reader.observe(C2S, _open(1)) == []  # the direction is abandoned


# -- responses ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [b"204", b"103"])
def test_a_response_head_that_ends_the_stream_is_the_answer_and_ends_the_server_side(
    status: bytes,
) -> None:
    reader = _Recorder()
    reader.observe(C2S, START + _open(1, flags=END_HEADERS | END_STREAM))
    server = SETTINGS + _frame(HEADERS, END_HEADERS | END_STREAM, 1, _block([(b":status", status)]))
    assert reader.observe(S2C, server) == []
    assert reader.calls[-2:] == [("response", 0, int(status)), ("ended", S2C, 0, len(server))]
    assert reader._streams == {}


def test_response_trailers_end_the_server_side() -> None:
    reader = _Recorder()
    reader.observe(C2S, START + _open(1, flags=END_HEADERS | END_STREAM))
    trailers = _frame(HEADERS, END_HEADERS | END_STREAM, 1, _block([(b"grpc-status", b"0")]))
    server = SETTINGS + _frame(HEADERS, END_HEADERS, 1, STATUS_200) + _frame(DATA, 0, 1, b"ok")
    assert reader.observe(S2C, server + trailers) == []  # trailers have no :status: no error
    assert reader.calls[1:] == [
        ("ended", C2S, 0, AT + len(_open(1))),
        ("response", 0, 200),
        ("data", S2C, 0, b"ok", len(server) - 2),
        ("ended", S2C, 0, len(server + trailers)),
    ]
    assert reader._streams == {}


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ([], "HTTP/2: bad :status b''"),
        ([(b":status", b"20")], "HTTP/2: bad :status b'20'"),
        ([(b":status", b"2x0")], "HTTP/2: bad :status b'2x0'"),
    ],
)
def test_a_bad_status_is_an_error_of_that_stream_and_later_heads_are_trailers(
    fields: list[tuple[bytes, bytes]], words: str
) -> None:
    reader = _Recorder()
    reader.observe(C2S, START + _open(1))
    bad = SETTINGS + _frame(HEADERS, END_HEADERS, 1, _block(fields))
    out = reader.observe(S2C, bad)
    assert _error(out) == (S2C, PROTOCOL, words, len(SETTINGS), 0, True)
    # The decoding goes on; the next head is passed over as trailers, not taken as the answer.
    later = _frame(HEADERS, END_HEADERS | END_STREAM, 1, STATUS_200)
    assert reader.observe(S2C, later) == []
    assert reader.calls == [("opened", 0, 1), ("ended", S2C, 0, len(bad + later))]


def test_a_bad_status_that_ends_the_stream_ends_the_server_side() -> None:
    reader = _Recorder()
    reader.observe(C2S, START + _open(1, flags=END_HEADERS | END_STREAM))
    server = SETTINGS + _frame(HEADERS, END_HEADERS | END_STREAM, 1, _block([(b":status", b"x")]))
    out = reader.observe(S2C, server)
    assert _error(out) == (S2C, PROTOCOL, "HTTP/2: bad :status b'x'", len(SETTINGS), 0, True)
    assert reader.calls[-1] == ("ended", S2C, 0, len(server))
    assert reader._streams == {}


# -- DATA and idle streams ---------------------------------------------------------------------


def test_data_after_end_stream_is_reported_in_its_words_for_its_direction() -> None:
    reader = _Recorder()
    reader.observe(C2S, START + _open(1))  # the client's side is still on: the stream is kept
    server = SETTINGS + _frame(HEADERS, END_HEADERS, 1, STATUS_200) + _frame(DATA, 1, 1, b"a")
    assert reader.observe(S2C, server) == []
    out = reader.observe(S2C, _frame(DATA, 0, 1, b"b"))
    words = "HTTP/2: DATA after END_STREAM on stream 1"
    assert _error(out) == (S2C, Http2ErrorCode.STREAM_CLOSED, words, len(server), 0, True)


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        (_frame(HEADERS, END_HEADERS, 3, STATUS_200), "HTTP/2: HEADERS on idle stream 3"),
        (_frame(DATA, 0, 3, b"x"), "HTTP/2: DATA on idle stream 3"),
    ],
)
def test_server_frames_on_a_stream_the_closed_client_never_opened(frame: bytes, words: str) -> None:
    reader = _Recorder()
    reader.observe(C2S, START + _open(1))
    assert reader.close(C2S) == []  # closed cleanly: its streams are known, 3 is idle
    out = reader.observe(S2C, SETTINGS + frame)
    assert _error(out) == (S2C, PROTOCOL, words, len(SETTINGS), 0, False)


# -- RST_STREAM --------------------------------------------------------------------------------


def test_a_reset_is_reported_for_the_side_that_sent_it() -> None:
    reader = _Recorder()
    reader.observe(C2S, START + _open(1) + _open(3) + _rst(1))
    reader.observe(S2C, SETTINGS + _rst(3))
    assert reader.calls[2:] == [("reset", C2S, 0), ("reset", S2C, 1)]
    assert list(reader._reset_streams) == [1, 3]


def test_a_stream_reset_both_ways_is_forgotten() -> None:
    reader = _Recorder()
    reader.observe(C2S, START + _open(1) + _rst(1))
    reader.observe(S2C, SETTINGS + _rst(1))
    assert reader._streams == {}
    assert list(reader._reset_streams) == [1]  # kept only while one side was still on
    # Frames after both resets belong to no followed stream: passed over.
    assert reader.observe(S2C, _frame(DATA, 0, 1, b"late")) == []
    assert reader.calls == [("opened", 0, 1), ("reset", C2S, 0), ("reset", S2C, 0)]


def test_only_the_last_max_reset_streams_reset_one_way_are_kept() -> None:
    reader = _Recorder()
    reader.observe(C2S, START + _open(1) + _rst(1))
    # The server ends stream 1: over both ways, forgotten while still listed as reset.
    reader.observe(S2C, SETTINGS + _frame(HEADERS, END_HEADERS | END_STREAM, 1, STATUS_200))
    assert reader._streams == {}
    sids = range(3, 3 + 2 * (MAX_RESET_STREAMS + 1), 2)  # 129 more streams, reset by the client
    reader.observe(C2S, b"".join(_open(sid) + _rst(sid) for sid in sids))
    assert len(reader._reset_streams) == MAX_RESET_STREAMS
    assert sorted(reader._streams) == list(sids[1:])  # stream 3, the oldest, forgotten
    del reader.calls[:]
    reader.observe(S2C, _frame(HEADERS, END_HEADERS, 3, STATUS_200))
    reader.observe(S2C, _frame(HEADERS, END_HEADERS, 5, STATUS_200))
    assert reader.calls == [("response", 2, 200)]  # stream 5 is the third stream followed


# -- SETTINGS ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "code", "words"),
    [
        ((0x2, 2), PROTOCOL, "SETTINGS_ENABLE_PUSH 2"),
        ((0x4, 1 << 31), FLOW_CONTROL, "SETTINGS_INITIAL_WINDOW_SIZE 2147483648"),
        ((0x5, 16_383), PROTOCOL, "SETTINGS_MAX_FRAME_SIZE 16383"),
        ((0x5, 1 << 24), PROTOCOL, "SETTINGS_MAX_FRAME_SIZE 16777216"),
    ],
)
def test_a_setting_past_its_bound_abandons_the_direction(
    setting: tuple[int, int], code: Http2ErrorCode, words: str
) -> None:
    reader = _Recorder()
    out = reader.observe(C2S, PREFACE + _settings(setting))
    assert _error(out) == (C2S, code, f"HTTP/2: {words}", len(PREFACE), 0, False)


def test_settings_at_their_largest_values_are_taken() -> None:
    reader = _Recorder()
    largest = _settings((0x4, (1 << 31) - 1), (0x5, (1 << 24) - 1))
    assert reader.observe(C2S, PREFACE + largest + _open(1)) == []
    big = b"x" * 100_000  # over 16,384: allowed by the client's SETTINGS_MAX_FRAME_SIZE
    server = SETTINGS + _frame(HEADERS, END_HEADERS, 1, STATUS_200) + _frame(DATA, 0, 1, big)
    assert reader.observe(S2C, server) == []
    assert reader.calls[-1] == ("data", S2C, 0, big, len(server) - len(big))


def test_unknown_settings_are_ignored_and_every_setting_of_a_frame_is_read() -> None:
    reader = _Recorder()
    # An unknown identifier whose value's bytes, read from the wrong offset, would be a
    # SETTINGS_MAX_FRAME_SIZE of 5; then SETTINGS_MAX_FRAME_SIZE 32,768 as the second setting.
    settings = _settings((0xF0, 0x0005_0000), (0x5, 32_768))
    assert reader.observe(C2S, PREFACE + settings + _open(1)) == []
    big = b"x" * 20_000
    server = SETTINGS + _frame(HEADERS, END_HEADERS, 1, STATUS_200) + _frame(DATA, 0, 1, big)
    assert reader.observe(S2C, server) == []
    assert reader.calls[-1] == ("data", S2C, 0, big, len(server) - len(big))


@pytest.mark.parametrize("extra", [0, 1])
def test_a_frame_over_the_bound_waits_for_the_other_side_up_to_max_wait_bytes(extra: int) -> None:
    reader = _Recorder()
    reader.observe(C2S, START + _open(1))
    head = SETTINGS + _frame(HEADERS, END_HEADERS, 1, STATUS_200)
    length = MAX_WAIT - 9 + extra  # the frame is all the server holds: MAX_WAIT (+ 1) bytes
    out = reader.observe(S2C, head + _frame(DATA, 0, 1, bytes(length)))
    if extra:
        words = f"HTTP/2: a {length}-byte frame exceeds SETTINGS_MAX_FRAME_SIZE 16384"
        assert _error(out) == (S2C, Http2ErrorCode.FRAME_SIZE_ERROR, words, len(head), 0, False)
        return
    assert out == []  # held back: the client's SETTINGS may raise the bound
    assert reader.observe(C2S, _settings((0x5, length))) == []
    assert reader.calls[-1] == ("data", S2C, 0, bytes(length), len(head) + 9)


# -- a direction closed too early --------------------------------------------------------------


@pytest.mark.parametrize(
    ("client", "words", "start"),
    [
        (PREFACE[:10], "closed inside the client preface", 0),
        (START + _open(1)[:5], "closed inside a frame (5 bytes left over)", AT),
        (START + _open(1, flags=0), "closed inside a header block", AT),
    ],
)
def test_a_direction_closed_too_early_is_an_error_and_is_lost(
    client: bytes, words: str, start: int
) -> None:
    reader = _Recorder()
    assert reader.observe(C2S, client) == []
    out = reader.close(C2S)
    assert _error(out) == (C2S, PROTOCOL, f"HTTP/2: {words}", start, 0, False)
    assert reader.gap(C2S, 10) == []  # lost already: no gap to report
    # The client's streams are unknown: the server's frames on them are not on idle streams.
    assert reader.observe(S2C, SETTINGS + _frame(HEADERS, END_HEADERS, 3, STATUS_200)) == []


def test_a_direction_closed_cleanly_still_reports_a_later_gap() -> None:
    reader = _Recorder()
    reader.observe(C2S, START)
    assert reader.close(C2S) == []
    assert reader.gap(C2S, 10) == [ObservedGap(C2S, len(START), 10, resynchronized=False)]
