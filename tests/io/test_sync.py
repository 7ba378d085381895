"""What only the blocking-socket adapter does: socket time-outs, and partial writes."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from s3p_codec import Role
from s3p_codec.io.sync import SyncConnection, SyncServer, connect, serve
from tests.io.backends import read_all, read_exactly, tcp_pair
from tests.io.linecodec import Line, LineConnection

pytestmark = [pytest.mark.network, pytest.mark.timeout(30)]


def test_timeout_bounds_a_read() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        conn = connect(LineConnection(Role.CLIENT), "127.0.0.1", port, timeout=0.2)
        with conn, pytest.raises(TimeoutError):
            conn.next_event()


def test_a_write_that_timed_out_keeps_what_the_socket_did_not_take() -> None:
    """``sendall`` cannot say how much went out before its time-out; the adapter can, and
    ``flush()`` later writes exactly the rest: the peer reads every byte once, in order."""
    ours, peer = tcp_pair(small=True)
    with peer:
        conn = SyncConnection(LineConnection(Role.CLIENT), ours)
        ours.settimeout(0.2)
        big = Line(bytes(range(11, 256)) * 4096)  # 1 MB: far more than the buffers take
        with pytest.raises(TimeoutError):
            conn.send(big)
        received: list[bytes] = []
        reader = threading.Thread(target=lambda: received.append(read_all(peer)), daemon=True)
        reader.start()
        ours.settimeout(5.0)
        conn.send(Line(b"after"))  # goes after the rest of the first line, not into it
        assert conn.bytes_written == len(big.data) + len(b"\nafter\n")  # each byte once
        assert not conn.write_waiting
        conn.close()
        reader.join(5)
        assert received == [big.data + b"\nafter\n"]


def test_a_write_keeps_to_the_socket_timeout_as_a_whole() -> None:
    """The time-out bounds the whole write, not each partial send of it."""
    ours, peer = tcp_pair(small=True)
    with peer:
        conn = SyncConnection(LineConnection(Role.CLIENT), ours)
        ours.settimeout(0.5)
        stop = threading.Event()

        def trickle() -> None:  # takes a little now and then: every send makes progress
            while not stop.wait(0.05):
                try:
                    peer.recv(2048)
                except OSError:
                    return

        reader = threading.Thread(target=trickle, daemon=True)
        reader.start()
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            conn.send(Line(b"x" * (1 << 20)))
        assert time.monotonic() - started < 2
        assert ours.gettimeout() == 0.5  # restored after the write
        stop.set()
        conn.close()
        reader.join(5)


# --- the threaded server ------------------------------------------------------------------------


def _echo(conn: SyncConnection[Line, Line]) -> None:
    for line in conn:
        conn.send(line)


def _running(timeout: float | None) -> tuple[SyncServer[Line, Line], threading.Thread]:
    server = serve(lambda: LineConnection(Role.SERVER), _echo, timeout=timeout)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


def _handlers(server: SyncServer[Line, Line]) -> int:
    return len(server._threads)


def test_server_timeout_closes_a_silent_connection() -> None:
    server, thread = _running(timeout=0.3)
    try:
        with socket.create_connection(server.address, timeout=5) as sock:
            began = time.monotonic()
            assert sock.recv(10) == b""  # the server gave up on us: end of stream
            assert 0.2 < time.monotonic() - began < 3
            deadline = time.monotonic() + 3
            while _handlers(server) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert _handlers(server) == 0
    finally:
        server.close()
        thread.join(5)


def test_server_timeout_leaves_a_talking_connection_alone() -> None:
    server, thread = _running(timeout=0.5)
    try:
        with connect(LineConnection(Role.CLIENT), *server.address, timeout=5) as conn:
            for index in range(4):
                time.sleep(0.2)  # each pause shorter than the time-out, all of them longer
                conn.send(Line(b"%d" % index))
                assert conn.next_event() == Line(b"%d" % index)
    finally:
        server.close()
        thread.join(5)


def test_close_cuts_connections_whose_handlers_outlive_the_grace_period() -> None:
    server, thread = _running(timeout=None)
    with socket.create_connection(server.address, timeout=5) as sock:
        sock.sendall(b"hello\n")
        assert read_exactly(sock, 6) == b"hello\n"
        # The handler now waits for a peer that says nothing more, with no time-out.
        began = time.monotonic()
        server.close(timeout=0.2)
        assert time.monotonic() - began < 3
        assert _handlers(server) == 0
        assert sock.recv(10) == b""  # and the client sees the connection end
    thread.join(5)
    assert not thread.is_alive()


def test_close_waits_for_all_handlers_within_one_grace_period() -> None:
    server, thread = _running(timeout=None)
    socks = [socket.create_connection(server.address, timeout=5) for _ in range(4)]
    try:
        for sock in socks:
            sock.sendall(b"x\n")
            assert read_exactly(sock, 2) == b"x\n"
        began = time.monotonic()
        server.close(timeout=0.3)
        assert time.monotonic() - began < 0.3 + 2  # not 4 x 0.3 s one after the other
        assert _handlers(server) == 0
    finally:
        for sock in socks:
            sock.close()
        thread.join(5)
