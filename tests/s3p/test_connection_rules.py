"""The Connection's own rules, each in its words: what ``send`` refuses and why (wrong role, no
request waiting, after an Error reply, in ERROR), the one owed Error reply after a peer's
protocol error (also at an end of stream mid-frame, checked against the configured version),
the error raised again on every later call, the end of stream, and bytes after an Error reply
being dropped, not buffered. Written from a mutation run of ``s3p/_connection.py``."""

from __future__ import annotations

import re

import pytest

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, s3p
from s3p_codec.s3p import Create, Delete, ErrorCode, ErrorReply, Ok, Read

from .support import client_for


def buffered(conn: s3p.Connection) -> int:
    """The bytes the connection holds, as its repr shows them."""
    found = re.search(r"buffered=(\d+)", repr(conn))
    assert found is not None
    return int(found[1])


def server_with(*requests: s3p.Request, version: str = "0.1.0") -> s3p.Connection:
    """A server that has read ``requests`` and answered none of them."""
    server = s3p.Connection(Role.SERVER, version=version)
    client = s3p.Connection(Role.CLIENT, version=version)
    server.receive_data(b"".join(client.send(request) for request in requests))
    assert list(server.events()) == list(requests)
    return server


def failed_server(data: bytes, version: str = "0.1.0") -> tuple[s3p.Connection, ErrorReply]:
    """A server in ERROR after ``data``, and the reply it owes."""
    server = s3p.Connection(Role.SERVER, version=version)
    server.receive_data(data)
    with pytest.raises(RemoteProtocolError) as caught:
        list(server.events())
    assert server.state is s3p.ConnectionState.ERROR
    reply = caught.value.reply
    assert isinstance(reply, ErrorReply)
    return server, reply


def done(conn: s3p.Connection) -> bool:
    """``finished``, read through a call (so that a type checker does not keep it narrowed)."""
    return conn.finished


def refusal(conn: s3p.Connection, event: s3p.Event) -> LocalProtocolError:
    with pytest.raises(LocalProtocolError) as caught:
        conn.send(event)
    return caught.value


# --- construction ----------------------------------------------------------------------------


def test_a_role_that_is_not_a_role_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match=r"^role must be a Role, got 'server'$"):
        s3p.Connection("server")  # type: ignore[arg-type]


# --- what send refuses, in its words ----------------------------------------------------------


def test_a_client_sends_requests_only() -> None:
    client = s3p.Connection(Role.CLIENT)
    error = refusal(client, Ok())
    assert error.message == "a client sends requests, not Ok"
    assert error.code is ErrorCode.BAD_FORMAT
    assert client.pending == 0


def test_a_client_closed_by_an_error_reply_sends_nothing_more() -> None:
    client = client_for(Delete(b"s"))
    client.receive_data(b"-ERR_LIMITS too much\r\n")
    assert client.next_event() == ErrorReply(ErrorCode.LIMITS, "too much")
    assert client.state is s3p.ConnectionState.CLOSED
    assert client.finished
    error = refusal(client, Create(b"s"))
    assert error.message == "cannot send on a CLOSED connection"
    assert error.code is ErrorCode.BAD_FORMAT
    assert client.pending == 0


def test_a_server_sends_replies_only() -> None:
    server = server_with(Read(b"s"))
    error = refusal(server, Read(b"s"))
    assert error.message == "a server sends replies, not Read"
    assert error.code is ErrorCode.BAD_FORMAT
    assert server.pending == 1


def test_a_server_with_nothing_to_answer_refuses_a_reply() -> None:
    server = s3p.Connection(Role.SERVER)
    error = refusal(server, Ok())
    assert error.message == "no request is waiting for a reply"
    assert error.code is ErrorCode.BAD_FORMAT
    # v0.2.0: after a recoverable error the connection is open, and the same words apply.
    server = server_with(Delete(b"s"), version="0.2.0")
    assert server.send(ErrorReply(ErrorCode.UNKNOWN_STREAM, "no")) == b"-ERR_UNKNOWN_STREAM no\r\n"
    assert server.state is s3p.ConnectionState.OPEN
    assert refusal(server, Ok()).message == "no request is waiting for a reply"


