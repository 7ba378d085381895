"""The HTTP/2 Observer: S2S sessions decoded from both directions of captured HTTP/2 traffic.

The traffic is written by ``h2`` (python-hyper): a client and a server ``H2Connection`` talk to
each other in memory, and the bytes each one writes are what a capture would hold. Frames
``h2`` will not write (padded HEADERS, broken framing) are built with ``hyperframe`` and
``hpack``, its own building blocks.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import h2.config
import h2.connection
import h2.settings
import hpack
import pytest
from hyperframe.frame import ContinuationFrame, DataFrame, HeadersFrame, SettingsFrame
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import Direction, Role, s2s
from s3p_codec._core import Observed, ObservedError, ObservedGap
from s3p_codec._core import Observer as ObserverProtocol
from s3p_codec._core.h2input import MAX_RESET_STREAMS, PREFACE, Http2ErrorCode
from s3p_codec.s2s._observer_h2 import Http2Observer
from tests.observer_support import Damage, damaged_decoding, damages, interleaved, pieces

C2S, S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
POS = s2s.StreamPosition
Headers = list[tuple[bytes, bytes]]


def _request_headers(path: bytes, method: bytes = b"POST", extra: Headers | None = None) -> Headers:
    return [
        (b":method", method), (b":scheme", b"http"), (b":authority", b"127.0.0.1"),
        (b":path", path), (b"content-type", b"s2s/proto"), (b"accept", b"s2s/proto"),
        (b"authorization", b"Bearer t"), (b"s2-basin", b"b"), *(extra or []),
    ]  # fmt: skip


APPEND = _request_headers(b"/v1/streams/s/records")
READ = _request_headers(b"/v1/streams/s/records?seq_num=0", b"GET")
OK = [(b":status", b"200"), (b"content-type", b"s2s/proto")]
APPEND_REQUEST = s2s.SessionRequest(s2s.Session.APPEND, "s", basin="b", token="t")
READ_REQUEST = s2s.SessionRequest(
    s2s.Session.READ, "s", basin="b", token="t", query=s2s.ReadQuery(seq_num=0)
)
INPUTS = [
    s2s.AppendInput((s2s.AppendRecord(b"hello"), s2s.AppendRecord(b"world"))),
    s2s.AppendInput((s2s.AppendRecord(b"x" * 300),)),
]
ACKS = [
    s2s.AppendAck(POS(0, 7), POS(2, 7), POS(2, 7)),
    s2s.AppendAck(POS(2, 8), POS(3, 8), POS(3, 8)),
]
BATCH = s2s.ReadBatch((s2s.SequencedRecord(0, 7, b"hello"),), tail=POS(1, 7))


def _frames(role: Role, session: s2s.Session, events: Sequence[s2s.Event]) -> list[bytes]:
    writer = s2s.Connection(role, session)
    if role is Role.SERVER and session is s2s.Session.APPEND:
        writer.receive_data(b"".join(_frames(Role.CLIENT, session, INPUTS)))
        list(writer.events())
    return [writer.send(event) for event in events]


class Wire:
    """An h2 client and server in memory; ``c2s``/``s2c`` hold every byte each one wrote."""

    def __init__(self, server_settings: dict[int, int] | None = None) -> None:
        self.client = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding=None)
        )
        self.server = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding=None)
        )
        self.c2s = bytearray()
        self.s2c = bytearray()
        self.client.initiate_connection()
        self.server.initiate_connection()
        if server_settings:
            self.server.update_settings(server_settings)
        self.pump()

    def pump(self) -> None:
        """Deliver everything both sides wrote, until neither has more to say."""
        while True:
            a, b = self.client.data_to_send(), self.server.data_to_send()
            if not a and not b:
                return
            self.c2s += a
            self.s2c += b
            if a:
                self.server.receive_data(a)
            if b:
                self.client.receive_data(b)

    def client_does(self, action: Callable[[h2.connection.H2Connection], object]) -> range:
        """Run ``action`` on the client; the byte range its frames take in ``c2s``."""
        self.pump()
        start = len(self.c2s)
        action(self.client)
        sent = self.client.data_to_send()
        self.c2s += sent
        self.server.receive_data(sent)
        self.pump()
        return range(start, start + len(sent))

    def server_does(self, action: Callable[[h2.connection.H2Connection], object]) -> range:
        self.pump()
        start = len(self.s2c)
        action(self.server)
        sent = self.server.data_to_send()
        self.s2c += sent
        self.client.receive_data(sent)
        self.pump()
        return range(start, start + len(sent))


def _outputs(c2s: bytes, s2c: bytes, observer: object | None = None) -> list[object]:
    obs = observer if observer is not None else s2s.Observer()
    assert isinstance(obs, s2s.Observer | Http2Observer)
    return [*obs.observe(C2S, c2s), *obs.observe(S2C, s2c), *obs.close(C2S), *obs.close(S2C)]


def _observed(
    outputs: Sequence[object], direction: Direction | None = None
) -> list[Observed[object]]:
    return [o for o in outputs if isinstance(o, Observed) and direction in (None, o.direction)]


def _append_session(wire: Wire, sid: int) -> dict[str, object]:
    """One append session on stream ``sid``: request, two inputs, response, two acks; the
    expected events and the byte ranges each one must report."""
    head = wire.client_does(lambda c: c.send_headers(sid, APPEND))
    inputs = _frames(Role.CLIENT, s2s.Session.APPEND, INPUTS)
    ranges_in = [
        wire.client_does(lambda c, f=f, last=i == 1: c.send_data(sid, f, last))
        for i, f in enumerate(inputs)
    ]
    response = wire.server_does(lambda s: s.send_headers(sid, OK))
    acks = _frames(Role.SERVER, s2s.Session.APPEND, ACKS)
    ranges_ack = [
        wire.server_does(lambda s, f=f, last=i == 1: s.send_data(sid, f, last))
        for i, f in enumerate(acks)
    ]
    return {
        C2S: [(APPEND_REQUEST, head.start, head.stop)]
        + [(e, r.start + 9, r.stop) for e, r in zip(INPUTS, ranges_in, strict=True)],
        S2C: [(s2s.SessionResponse(), response.start, response.stop)]
        + [(e, r.start + 9, r.stop) for e, r in zip(ACKS, ranges_ack, strict=True)],
    }


def _triples(outputs: Sequence[object], direction: Direction) -> list[tuple[object, int, int]]:
    return [(o.event, o.start, o.end) for o in _observed(outputs, direction)]


# -- decoding ---------------------------------------------------------------------------------


def test_satisfies_the_observer_protocol() -> None:
    assert isinstance(Http2Observer(), ObserverProtocol)


def test_append_session_decodes_to_the_events_and_their_exact_byte_ranges() -> None:
    wire = Wire()
    expected = _append_session(wire, 1)
    outputs = _outputs(bytes(wire.c2s), bytes(wire.s2c))
    assert all(isinstance(o, Observed) for o in outputs)
    assert _triples(outputs, C2S) == expected[C2S]
    assert _triples(outputs, S2C) == expected[S2C]
    assert {o.pair_id for o in _observed(outputs)} == {0}


def test_the_http2_observer_and_s2s_observer_agree() -> None:
    wire = Wire()
    _append_session(wire, 1)
    direct = _outputs(bytes(wire.c2s), bytes(wire.s2c), Http2Observer())
    assert _outputs(bytes(wire.c2s), bytes(wire.s2c)) == direct


@pytest.mark.parametrize("cut", [0.3, 0.5, 0.8])
def test_a_snapshot_taken_mid_connection_decodes_on_alike(cut: float) -> None:
    # The snapshot holds the frame readers, the hpack decoders' tables and the open sessions;
    # restored, it decodes the rest as the Observer it was taken from does.
    wire, _ = _multiplexed()
    c2s, s2c = bytes(wire.c2s), bytes(wire.s2c)
    at_c, at_s = int(len(c2s) * cut), int(len(s2c) * cut)

    def second_half(observer: s2s.Observer) -> list[object]:
        out = [*observer.observe(C2S, c2s[at_c:]), *observer.observe(S2C, s2c[at_s:])]
        return [*out, *observer.close(C2S), *observer.close(S2C)]

    observer = s2s.Observer()
    before = [*observer.observe(C2S, c2s[:at_c]), *observer.observe(S2C, s2c[:at_s])]
    restored = second_half(s2s.Observer.restore(observer.snapshot()))
    assert restored == second_half(observer)
    assert len(_observed(before + restored)) == 10  # every event of both sessions


def _multiplexed() -> tuple[Wire, list[object]]:
    """An append session (stream 1) and a read session (stream 3) whose frames interleave."""
    wire = Wire()
    wire.client_does(lambda c: c.send_headers(1, APPEND))
    wire.client_does(lambda c: c.send_headers(3, READ, end_stream=True))
    inputs = _frames(Role.CLIENT, s2s.Session.APPEND, INPUTS)
    wire.client_does(lambda c: c.send_data(1, inputs[0]))
    wire.server_does(lambda s: s.send_headers(3, OK))
    wire.server_does(lambda s: s.send_headers(1, OK))
    batches = _frames(Role.SERVER, s2s.Session.READ, [BATCH, s2s.Heartbeat(POS(1, 9))])
    acks = _frames(Role.SERVER, s2s.Session.APPEND, ACKS)
    wire.server_does(lambda s: s.send_data(3, batches[0]))
    wire.server_does(lambda s: s.send_data(1, acks[0]))
    wire.client_does(lambda c: c.send_data(1, inputs[1], end_stream=True))
    wire.server_does(lambda s: s.send_data(1, acks[1], end_stream=True))
    wire.server_does(lambda s: s.send_data(3, batches[1], end_stream=True))
    return wire, _outputs(bytes(wire.c2s), bytes(wire.s2c))


def test_multiplexed_sessions_get_one_pair_id_per_stream() -> None:
    _, outputs = _multiplexed()
    got = [(o.direction, o.pair_id, o.event) for o in _observed(outputs)]
    assert got == [
        (C2S, 0, APPEND_REQUEST), (C2S, 1, READ_REQUEST), (C2S, 0, INPUTS[0]), (C2S, 0, INPUTS[1]),
        (S2C, 1, s2s.SessionResponse()), (S2C, 0, s2s.SessionResponse()), (S2C, 1, BATCH),
        (S2C, 0, ACKS[0]), (S2C, 0, ACKS[1]), (S2C, 1, s2s.Heartbeat(POS(1, 9))),
    ]  # fmt: skip


@given(
    cuts=st.lists(st.integers(min_value=0, max_value=1 << 16), max_size=12),
    picks=st.lists(st.booleans(), max_size=40),
    one_byte=st.booleans(),
)
def test_any_chunking_and_interleaving_gives_the_same_output(
    cuts: list[int], picks: list[bool], one_byte: bool
) -> None:
    wire, whole = _multiplexed()
    c2s, s2c = bytes(wire.c2s), bytes(wire.s2c)
    up = [c2s[i : i + 1] for i in range(len(c2s))] if one_byte else pieces(c2s, cuts)
    observer = s2s.Observer()
    outputs = interleaved(observer, up, pieces(s2c, cuts[::-1]), picks)
    outputs += [*observer.close(C2S), *observer.close(S2C)]
    # Each direction's records, offsets and pair ids included, do not depend on the cuts or on
    # how the directions interleave.
    for direction in (C2S, S2C):
        assert [o for o in outputs if o.direction is direction] == [  # type: ignore[attr-defined]
            o
            for o in whole
            if o.direction is direction  # type: ignore[attr-defined]
        ]


def test_server_bytes_fed_before_the_client_bytes_wait_for_them() -> None:
    wire, whole = _multiplexed()
    observer = s2s.Observer()
    outputs = [
        *observer.observe(S2C, bytes(wire.s2c)),
        *observer.observe(C2S, bytes(wire.c2s)),
        *observer.close(C2S),
        *observer.close(S2C),
    ]
    assert sorted(map(repr, outputs)) == sorted(map(repr, whole))


def test_hpack_dynamic_table_runs_across_streams() -> None:
    wire = Wire()
    first = wire.client_does(lambda c: c.send_headers(1, APPEND))
    second = wire.client_does(lambda c: c.send_headers(3, READ, end_stream=True))
    third = wire.client_does(lambda c: c.send_headers(5, APPEND))
    # The later blocks refer to entries the first one added to the dynamic table.
    assert len(third) < len(first) - 40
    outputs = _outputs(bytes(wire.c2s), bytes(wire.s2c))
    assert _triples(outputs, C2S) == [
        (APPEND_REQUEST, first.start, first.stop),
        (READ_REQUEST, second.start, second.stop),
        (APPEND_REQUEST, third.start, third.stop),
    ]
    assert [o.pair_id for o in _observed(outputs)] == [0, 1, 2]


def test_a_header_block_continued_in_continuation_frames() -> None:
    wire = Wire()
    big = [(b"x-big", b"v" * 20_000)]  # over the 16,384-byte frame limit: h2 continues it
    head = wire.client_does(lambda c: c.send_headers(1, _request_headers(APPEND[3][1], extra=big)))
    assert wire.c2s[head.start + 3] == 0x1  # HEADERS
    continuation = head.start + 9 + int.from_bytes(wire.c2s[head.start : head.start + 3], "big")
    assert wire.c2s[continuation + 3] == 0x9  # CONTINUATION
    inputs = _frames(Role.CLIENT, s2s.Session.APPEND, INPUTS[:1])
    data = wire.client_does(lambda c: c.send_data(1, inputs[0], end_stream=True))
    outputs = _outputs(bytes(wire.c2s), bytes(wire.s2c))
    assert _triples(outputs, C2S) == [
        (APPEND_REQUEST, head.start, head.stop),
        (INPUTS[0], data.start + 9, data.stop),
    ]


def _handmade(frames: Sequence[bytes]) -> bytes:
    """A client's side written frame by frame: the preface, SETTINGS, then ``frames``."""
    return PREFACE + SettingsFrame(0).serialize() + b"".join(frames)


