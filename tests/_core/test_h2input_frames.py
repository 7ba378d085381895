"""``_core.h2input`` at the frame level: the rules of RFC 9113 framing the passive reader enforces
and what it reports when one is broken (``Http2ErrorCode``, the exact words, the direction, the
offset of the frame or header block at fault, ``skipped`` and ``resynchronized``).

The client preface and the first-SETTINGS rule; the stream identifiers each frame type allows
(and the 31-bit identifier read whole); the fixed sizes of RST_STREAM, PING, WINDOW_UPDATE,
PRIORITY, SETTINGS and GOAWAY; padding and the fields before a block fragment; CONTINUATION
sequencing; the ``max_header_block`` bound, exact at its edge, from the frame header as soon as
it is read; frames on idle client streams; a zero WINDOW_UPDATE; SETTINGS_MAX_FRAME_SIZE and
how long a frame over it waits for the other side; how long the server's frames wait for the
client's HEADERS; PUSH_PROMISE blocks keeping the HPACK table in step; gap offsets and close.
Stream-level rules (responses, DATA, resets, SETTINGS values) are tested elsewhere.
"""

from __future__ import annotations

import hpack
import pytest

from s3p_codec._core import Direction, Observed, ObservedError, ObservedGap
from s3p_codec._core.h2input import (
    MAX_HEADER_BLOCK,
    PREFACE,
    H2Headers,
    H2Input,
    H2Stream,
    Http2ErrorCode,
    _Side,
)
from tests._core.h2_support import (
    ACK,
    AT,
    C2S,
    CONTINUATION,
    DATA,
    END_HEADERS,
    END_STREAM,
    GOAWAY,
    HEADERS,
    PADDED,
    PING,
    PRIORITY,
    PRIORITY_FLAG,
    PUSH_PROMISE,
    RST_STREAM,
    S2C,
    SETTINGS,
    SETTINGS_TYPE,
    START,
    WINDOW_UPDATE,
)
from tests._core.h2_support import frame as _frame
from tests._core.h2_support import head as _head

PROTOCOL = Http2ErrorCode.PROTOCOL_ERROR
FRAME_SIZE = Http2ErrorCode.FRAME_SIZE_ERROR
CALM = Http2ErrorCode.ENHANCE_YOUR_CALM


def _request(path: bytes = b"/follow") -> bytes:
    """A request header block from a fresh encoder."""
    fields = [(b":method", b"GET"), (b":scheme", b"http"), (b":path", path), (b"x-a", b"1")]
    return bytes(hpack.Encoder().encode(fields))


def _sized(size: int) -> bytes:
    """A request block of exactly ``size`` bytes: dynamic table size updates (to 0) before it,
    which add bytes but no header (RFC 7541 section 6.3)."""
    block = _request()
    return b"\x20" * (size - len(block)) + block


STEPS = 10_000
"""More steps of the frame loop than any test here needs (a step handles a frame, or finds it
cannot): a loop that does not stop fails the test instead of hanging it."""


class _Reader(H2Input[H2Stream, str]):
    """Follows the streams whose ``:path`` starts with ``/follow`` and records its hooks."""

    def __init__(self, max_header_block: int = MAX_HEADER_BLOCK) -> None:
        super().__init__(max_header_block=max_header_block)
        self.calls: list[tuple[object, ...]] = []
        self.steps = 0

    def _step(self, side: _Side) -> bool:
        self.steps += 1
        assert self.steps <= STEPS, "the frame loop does not stop"
        return super()._step(side)

    def _finish(self, side: _Side) -> None:
        self.steps += 1
        assert self.steps <= STEPS, "the frame loop does not stop"
        super()._finish(side)

    def _follow(self, headers: H2Headers) -> H2Stream | None:
        if not headers.pseudo.get(b":path", b"").startswith(b"/follow"):
            return None
        return H2Stream()

    def _opened(self, stream: H2Stream, headers: H2Headers) -> None:
        self.calls.append(("opened", stream.pair, headers.pseudo[b":path"]))
        self._out.append(Observed(C2S, "request", headers.start, headers.end, stream.pair))

    def _response(self, stream: H2Stream, status: int, headers: H2Headers) -> None:
        self.calls.append(("response", stream.pair, status, headers.regular))

    def _data(self, direction: Direction, stream: H2Stream, data: bytes, at: int) -> None:
        self.calls.append(("data", direction, stream.pair, data, at))

    def _ended(self, direction: Direction, stream: H2Stream, end: int) -> None:
        self.calls.append(("ended", direction, stream.pair, end))

    def _reset_side(self, direction: Direction, stream: H2Stream) -> None:
        self.calls.append(("reset", direction, stream.pair))