@pytest.mark.parametrize("version", ["0.1.0", "0.2.0"])
def test_after_a_fatal_error_reply_a_server_sends_nothing_more(version: str) -> None:
    """The spec: "After sending any Error reply, servers MUST close the connection
    immediately". The pipelined request behind it is dropped; a reply to it is refused."""
    server = server_with(Delete(b"s"), Delete(b"t"), version=version)
    assert server.send(ErrorReply(ErrorCode.LIMITS, "no")) == b"-ERR_LIMITS no\r\n"
    assert server.state is s3p.ConnectionState.CLOSED
    assert server.finished
    error = refusal(server, Ok())
    assert error.message == "the connection is closed: an Error reply was sent"
    assert error.code is ErrorCode.BAD_FORMAT
    error = refusal(server, ErrorReply(ErrorCode.LIMITS, "again"))
    assert error.message == "the connection is closed: an Error reply was sent"


# --- ERROR: the one owed Error reply -------------------------------------------------------


def test_in_error_a_server_sends_the_owed_error_reply_and_nothing_else() -> None:
    server, owed = failed_server(b"+hello\r\n")
    error = refusal(server, Ok())
    assert error.message == "after a protocol error only one ErrorReply may be sent"
    assert error.code is ErrorCode.BAD_FORMAT
    assert not done(server)  # still owed
    assert server.send(owed) == b"-ERR_BAD_FORMAT commands MUST be sent as a top-level Array\r\n"
    assert server.finished
    error = refusal(server, owed)
    assert error.message == "the connection is closed: an Error reply was sent"
    assert error.code is ErrorCode.BAD_FORMAT


def test_requests_read_before_a_protocol_error_are_not_answered_after_its_reply() -> None:
    """The request read before the bad bytes stays unanswered: once the owed Error reply is
    sent the connection is closed, finished, and a reply to that request is refused."""
    server = s3p.Connection(Role.SERVER)
    server.receive_data(client_for().send(Delete(b"s")) + b"+hello\r\n")
    assert server.next_event() == Delete(b"s")
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    owed = caught.value.reply
    assert isinstance(owed, ErrorReply)
    assert server.send(owed).startswith(b"-ERR_BAD_FORMAT ")
    assert server.state is s3p.ConnectionState.CLOSED
    assert server.finished
    error = refusal(server, Ok())
    assert error.message == "the connection is closed: an Error reply was sent"
    assert error.code is ErrorCode.BAD_FORMAT


def test_the_owed_error_reply_is_checked_against_the_configured_version() -> None:
    """ERR_NON_MONOTONIC_ID is a v0.2.0 code: a v0.1.0 server may not send it, even as the
    reply it owes; a v0.2.0 server may, and is closed after it all the same (after a protocol
    error any Error reply ends the connection, a recoverable code included)."""
    server, _ = failed_server(b"+hello\r\n", version="0.1.0")
    error = refusal(server, ErrorReply(ErrorCode.NON_MONOTONIC_ID, "x"))
    assert error.message == "ERR_NON_MONOTONIC_ID is not an error code of S3P v0.1.0"
    assert error.code is ErrorCode.BAD_FORMAT
    assert not done(server)  # the debt is still owed
    server, _ = failed_server(b"+hello\r\n", version="0.2.0")
    assert server.send(ErrorReply(ErrorCode.NON_MONOTONIC_ID, "x")) == (
        b"-ERR_NON_MONOTONIC_ID x\r\n"
    )
    assert server.state is s3p.ConnectionState.CLOSED
    assert server.finished


