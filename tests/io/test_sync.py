"""The blocking-socket adapter in both roles, over real sockets on 127.0.0.1."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from s3p_codec import RemoteProtocolError, Role
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.sync import SyncConnection, SyncServer, connect, serve
from tests.io.linecodec import Line, LineConnection

pytestmark = [pytest.mark.network, pytest.mark.timeout(30)]

LineSync = SyncConnection[Line, Line]


class EchoServer:
    """Echoes each line as ``echo:<line>``; ``QUIT`` is answered with ``BYE``, which finishes."""

    def __init__(self) -> None:
        self.errors: list[RemoteProtocolError] = []
        self.done = threading.Semaphore(0)
        self.server: SyncServer[Line, Line] = serve(lambda: LineConnection(Role.SERVER), self.run)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return self.server.address[1]

    def run(self, conn: LineSync) -> None:
        try:
            while True:
                try:
                    line = conn.next_event()
                except RemoteProtocolError as error:
                    self.errors.append(error)
                    if error.fatal:
                        raise
                    continue
                # Kept, not written: next_event writes them before it waits for more input.
                reply = Line(b"BYE") if line.data == b"QUIT" else Line(b"echo:" + line.data)
                conn.send(reply, flush=False)
        finally:
            self.done.release()

    def client(self) -> LineSync:
        return connect(LineConnection(Role.CLIENT), "127.0.0.1", self.port, timeout=5.0)

    def raw(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=5.0)


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    server = EchoServer()
    yield server
    server.server.close()
    server.thread.join(5)


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_client_and_server_roles_exchange_events(echo: EchoServer) -> None:
    with echo.client() as conn:
        for word in (b"a", b"bb", b"ccc"):
            conn.send(Line(word))
        assert [conn.next_event() for _ in range(3)] == [
            Line(b"echo:a"),
            Line(b"echo:bb"),
            Line(b"echo:ccc"),
        ]


def test_iteration_ends_at_clean_eof_and_next_event_raises_connection_closed(
    echo: EchoServer,
) -> None:
    conn = echo.client()
    conn.send(Line(b"x"))
    conn.send(Line(b"QUIT"))  # the server answers BYE, which finishes its codec: it closes
    assert list(conn) == [Line(b"echo:x"), Line(b"BYE")]
    with pytest.raises(ConnectionClosed):
        conn.next_event()
    assert conn.closed


def test_send_on_a_closed_connection_raises_connection_closed(echo: EchoServer) -> None:
    conn = echo.client()
    conn.close()
    with pytest.raises(ConnectionClosed):
        conn.send(Line(b"late"))


def test_a_finished_codec_closes_the_transport_after_sending(echo: EchoServer) -> None:
    with echo.raw() as sock:
        sock.sendall(b"QUIT\nnever answered\n")
        assert read_all(sock) == b"BYE\n"
    assert echo.done.acquire(timeout=5)


def test_fatal_remote_error_on_server_sends_the_reply_closes_and_reraises(
    echo: EchoServer,
) -> None:
    with echo.raw() as sock:
        sock.sendall(b"a\n!x\nb\n")
        assert read_all(sock) == b"echo:a\nERR bang\n"  # nothing after the error reply
    assert echo.done.acquire(timeout=5)
    assert [e.fatal for e in echo.errors] == [True]


def test_recoverable_remote_error_sends_the_reply_and_keeps_the_connection(
    echo: EchoServer,
) -> None:
    with echo.client() as conn:
        conn.socket.sendall(b"?q\nc\n")
        assert conn.next_event() == Line(b"WARN question")
        assert conn.next_event() == Line(b"echo:c")
    assert [e.fatal for e in echo.errors] == [False]


def test_peer_closing_mid_event_is_a_remote_error_and_the_server_keeps_serving(
    echo: EchoServer,
) -> None:
    with echo.raw() as sock:
        sock.sendall(b"partial")
    assert echo.done.acquire(timeout=5)
    assert echo.errors
    assert echo.errors[0].fatal
    with echo.client() as conn:
        conn.send(Line(b"still here"))
        assert conn.next_event() == Line(b"echo:still here")


def test_client_role_raises_without_sending_the_reply_and_closes() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        conn = connect(LineConnection(Role.CLIENT), "127.0.0.1", port, timeout=5.0)
        peer, _ = listener.accept()
        with peer:
            peer.settimeout(5.0)
            peer.sendall(b"!boom\n")
            with pytest.raises(RemoteProtocolError):
                conn.next_event()
            assert conn.closed
            assert read_all(peer) == b""  # the client wrote no reply, just closed


def test_timeout_bounds_a_read() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        conn = connect(LineConnection(Role.CLIENT), "127.0.0.1", port, timeout=0.2)
        with conn, pytest.raises(TimeoutError):
            conn.next_event()


def test_events_split_across_many_reads_come_out_whole(echo: EchoServer) -> None:
    with echo.raw() as raw:
        conn = SyncConnection(LineConnection(Role.CLIENT), raw, receive_size=1)
        conn.send(Line(b"one byte at a time"))
        assert conn.next_event() == Line(b"echo:one byte at a time")
        conn.close()


def test_send_without_flush_keeps_bytes_until_flush_next_event_or_close() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        conn = connect(LineConnection(Role.CLIENT), "127.0.0.1", port, timeout=5.0)
        peer, _ = listener.accept()
        with peer:
            peer.settimeout(0.2)
            conn.send(Line(b"one"), flush=False)
            conn.send(Line(b"two"), flush=False)
            with pytest.raises(TimeoutError):
                peer.recv(100)  # nothing written yet
            conn.flush()
            peer.settimeout(5.0)
            assert peer.recv(100) == b"one\ntwo\n"
            conn.send(Line(b"three"), flush=False)
            peer.sendall(b"reply\n")
            assert conn.next_event() == Line(b"reply")  # no wait needed: nothing written
            conn.send(Line(b"four"), flush=False)
            peer.sendall(b"x")
            conn.socket.settimeout(0.2)
            with pytest.raises(TimeoutError):
                conn.next_event()  # had to wait for the peer: wrote "three" and "four" first
            assert read_some(peer) == b"three\nfour\n"
            conn.send(Line(b"five"), flush=False)
            conn.close()
            assert read_all(peer) == b"five\n"


def read_some(sock: socket.socket) -> bytes:
    return sock.recv(65536)


def test_close_gives_up_on_a_peer_that_stopped_reading() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        conn = connect(LineConnection(Role.CLIENT), "127.0.0.1", port)
        conn.close_timeout = 0.2
        peer, _ = listener.accept()
        with peer:
            conn.socket.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                while True:  # fill both kernel buffers: the peer reads nothing
                    conn.socket.send(b"x" * 65536)
            conn.socket.setblocking(True)
            conn.send(Line(b"kept"), flush=False)
            started = time.monotonic()
            conn.close()
            assert time.monotonic() - started < 3
            assert conn.closed