def test_padding_and_priority_fields_are_stripped() -> None:
    block = hpack.Encoder().encode(APPEND)
    headers = HeadersFrame(1, block, pad_length=7, depends_on=0, stream_weight=16)
    headers.flags.add("END_HEADERS")
    headers.flags.add("PADDED")
    headers.flags.add("PRIORITY")
    frame = _frames(Role.CLIENT, s2s.Session.APPEND, INPUTS[:1])[0]
    data = DataFrame(1, frame, pad_length=200)
    data.flags.add("PADDED")
    data.flags.add("END_STREAM")
    head, body = headers.serialize(), data.serialize()
    c2s = _handmade([head, body])
    start = len(c2s) - len(body)
    outputs = _outputs(c2s, SettingsFrame(0).serialize())
    assert _triples(outputs, C2S) == [
        (APPEND_REQUEST, start - len(head), start),
        (INPUTS[0], start + 10, start + 10 + len(frame)),  # after the header and pad length
    ]


def test_an_s2s_frame_split_across_data_frames_spans_from_its_first_to_its_last_byte() -> None:
    wire = Wire()
    wire.client_does(lambda c: c.send_headers(1, APPEND))
    wire.client_does(lambda c: c.send_headers(3, READ, end_stream=True))
    frame = _frames(Role.CLIENT, s2s.Session.APPEND, INPUTS[1:])[0]
    first = wire.client_does(lambda c: c.send_data(1, frame[:2]))  # inside the length prefix
    wire.client_does(lambda c: c.ping(b"12345678"))
    wire.client_does(lambda c: c.send_data(1, frame[2:100], pad_length=30))
    last = wire.client_does(lambda c: c.send_data(1, frame[100:], end_stream=True))
    outputs = _outputs(bytes(wire.c2s), bytes(wire.s2c))
    (append_input,) = [o for o in _observed(outputs, C2S) if o.event == INPUTS[1]]
    assert (append_input.start, append_input.end) == (first.start + 9, last.stop)


