"""Hypothesis: every event round-trips, chunking never matters, garbage gives only our errors."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, Direction, RemoteProtocolError, Role, rustlog
from s3p_codec.testing.rustlog import request_for, requests, responses
from tests.rustlog.frames import BACKENDS

backends = st.sampled_from(BACKENDS)


@given(requests(), backends)
def test_every_request_round_trips(event: rustlog.Request, backend: str) -> None:
    server = rustlog.Connection(Role.SERVER, json=backend)
    server.receive_data(rustlog.Connection(Role.CLIENT, json=backend).send(event))
    assert server.next_event() == event
    assert server.next_event() is NEED_DATA


@given(responses(), backends)
def test_every_response_round_trips(event: rustlog.Response, backend: str) -> None:
    request = request_for(event)
    client = rustlog.Connection(Role.CLIENT, json=backend)
    server = rustlog.Connection(Role.SERVER, json=backend)
    server.receive_data(client.send(request))
    assert server.next_event() == request
    client.receive_data(server.send(event))
    assert client.next_event() == event
    assert client.state is rustlog.State.CONNECTED


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks, last = [], 0
    for point in [*points, len(data)]:
        chunks.append(data[last:point])
        last = point
    return [c for c in chunks if c]


@given(st.lists(requests(), min_size=1, max_size=5), st.lists(st.integers(0, 10_000)))
def test_any_chunking_of_a_request_stream_gives_the_same_events(
    events: list[rustlog.Request], cuts: list[int]
) -> None:
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    data = b"".join(client.send(e) for e in events)
    server = rustlog.Connection(Role.SERVER)
    got: list[object] = []
    for chunk in split(data, cuts):
        server.receive_data(chunk)
        got.extend(server.events())
    assert got == events


@given(st.lists(requests(), min_size=1, max_size=3))
def test_one_byte_at_a_time_gives_the_same_events(events: list[rustlog.Request]) -> None:
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    data = b"".join(client.send(e) for e in events)
    server = rustlog.Connection(Role.SERVER)
    got: list[object] = []
    for index in range(len(data)):
        server.receive_data(data[index : index + 1])
        got.extend(server.events())
    assert got == events


@given(st.lists(responses(), min_size=1, max_size=4), st.lists(st.integers(0, 10_000)))
def test_any_chunking_of_a_response_stream_gives_the_same_events(
    events: list[rustlog.Response], cuts: list[int]
) -> None:
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(b"".join(client.send(request_for(e)) for e in events))
    list(server.events())
    data = b"".join(server.send(e) for e in events)
    got: list[object] = []
    for chunk in split(data, cuts):
        client.receive_data(chunk)
        got.extend(client.events())
    assert got == events


def drain(conn: rustlog.Connection) -> None:
    for _ in range(50):
        try:
            if conn.next_event() is NEED_DATA:
                return
        except RemoteProtocolError as exc:
            error = exc
        else:
            continue
        assert isinstance(error.code, rustlog.ErrorCode)
        if error.fatal:
            assert conn.state is rustlog.State.ERROR
            return
        if conn.role is Role.SERVER:
            assert isinstance(error.reply, rustlog.Error)
            conn.send(error.reply)


@given(st.binary(max_size=300), backends, st.booleans())
def test_random_bytes_give_events_or_our_errors_only(data: bytes, backend: str, eof: bool) -> None:
    for role in Role:
        conn = rustlog.Connection(role, json=backend, pipelining=True)
        if role is Role.CLIENT:
            for _ in range(5):
                conn.send(rustlog.Ping())
        conn.receive_data(data)
        if eof:
            conn.receive_data(b"")
        drain(conn)


json_garbage = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
type_names = st.sampled_from(
    [cls.TYPE for cls in (*rustlog.REQUEST_TYPES, *rustlog.RESPONSE_TYPES)]
)


@given(type_names, st.dictionaries(st.sampled_from(
    ["topic", "partition", "records", "offset", "group", "group_id", "max_bytes", "code",
     "message", "details", "metrics", "next_offset", "success", "topics", "partitions",
     "partition_count", "base_offset", "record_count", "high_watermark", "name"]), json_garbage,
    max_size=6), backends)  # fmt: skip
def test_well_framed_json_with_garbage_fields_gives_events_or_recoverable_errors(
    name: str, fields: dict[str, object], backend: str
) -> None:
    import json

    payload = json.dumps({"type": name, **fields}).encode()
    data = len(payload).to_bytes(4, "big") + payload
    for role in Role:
        conn = rustlog.Connection(role, json=backend)
        if role is Role.CLIENT:
            conn.send(rustlog.MetricsFetch())
        conn.receive_data(data)
        error: RemoteProtocolError | None = None
        try:
            conn.next_event()
        except RemoteProtocolError as exc:
            error = exc
        if error is not None:
            assert isinstance(error.code, rustlog.ErrorCode)
            # A parsed JSON object with a string type is never a fatal error for a server;
            # a client also rejects a response that does not answer its request.
            assert not error.fatal or role is Role.CLIENT


@given(st.lists(st.tuples(requests(), responses()), min_size=1, max_size=4),
       st.lists(st.integers(0, 10_000)), st.lists(st.integers(0, 10_000)))  # fmt: skip
def test_observer_decodes_a_conversation_in_any_chunking(
    exchanges: list[tuple[rustlog.Request, rustlog.Response]], cuts_c: list[int], cuts_s: list[int]
) -> None:
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    server = rustlog.Connection(Role.SERVER)
    c2s = b""
    s2c = b""
    expected = []
    for request, response in exchanges:
        if not isinstance(response, rustlog.Error):
            request = request_for(response)
        c2s += client.send(request)
        expected.append((request, response))
    server.receive_data(c2s)
    list(server.events())
    for _, response in expected:
        s2c += server.send(response)
    observer = rustlog.Observer()
    out = []
    for chunk in split(c2s, cuts_c):
        out.extend(observer.observe(Direction.CLIENT_TO_SERVER, chunk))
    for chunk in split(s2c, cuts_s):
        out.extend(observer.observe(Direction.SERVER_TO_CLIENT, chunk))
    out.extend(observer.close(Direction.CLIENT_TO_SERVER))
    out.extend(observer.close(Direction.SERVER_TO_CLIENT))
    requests_seen = [o for o in out if o.direction is Direction.CLIENT_TO_SERVER]
    responses_seen = [o for o in out if o.direction is Direction.SERVER_TO_CLIENT]
    assert [o.event for o in requests_seen] == [r for r, _ in expected]  # type: ignore[union-attr]
    assert [o.event for o in responses_seen] == [r for _, r in expected]  # type: ignore[union-attr]
    assert [o.pair_id for o in responses_seen] == [o.pair_id for o in requests_seen]  # type: ignore[union-attr]


@given(st.binary(max_size=300), st.binary(max_size=300), st.lists(st.integers(0, 400)))
def test_observer_survives_random_bytes_and_gaps(c2s: bytes, s2c: bytes, gaps: list[int]) -> None:
    observer = rustlog.Observer()
    for direction, data in ((Direction.CLIENT_TO_SERVER, c2s), (Direction.SERVER_TO_CLIENT, s2c)):
        pieces = split(data, gaps)
        for index, piece in enumerate(pieces):
            observer.observe(direction, piece)
            if index % 2:
                observer.gap(direction, 1 + index)
        observer.close(direction)


def outcomes(role: Role, chunks: list[bytes]) -> list[object]:
    """Events and errors (code, fatal) a connection gives for ``chunks``, then EOF."""
    conn = rustlog.Connection(role, pipelining=True)
    if role is Role.CLIENT:
        for _ in range(6):
            conn.send(rustlog.Ping())
    out: list[object] = []
    for chunk in [*chunks, b""]:
        conn.receive_data(chunk)
        while True:
            try:
                event = conn.next_event()
            except RemoteProtocolError as exc:
                out.append((exc.code, exc.fatal))
                if exc.fatal:
                    return out
                if role is Role.SERVER:
                    conn.send(exc.reply)  # type: ignore[arg-type]
                continue
            if event is NEED_DATA:
                break
            out.append(event)
    return out


pieces = st.sampled_from(
    [b'\x00\x00\x00\x0f{"type":"Ping"}', b'\x00\x00\x00\x0f{"type":"Pong"}',
     b'\x00\x00\x00\x0e{"type":"Nop"}', b'\x00\x00\x00\x02{}', b"\x00\x00\x00\x01x",
     b"\x00\x00\x00\x00", b"\xff\xff\xff\xff", b'\x00\x00\x00\x10{"type":"Fetch"}']
)  # fmt: skip


@given(st.lists(pieces | st.binary(max_size=6), max_size=8), st.lists(st.integers(0, 500)))
def test_any_chunking_of_any_stream_gives_the_same_events_and_errors(
    parts: list[bytes], cuts: list[int]
) -> None:
    data = b"".join(parts)
    for role in Role:
        assert outcomes(role, split(data, cuts)) == outcomes(role, [data])


def test_feeding_a_large_frame_one_byte_at_a_time_stays_linear() -> None:
    import time

    big = rustlog.Connection(Role.CLIENT).send(rustlog.Produce("t", 0, (bytes(150_000),)))
    server = rustlog.Connection(Role.SERVER)
    began = time.perf_counter()
    for index in range(len(big)):
        server.receive_data(big[index : index + 1])
        assert server.next_event() is NEED_DATA or index == len(big) - 1
    # Quadratic rescanning of 200 kB would take minutes; linear parsing takes well under one.
    assert time.perf_counter() - began < 20
    assert server.state is rustlog.State.REQUEST_ACTIVE


@given(st.lists(pieces | st.binary(max_size=6), max_size=10), st.lists(st.integers(0, 500)))
def test_observer_accounts_for_every_byte(parts: list[bytes], cuts: list[int]) -> None:
    from s3p_codec._core import Observed, ObservedError

    data = b"".join(parts)
    observer = rustlog.Observer()
    out = []
    for chunk in split(data, cuts):
        out.extend(observer.observe(Direction.CLIENT_TO_SERVER, chunk))
    out.extend(observer.close(Direction.CLIENT_TO_SERVER))
    position = 0
    for record in out:
        assert record.start == position, (record, position)
        if isinstance(record, Observed):
            position = record.end
        else:
            assert isinstance(record, ObservedError)
            position = record.start + record.skipped
    assert position == len(data)
