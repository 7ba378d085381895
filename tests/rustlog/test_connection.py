"""Connection states, request/response pairing, error handling and end of stream."""

from __future__ import annotations

import pytest

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, rustlog
from s3p_codec._core.connection import Connection as ConnectionProtocol
from tests.rustlog.frames import frame

State = rustlog.State
PING = frame({"type": "Ping"})
PONG = frame({"type": "Pong"})


def pair() -> tuple[rustlog.Connection, rustlog.Connection]:
    return rustlog.Connection(Role.CLIENT), rustlog.Connection(Role.SERVER)


def test_state_enum_is_connection_state_and_keeps_its_old_name() -> None:
    assert rustlog.ConnectionState is rustlog.State
    assert rustlog.Connection(Role.CLIENT).state is rustlog.ConnectionState.CONNECTED


def test_connection_satisfies_the_core_protocol() -> None:
    assert isinstance(rustlog.Connection(Role.CLIENT), ConnectionProtocol)


def test_states_follow_connected_request_active_connected() -> None:
    client, server = pair()
    assert client.state is server.state is State.CONNECTED
    server.receive_data(client.send(rustlog.Ping()))
    assert client.state is State.REQUEST_ACTIVE
    assert server.next_event() == rustlog.Ping()
    assert server.state is State.REQUEST_ACTIVE
    client.receive_data(server.send(rustlog.Pong()))
    assert server.state is State.CONNECTED
    assert client.next_event() == rustlog.Pong()
    assert client.state is State.CONNECTED


def test_client_allows_one_request_in_flight_by_default() -> None:
    client = rustlog.Connection(Role.CLIENT)
    client.send(rustlog.Ping())
    with pytest.raises(LocalProtocolError, match="one request in flight"):
        client.send(rustlog.Ping())
    assert client.in_flight == 1
    client.receive_data(PONG)
    assert client.next_event() == rustlog.Pong()
    assert client.send(rustlog.Ping()) == PING


def test_client_can_opt_into_pipelining_and_responses_pair_in_order() -> None:
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    server = rustlog.Connection(Role.SERVER)
    requests = [rustlog.Ping(), rustlog.ListTopics(), rustlog.DescribeTopic("t")]
    server.receive_data(b"".join(client.send(r) for r in requests))
    assert client.in_flight == 3
    assert list(server.events()) == requests
    assert server.in_flight == 3
    answers = [rustlog.Pong(), rustlog.ListTopicsResponse(()), rustlog.Error(404, "no t")]
    client.receive_data(b"".join(server.send(a) for a in answers))
    assert list(client.events()) == answers
    assert client.state is State.CONNECTED


def test_response_of_the_wrong_type_is_fatal_for_a_client() -> None:
    client = rustlog.Connection(Role.CLIENT)
    client.send(rustlog.Ping())
    client.receive_data(frame({"type": "ProduceResponse", "base_offset": 1, "record_count": 1}))
    with pytest.raises(RemoteProtocolError) as info:
        client.next_event()
    assert info.value.fatal
    assert client.state is State.ERROR
    assert client.finished


def test_error_response_answers_any_request() -> None:
    client = rustlog.Connection(Role.CLIENT)
    client.send(rustlog.Produce("t", 0, (b"x",)))
    client.receive_data(frame({"type": "Error", "code": 404, "message": "no", "details": None}))
    assert client.next_event() == rustlog.Error(rustlog.ErrorCode.TOPIC_NOT_FOUND, "no")
    assert client.state is State.CONNECTED


def test_frame_with_no_request_in_flight_is_fatal_for_a_client() -> None:
    client = rustlog.Connection(Role.CLIENT)
    client.receive_data(PONG)
    with pytest.raises(RemoteProtocolError, match="no request awaits"):
        client.next_event()
    assert client.state is State.ERROR


def test_client_recoverable_error_consumes_the_request_slot() -> None:
    client = rustlog.Connection(Role.CLIENT)
    client.send(rustlog.Ping())
    client.receive_data(frame({"type": "FutureResponse"}) + PING)
    with pytest.raises(RemoteProtocolError) as info:
        client.next_event()
    assert not info.value.fatal
    assert info.value.reply is None
    assert client.state is State.CONNECTED
    client.send(rustlog.Ping())