def test_rst_stream_mid_session_drops_the_stream_and_the_connection_goes_on() -> None:
    wire = Wire()
    wire.client_does(lambda c: c.send_headers(1, READ, end_stream=True))
    wire.server_does(lambda s: s.send_headers(1, OK))
    batch = _frames(Role.SERVER, s2s.Session.READ, [BATCH])[0]
    wire.server_does(lambda s: s.send_data(1, batch))
    wire.server_does(lambda s: s.send_data(1, batch[:5]))  # half a frame, then the reset
    wire.client_does(lambda c: c.reset_stream(1, 8))  # CANCEL
    wire.client_does(lambda c: c.send_headers(3, APPEND))
    inputs = _frames(Role.CLIENT, s2s.Session.APPEND, INPUTS[:1])
    wire.client_does(lambda c: c.send_data(3, inputs[0], end_stream=True))
    outputs = _outputs(bytes(wire.c2s), bytes(wire.s2c))
    assert not [o for o in outputs if not isinstance(o, Observed)]
    assert [(o.pair_id, o.event) for o in _observed(outputs)] == [
        (0, READ_REQUEST), (1, APPEND_REQUEST), (1, INPUTS[0]),
        (0, s2s.SessionResponse()), (0, BATCH),
    ]  # fmt: skip
    # The reset ends the client's side only: the server's frames sent before it learnt of the
    # reset decode whichever direction is fed first.
    observer = s2s.Observer()
    later = [*observer.observe(S2C, bytes(wire.s2c)), *observer.observe(C2S, bytes(wire.c2s))]
    assert sorted(map(repr, later)) == sorted(map(repr, outputs))