def _report(out: object) -> list[tuple[object, ...]]:
    """Outputs as plain tuples (an error by its code and words: exceptions compare by identity)."""
    assert isinstance(out, list | tuple)
    rows: list[tuple[object, ...]] = []
    for item in out:
        if isinstance(item, ObservedError):
            error = item.error
            rows.append(
                ("error", item.direction, error.code, error.message, item.start, item.skipped,
                 item.resynchronized)
            )  # fmt: skip
        elif isinstance(item, ObservedGap):
            rows.append(("gap", item.direction, item.start, item.size, item.resynchronized))
        else:
            assert isinstance(item, Observed)
            rows.append(("event", item.direction, item.event, item.start, item.end, item.pair_id))
    return rows


def _error(
    direction: Direction, code: Http2ErrorCode, words: str, start: int
) -> tuple[object, ...]:
    """A connection error of one direction: at the frame, nothing skipped, not resynchronized."""
    return ("error", direction, code, f"HTTP/2: {words}", start, 0, False)


def _client(frames: bytes, reader: _Reader | None = None) -> list[tuple[object, ...]]:
    """What the client's preface, SETTINGS and then ``frames`` report."""
    reader = reader or _Reader()
    return _report(reader.observe(C2S, START + frames))


def _server(frames: bytes, reader: _Reader | None = None) -> list[tuple[object, ...]]:
    """What the server's SETTINGS and then ``frames`` report."""
    reader = reader or _Reader()
    return _report(reader.observe(S2C, SETTINGS + frames))


# -- the preface and the first frame ---------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"GET / HTTP/1.1\r\n",  # refused at its first wrong byte, before 24 bytes came
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\x00",  # all 24 bytes, the last one wrong
        b"PRI * HTTP/2.0\r\n\r\nSN\r\n\r\n" + SETTINGS,
    ],
)
def test_a_wrong_client_preface_is_a_protocol_error_at_offset_0(data: bytes) -> None:
    reader = _Reader()
    assert _report(reader.observe(C2S, data)) == [
        _error(C2S, PROTOCOL, "not the client preface", 0)
    ]
    assert reader.observe(C2S, SETTINGS) == []  # the direction is abandoned


@pytest.mark.parametrize(
    ("direction", "first", "at"),
    [
        (C2S, _head(PING, 0, 0, 8), len(PREFACE)),
        (C2S, _head(SETTINGS_TYPE, ACK, 0, 0), len(PREFACE)),  # an ack is not the SETTINGS
        (S2C, _head(HEADERS, END_HEADERS, 1, 1), 0),
        (S2C, _head(WINDOW_UPDATE, 0, 0, 4), 0),
    ],
)
def test_the_first_frame_must_be_settings_on_both_sides_judged_from_its_header(
    direction: Direction, first: bytes, at: int
) -> None:
    data = (PREFACE if direction is C2S else b"") + first  # the header alone, no payload yet
    assert _report(_Reader().observe(direction, data)) == [
        _error(direction, PROTOCOL, "the first frame must be SETTINGS", at)
    ]


# -- the header alone: stream identifiers and fixed sizes ------------------------------------------