def test_roles_send_only_their_own_side() -> None:
    client, server = pair()
    with pytest.raises(LocalProtocolError):
        client.send(rustlog.Pong())
    with pytest.raises(LocalProtocolError):
        server.send(rustlog.Ping())  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError):
        client.send(object())  # type: ignore[arg-type]


def test_server_answers_only_requests_it_received() -> None:
    server = rustlog.Connection(Role.SERVER)
    with pytest.raises(LocalProtocolError, match="no request awaits"):
        server.send(rustlog.Pong())
    server.receive_data(PING)
    server.next_event()
    with pytest.raises(LocalProtocolError, match="expects Pong or Error"):
        server.send(rustlog.ProduceResponse(0, 0))
    assert server.in_flight == 1
    assert server.send(rustlog.Pong()) == PONG


def test_server_recoverable_error_carries_the_error_response_and_keeps_the_connection() -> None:
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(frame({"type": "Produce", "topic": "t"}) + PING)
    with pytest.raises(RemoteProtocolError) as info:
        server.next_event()
    error = info.value
    assert not error.fatal
    assert isinstance(error.reply, rustlog.Error)
    assert error.reply.code == rustlog.ErrorCode.INVALID_REQUEST
    assert server.state is State.REQUEST_ACTIVE
    assert not server.finished
    # The Error answers the bad request; only an Error may.
    with pytest.raises(LocalProtocolError):
        server.send(rustlog.ProduceResponse(0, 0))
    server.send(error.reply)
    assert server.state is State.CONNECTED
    assert server.next_event() == rustlog.Ping()


def test_an_invalid_error_reply_is_refused_and_the_reply_is_still_owed() -> None:
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(frame(b"{not json"))
    with pytest.raises(RemoteProtocolError):
        server.next_event()
    with pytest.raises(LocalProtocolError):
        server.send(rustlog.Pong())
    with pytest.raises(LocalProtocolError):
        server.send(rustlog.Error(70000, "code beyond u16"))
    assert not server.finished
    assert server.send(rustlog.Error(rustlog.ErrorCode.INVALID_REQUEST, "bad frame"))
    assert server.finished


def test_server_fatal_error_allows_one_error_reply_then_is_finished() -> None:
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(frame(b"{not json") + PING)
    with pytest.raises(RemoteProtocolError) as info:
        server.next_event()
    error = info.value
    assert error.fatal
    assert server.state is State.ERROR
    assert not server.finished
    assert isinstance(error.reply, rustlog.Error)
    data = server.send(error.reply)
    assert data.startswith(b"\x00\x00\x00")
    assert b'"type":"Error"' in data
    assert server.finished
    with pytest.raises(LocalProtocolError):
        server.send(error.reply)
    # Later calls keep failing; pipelined requests after the violation are dropped.
    with pytest.raises(RemoteProtocolError):
        server.next_event()
    server.receive_data(PING)
    with pytest.raises(RemoteProtocolError):
        server.next_event()


def test_fatal_error_on_a_client_is_final() -> None:
    client = rustlog.Connection(Role.CLIENT)
    client.send(rustlog.Ping())
    client.receive_data(b"\x00\x00\x00\x00")
    with pytest.raises(RemoteProtocolError) as info:
        client.next_event()
    assert info.value.reply is None
    assert client.finished
    with pytest.raises(LocalProtocolError):
        client.send(rustlog.Ping())


def test_end_of_stream_after_complete_frames_closes_cleanly() -> None:
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(PING)
    server.receive_data(b"")
    assert server.next_event() == rustlog.Ping()
    assert server.next_event() is NEED_DATA
    assert server.state is State.CLOSED
    assert not server.finished  # the request may still be answered (half-close)
    server.send(rustlog.Pong())
    assert server.finished
    assert server.next_event() is NEED_DATA


def test_end_of_stream_mid_frame_is_fatal() -> None:
    for partial in (PING[:2], PING[:-1]):
        server = rustlog.Connection(Role.SERVER)
        server.receive_data(partial)
        server.receive_data(b"")
        with pytest.raises(RemoteProtocolError, match="mid-frame") as info:
            server.next_event()
        assert info.value.fatal
        assert info.value.reply is None
        assert server.finished