def test_streams_reset_one_way_are_forgotten_past_a_bound() -> None:
    encoder, replies = hpack.Encoder(), hpack.Encoder()
    count = MAX_RESET_STREAMS + 2
    sids = range(1, 2 * count, 2)
    c2s = _handmade([
        _frame(1, 5, sid, encoder.encode(READ)) + _frame(3, 0, sid, b"\x00\x00\x00\x08")
        for sid in sids
    ])  # fmt: skip
    # The server answers every session, then (too late) sends one batch on each.
    batch = _frames(Role.SERVER, s2s.Session.READ, [BATCH])[0]
    s2c = SettingsFrame(0).serialize() + b"".join(
        _frame(1, 4, sid, replies.encode(OK)) for sid in sids
    )
    s2c += b"".join(_frame(0, 0, sid, batch) for sid in sids)
    outputs = _outputs(c2s, s2c)
    assert not [o for o in outputs if not isinstance(o, Observed)]
    batches = [o.pair_id for o in _observed(outputs, S2C) if o.event == BATCH]
    assert batches == list(range(count - MAX_RESET_STREAMS, count))  # the oldest two forgotten


def test_error_response_and_terminal_frame() -> None:
    wire = Wire()
    wire.client_does(lambda c: c.send_headers(1, READ, end_stream=True))
    wire.client_does(lambda c: c.send_headers(3, READ, end_stream=True))
    refused = wire.server_does(
        lambda s: s.send_headers(1, [(b":status", b"404"), (b"content-type", b"application/json")])
    )
    end = wire.server_does(
        lambda s: s.send_data(1, b'{"code":"stream_not_found","message":"no s"}', end_stream=True)
    )
    wire.server_does(lambda s: s.send_headers(3, OK))
    terminal = s2s.Terminal(status=503, code="server_draining")
    frames = _frames(Role.SERVER, s2s.Session.READ, [terminal])
    wire.server_does(lambda s: s.send_data(3, frames[0], end_stream=True))
    outputs = _outputs(bytes(wire.c2s), bytes(wire.s2c))
    received = _observed(outputs, S2C)
    assert [(o.pair_id, o.event) for o in received] == [
        (0, s2s.ErrorResponse(404, "stream_not_found", "no s")),
        (1, s2s.SessionResponse()),
        (1, terminal),
    ]
    assert (received[0].start, received[0].end) == (refused.start, end.stop)


