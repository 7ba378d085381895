"""An S2S session over HTTP/1.1, client and server codecs talking to each other."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, s2s
from s3p_codec._core import Connection as ConnectionProtocol
from s3p_codec.s2s._compression import Compression

POS = s2s.StreamPosition


def _pump(source: bytes, target: s2s.Http1Connection) -> list[object]:
    target.receive_data(source)
    return list(target.events())


def test_satisfies_the_connection_protocol() -> None:
    assert isinstance(s2s.Http1Connection(Role.CLIENT), ConnectionProtocol)


@pytest.mark.parametrize("compression", list(Compression))
def test_append_session_over_http11(compression: Compression) -> None:
    client = s2s.Http1Connection(Role.CLIENT, host="127.0.0.1:1")
    server = s2s.Http1Connection(Role.SERVER)
    request = s2s.SessionRequest(s2s.Session.APPEND, "s", token="t", accept=compression)
    records = (s2s.AppendRecord(b"x" * 2000),)
    wire = client.send(request) + client.send(s2s.AppendInput(records))
    assert b"transfer-encoding: chunked" in wire.lower()
    assert _pump(wire, server) == [request]
    opened = s2s.SessionResponse(server.request.accept)  # type: ignore[union-attr]
    reply = server.send(opened)
    events = list(server.events())
    assert events == [s2s.AppendInput(records)]
    ack = s2s.AppendAck(POS(0, 1), POS(1, 1), POS(1, 1))
    reply += server.send(ack)
    assert _pump(reply, client) == [opened, ack]
    assert _pump(client.send(s2s.EndOfBody()), server) == []
    assert server.session is not None
    assert server.session.state is s2s.ConnectionState.CLOSED
    done = server.send(s2s.EndOfBody())
    assert server.finished
    assert _pump(done, client) == []
    assert client.finished
    assert client.state is s2s.ConnectionState.CLOSED


def test_read_session_over_http11_is_a_get_without_body() -> None:
    client = s2s.Http1Connection(Role.CLIENT, host="h")
    server = s2s.Http1Connection(Role.SERVER)
    request = s2s.SessionRequest(s2s.Session.READ, "s", query=s2s.ReadQuery(seq_num=0))
    wire = client.send(request)
    assert wire.startswith(b"GET /v1/streams/s/records?seq_num=0 HTTP/1.1\r\n")
    assert _pump(wire, server) == [request]
    batch = s2s.ReadBatch((s2s.SequencedRecord(0, 1, b"a"),), POS(1, 1))
    data = server.send(s2s.SessionResponse()) + server.send(batch)
    data += server.send(s2s.Heartbeat(POS(1, 1))) + server.send(s2s.EndOfBody())
    assert _pump(data, client) == [s2s.SessionResponse(), batch, s2s.Heartbeat(POS(1, 1))]
    assert client.finished


def test_terminal_frame_ends_the_response_body() -> None:
    client = s2s.Http1Connection(Role.CLIENT, host="h")
    server = s2s.Http1Connection(Role.SERVER)
    server.receive_data(client.send(s2s.SessionRequest(s2s.Session.READ, "s")))
    list(server.events())
    data = server.send(s2s.SessionResponse())
    data += server.send(s2s.Terminal(status=416, tail=POS(9, 9)))
    assert server.finished
    client.receive_data(data)
    assert client.next_event() == s2s.SessionResponse()
    with pytest.raises(s2s.ReadUnwritten):
        client.next_event()


def test_pre_session_error_is_a_json_response_the_client_raises() -> None:
    client = s2s.Http1Connection(Role.CLIENT, host="h")
    server = s2s.Http1Connection(Role.SERVER)
    server.receive_data(b"GET /nowhere HTTP/1.1\r\nhost: h\r\n\r\n")
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    assert isinstance(caught.value.reply, s2s.ErrorResponse)
    assert not server.finished
    data = server.send(caught.value.reply)
    assert data.startswith(b"HTTP/1.1 404 ")
    assert server.finished
    client.send(s2s.SessionRequest(s2s.Session.READ, "s"))
    client.receive_data(data)
    with pytest.raises(s2s.SessionTerminated) as refused:
        client.next_event()
    assert refused.value.terminal.code == "bad_path"
    assert client.finished


def test_server_error_inside_the_session_is_answered_with_a_terminal_frame() -> None:
    client = s2s.Http1Connection(Role.CLIENT, host="h")
    server = s2s.Http1Connection(Role.SERVER)
    server.receive_data(client.send(s2s.SessionRequest(s2s.Session.APPEND, "s")))
    list(server.events())
    head = server.send(s2s.SessionResponse())
    server.receive_data(b"4\r\n\x00\x00\x00\x00\r\n")  # a frame of length 0 in a chunk
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    assert isinstance(caught.value.reply, s2s.Terminal)
    tail = server.send(caught.value.reply)
    assert server.finished
    client.receive_data(head + tail)
    assert client.next_event() == s2s.SessionResponse()
    with pytest.raises(s2s.SessionTerminated) as ended:
        client.next_event()
    assert ended.value.code == 400


def test_malformed_http_gets_a_400() -> None:
    server = s2s.Http1Connection(Role.SERVER)
    server.receive_data(b"NOT HTTP\r\n\r\n")
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    assert isinstance(caught.value.reply, s2s.ErrorResponse)
    assert server.send(caught.value.reply).startswith(b"HTTP/1.1 400 ")


def test_order_of_sends_is_enforced() -> None:
    client = s2s.Http1Connection(Role.CLIENT)
    with pytest.raises(LocalProtocolError):
        client.send(s2s.AppendInput((s2s.AppendRecord(b"x"),)))
    server = s2s.Http1Connection(Role.SERVER)
    with pytest.raises(LocalProtocolError):
        server.send(s2s.SessionResponse())
    with pytest.raises(LocalProtocolError):
        server.send(s2s.Heartbeat(POS(0, 0)))


def test_client_closed_mid_response_is_an_error() -> None:
    client = s2s.Http1Connection(Role.CLIENT, host="h")
    client.send(s2s.SessionRequest(s2s.Session.READ, "s"))
    client.receive_data(
        b"HTTP/1.1 200 OK\r\ncontent-type: s2s/proto\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    assert client.next_event() == s2s.SessionResponse()
    client.receive_data(b"")
    with pytest.raises(RemoteProtocolError):
        client.next_event()


@given(data=st.binary(max_size=200), role=st.sampled_from(list(Role)))
def test_random_bytes_give_events_or_our_errors_only(data: bytes, role: Role) -> None:
    conn = s2s.Http1Connection(role, host="h")
    if role is Role.CLIENT:
        conn.send(s2s.SessionRequest(s2s.Session.READ, "s"))
    conn.receive_data(data)
    try:
        while conn.next_event() is not NEED_DATA:
            pass
    except RemoteProtocolError:
        assert conn.state in (s2s.ConnectionState.ERROR, s2s.ConnectionState.TERMINATED)


def _verdict_on_a_long_head(size: int, piece: int) -> object:
    """A client's verdict on a response whose head is ``size`` bytes, fed in ``piece``-byte
    pieces with events read between them: the events, or the refusal's code."""
    client = s2s.Http1Connection(Role.CLIENT, host="h")
    client.send(s2s.SessionRequest(s2s.Session.READ, "s"))
    head = b"HTTP/1.1 200 OK\r\ncontent-type: s2s/proto\r\nx-pad: "
    data = head + b"a" * (size - len(head) - 4) + b"\r\n\r\n"
    seen: list[object] = []
    try:
        for at in range(0, len(data), piece):
            client.receive_data(data[at : at + piece])
            seen += client.events()
    except RemoteProtocolError as exc:
        return exc.code
    return seen


@pytest.mark.parametrize("size", [16 * 1024 - 100, 16 * 1024 + 1, 16 * 1024 + 2, 17_000, 20 * 1024])
def test_a_head_near_the_bound_gets_the_same_verdict_in_any_pieces(size: int) -> None:
    """h11 bounds a head only while it is incomplete (16 KiB by default): a slice that fills its
    buffer past one byte over the bound let a 17 KB head through when it came whole, and not
    when it came in 100-byte pieces. A head is taken if it is whole at one byte over."""
    verdicts = [_verdict_on_a_long_head(size, piece) for piece in (size, 1460, 100, 7)]
    assert verdicts[1:] == verdicts[:-1]
    assert isinstance(verdicts[0], list) == (size <= 16 * 1024 + 1)
