"""Append and read session state machines, both ends."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, s2s
from s3p_codec._core import Connection as ConnectionProtocol
from s3p_codec.s2s._compression import Compression
from s3p_codec.testing import chunkings
from s3p_codec.testing.s2s import acks_for, append_inputs, positions, read_batches, terminals

APPEND, READ = s2s.Session.APPEND, s2s.Session.READ
POS = s2s.StreamPosition


def _input(count: int = 1, body: bytes = b"r") -> s2s.AppendInput:
    return s2s.AppendInput(tuple(s2s.AppendRecord(body) for _ in range(count)))


def _ack(start: int, count: int) -> s2s.AppendAck:
    return s2s.AppendAck(POS(start, 1), POS(start + count, 1), POS(start + count, 1))


def _drain(conn: s2s.Connection) -> list[s2s.Event]:
    return list(conn.events())


def test_satisfies_the_connection_protocol() -> None:
    assert isinstance(s2s.Connection(Role.CLIENT, APPEND), ConnectionProtocol)


# -- append session ---------------------------------------------------------------------------


def test_append_session_round_trip_acks_in_order() -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    server = s2s.Connection(Role.SERVER, APPEND)
    server.receive_data(client.send(_input(2)) + client.send(_input(3)))
    assert _drain(server) == [_input(2), _input(3)]
    assert client.unacked == server.unacked == 2
    client.receive_data(server.send(_ack(0, 2)) + server.send(_ack(2, 3)))
    assert _drain(client) == [_ack(0, 2), _ack(2, 3)]
    assert client.unacked == server.unacked == 0
    server.receive_data(b"")
    assert server.next_event() is NEED_DATA
    assert server.finished
    client.receive_data(b"")
    assert client.next_event() is NEED_DATA
    assert client.finished


@pytest.mark.parametrize("count", [0, 1001])
def test_append_input_carries_1_to_1000_records_sending(count: int) -> None:
    with pytest.raises(LocalProtocolError, match=r"1\.\.1000"):
        s2s.Connection(Role.CLIENT, APPEND).send(_input(count))


@pytest.mark.parametrize("count", [0, 1001])
def test_append_input_carries_1_to_1000_records_receiving(count: int) -> None:
    limits = s2s.Limits(max_records_per_append=2000)
    wire = s2s.Connection(Role.CLIENT, APPEND, limits=limits).send(_input(max(count, 1)))
    if count == 0:
        wire = b"\x00\x00\x01\x00"  # an AppendInput with no records
    server = s2s.Connection(Role.SERVER, APPEND)
    server.receive_data(wire)
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    assert caught.value.code is s2s.ErrorCode.INVALID
    assert caught.value.reply == s2s.Terminal(
        status=422, code="invalid", message=caught.value.message
    )
    assert server.state is s2s.ConnectionState.ERROR
    assert not server.finished  # the reply may still be sent once
    frame = server.send(caught.value.reply)
    assert frame[3] == 0x80
    assert server.finished


def test_1000_records_are_allowed() -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    server = s2s.Connection(Role.SERVER, APPEND)
    server.receive_data(client.send(_input(1000)))
    assert len(_drain(server)[0].records) == 1000  # type: ignore[union-attr]


def test_append_input_at_most_1_mib_metered() -> None:
    exact = s2s.AppendInput((s2s.AppendRecord(b"x" * (1024 * 1024 - 8)),))
    assert s2s.metered_bytes(exact.records) == 1024 * 1024
    s2s.Connection(Role.CLIENT, APPEND).send(exact)
    over = s2s.AppendInput((s2s.AppendRecord(b"x" * (1024 * 1024 - 7)),))
    with pytest.raises(LocalProtocolError, match="metered"):
        s2s.Connection(Role.CLIENT, APPEND).send(over)
    big = s2s.Limits(max_append_bytes=2 * 1024 * 1024)
    server = s2s.Connection(Role.SERVER, APPEND)
    server.receive_data(s2s.Connection(Role.CLIENT, APPEND, limits=big).send(over))
    with pytest.raises(RemoteProtocolError, match="metered"):
        server.next_event()


def test_metered_bytes_formula() -> None:
    record = s2s.AppendRecord(b"abc", (s2s.Header(b"k", b"vv"), s2s.Header(b"", b"")))
    assert s2s.metered_bytes((record,)) == 8 + 2 * 2 + 3 + 3


def test_server_cannot_ack_what_was_not_sent() -> None:
    with pytest.raises(LocalProtocolError, match="no AppendInput"):
        s2s.Connection(Role.SERVER, APPEND).send(_ack(0, 1))


def test_server_ack_must_cover_the_input_record_count() -> None:
    server = s2s.Connection(Role.SERVER, APPEND)
    server.receive_data(s2s.Connection(Role.CLIENT, APPEND).send(_input(2)))
    _drain(server)
    with pytest.raises(LocalProtocolError, match="covers 1"):
        server.send(_ack(0, 1))
    server.send(_ack(0, 2))  # nothing was consumed by the refusal


def test_client_rejects_an_unexpected_ack() -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    client.receive_data(_server_frames_for_counts([1]))
    with pytest.raises(RemoteProtocolError, match="no AppendInput"):
        client.next_event()


def test_client_rejects_a_wrong_count_or_backwards_ack() -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    client.send(_input(1))
    client.send(_input(1))
    client.receive_data(_frame_of_ack(_ack(5, 1)) + _frame_of_ack(_ack(0, 1)))
    assert client.next_event() == _ack(5, 1)
    with pytest.raises(RemoteProtocolError, match="not after"):
        client.next_event()
    other = s2s.Connection(Role.CLIENT, APPEND)
    other.send(_input(3))
    other.receive_data(_frame_of_ack(_ack(0, 2)))
    with pytest.raises(RemoteProtocolError, match="covers 2"):
        other.next_event()
    end_first = s2s.Connection(Role.CLIENT, APPEND)
    end_first.send(_input(1))
    end_first.receive_data(_frame_of_ack(s2s.AppendAck(POS(5, 0), POS(4, 0), POS(5, 0))))
    with pytest.raises(RemoteProtocolError, match="end < start"):
        end_first.next_event()


def _frame_of_ack(ack: s2s.AppendAck) -> bytes:
    from s3p_codec.s2s._proto import encode_append_ack
    from s3p_codec.s2s._wire import encode_frame

    return encode_frame(encode_append_ack(ack))


def _server_frames_for_counts(counts: list[int]) -> bytes:
    data = b""
    start = 0
    for count in counts:
        data += _frame_of_ack(_ack(start, count))
        start += count
    return data


def test_append_session_ending_with_unacked_inputs_is_an_error() -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    client.send(_input(1))
    client.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match="unacknowledged"):
        client.next_event()


def test_server_is_not_finished_until_every_input_is_acked() -> None:
    server = s2s.Connection(Role.SERVER, APPEND)
    server.receive_data(s2s.Connection(Role.CLIENT, APPEND).send(_input(1)))
    server.receive_data(b"")
    _drain(server)
    assert server.state is s2s.ConnectionState.CLOSED
    assert not server.finished
    server.send(_ack(0, 1))
    assert server.finished


def test_wrong_direction_events_are_refused() -> None:
    with pytest.raises(LocalProtocolError):
        s2s.Connection(Role.CLIENT, APPEND).send(_ack(0, 1))
    with pytest.raises(LocalProtocolError):
        s2s.Connection(Role.SERVER, APPEND).send(_input(1))
    with pytest.raises(LocalProtocolError):
        s2s.Connection(Role.CLIENT, READ).send(s2s.Heartbeat(POS(0, 0)))
    with pytest.raises(LocalProtocolError):
        s2s.Connection(Role.SERVER, READ).send(_input(1))
    with pytest.raises(LocalProtocolError):
        s2s.Connection(Role.CLIENT, READ).send(s2s.Terminal(status=499))


def test_a_read_session_request_carries_no_frames() -> None:
    server = s2s.Connection(Role.SERVER, READ)
    server.receive_data(s2s.Connection(Role.CLIENT, APPEND).send(_input(1)))
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    assert caught.value.reply is not None


# -- read session -----------------------------------------------------------------------------


def test_read_session_batches_and_heartbeats() -> None:
    server = s2s.Connection(Role.SERVER, READ)
    client = s2s.Connection(Role.CLIENT, READ)
    batch = s2s.ReadBatch((s2s.SequencedRecord(0, 10, b"a"),), POS(1, 10))
    client.receive_data(
        server.send(batch)
        + server.send(s2s.Heartbeat(POS(1, 10)))
        + server.send(s2s.ReadBatch((), POS(1, 11)))
    )
    assert _drain(client) == [batch, s2s.Heartbeat(POS(1, 10)), s2s.Heartbeat(POS(1, 11))]


def test_heartbeat_is_an_empty_batch_with_a_tail_on_the_wire() -> None:
    frame = s2s.Connection(Role.SERVER, READ).send(s2s.Heartbeat(POS(1, 2)))
    assert frame == b"\x00\x00\x07\x00\x12\x04\x08\x01\x10\x02"


def test_an_empty_batch_without_a_tail_is_refused_both_ways() -> None:
    with pytest.raises(LocalProtocolError):
        s2s.Connection(Role.SERVER, READ).send(s2s.ReadBatch(()))
    client = s2s.Connection(Role.CLIENT, READ)
    client.receive_data(b"\x00\x00\x01\x00")
    with pytest.raises(RemoteProtocolError) as caught:
        client.next_event()
    assert caught.value.code is s2s.ErrorCode.INVALID


def test_missing_frame_for_20_s_is_surfaced_through_the_clock_argument() -> None:
    server = s2s.Connection(Role.SERVER, READ)
    client = s2s.Connection(Role.CLIENT, READ)
    client.check_heartbeat(100.0)  # starts the clock
    assert client.deadline == 120.0
    client.check_heartbeat(119.9)
    client.receive_data(server.send(s2s.Heartbeat(POS(0, 0))))
    assert client.next_event(now=115.0) == s2s.Heartbeat(POS(0, 0))
    assert client.deadline == 135.0
    client.check_heartbeat(134.9)
    with pytest.raises(RemoteProtocolError) as caught:
        client.check_heartbeat(135.0)
    assert caught.value.code is s2s.ErrorCode.HEARTBEAT_TIMEOUT
    assert client.state is s2s.ConnectionState.ERROR


def test_heartbeat_timeout_follows_the_limit_and_only_read_clients() -> None:
    client = s2s.Connection(Role.CLIENT, READ, limits=s2s.Limits(heartbeat_timeout=0.5))
    client.check_heartbeat(0.0)
    with pytest.raises(RemoteProtocolError):
        client.check_heartbeat(0.5)
    for conn in (s2s.Connection(Role.SERVER, READ), s2s.Connection(Role.CLIENT, APPEND)):
        conn.check_heartbeat(0.0)
        conn.check_heartbeat(1e9)
        assert conn.deadline is None


def test_reconnect_advice_is_surfaced_once() -> None:
    server = s2s.Connection(Role.SERVER, READ)
    client = s2s.Connection(Role.CLIENT, READ)
    first = server.send(s2s.Heartbeat(POS(0, 0)))
    server.advise_reconnect()
    second = server.send(s2s.Heartbeat(POS(1, 0)))
    third = server.send(s2s.Heartbeat(POS(2, 0)))
    assert first[3] == 0
    assert second[3] == third[3] == 0x10
    client.receive_data(first + second + third)
    assert _drain(client) == [
        s2s.Heartbeat(POS(0, 0)),
        s2s.Heartbeat(POS(1, 0)),
        s2s.ReconnectAdvised(),
        s2s.Heartbeat(POS(2, 0)),
    ]
    with pytest.raises(LocalProtocolError):
        client.advise_reconnect()


def test_reconnect_flag_on_append_acks() -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    server = s2s.Connection(Role.SERVER, APPEND)
    server.receive_data(client.send(_input(1)))
    _drain(server)
    server.advise_reconnect()
    client.receive_data(server.send(_ack(0, 1)))
    assert _drain(client) == [_ack(0, 1), s2s.ReconnectAdvised()]


# -- terminal frames --------------------------------------------------------------------------


def test_after_sending_a_terminal_frame_no_further_frames_are_sent() -> None:
    server = s2s.Connection(Role.SERVER, READ)
    server.send(s2s.Terminal(status=503, code="server_draining"))
    assert server.state is s2s.ConnectionState.TERMINATED
    assert server.finished
    with pytest.raises(LocalProtocolError):
        server.send(s2s.Heartbeat(POS(0, 0)))
    with pytest.raises(LocalProtocolError):
        server.send(s2s.Terminal(status=500))


def test_after_receiving_a_terminal_frame_nothing_is_sent() -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    client.receive_data(s2s.Connection(Role.SERVER, APPEND).send(s2s.Terminal(status=500)))
    with pytest.raises(s2s.SessionTerminated):
        client.next_event()
    with pytest.raises(LocalProtocolError):
        client.send(_input(1))


def test_either_side_can_send_a_terminal_frame_in_an_append_session() -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    server = s2s.Connection(Role.SERVER, APPEND)
    server.receive_data(client.send(s2s.Terminal(status=499, message="bye")))
    with pytest.raises(s2s.SessionTerminated) as caught:
        server.next_event()
    assert caught.value.terminal.message == "bye"
    assert caught.value.reply is None


@given(terminal=terminals())
def test_terminal_round_trip(terminal: s2s.Terminal) -> None:
    client = s2s.Connection(Role.CLIENT, READ)
    client.receive_data(s2s.Connection(Role.SERVER, READ).send(terminal))
    with pytest.raises(s2s.SessionTerminated) as caught:
        client.next_event()
    assert caught.value.terminal == terminal
    assert caught.value.code == terminal.status
    assert isinstance(caught.value.code, s2s.Status)  # an enum member, named or not
    expected = {412: s2s.AppendConditionFailed, 416: s2s.ReadUnwritten}.get(
        terminal.status, s2s.SessionTerminated
    )
    assert type(caught.value) is expected


def test_errors_are_final_and_later_calls_raise() -> None:
    client = s2s.Connection(Role.CLIENT, READ)
    client.receive_data(b"\x00\x00\x00")
    with pytest.raises(RemoteProtocolError):
        client.next_event()
    with pytest.raises(RemoteProtocolError):
        client.next_event()
    with pytest.raises(LocalProtocolError):
        client.send(s2s.Heartbeat(POS(0, 0)))


def test_server_error_reply_is_bad_frame_400() -> None:
    server = s2s.Connection(Role.SERVER, APPEND)
    server.receive_data(b"\x00\x00\x02\x60x")
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    assert isinstance(caught.value.reply, s2s.Terminal)
    assert (caught.value.reply.status, caught.value.reply.code) == (400, "bad_frame")
    with pytest.raises(LocalProtocolError):
        server.send(_ack(0, 1))  # only the Terminal reply may follow


def test_data_after_end_of_body_is_refused() -> None:
    conn = s2s.Connection(Role.CLIENT, READ)
    conn.receive_data(b"")
    with pytest.raises(LocalProtocolError):
        conn.receive_data(b"x")


# -- properties -------------------------------------------------------------------------------

COMPRESSIONS = st.sampled_from(list(Compression))


@given(
    inputs=st.lists(append_inputs(), min_size=1, max_size=5),
    compression=COMPRESSIONS,
    data=st.data(),
)
def test_append_session_round_trip_any_compression_any_chunking(
    inputs: list[s2s.AppendInput], compression: Compression, data: st.DataObject
) -> None:
    client = s2s.Connection(Role.CLIENT, APPEND, compression=compression)
    server = s2s.Connection(Role.SERVER, APPEND, compression=compression)
    wire = b"".join(client.send(event) for event in inputs)
    received: list[s2s.Event] = []
    for piece in data.draw(chunkings(wire)):
        server.receive_data(piece)
        received += _drain(server)
    assert received == inputs
    acks = data.draw(acks_for(inputs))
    reply = b"".join(server.send(ack) for ack in acks)
    got: list[s2s.Event] = []
    for piece in data.draw(chunkings(reply)):
        client.receive_data(piece)
        got += _drain(client)
    assert got == acks


HEARTBEATS = st.builds(s2s.Heartbeat, positions())


@given(
    batches=st.lists(read_batches() | HEARTBEATS, min_size=1, max_size=4),
    compression=COMPRESSIONS,
    data=st.data(),
)
def test_read_session_round_trip_any_compression_any_chunking(
    batches: list[s2s.ReadBatch | s2s.Heartbeat], compression: Compression, data: st.DataObject
) -> None:
    server = s2s.Connection(Role.SERVER, READ, compression=compression)
    client = s2s.Connection(Role.CLIENT, READ)
    wire = b"".join(server.send(batch) for batch in batches)
    got: list[s2s.Event] = []
    for piece in data.draw(chunkings(wire)):
        client.receive_data(piece)
        got += _drain(client)
    client.receive_data(b"")
    got += _drain(client)
    assert got == batches
    assert client.state is s2s.ConnectionState.CLOSED


@given(batches=st.lists(read_batches(), min_size=1, max_size=2), compression=COMPRESSIONS)
def test_one_byte_at_a_time_gives_the_same_events(
    batches: list[s2s.ReadBatch], compression: Compression
) -> None:
    server = s2s.Connection(Role.SERVER, READ, compression=compression)
    wire = b"".join(server.send(batch) for batch in batches)
    client = s2s.Connection(Role.CLIENT, READ)
    got: list[s2s.Event] = []
    for index in range(len(wire)):
        client.receive_data(wire[index : index + 1])
        got += _drain(client)
    assert got == batches


@pytest.mark.parametrize(("role", "session"), [(r, s) for r in Role for s in s2s.Session], ids=str)
@given(data=st.binary(max_size=300))
def test_random_bytes_give_events_or_our_errors_only(
    role: Role, session: s2s.Session, data: bytes
) -> None:
    conn = s2s.Connection(role, session)
    conn.receive_data(data)
    conn.receive_data(b"")
    for _ in range(400):
        try:
            if conn.next_event() is NEED_DATA:
                break
        except s2s.SessionTerminated as exc:
            assert isinstance(exc.code, int)  # noqa: PT017
            break
        except RemoteProtocolError as exc:
            assert isinstance(exc.code, s2s.ErrorCode)  # noqa: PT017
            assert conn.state is s2s.ConnectionState.ERROR
            break
    assert conn.state is not s2s.ConnectionState.OPEN


@given(
    data=st.binary(max_size=200),
    compression=st.sampled_from([0x20, 0x40]),
    session=st.sampled_from(list(s2s.Session)),
)
def test_random_compressed_frames_give_events_or_our_errors_only(
    data: bytes, compression: int, session: s2s.Session
) -> None:
    conn = s2s.Connection(Role.CLIENT if session is READ else Role.SERVER, session)
    conn.receive_data((1 + len(data)).to_bytes(3, "big") + bytes((compression,)) + data)
    try:
        event = conn.next_event()
    except RemoteProtocolError as exc:
        expected = (s2s.ErrorCode.BAD_FRAME, s2s.ErrorCode.BAD_PROTO, s2s.ErrorCode.INVALID)
        assert exc.code in expected  # noqa: PT017
    else:
        assert isinstance(event, s2s.AppendInput | s2s.ReadBatch | s2s.Heartbeat)


def test_last_compression_reports_the_flag_of_the_last_frame() -> None:
    server = s2s.Connection(Role.SERVER, READ, compression=Compression.GZIP)
    client = s2s.Connection(Role.CLIENT, READ)
    assert client.last_compression is None
    big = s2s.ReadBatch((s2s.SequencedRecord(0, 0, b"z" * 2000),))
    client.receive_data(server.send(big))
    assert client.next_event() == big
    assert client.last_compression is Compression.GZIP
    client.receive_data(server.send(s2s.Heartbeat(POS(1, 0))))
    client.next_event()
    assert client.last_compression is Compression.NONE


def test_position_counts_the_body_bytes_taken_as_frames() -> None:
    server = s2s.Connection(Role.SERVER, READ)
    client = s2s.Connection(Role.CLIENT, READ)
    frame = server.send(s2s.Heartbeat(POS(1, 0)))
    client.receive_data(frame + frame[:2])
    assert client.position == 0
    client.next_event()
    assert client.position == len(frame)
    assert client.next_event() is NEED_DATA
    assert client.position == len(frame)


def test_an_observe_only_reader_takes_acks_without_inputs() -> None:
    server = s2s.Connection(Role.SERVER, APPEND)
    client = s2s.Connection(Role.CLIENT, APPEND)
    server.receive_data(client.send(s2s.AppendInput((s2s.AppendRecord(b"x"),))))
    server.next_event()
    ack = s2s.AppendAck(POS(0, 1), POS(1, 1), POS(1, 1))
    wire = server.send(ack)
    passive = s2s.Connection(Role.CLIENT, APPEND, observe_only=True)
    assert passive.observe_only
    assert not client.observe_only
    passive.receive_data(wire)
    assert passive.next_event() == ack
    strict = s2s.Connection(Role.CLIENT, APPEND)
    strict.receive_data(wire)
    with pytest.raises(RemoteProtocolError):
        strict.next_event()