def test_larger_max_frame_size_is_honoured_and_exceeding_it_is_a_frame_size_error() -> None:
    wire = Wire(server_settings={h2.settings.SettingCodes.MAX_FRAME_SIZE: 65_536})
    wire.client_does(lambda c: c.send_headers(1, APPEND))
    big = s2s.AppendInput((s2s.AppendRecord(b"y" * 40_000),))
    frame = _frames(Role.CLIENT, s2s.Session.APPEND, [big])[0]
    data = wire.client_does(lambda c: c.send_data(1, frame, end_stream=True))
    assert len(data) == 9 + len(frame)  # one DATA frame over 16,384 bytes
    outputs = _outputs(bytes(wire.c2s), bytes(wire.s2c))
    assert [o.event for o in _observed(outputs, C2S)] == [APPEND_REQUEST, big]
    # Without the server's setting, the same frame is refused from its 9-byte header alone,
    # once the server's side can no longer raise the bound.
    observer = Http2Observer()
    out = [*observer.observe(S2C, SettingsFrame(0).serialize())]
    out += observer.observe(C2S, bytes(wire.c2s[: data.start + 9]))
    assert [o for o in out if isinstance(o, ObservedError)] == []
    out += observer.close(S2C)
    (error,) = [o for o in out if isinstance(o, ObservedError)]
    assert error.error.code is Http2ErrorCode.FRAME_SIZE_ERROR
    assert (error.start, error.resynchronized) == (data.start, False)


# -- errors, gaps and bounds ------------------------------------------------------------------


def _frame(kind: int, flags: int, sid: int, payload: bytes, length: int | None = None) -> bytes:
    size = len(payload) if length is None else length
    return size.to_bytes(3, "big") + bytes([kind, flags]) + sid.to_bytes(4, "big") + payload