def test_client_end_of_stream_closes_and_finishes() -> None:
    client = rustlog.Connection(Role.CLIENT)
    client.receive_data(b"")
    assert client.next_event() is NEED_DATA
    assert client.state is State.CLOSED
    assert client.finished
    with pytest.raises(LocalProtocolError):
        client.send(rustlog.Ping())


def test_data_after_end_of_stream_is_a_local_error() -> None:
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(b"")
    server.receive_data(b"")  # harmless
    with pytest.raises(LocalProtocolError):
        server.receive_data(PING)


def test_events_drains_until_need_data() -> None:
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(PING * 3 + PING[:3])
    assert list(server.events()) == [rustlog.Ping()] * 3
    server.receive_data(PING[3:])
    assert list(server.events()) == [rustlog.Ping()]


def test_a_local_error_leaves_nothing_half_done() -> None:
    client = rustlog.Connection(Role.CLIENT)
    with pytest.raises(LocalProtocolError):
        client.send(rustlog.Produce("bad topic", 0, ()))
    assert client.state is State.CONNECTED
    assert client.in_flight == 0
    assert client.send(rustlog.Ping()) == PING


def test_unknown_json_backend_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown JSON backend"):
        rustlog.Connection(Role.CLIENT, json="simplejson")


def test_repr_names_role_and_state() -> None:
    assert "client" in repr(rustlog.Connection(Role.CLIENT))


# --- frames decoded ahead still come out, and count, one at a time -------------------------


def test_buffered_requests_change_the_state_one_event_at_a_time() -> None:
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(PING * 3)
    assert server.in_flight == 0
    for expected in (1, 2, 3):
        assert server.next_event() == rustlog.Ping()
        assert server.in_flight == expected
        assert server.state is State.REQUEST_ACTIVE
    assert server.next_event() is NEED_DATA


def test_a_bad_request_among_buffered_frames_is_raised_in_its_turn() -> None:
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(PING + frame({"type": "Nope"}) + PING)
    assert server.next_event() == rustlog.Ping()
    with pytest.raises(RemoteProtocolError) as info:
        server.next_event()
    assert not info.value.fatal
    assert isinstance(info.value.reply, rustlog.Error)
    assert server.in_flight == 2
    assert server.next_event() == rustlog.Ping()
    assert server.in_flight == 3


def test_a_fatal_frame_among_buffered_frames_ends_the_connection_in_its_turn() -> None:
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(PING + frame(b"{not json") + PING)
    assert server.next_event() == rustlog.Ping()
    assert server.state is State.REQUEST_ACTIVE
    with pytest.raises(RemoteProtocolError) as info:
        server.next_event()
    assert info.value.fatal
    assert server.state is State.ERROR
    with pytest.raises(RemoteProtocolError, match="ERROR state"):
        server.next_event()  # the Ping after the bad frame is never delivered


def test_an_over_limit_header_is_fatal_after_the_frames_before_it() -> None:
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(PING + b"\xff\xff\xff\xff")
    assert server.next_event() == rustlog.Ping()
    with pytest.raises(RemoteProtocolError) as info:
        server.next_event()
    assert info.value.code == rustlog.ErrorCode.RECORD_TOO_LARGE
    assert server.state is State.ERROR


def test_a_client_pairs_buffered_responses_one_at_a_time() -> None:
    client = rustlog.Connection(Role.CLIENT, pipelining=True)
    client.send(rustlog.Ping())
    client.send(rustlog.Ping())
    client.receive_data(PONG * 3)
    assert client.next_event() == rustlog.Pong()
    assert client.in_flight == 1
    assert client.state is State.REQUEST_ACTIVE
    assert client.next_event() == rustlog.Pong()
    assert client.in_flight == 0
    assert client.state is State.CONNECTED
    with pytest.raises(RemoteProtocolError, match="no request awaits"):
        client.next_event()
    assert client.state is State.ERROR


def test_end_of_stream_after_buffered_frames_delivers_them_first() -> None:
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(PING + PING + PING[:5])
    server.receive_data(b"")
    assert server.next_event() == rustlog.Ping()
    assert server.next_event() == rustlog.Ping()
    with pytest.raises(RemoteProtocolError, match="mid-frame"):
        server.next_event()
