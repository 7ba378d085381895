"""What only the blocking-socket adapter does: socket time-outs, and partial writes."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from s3p_codec import Role
from s3p_codec.io.sync import SyncConnection, connect
from tests.io.backends import read_all, tcp_pair
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