GOOD_BLOCK = hpack.Encoder().encode(APPEND)
BROKEN = {
    "data on stream 0": (_frame(0, 0, 0, b"x"), Http2ErrorCode.PROTOCOL_ERROR),
    "frame over the size limit": (
        _frame(0, 0, 1, b"", length=16_385), Http2ErrorCode.FRAME_SIZE_ERROR,
    ),
    "settings on a stream": (_frame(4, 0, 1, b""), Http2ErrorCode.PROTOCOL_ERROR),
    "settings of 5 bytes": (_frame(4, 0, 0, b"\x00" * 5), Http2ErrorCode.FRAME_SIZE_ERROR),
    "settings ack with a payload": (_frame(4, 1, 0, b"\x00" * 6), Http2ErrorCode.FRAME_SIZE_ERROR),
    "max frame size too small": (
        _frame(4, 0, 0, b"\x00\x05" + (100).to_bytes(4, "big")), Http2ErrorCode.PROTOCOL_ERROR,
    ),
    "enable push 2": (_frame(4, 0, 0, b"\x00\x02\x00\x00\x00\x02"), Http2ErrorCode.PROTOCOL_ERROR),
    "window too large": (
        _frame(4, 0, 0, b"\x00\x04\x80\x00\x00\x00"), Http2ErrorCode.FLOW_CONTROL_ERROR,
    ),
    "ping of 7 bytes": (_frame(6, 0, 0, b"1234567"), Http2ErrorCode.FRAME_SIZE_ERROR),
    "rst_stream of 3 bytes": (_frame(3, 0, 1, b"\x00\x00\x08"), Http2ErrorCode.FRAME_SIZE_ERROR),
    "goaway of 4 bytes": (_frame(7, 0, 0, b"\x00" * 4), Http2ErrorCode.FRAME_SIZE_ERROR),
    "window update of 0": (_frame(8, 0, 0, b"\x00" * 4), Http2ErrorCode.PROTOCOL_ERROR),
    "continuation alone": (_frame(9, 4, 1, b""), Http2ErrorCode.PROTOCOL_ERROR),
    "padding longer than the frame": (_frame(0, 8, 1, b"\x05abc"), Http2ErrorCode.PROTOCOL_ERROR),
    "headers then data": (
        _frame(1, 0, 1, GOOD_BLOCK[:5]) + _frame(0, 0, 1, b""), Http2ErrorCode.PROTOCOL_ERROR,
    ),
    "bad hpack": (_frame(1, 4, 1, b"\xff\xff\xff\xff\x0f"), Http2ErrorCode.COMPRESSION_ERROR),
    "headers on an even stream": (_frame(1, 4, 2, GOOD_BLOCK), Http2ErrorCode.PROTOCOL_ERROR),
    "push promise from a client": (_frame(5, 4, 1, b"\x00" * 4), Http2ErrorCode.PROTOCOL_ERROR),
    "data on an idle stream": (_frame(0, 0, 7, b"x"), Http2ErrorCode.PROTOCOL_ERROR),
}  # fmt: skip


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_framing_is_a_typed_error_at_the_frame_and_the_direction_is_abandoned(
    name: str,
) -> None:
    frames, code = BROKEN[name]
    start = len(_handmade([]))
    if name == "headers then data":
        start += 9 + 5  # the DATA frame breaks the header block, not the HEADERS before it
    observer = Http2Observer()
    # The server's side is over: no SETTINGS of its own can still raise the frame size bound.
    assert observer.observe(S2C, SettingsFrame(0).serialize()) == observer.close(S2C) == []
    out = observer.observe(C2S, _handmade([frames]))
    assert out == [ObservedError(C2S, out[0].error, start, resynchronized=False)]  # type: ignore[union-attr]
    assert out[0].error.code is code  # type: ignore[union-attr]
    assert observer.observe(C2S, _frame(4, 0, 0, b"")) == []
    assert observer.close(C2S) == []


def test_a_wrong_preface_or_first_frame_is_a_protocol_error() -> None:
    for c2s, at in (
        (b"PRI * HTTP/2.0\r\n\r\nXX", 0),
        (PREFACE + _frame(6, 0, 0, b"12345678"), len(PREFACE)),
    ):
        out = Http2Observer().observe(C2S, c2s)
        assert [(type(o), o.start) for o in out] == [(ObservedError, at)]  # type: ignore[union-attr]
        assert out[0].error.code is Http2ErrorCode.PROTOCOL_ERROR  # type: ignore[union-attr]


def test_closing_inside_a_frame_or_a_header_block_is_an_error() -> None:
    for tail in (_frame(0, 0, 1, b"abc")[:-1], _frame(1, 0, 1, GOOD_BLOCK)):
        observer = Http2Observer()
        assert observer.observe(C2S, _handmade([tail])) == []
        (error,) = observer.close(C2S)
        assert isinstance(error, ObservedError)
        assert error.error.code is Http2ErrorCode.PROTOCOL_ERROR
        assert error.start == len(_handmade([]))


def test_a_broken_s2s_frame_is_a_stream_error_and_other_streams_decode_on() -> None:
    wire = Wire()
    wire.client_does(lambda c: c.send_headers(1, APPEND))
    wire.client_does(lambda c: c.send_headers(3, APPEND))
    bad = wire.client_does(lambda c: c.send_data(1, b"\x00\x00\x00\x00"))  # S2S length 0
    inputs = _frames(Role.CLIENT, s2s.Session.APPEND, INPUTS[:1])
    wire.client_does(lambda c: c.send_data(1, inputs[0], end_stream=True))  # passed over
    wire.client_does(lambda c: c.send_data(3, inputs[0], end_stream=True))
    outputs = _outputs(bytes(wire.c2s), bytes(wire.s2c))
    errors = [o for o in outputs if isinstance(o, ObservedError)]
    assert errors == [ObservedError(C2S, errors[0].error, bad.start + 9, resynchronized=True)]
    assert errors[0].error.code is s2s.ErrorCode.BAD_FRAME
    assert [(o.pair_id, o.event) for o in _observed(outputs)] == [
        (0, APPEND_REQUEST), (1, APPEND_REQUEST), (1, INPUTS[0]),
    ]  # fmt: skip