@pytest.mark.parametrize(
    ("header", "code", "words"),
    [
        (_head(DATA, 0, 0, 1), PROTOCOL, "DATA on stream 0"),
        (_head(HEADERS, END_HEADERS, 0, 1), PROTOCOL, "HEADERS on stream 0"),
        (_head(PRIORITY, 0, 0, 5), PROTOCOL, "PRIORITY on stream 0"),
        (_head(RST_STREAM, 0, 0, 4), PROTOCOL, "RST_STREAM on stream 0"),
        (_head(CONTINUATION, END_HEADERS, 0, 1), PROTOCOL, "CONTINUATION on stream 0"),
        (_head(SETTINGS_TYPE, 0, 1, 0), PROTOCOL, "SETTINGS on stream 1, not 0"),
        (_head(PING, 0, 1, 8), PROTOCOL, "PING on stream 1, not 0"),
        (_head(GOAWAY, 0, 3, 8), PROTOCOL, "GOAWAY on stream 3, not 0"),
        # The identifier is 31 bits, its high byte included; the "R" bit is not part of it.
        (_head(SETTINGS_TYPE, 0, 1 << 24, 0), PROTOCOL, "SETTINGS on stream 16777216, not 0"),
        (_head(PING, 0, (1 << 31) | 5, 8), PROTOCOL, "PING on stream 5, not 0"),
        (_head(PUSH_PROMISE, END_HEADERS, 1, 4), PROTOCOL, "a client cannot send PUSH_PROMISE"),
        (_head(PING, 0, 0, 7), FRAME_SIZE, "a PING frame is 8 bytes, not 7"),
        (_head(PING, 0, 0, 9), FRAME_SIZE, "a PING frame is 8 bytes, not 9"),
        (_head(RST_STREAM, 0, 1, 5), FRAME_SIZE, "a RST_STREAM frame is 4 bytes, not 5"),
        (_head(WINDOW_UPDATE, 0, 0, 3), FRAME_SIZE, "a WINDOW_UPDATE frame is 4 bytes, not 3"),
        (_head(PRIORITY, 0, 1, 4), FRAME_SIZE, "a PRIORITY frame is 5 bytes, not 4"),
        (_head(SETTINGS_TYPE, 0, 0, 7), FRAME_SIZE, "a 7-byte SETTINGS frame"),
        (_head(SETTINGS_TYPE, ACK, 0, 6), FRAME_SIZE, "a 6-byte SETTINGS frame"),  # ack: empty
        (_head(GOAWAY, 0, 0, 7), FRAME_SIZE, "a 7-byte GOAWAY frame"),
        (_head(CONTINUATION, END_HEADERS, 1, 1), PROTOCOL,
         "CONTINUATION without a header block before it"),
    ],
)  # fmt: skip
def test_a_frame_header_breaking_a_rule_is_refused_before_its_payload(
    header: bytes, code: Http2ErrorCode, words: str
) -> None:
    assert _client(header) == [_error(C2S, code, words, AT)]


def test_a_server_push_promise_on_stream_0_is_refused() -> None:
    assert _server(_head(PUSH_PROMISE, END_HEADERS, 0, 4)) == [
        _error(S2C, PROTOCOL, "PUSH_PROMISE on stream 0", len(SETTINGS))
    ]


def test_frames_of_the_allowed_sizes_pass_and_the_connection_decodes_on() -> None:
    """GOAWAY is 8 bytes or more; a zero PING, PRIORITY or GOAWAY payload means nothing wrong;
    a zero WINDOW_UPDATE is a connection error only on stream 0; unknown types are skipped."""
    block = _frame(HEADERS, END_HEADERS, 1, _request())
    frames = (
        _frame(GOAWAY, 0, 0, bytes(8))
        + _frame(GOAWAY, 0, 0, bytes(8) + b"debug data")
        + _frame(PING, 0, 0, bytes(8))
        + _frame(PING, ACK, 0, bytes(8))
        + _frame(PRIORITY, 0, 1, bytes(5))
        + _frame(WINDOW_UPDATE, 0, 0, (1).to_bytes(4, "big"))
        + _frame(WINDOW_UPDATE, 0, 1, bytes(4))
        + _frame(0xFA, 0, 0, bytes(4))
        + _frame(SETTINGS_TYPE, ACK, 0, b"")
    )
    assert _client(block + frames) == [("event", C2S, "request", AT, AT + len(block), 0)]


