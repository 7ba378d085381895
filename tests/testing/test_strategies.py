"""The strategies of ``s3p_codec.testing`` checked against this library's own codecs.

Each malformed case must really get, from our server-role codec, the error it says a strict
peer answers (code, fatal or not, reply or not), in one piece and split anywhere; valid
requests must encode to bytes our server-role codec parses back to the same request.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, RemoteProtocolError, Role, durable, pravega, rustlog, s2s, s3p
from s3p_codec.testing import Malformed, Valid, chunkings, live
from s3p_codec.testing import durable as durable_cases
from s3p_codec.testing import pravega as pravega_cases
from s3p_codec.testing import rustlog as rustlog_cases
from s3p_codec.testing import s2s as s2s_cases
from s3p_codec.testing import s3p as s3p_cases

SmallCases: list[tuple[ModuleType, Callable[[], Any]]] = [
    (s3p_cases, lambda: s3p.Connection(Role.SERVER)),
    (rustlog_cases, lambda: rustlog.Connection(Role.SERVER)),
    (pravega_cases, lambda: pravega.Connection(Role.SERVER)),
]
IDS = ["s3p", "rustlog", "pravega"]


def _error_of(server: Any, pieces: list[bytes], half_close: bool) -> RemoteProtocolError | None:
    try:
        for piece in pieces:
            server.receive_data(piece)
            while server.next_event() is not NEED_DATA:
                pass
        if half_close:
            server.receive_data(b"")
            while server.next_event() is not NEED_DATA:
                pass
    except RemoteProtocolError as exc:
        return exc
    return None


def _assert_refused(case: Malformed, error: RemoteProtocolError | None) -> None:
    assert error is not None, f"{case.label}: accepted {case.data[:80]!r}"
    assert error.code == case.code, f"{case.label}: {error!r}"
    assert error.fatal == case.fatal, f"{case.label}: {error!r}"


@pytest.mark.parametrize(("cases", "server"), SmallCases, ids=IDS)
def test_every_malformed_case_gets_its_error_from_our_server_codec(
    cases: ModuleType, server: Callable[[], Any]
) -> None:
    @given(cases.malformed())
    def check(case: Malformed) -> None:
        _assert_refused(case, _error_of(server(), [case.data], case.half_close))

    check()


@pytest.mark.parametrize(("cases", "server"), SmallCases, ids=IDS)
def test_malformed_cases_split_anywhere_get_the_same_error(
    cases: ModuleType, server: Callable[[], Any]
) -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases.malformed())
        pieces = data.draw(chunkings(case.data))
        _assert_refused(case, _error_of(server(), pieces, case.half_close))

    check()


@pytest.mark.parametrize(("cases", "server"), SmallCases, ids=IDS)
def test_request_wire_bytes_parse_back_to_the_request(
    cases: ModuleType, server: Callable[[], Any]
) -> None:
    @given(cases.request_wire())
    def check(pair: tuple[object, bytes]) -> None:
        request, wire = pair
        conn = server()
        if cases is pravega_cases:
            conn.receive_data(pravega_cases.HELLO)
            assert conn.next_event() == pravega.Hello()
        conn.receive_data(wire)
        assert conn.next_event() == request
        assert conn.next_event() is NEED_DATA

    check()


def test_s3p_server_codec_answers_each_malformed_case_with_an_error_reply() -> None:
    @given(s3p_cases.malformed())
    def check(case: Malformed) -> None:
        error = _error_of(s3p.Connection(Role.SERVER), [case.data], case.half_close)
        assert error is not None
        assert isinstance(error.reply, s3p.ErrorReply)
        assert error.reply.code == case.code

    check()


def test_rustlog_recoverable_cases_leave_the_connection_serving() -> None:
    @given(rustlog_cases.recoverable())
    def check(case: Malformed) -> None:
        conn = rustlog.Connection(Role.SERVER)
        conn.receive_data(case.data + rustlog.Connection(Role.CLIENT).send(rustlog.Ping()))
        with pytest.raises(RemoteProtocolError) as caught:
            conn.next_event()
        assert isinstance(caught.value.reply, rustlog.Error)
        conn.send(caught.value.reply)
        assert conn.next_event() == rustlog.Ping()

    check()


def test_chunkings_join_back_to_the_input() -> None:
    @given(st.data(), st.binary(max_size=64))
    def check(data: st.DataObject, blob: bytes) -> None:
        pieces = data.draw(chunkings(blob))
        assert b"".join(pieces) == blob
        assert all(pieces) or blob == b""

    check()


# --- S2S and Durable Streams: HTTP-borne, driven through their server-role codecs ------------


def _s2s_error(pieces: list[bytes]) -> RemoteProtocolError | None:
    conn = s2s.Http1Connection(Role.SERVER)
    try:
        for piece in pieces:
            conn.receive_data(piece)
            for event in conn.events():
                if isinstance(event, s2s.SessionRequest):
                    conn.send(s2s.SessionResponse())
    except RemoteProtocolError as exc:
        return exc
    return None


def _durable_error(pieces: list[bytes]) -> RemoteProtocolError | None:
    conn = durable.Connection(Role.SERVER)
    try:
        for piece in pieces:
            conn.receive_data(piece)
            while conn.next_event() is not NEED_DATA:
                pass
    except RemoteProtocolError as exc:
        return exc
    return None


def _reply_code(error: RemoteProtocolError) -> object:
    reply = error.reply
    if isinstance(reply, s2s.Terminal | s2s.ErrorResponse):
        return reply.code
    if isinstance(reply, durable.ErrorResponse | durable.SubscriptionError):
        return reply.status
    return None


HTTP_CASES = [
    (s2s_cases.malformed(), _s2s_error),
    (durable_cases.malformed(), _durable_error),
]


@pytest.mark.parametrize(("cases", "run"), HTTP_CASES, ids=["s2s", "durable"])
def test_every_http_malformed_case_gets_its_error_reply_from_our_server_codec(
    cases: st.SearchStrategy[Malformed], run: Callable[[list[bytes]], RemoteProtocolError | None]
) -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(cases)
        pieces = data.draw(chunkings(case.data))
        error = run(pieces)
        assert error is not None, f"{case.label}: accepted"
        assert _reply_code(error) == case.code, f"{case.label}: {error!r}"

    check()


def test_s2s_request_wire_frames_parse_back_to_the_append_input() -> None:
    @given(s2s_cases.request_wire())
    def check(pair: tuple[s2s.AppendInput, bytes]) -> None:
        event, wire = pair
        conn = s2s.Connection(Role.SERVER, s2s.Session.APPEND)
        conn.receive_data(wire)
        assert conn.next_event() == event

    check()


def test_durable_request_wire_bytes_parse_back_to_the_request() -> None:
    @given(durable_cases.request_wire())
    def check(pair: tuple[durable.Request, bytes]) -> None:
        event, wire = pair
        conn = durable.Connection(Role.SERVER)
        conn.receive_data(wire)
        assert conn.next_event() == event

    check()


def test_s2s_compression_bombs_stay_small_on_the_wire() -> None:
    bombs = [c for c in live.draw(s2s_cases.malformed(), 300, seed=1) if "bomb" in c.label]
    assert bombs
    for case in bombs:
        assert len(case.data) < 10_000  # and inflate past 2 MiB: refused as bad_frame above


# --- replies: what a server sends, for fuzzing clients ----------------------------------------


def test_s3p_replies_round_trip_through_both_roles() -> None:
    @given(s3p_cases.replies())
    def check(reply: s3p.Reply) -> None:
        server = s3p.Connection(Role.SERVER)
        client = s3p.Connection(Role.CLIENT)
        request: s3p.Request = s3p.Read(b"s")
        if isinstance(reply, s3p.Ok):
            request = s3p.Create(b"s")
        elif isinstance(reply, s3p.AppendReply):
            request = s3p.Append(b"s", (b"r",))
        server.receive_data(client.send(request))
        assert server.next_event() == request
        client.receive_data(server.send(reply))
        assert client.next_event() == reply

    check()


def test_rustlog_responses_round_trip_through_both_roles() -> None:
    @given(rustlog_cases.responses())
    def check(response: rustlog.Response) -> None:
        sample = rustlog_cases.request_for(response)
        assert rustlog_cases.request_for(type(response)) == sample
        if not isinstance(response, rustlog.Error):
            assert rustlog.RESPONSE_TO[type(sample)] is type(response)
        server = rustlog.Connection(Role.SERVER)
        client = rustlog.Connection(Role.CLIENT)
        server.receive_data(client.send(sample))
        assert server.next_event() == sample
        client.receive_data(server.send(response))
        assert client.next_event() == response

    check()


def test_pravega_replies_round_trip_to_a_client() -> None:
    @given(pravega_cases.replies())
    def check(reply: pravega.Command) -> None:
        client = pravega.Connection(Role.CLIENT)
        for request in pravega_cases.requests_for(reply)[1:]:  # the appends it acknowledges
            client.send(request)
        client.receive_data(pravega.encode(reply))
        assert client.next_event() == reply

    check()


def test_s2s_read_session_replies_round_trip_to_a_client() -> None:
    @given(s2s_cases.replies())
    def check(reply: s2s.Heartbeat | s2s.ReadBatch | s2s.Terminal) -> None:
        server = s2s.Connection(Role.SERVER, s2s.Session.READ)
        client = s2s.Connection(Role.CLIENT, s2s.Session.READ)
        client.receive_data(server.send(reply))
        if isinstance(reply, s2s.Terminal):
            with pytest.raises(s2s.SessionTerminated) as ended:
                client.next_event()
            assert ended.value.terminal.code == reply.code
        else:
            assert client.next_event() == reply

    check()


# --- edge cases: at the limits, repeated keys, reserved bits: must be accepted ---------------


def test_s3p_edge_cases_are_accepted_by_our_server_codec() -> None:
    @given(s3p_cases.edge_cases())
    def check(case: Valid) -> None:
        conn = s3p.Connection(Role.SERVER)
        conn.receive_data(case.data)
        event = conn.next_event()
        assert isinstance(event, s3p.Read | s3p.Delete), case.label
        if case.label == "repeated option key":
            assert event == s3p.Read(b"fuzz", count=1)  # "the last occurrence's value"

    check()


def test_rustlog_edge_cases_parse_to_their_request() -> None:
    @given(rustlog_cases.edge_cases())
    def check(case: Valid) -> None:
        conn = rustlog.Connection(Role.SERVER)
        conn.receive_data(case.data)
        assert conn.next_event() == case.event, case.label

    check()


def test_s2s_edge_cases_parse_to_their_append_input() -> None:
    @given(s2s_cases.edge_cases())
    def check(case: Valid) -> None:
        conn = s2s.Http1Connection(Role.SERVER)
        conn.receive_data(case.data)
        assert isinstance(conn.next_event(), s2s.SessionRequest)
        conn.send(s2s.SessionResponse())
        assert conn.next_event() == case.event, case.label

    check()


COMMON_NAMES = ("requests", "request_wire", "malformed", "reply_wire", "requests_for",
                "malformed_replies", "Target")  # fmt: skip


@pytest.mark.parametrize("name", ["s3p", "rustlog", "pravega", "s2s", "durable"])
def test_every_protocol_module_has_the_same_names(name: str) -> None:
    module = importlib.import_module(f"s3p_codec.testing.{name}")
    missing = [attr for attr in COMMON_NAMES if not hasattr(module, attr)]
    assert not missing, f"s3p_codec.testing.{name} lacks {missing}"
    assert set(COMMON_NAMES) - {"Target"} <= set(module.__all__)