def test_a_gap_abandons_that_direction_only() -> None:
    wire = Wire()
    wire.client_does(lambda c: c.send_headers(1, READ, end_stream=True))
    cut = len(wire.c2s)
    wire.client_does(lambda c: c.send_headers(3, READ, end_stream=True))
    wire.server_does(lambda s: s.send_headers(1, OK))
    batch = _frames(Role.SERVER, s2s.Session.READ, [BATCH])[0]
    wire.server_does(lambda s: s.send_data(1, batch, end_stream=True))
    observer = s2s.Observer()
    outputs = [
        *observer.observe(C2S, bytes(wire.c2s[:cut])),
        *observer.gap(C2S, 10),
        *observer.observe(C2S, bytes(wire.c2s[cut + 10 :])),
        *observer.gap(C2S, 5),
        *observer.observe(S2C, bytes(wire.s2c)),
    ]
    assert [o for o in outputs if isinstance(o, ObservedGap)] == [ObservedGap(C2S, cut, 10)]
    assert [o.event for o in _observed(outputs)] == [READ_REQUEST, s2s.SessionResponse(), BATCH]


def test_header_blocks_and_open_sessions_are_bounded() -> None:
    block = hpack.Encoder().encode(APPEND)
    frames = [
        _frame(1, 0, 1, block[:10]),
        _frame(9, 0, 1, block[10:20]),
        _frame(9, 4, 1, block[20:]),
    ]
    out = Http2Observer(max_header_block=15).observe(C2S, _handmade(frames))
    assert [o.error.code for o in out] == [Http2ErrorCode.ENHANCE_YOUR_CALM]  # type: ignore[union-attr]
    assert out[0].start == len(_handmade(frames[:1]))  # refused from the CONTINUATION's header
    encoder = hpack.Encoder()
    two = [_frame(1, 4, sid, encoder.encode(APPEND)) for sid in (1, 3)]
    out = Http2Observer(max_sessions=1).observe(C2S, _handmade(two))
    assert [type(o) for o in out] == [Observed, ObservedError]
    assert out[1].error.code is Http2ErrorCode.ENHANCE_YOUR_CALM  # type: ignore[union-attr]
    assert out[1].resynchronized  # type: ignore[union-attr]


def test_without_hpack_http2_is_reported_not_crashed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "s3p_codec.s2s._observer_h2")
    monkeypatch.delitem(sys.modules, "s3p_codec._core.h2input", raising=False)
    monkeypatch.setitem(sys.modules, "hpack", None)  # makes ``import hpack`` fail
    observer = s2s.Observer()
    out = observer.observe(C2S, _handmade([]))
    assert [(type(o), o.direction) for o in out] == [(ObservedError, C2S), (ObservedError, S2C)]
    assert out[0].error.code is s2s.ErrorCode.INTERNAL  # type: ignore[union-attr]
    assert observer.observe(S2C, SettingsFrame(0).serialize()) == []


def test_the_client_preface_is_recognised_one_byte_at_a_time() -> None:
    wire = Wire()
    _append_session(wire, 1)
    observer = s2s.Observer()
    outputs = [o for i in range(len(wire.c2s)) for o in observer.observe(C2S, wire.c2s[i : i + 1])]
    assert [o.event for o in _observed(outputs)] == [APPEND_REQUEST, *INPUTS]


def test_a_client_closing_inside_the_preface_is_an_http2_error() -> None:
    observer = s2s.Observer()
    assert observer.observe(C2S, PREFACE[:10]) == []
    (error,) = observer.close(C2S)
    assert isinstance(error, ObservedError)
    assert (error.error.code, error.start) == (Http2ErrorCode.PROTOCOL_ERROR, 0)


def test_without_client_bytes_a_server_opening_with_settings_is_http2() -> None:
    wire = Wire()
    _append_session(wire, 1)
    observer = s2s.Observer()
    assert observer.observe(S2C, bytes(wire.s2c)) == []
    out = observer.gap(C2S, len(wire.c2s))
    assert out[0] == ObservedGap(C2S, 0, len(wire.c2s))
    assert not [o for o in out[1:] if not isinstance(o, Observed | ObservedError)]


# -- garbage ----------------------------------------------------------------------------------


@given(data=st.binary(max_size=400), direction=st.sampled_from([C2S, S2C]))
def test_random_bytes_after_the_preface_give_events_or_typed_errors_only(
    data: bytes, direction: Direction
) -> None:
    observer = s2s.Observer()
    outputs = [*observer.observe(C2S, _handmade([])), *observer.observe(S2C, b"")]
    outputs += [*observer.observe(direction, data), *observer.close(C2S), *observer.close(S2C)]
    for out in outputs:
        assert isinstance(out, Observed | ObservedError)


_FRAME_KINDS = st.integers(min_value=0, max_value=11)
_FRAMES = st.lists(
    st.tuples(
        _FRAME_KINDS, st.integers(0, 255), st.sampled_from([0, 1, 2, 3, 5]), st.binary(max_size=40)
    ),
    max_size=12,
)