@pytest.mark.parametrize("increment", [bytes(4), b"\x80\x00\x00\x00"])  # the R bit is no value
def test_a_zero_window_update_on_stream_0_is_a_protocol_error(increment: bytes) -> None:
    assert _client(_frame(WINDOW_UPDATE, 0, 0, increment)) == [
        _error(C2S, PROTOCOL, "WINDOW_UPDATE of 0", AT)
    ]


# -- padding and the fields before a fragment -----------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "code", "words"),
    [
        (_frame(DATA, PADDED, 1, b""), FRAME_SIZE, "padded frame without a pad length"),
        (_frame(DATA, PADDED, 1, b"\x01"), PROTOCOL, "padding longer than the frame"),
        (_frame(DATA, PADDED, 1, b"\x03ab"), PROTOCOL, "padding longer than the frame"),
        (_frame(HEADERS, PADDED | END_HEADERS, 1, b"\x04\x88\x00\x00"), PROTOCOL,
         "padding longer than the frame"),
        (_frame(HEADERS, PRIORITY_FLAG | END_HEADERS, 1, bytes(4)), FRAME_SIZE,
         "frame shorter than its fields"),
        (_frame(HEADERS, PADDED | PRIORITY_FLAG | END_HEADERS, 1, b"\x01" + bytes(5)),
         FRAME_SIZE, "frame shorter than its fields"),  # 4 bytes of priority after padding
    ],
)  # fmt: skip
def test_broken_padding_or_fields_are_errors_at_the_frame(
    frame: bytes, code: Http2ErrorCode, words: str
) -> None:
    opened = _frame(HEADERS, END_HEADERS, 1, _request(b"/other"))
    assert _client(opened + frame) == [_error(C2S, code, words, AT + len(opened))]


def test_padding_one_byte_short_of_the_frame_and_an_empty_payload_pass() -> None:
    opened = _frame(HEADERS, END_HEADERS, 1, _request())
    padded = _frame(DATA, PADDED, 1, b"\x02\x00\x00")  # only the pad length and padding
    empty = _frame(DATA, END_STREAM, 1, b"")
    reader = _Reader()
    _client(opened + padded + empty, reader)
    at = AT + len(opened)
    assert reader.calls == [
        ("opened", 0, b"/follow"),
        ("data", C2S, 0, b"", at + 10),
        ("data", C2S, 0, b"", at + len(padded) + 9),
        ("ended", C2S, 0, at + len(padded) + len(empty)),
    ]


def test_a_priority_block_may_be_all_priority_and_continue_in_continuation() -> None:
    block = _request()
    first = _frame(HEADERS, PRIORITY_FLAG, 1, bytes(5))  # priority fields, empty fragment
    rest = _frame(CONTINUATION, END_HEADERS, 1, block)
    assert _client(first + rest) == [("event", C2S, "request", AT, AT + len(first + rest), 0)]


# -- header blocks: CONTINUATION sequencing and the bound ------------------------------------------


@pytest.mark.parametrize(
    "interloper",
    [
        _head(DATA, 0, 1, 1),  # the same stream, another type
        _head(PING, 0, 0, 8),
        _head(CONTINUATION, END_HEADERS, 3, 1),  # a CONTINUATION, another stream
        _head(HEADERS, END_HEADERS, 3, 1),
    ],
)
def test_a_header_block_must_go_on_with_continuation_frames_of_its_stream(
    interloper: bytes,
) -> None:
    first = _frame(HEADERS, 0, 1, _request()[:3])
    assert _client(first + interloper) == [
        _error(C2S, PROTOCOL, "a header block must go on with CONTINUATION frames", AT + len(first))
    ]