def test_the_error_is_raised_again_on_every_later_call() -> None:
    """A header line past its bound is refused before its CRLF arrives (the buffer still waits
    for more bytes); every later call raises the same code again, fatal, in the same words."""
    server = s3p.Connection(Role.SERVER)
    server.receive_data(b"*" + b"1" * 40)
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    first = caught.value
    assert first.message == "line longer than 21 bytes without CRLF"
    assert first.code is ErrorCode.BAD_FORMAT
    assert first.fatal is True
    for _ in range(2):
        with pytest.raises(RemoteProtocolError) as caught:
            server.next_event()
        again = caught.value
        assert again.message == "connection already failed: line longer than 21 bytes without CRLF"
        assert again.code is ErrorCode.BAD_FORMAT
        assert again.fatal is True
    assert server.state is s3p.ConnectionState.ERROR


def test_a_reply_with_no_pending_request_is_refused_in_its_words() -> None:
    client = s3p.Connection(Role.CLIENT)
    client.receive_data(b"+OK\r\n")
    with pytest.raises(RemoteProtocolError) as caught:
        client.next_event()
    assert caught.value.message == "a reply arrived with no pending request"
    assert caught.value.code is ErrorCode.BAD_FORMAT
    assert caught.value.reply is None  # a client owes nothing
    assert client.state is s3p.ConnectionState.ERROR
    assert client.finished


# --- end of stream -------------------------------------------------------------------------


def test_eof_mid_frame_on_a_server_owes_its_error_reply() -> None:
    server = s3p.Connection(Role.SERVER)
    server.receive_data(b"*3\r\n$6\r\nDEL")
    assert server.next_event() is NEED_DATA
    server.receive_data(b"")
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    error = caught.value
    assert error.message == "the peer closed the connection mid-frame"
    assert error.code is ErrorCode.BAD_FORMAT
    assert error.reply == ErrorReply(ErrorCode.BAD_FORMAT, error.message)
    assert server.state is s3p.ConnectionState.ERROR
    assert not done(server)  # the reply is owed
    assert server.send(error.reply) == (
        b"-ERR_BAD_FORMAT the peer closed the connection mid-frame\r\n"
    )
    assert server.finished


@pytest.mark.parametrize("role", list(Role))
def test_data_after_eof_is_refused_in_its_words(role: Role) -> None:
    conn = s3p.Connection(role)
    conn.receive_data(b"")
    with pytest.raises(LocalProtocolError) as caught:
        conn.receive_data(b"+OK\r\n")
    assert caught.value.message == "data received after end of stream"
    assert caught.value.code is ErrorCode.BAD_FORMAT
    conn.receive_data(b"")  # a second end of stream is no error
    assert conn.next_event() is NEED_DATA
    assert buffered(conn) == 0


# --- bytes after an Error reply ------------------------------------------------------------


def test_bytes_after_a_protocol_error_are_dropped_not_buffered() -> None:
    server, owed = failed_server(b"+hello\r\n")
    held = buffered(server)
    server.receive_data(client_for().send(Delete(b"s")))
    assert buffered(server) == held
    server.send(owed)
    server.receive_data(b"more")
    assert buffered(server) == held


def test_bytes_after_an_error_reply_sent_are_dropped_not_buffered() -> None:
    server = server_with(Delete(b"s"))
    server.send(ErrorReply(ErrorCode.UNKNOWN_STREAM, "no"))
    assert server.state is s3p.ConnectionState.CLOSED
    server.receive_data(client_for().send(Delete(b"t")))
    assert buffered(server) == 0
    assert server.next_event() is NEED_DATA


def test_bytes_after_an_error_reply_received_are_dropped_not_buffered() -> None:
    client = client_for(Delete(b"s"), Delete(b"t"))
    client.receive_data(b"-ERR_LIMITS no\r\n")
    assert client.next_event() == ErrorReply(ErrorCode.LIMITS, "no")
    assert client.state is s3p.ConnectionState.CLOSED
    held = buffered(client)
    client.receive_data(b"+OK\r\n")
    assert buffered(client) == held
    assert client.next_event() is NEED_DATA
