"""Faults injected in front of a real server: a TCP proxy on 127.0.0.1 that misbehaves on purpose.

Two faults, both of a sloppy server: it keeps the client's connection open after the server
closed its side (a fatal error that does not end the conversation), and it hangs (swallows the
server's answer) once a client has sent more than ``hang_after`` bytes. Everything else is
forwarded as it comes. The proxy stops with its ``with`` block, closing every connection.
"""

from __future__ import annotations

import select
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Handler = Callable[[socket.socket, threading.Event], None]
"""Serves one accepted connection until it ends or the event (the server stopping) is set."""


@contextmanager
def tcp_server(handle: Handler) -> Iterator[int]:
    """A TCP server on 127.0.0.1 that serves each connection with ``handle`` in a thread of its
    own; yields its port, and stops (joining every thread) with the ``with`` block."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()
    threads: list[threading.Thread] = []

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=handle, args=(conn, stop), daemon=True)
            thread.start()
            threads.append(thread)

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        acceptor.join(5)
        listener.close()
        for thread in threads:
            thread.join(5)


@contextmanager
def sloppy_proxy(port: int, *, hang_after: int = 4096) -> Iterator[int]:
    """A proxy to the server at 127.0.0.1:``port`` with both faults; yields its own port."""

    def pump(client: socket.socket, stop: threading.Event) -> None:
        client.settimeout(2)
        try:
            server = socket.create_connection(("127.0.0.1", port), timeout=2)
        except OSError:
            client.close()
            return
        server.settimeout(2)
        sent = 0
        client_open = server_open = True
        try:
            while not stop.is_set() and client_open:
                watched = [client, server] if server_open else [client]
                ready, _, _ = select.select(watched, [], [], 0.1)
                for source in ready:
                    try:
                        data = source.recv(65536)
                    except OSError:
                        data = b""
                    if source is client:
                        if not data:
                            client_open = False
                            break
                        sent += len(data)
                        server.sendall(data)
                    elif not data:
                        server_open = False  # fault 1: the client is not told
                    elif sent <= hang_after:  # fault 2: past hang_after, answers are lost
                        client.sendall(data)
        except OSError:
            pass
        finally:
            server.close()
            client.close()

    with tcp_server(pump) as own:
        yield own