def test_a_header_block_of_exactly_max_header_block_bytes_is_taken() -> None:
    """In one HEADERS frame carrying the most padding and priority fields the bound allows, and
    across HEADERS and CONTINUATION."""
    block = _sized(1024)
    payload = b"\xff" + bytes(5) + block + bytes(255)  # 1024 + 261 bytes: the largest frame
    whole = _frame(HEADERS, PADDED | PRIORITY_FLAG | END_HEADERS, 1, payload)
    assert _client(whole, _Reader(1024)) == [("event", C2S, "request", AT, AT + len(whole), 0)]
    split = _frame(HEADERS, 0, 1, block[:1000]) + _frame(CONTINUATION, END_HEADERS, 1, block[1000:])
    assert _client(split, _Reader(1024)) == [("event", C2S, "request", AT, AT + len(split), 0)]


def test_a_header_block_over_the_bound_is_refused_where_it_is_first_known() -> None:
    # A HEADERS frame longer than the bound plus the fields around a fragment: from its header.
    header = _head(HEADERS, PADDED | PRIORITY_FLAG | END_HEADERS, 1, 1024 + 262)
    assert _client(header, _Reader(1024)) == [_error(C2S, CALM, "header block too large", AT)]
    # A CONTINUATION taking the block past the bound: from its header, at that frame.
    first = _frame(HEADERS, 0, 1, _sized(1024)[:1000])
    more = _head(CONTINUATION, END_HEADERS, 1, 25)
    assert _client(first + more, _Reader(1024)) == [
        _error(C2S, CALM, "header block too large", AT + len(first))
    ]
    # A fragment over the bound in a frame short enough to hold padding: once it is read.
    one = _frame(HEADERS, END_HEADERS, 1, _sized(1025))
    assert _client(one, _Reader(1024)) == [_error(C2S, CALM, "header block too large", AT)]


def test_the_block_bound_leaves_other_frame_types_alone() -> None:
    opened = _frame(HEADERS, END_HEADERS, 1, _request())
    big = _frame(DATA, 0, 1, b"d" * 16_384)  # 16 times the block bound, the frame size bound
    reader = _Reader(1024)
    _client(opened + big, reader)
    assert reader.calls == [
        ("opened", 0, b"/follow"),
        ("data", C2S, 0, b"d" * 16_384, AT + len(opened) + 9),
    ]


def test_a_broken_hpack_block_is_a_compression_error_at_its_headers_frame() -> None:
    broken = b"\xff\xff\xff\xff\x0f"
    with pytest.raises(hpack.HPACKError) as raised:
        hpack.Decoder().decode(broken, raw=True)
    first = _frame(HEADERS, 0, 1, broken[:2])
    rest = _frame(CONTINUATION, END_HEADERS, 1, broken[2:])
    assert _client(first + rest) == [
        _error(C2S, Http2ErrorCode.COMPRESSION_ERROR, f"HPACK: {raised.value}", AT)
    ]


