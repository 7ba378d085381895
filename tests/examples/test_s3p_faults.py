"""Faulty clients against the example server: each fault stays on its own connection.

A bystander connection, opened before the fault, must still be answered after it, and so must a
new connection: "the server keeps serving every other client throughout".
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from s3p_codec import Role, s3p
from s3p_codec.io.sync import SyncConnection
from tests.examples.conftest import RunningServer
from tests.examples.test_s3p_server import (
    assert_still_serving,
    call,
    client,
    command,
    fresh_name,
    raw,
    read_until_eof,
)

pytestmark = [pytest.mark.network, pytest.mark.timeout(60)]


@pytest.fixture
def bystander(server: RunningServer) -> Iterator[SyncConnection[s3p.Event, s3p.Event]]:
    with client(server) as conn:
        assert call(conn, s3p.Create(fresh_name("bystander"))) == s3p.Ok()
        yield conn
        assert_still_serving(server, conn)


def test_client_disconnecting_mid_frame(
    server: RunningServer, bystander: SyncConnection[s3p.Event, s3p.Event]
) -> None:
    name = fresh_name()
    assert call(bystander, s3p.Create(name)) == s3p.Ok()
    whole = command(b"APPEND", name, [], [b"complete"])
    for cut in (1, 9, len(whole) - 3):  # inside a header, a name, the last CRLF
        with raw(server) as sock:
            sock.sendall(whole + whole[:cut])
            sock.shutdown(socket.SHUT_WR)
            reply = read_until_eof(sock)
        # The complete APPEND is answered, then the cut frame gets an error reply and EOF.
        timestamp, error = reply.split(b"\r\n", 2)[1:]
        assert s3p.Timestamp.parse(timestamp)
        assert error.startswith(b"-ERR_BAD_FORMAT ")
        assert error.count(b"\r\n") == 1
    # Abrupt close (RST) in the middle of a frame, too.
    with raw(server) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.sendall(whole[:12])
    stored = call(bystander, s3p.Read(name, count=100))
    assert isinstance(stored, s3p.ReadReply)
    assert [payload for _, payload in stored.records] == [b"complete"] * 3


def test_client_sending_one_byte_at_a_time(
    server: RunningServer, bystander: SyncConnection[s3p.Event, s3p.Event]
) -> None:
    name = fresh_name()
    client_codec = s3p.Connection(Role.CLIENT)
    requests: list[s3p.Request] = [
        s3p.Create(name),
        s3p.Append(name, (b"one", b"byte at a time")),
        s3p.Read(name, count=10),
    ]
    wire = b"".join(client_codec.send(r) for r in requests)
    with raw(server) as sock:
        for index in range(len(wire)):
            sock.send(wire[index : index + 1])
            if index % 16 == 0:  # let the server see most bytes on their own
                time.sleep(0.001)
        sock.shutdown(socket.SHUT_WR)
        client_codec.receive_data(read_until_eof(sock))
        client_codec.receive_data(b"")
    ok, appended, read = client_codec.events()
    assert ok == s3p.Ok()
    assert isinstance(appended, s3p.AppendReply)
    assert isinstance(read, s3p.ReadReply)
    assert [p for _, p in read.records] == [b"one", b"byte at a time"]


def test_oversized_record_gets_err_limits_from_its_header_then_close(
    server: RunningServer, bystander: SyncConnection[s3p.Event, s3p.Event]
) -> None:
    name = fresh_name()
    assert call(bystander, s3p.Create(name)) == s3p.Ok()
    header_only = command(b"APPEND", name, []).replace(b"*3\r\n", b"*4\r\n", 1)
    header_only += b"*1\r\n$10000000\r\n"  # 10 MB announced, never sent
    with raw(server) as sock:
        sock.sendall(header_only)
        reply = read_until_eof(sock)  # answered and closed without waiting for the payload
    assert reply.startswith(b"-ERR_LIMITS ")
    assert reply.count(b"\r\n") == 1
    assert call(bystander, s3p.Read(name)) == s3p.ReadReply(())


def test_malformed_command_in_the_middle_of_a_pipeline(
    server: RunningServer, bystander: SyncConnection[s3p.Event, s3p.Event]
) -> None:
    name = fresh_name()
    pipeline = (
        command(b"CREATE", name, [])
        + command(b"APPEND", name, [], [b"before"])
        + command(b"FROBNICATE", name, [])  # not an S3P command
        + command(b"APPEND", name, [], [b"after"])
        + command(b"READ", name, [])
    )
    with raw(server) as sock:
        sock.sendall(pipeline)
        reply = read_until_eof(sock)
    lines = reply.split(b"\r\n")
    assert lines[0] == b"+OK"
    assert lines[1].startswith(b"$")  # the APPEND's timestamp
    assert lines[3].startswith(b"-ERR_BAD_FORMAT ")
    assert lines[4:] == [b""]  # nothing after the error reply
    stored = call(bystander, s3p.Read(name, count=10))
    assert isinstance(stored, s3p.ReadReply)
    assert [payload for _, payload in stored.records] == [b"before"]  # "after" never ran
