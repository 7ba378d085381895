"""The example Pravega store's connection policy: bounded pipelined reads (back-pressure),
idle and request-progress timeouts, and a connection cap that sheds the idlest connection.

The store runs as its own process (so its memory can be measured); every client here is a
plain socket on 127.0.0.1 that writes wire frames made by our codec, and every wait is bounded.
"""

from __future__ import annotations

import socket
import struct
import time
import uuid

import pytest

from s3p_codec import pravega
from tests.examples.pravega_official_support import StoreProcess

pytestmark = pytest.mark.network

MIB = 1 << 20


def connect(store: StoreProcess) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", store.port), timeout=5)
    sock.sendall(pravega.encode(pravega.Hello()))
    assert receive_frame(sock)[0] == pravega.CommandType.HELLO
    return sock


def receive_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionResetError("closed")
        data += chunk
    return data


def receive_frame(sock: socket.socket) -> tuple[int, bytes]:
    code, size = struct.unpack(">ii", receive_exactly(sock, 8))
    return code, receive_exactly(sock, size)


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the store closes the connection within ``seconds`` (data is discarded)."""
    sock.settimeout(0.1)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if sock.recv(65536) == b"":
                return True
        except TimeoutError:
            continue
        except ConnectionError:
            return True
    return False


def fill_segment(store: StoreProcess, name: str, size: int) -> None:
    """Create ``name`` holding one event of ``size`` bytes (through a conditional append)."""
    sock = connect(store)
    writer = uuid.uuid4()
    with sock:
        sock.sendall(pravega.encode(pravega.CreateSegment(1, name)))
        assert receive_frame(sock)[0] == pravega.CommandType.SEGMENT_CREATED
        sock.sendall(pravega.encode(pravega.SetupAppend(2, writer, name)))
        assert receive_frame(sock)[0] == pravega.CommandType.APPEND_SETUP
        sock.sendall(pravega.encode(pravega.ConditionalAppend(writer, 0, 0, bytes(size), 3)))
        assert receive_frame(sock)[0] == pravega.CommandType.DATA_APPENDED


def grown_by_pipelined_reads(bounded: StoreProcess, count: int) -> int:
    """How much the store grows while a client sends ``count`` 1 MiB reads and reads nothing."""
    fill_segment(bounded, "big", MIB)
    before = bounded.rss()
    sock = connect(bounded)
    with sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        read = pravega.encode(pravega.ReadSegment("big", 0, MIB, "", 7))
        sock.setblocking(False)
        sent, deadline = 0, time.monotonic() + 10
        wire = read * count
        while sent < len(wire) and time.monotonic() < deadline:
            try:
                sent += sock.send(wire[sent:])
            except BlockingIOError:
                time.sleep(0.01)  # the store stopped reading: back-pressure
        peak = before
        for _ in range(20):  # give the store 2 s to take whatever it will take
            time.sleep(0.1)
            peak = max(peak, bounded.rss())
    return peak - before


def test_2000_pipelined_1_mib_reads_never_read_hold_a_bounded_amount_of_memory() -> None:
    with StoreProcess("--max-reads-in-flight", "16", controller=False) as store:
        grown = grown_by_pipelined_reads(store, 2000)
    # 16 replies of 1 MiB in flight (plus the transport's share); unbounded it was 2000 MiB
    assert grown < 80 * MIB, f"the store grew by {grown / MIB:.0f} MiB"


def test_without_the_bound_the_same_reads_take_a_mebibyte_each() -> None:
    # The check above can fail: with the bound off, 200 reads already cost about 200 MiB.
    with StoreProcess("--max-reads-in-flight", "0", controller=False) as store:
        grown = grown_by_pipelined_reads(store, 200)
    assert grown > 150 * MIB, f"the store grew by {grown / MIB:.0f} MiB"


def test_idle_connection_is_closed_after_the_idle_timeout() -> None:
    with StoreProcess("--idle-timeout", "0.5", controller=False) as store:
        busy, idle = connect(store), connect(store)
        with busy, idle:
            for _ in range(8):  # the busy one keeps asking: it stays open
                busy.sendall(pravega.encode(pravega.KeepAlive()))
                assert receive_frame(busy)[0] == pravega.CommandType.KEEP_ALIVE
                time.sleep(0.15)
            assert closed_within(idle, 3.0)
            busy.sendall(pravega.encode(pravega.KeepAlive()))
            assert receive_frame(busy)[0] == pravega.CommandType.KEEP_ALIVE
        assert "closing a connection: idle" in store.log


def test_a_request_trickled_in_slower_than_the_request_timeout_is_cut_off() -> None:
    with StoreProcess("--request-timeout", "0.5", "--idle-timeout", "0", controller=False) as store:
        slow = connect(store)
        with slow:
            frame = pravega.encode(pravega.GetStreamSegmentInfo(1, "s" * 60))
            slow.sendall(frame[:10])
            started = time.monotonic()
            closed = False
            for byte in frame[10:40]:  # a byte every 0.1 s: progress, but too slow
                try:
                    slow.sendall(bytes([byte]))
                except ConnectionError:
                    closed = True
                    break
                time.sleep(0.1)
            assert closed or closed_within(slow, 2.0)
            assert time.monotonic() - started < 3.5
        assert "closing a connection: request too slow" in store.log


def test_a_client_that_never_takes_its_replies_is_closed_after_the_request_timeout() -> None:
    flags = ("--request-timeout", "1", "--idle-timeout", "0", "--max-reads-in-flight", "4")
    with StoreProcess(*flags, controller=False) as store:
        fill_segment(store, "big", MIB)
        sock = connect(store)
        with sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            sock.sendall(pravega.encode(pravega.ReadSegment("big", 0, MIB, "", 7)) * 50)
            deadline = time.monotonic() + 5
            while "reply not taken" not in store.log and time.monotonic() < deadline:
                time.sleep(0.1)
        assert "closing a connection: reply not taken" in store.log


def test_at_the_connection_cap_the_idlest_connection_is_shed() -> None:
    flags = ("--max-connections", "3", "--idle-timeout", "0", "--tail-wait", "5")
    with StoreProcess(*flags, controller=False) as store:
        oldest = connect(store)
        time.sleep(0.05)
        middle, newest = connect(store), connect(store)
        with oldest, middle, newest:
            newcomer = connect(store)  # the cap is 3: the one idle longest goes
            with newcomer:
                assert closed_within(oldest, 3.0)
                for sock in (middle, newest, newcomer):
                    sock.sendall(pravega.encode(pravega.KeepAlive()))
                    assert receive_frame(sock)[0] == pravega.CommandType.KEEP_ALIVE


def test_at_the_cap_with_every_connection_busy_the_new_one_is_refused() -> None:
    flags = ("--max-connections", "2", "--idle-timeout", "0", "--tail-wait", "5")
    with StoreProcess(*flags, controller=False) as store:
        fill_segment(store, "tail", 10)
        busy = [connect(store) for _ in range(2)]
        for sock in busy:  # a tail read waits up to 5 s: the connection is busy
            sock.sendall(pravega.encode(pravega.ReadSegment("tail", 18, 100, "", 9)))
        time.sleep(0.3)
        refused = socket.create_connection(("127.0.0.1", store.port), timeout=5)
        with refused:
            assert closed_within(refused, 3.0)
        for sock in busy:
            with sock:
                sock.sendall(pravega.encode(pravega.KeepAlive()))
                assert receive_frame(sock)[0] == pravega.CommandType.KEEP_ALIVE
        assert "refusing one" in store.log


def test_the_per_address_cap_sheds_the_idlest_connection_of_that_address() -> None:
    flags = ("--max-connections-per-address", "2", "--idle-timeout", "0")
    with StoreProcess(*flags, controller=False) as store:
        first = connect(store)
        time.sleep(0.05)
        second = connect(store)
        with first, second:
            third = connect(store)  # same address (127.0.0.1): the idlest of the two goes
            with third:
                assert closed_within(first, 3.0)
                for sock in (second, third):
                    sock.sendall(pravega.encode(pravega.KeepAlive()))
                    assert receive_frame(sock)[0] == pravega.CommandType.KEEP_ALIVE