def test_push_promise_blocks_keep_the_hpack_table_in_step_and_report_nothing() -> None:
    """The promised stream id (4 bytes) comes before the fragment; the block is decoded (its
    entries enter the server's dynamic table) and otherwise ignored, as is the pushed stream."""
    reader = _Reader()
    reader.observe(C2S, START + _frame(HEADERS, END_HEADERS | END_STREAM, 1, _request()))
    encoder = hpack.Encoder()
    pushed = [(b":path", b"/pushed"), (b":method", b"GET"), (b"x-pushed", b"yes")]
    promise = (4).to_bytes(4, "big") + encoder.encode(pushed)
    response = encoder.encode([(b":status", b"200"), (b"x-pushed", b"yes")])
    assert len(response) == 2  # both fields come from the tables: x-pushed from the dynamic one
    frames = (
        _frame(PUSH_PROMISE, END_HEADERS, 1, promise)
        + _frame(PUSH_PROMISE, END_HEADERS, 1, (6).to_bytes(4, "big"))  # an empty block
        + _frame(HEADERS, END_HEADERS, 1, response)
        + _frame(DATA, END_STREAM, 4, b"pushed body")
        + _frame(DATA, END_STREAM, 1, b"")
    )
    assert _server(frames, reader) == []
    assert reader.calls[2:] == [
        ("response", 0, 200, [(b"x-pushed", b"yes")]),
        ("data", S2C, 0, b"", len(SETTINGS + frames)),
        ("ended", S2C, 0, len(SETTINGS + frames)),
    ]


# -- idle streams ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        (_frame(RST_STREAM, 0, 5, bytes(4)), "RST_STREAM on idle stream 5"),
        (_frame(DATA, 0, 3, b"x"), "DATA on idle stream 3"),
    ],
)
def test_client_frames_on_an_idle_client_stream_are_protocol_errors(
    frame: bytes, words: str
) -> None:
    opened = _frame(HEADERS, END_HEADERS, 1, _request(b"/other"))  # stream 1, not followed
    assert _client(opened + frame) == [_error(C2S, PROTOCOL, words, AT + len(opened))]


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        (_frame(HEADERS, END_HEADERS, 1, b"\x88"), "HEADERS on idle stream 1"),
        (_frame(DATA, 0, 1, b"x"), "DATA on idle stream 1"),
        (_frame(RST_STREAM, 0, 1, bytes(4)), "RST_STREAM on idle stream 1"),
    ],
)
def test_server_frames_on_a_stream_the_closed_client_never_opened_are_errors(
    frame: bytes, words: str
) -> None:
    reader = _Reader()
    reader.observe(C2S, START)
    assert reader.close(C2S) == []
    assert _server(frame, reader) == [_error(S2C, PROTOCOL, words, len(SETTINGS))]


def test_once_the_client_side_is_lost_its_streams_are_unknown_not_idle() -> None:
    reader = _Reader()
    reader.observe(C2S, START)
    assert _report(reader.gap(C2S, 100)) == [("gap", C2S, AT, 100, False)]
    frames = _frame(HEADERS, END_HEADERS, 1, b"\x88") + _frame(DATA, 0, 1, b"x")
    assert _server(frames + _frame(RST_STREAM, 0, 3, bytes(4)), reader) == []
    assert reader.calls == []


# -- the frame size bound and waiting for the other side -------------------------------------------


def test_a_frame_is_handled_once_its_last_byte_came() -> None:
    reader = _Reader()
    update = _frame(WINDOW_UPDATE, 0, 0, bytes(4))
    assert reader.observe(C2S, START + update[:11]) == []  # its payload is still to come
    assert _report(reader.observe(C2S, update[11:])) == [
        _error(C2S, PROTOCOL, "WINDOW_UPDATE of 0", AT)
    ]


def test_a_frame_of_exactly_the_frame_size_bound_is_taken_at_once() -> None:
    opened = _frame(HEADERS, END_HEADERS, 1, _request())
    reader = _Reader()
    _client(opened + _frame(DATA, 0, 1, b"d" * 16_384), reader)  # the server sent nothing yet
    assert reader.calls[1:] == [("data", C2S, 0, b"d" * 16_384, AT + len(opened) + 9)]


def test_a_frame_over_the_bound_waits_for_the_other_side_until_it_closes() -> None:
    reader = _Reader()
    assert _client(_head(DATA, 0, 1, 16_385), reader) == []  # server SETTINGS may raise it
    assert _report(reader.close(S2C)) == [
        _error(C2S, FRAME_SIZE, "a 16385-byte frame exceeds SETTINGS_MAX_FRAME_SIZE 16384", AT)
    ]


