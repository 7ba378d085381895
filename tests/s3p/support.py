"""Small utilities shared by the S3P tests: feed bytes to a codec, collect events or the error."""

from __future__ import annotations

import pytest

from s3p_codec import NEED_DATA, RemoteProtocolError, Role, s3p
from s3p_codec.s3p import ErrorCode, ErrorReply


def crlf(text: str) -> bytes:
    """The spec writes its examples one item per line; on the wire each line ends in CRLF."""
    return "".join(line + "\r\n" for line in text.strip("\n").split("\n")).encode()


def server_events(data: bytes, limits: s3p.Limits | None = None) -> list[s3p.Event]:
    conn = s3p.Connection(Role.SERVER, limits or s3p.Limits())
    conn.receive_data(data)
    return list(conn.events())


def server_error(data: bytes, limits: s3p.Limits | None = None) -> RemoteProtocolError:
    """The error a server raises for ``data`` (after any valid requests before it)."""
    conn = s3p.Connection(Role.SERVER, limits or s3p.Limits())
    conn.receive_data(data)
    with pytest.raises(RemoteProtocolError) as caught:
        list(conn.events())
    error = caught.value
    assert conn.state is s3p.ConnectionState.ERROR
    assert isinstance(error.reply, s3p.ErrorReply)
    assert error.reply.code == error.code
    return error


def client_for(*requests: s3p.Request, limits: s3p.Limits | None = None) -> s3p.Connection:
    conn = s3p.Connection(Role.CLIENT, limits or s3p.Limits())
    for request in requests:
        conn.send(request)
    return conn


def client_replies(data: bytes, *requests: s3p.Request) -> list[s3p.Event]:
    conn = client_for(*requests)
    conn.receive_data(data)
    return list(conn.events())


def client_error(data: bytes, *requests: s3p.Request) -> RemoteProtocolError:
    conn = client_for(*requests)
    conn.receive_data(data)
    with pytest.raises(RemoteProtocolError) as caught:
        list(conn.events())
    assert caught.value.reply is None
    assert conn.state is s3p.ConnectionState.ERROR
    return caught.value


def feed_garbage(conn: s3p.Connection, data: bytes, eof: bool) -> None:
    """Only events, NEED_DATA or RemoteProtocolError may come out; never anything else."""
    failure: RemoteProtocolError | None = None
    try:
        conn.receive_data(data)
        if eof:
            conn.receive_data(b"")
        for _ in range(len(data) + 2):
            if conn.next_event() is NEED_DATA:
                break
    except RemoteProtocolError as error:
        failure = error
    if failure is None:
        return
    assert isinstance(failure.code, ErrorCode)
    assert conn.state is s3p.ConnectionState.ERROR
    if conn.role is Role.SERVER:
        assert isinstance(failure.reply, ErrorReply)
        conn.send(failure.reply)
        assert conn.finished