@given(c2s=_FRAMES, s2c=_FRAMES, block=st.binary(max_size=60))
def test_random_frames_and_header_blocks_give_events_or_typed_errors_only(
    c2s: list[tuple[int, int, int, bytes]], s2c: list[tuple[int, int, int, bytes]], block: bytes
) -> None:
    opening = [_frame(1, 4, 1, GOOD_BLOCK), _frame(1, 4, 3, block)]
    client = _handmade(opening + [_frame(*f) for f in c2s])
    server = SettingsFrame(0).serialize() + b"".join(_frame(*f) for f in s2c)
    for out in _outputs(client, server):
        assert isinstance(out, Observed | ObservedError)
        if isinstance(out, ObservedError):
            assert isinstance(out.error.code, Http2ErrorCode | s2s.ErrorCode)


_NAMES = st.sampled_from([
    b":method", b":path", b":status", b"content-type", b"accept", b"accept-encoding",
    b"authorization", b"s2-basin", b"content-encoding", b"x-other",
])  # fmt: skip
_VALUES = st.one_of(
    st.sampled_from([b"POST", b"GET", b"200", b"404", b"s2s/proto", b"zstd", b"Bearer t"]),
    st.sampled_from([b"/v1/streams/s/records", b"/v1/basins/b/streams/s/read"]).flatmap(
        lambda path: st.binary(max_size=12).map(lambda tail: path + tail)
    ),
    st.binary(max_size=20),
)
_HEADER_LISTS = st.lists(st.tuples(_NAMES, _VALUES), max_size=8)


@given(request=_HEADER_LISTS, response=_HEADER_LISTS, body=st.binary(max_size=30))
def test_any_request_and_response_heads_give_events_or_typed_errors_only(
    request: Headers, response: Headers, body: bytes
) -> None:
    client = _handmade([
        _frame(1, 4, 1, hpack.Encoder().encode(APPEND)),
        _frame(1, 4, 3, hpack.Encoder().encode(request)),  # a fresh table: literal fields
        _frame(0, 1, 3, body),
    ])  # fmt: skip
    encoder = hpack.Encoder()
    server = SettingsFrame(0).serialize() + b"".join(
        _frame(1, 4, sid, encoder.encode(response)) + _frame(0, 1, sid, body) for sid in (1, 3)
    )
    for out in _outputs(client, server):
        assert isinstance(out, Observed | ObservedError)


def test_error_code_numbers_are_those_of_the_rfc() -> None:
    import h2.errors

    for code in Http2ErrorCode:
        assert h2.errors.ErrorCodes(code.number).name == code.value


def test_continuation_frames_built_by_hand_decode_like_one_block() -> None:
    block = hpack.Encoder().encode(APPEND)
    head = HeadersFrame(1, block[:7])
    middle = ContinuationFrame(1, block[7:15])
    last = ContinuationFrame(1, block[15:])
    last.flags.add("END_HEADERS")
    c2s = _handmade([head.serialize(), middle.serialize(), last.serialize()])
    out = Http2Observer().observe(C2S, c2s)
    assert [(o.event, o.start, o.end) for o in _observed(out)] == [
        (APPEND_REQUEST, len(_handmade([])), len(c2s))
    ]


@given(damages(garbage=st.binary(max_size=8)))
def test_a_damaged_client_stream_decodes_the_same_in_any_chunking(damage: Damage) -> None:
    wire = Wire()
    _append_session(wire, 1)
    whole, split = damaged_decoding(Http2Observer, bytes(wire.c2s), damage)
    assert split == whole


# Server-shaped garbage: frame headers of the kinds a server sends (DATA, HEADERS, SETTINGS,
# WINDOW_UPDATE, RST_STREAM), whole or cut, on the open stream and on stream 0.
_SERVER_GARBAGE = st.binary(max_size=8) | st.sampled_from(
    [
        _frame(0, 0, 1, b"\x00\x00\x00\x00\x05"),
        _frame(1, 4, 1, b"\x88"),
        _frame(4, 0, 0, b""),
        _frame(4, 1, 0, b""),
        _frame(8, 0, 0, b"\x00\x00\x10\x00"),
        _frame(3, 0, 1, b"\x00\x00\x00\x08"),
        _frame(0, 1, 1, b"")[:5],
    ]
)


@given(damages(garbage=_SERVER_GARBAGE))
def test_a_damaged_server_stream_decodes_the_same_in_any_chunking(damage: Damage) -> None:
    wire, _ = _multiplexed()

    def make() -> Http2Observer:
        """An Observer that saw the client (server bytes wait for the streams they answer)."""
        observer = Http2Observer()
        observer.observe(C2S, bytes(wire.c2s))
        return observer

    whole, split = damaged_decoding(make, bytes(wire.s2c), damage, S2C)
    assert split == whole