def test_two_sides_waiting_for_each_other_stop_waiting_in_the_same_call() -> None:
    reader = _Reader()
    assert _client(_head(DATA, 0, 1, 16_385), reader) == []
    assert _server(b"", reader) == []  # the client's frame still waits: the server may go on
    # The server's frame over the bound waits for the client's SETTINGS: neither can move, so
    # the client's frame is refused at once; its side lost, the server's bound is the widest.
    assert _report(reader.observe(S2C, _head(0xFA, 0, 0, 16_385))) == [
        _error(C2S, FRAME_SIZE, "a 16385-byte frame exceeds SETTINGS_MAX_FRAME_SIZE 16384", AT)
    ]
    assert _report(reader.observe(S2C, bytes(16_385))) == []


def test_the_other_side_lost_to_an_error_releases_a_frame_waiting_for_its_settings() -> None:
    opened = _frame(HEADERS, END_HEADERS, 1, _request())
    big = _frame(DATA, 0, 1, b"d" * 16_385)
    reader = _Reader()
    assert _client(opened + big, reader) == [("event", C2S, "request", AT, AT + len(opened), 0)]
    assert reader.calls == [("opened", 0, b"/follow")]
    assert _report(reader.observe(S2C, _frame(PING, 0, 0, bytes(8)))) == [
        _error(S2C, PROTOCOL, "the first frame must be SETTINGS", 0)
    ]
    assert reader.calls[1:] == [("data", C2S, 0, b"d" * 16_385, AT + len(opened) + 9)]


def test_server_frames_wait_for_the_client_up_to_4_mib() -> None:
    """The server's HEADERS on a client stream not opened yet are held back while at most 4 MiB
    wait behind them; one byte more and they are handled (here: an idle stream)."""
    answer = _frame(HEADERS, END_HEADERS, 1, b"\x88")
    fill = bytearray(answer)
    while len(fill) < 4 * 1024 * 1024:
        size = min(16_384, 4 * 1024 * 1024 - len(fill) - 9)
        fill += _frame(DATA, 0, 1, bytes(size))
    assert len(fill) == 4 * 1024 * 1024
    reader = _Reader()
    assert _server(bytes(fill), reader) == []
    assert _report(reader.observe(S2C, b"\x00")) == [
        _error(S2C, PROTOCOL, "HEADERS on idle stream 1", len(SETTINGS))
    ]


def test_a_closed_server_side_still_waits_for_the_client_and_takes_no_more_bytes() -> None:
    reader = _Reader()
    answer = _frame(HEADERS, END_HEADERS, 1, b"\x88")  # :status 200
    assert _server(answer, reader) == []
    assert reader.close(S2C) == []  # held back, not "closed inside a frame"
    late = _frame(DATA, END_STREAM, 1, b"late")
    assert reader.observe(S2C, late) == []  # after the close: never decoded
    request = _frame(HEADERS, END_HEADERS | END_STREAM, 1, _request())
    assert _client(request, reader) == [("event", C2S, "request", AT, AT + len(request), 0)]
    assert reader.calls == [
        ("opened", 0, b"/follow"),
        ("ended", C2S, 0, AT + len(request)),
        ("response", 0, 200, []),
    ]
    assert reader.close(C2S) == []


# -- gaps ------------------------------------------------------------------------------------------


def test_a_gap_starts_after_every_byte_observed_in_its_direction() -> None:
    reader = _Reader()
    reader.observe(C2S, PREFACE)
    reader.observe(C2S, b"")
    reader.observe(C2S, SETTINGS[:4])
    reader.observe(C2S, SETTINGS[4:])
    reader.observe(S2C, SETTINGS)
    assert _report(reader.gap(C2S, 7)) == [("gap", C2S, AT, 7, False)]
    assert reader.gap(C2S, 7) == []  # the direction is abandoned
    assert reader.observe(C2S, SETTINGS) == []
