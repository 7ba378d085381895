"""The example Durable Streams server against 1,100 silent connections and one slowloris: how
many it still holds, and whether a newcomer is served.

::

    .venv/bin/python benchmarks/connection_policy_bench.py               # this checkout
    .venv/bin/python benchmarks/connection_policy_bench.py --code DIR    # an older checkout

The server runs in this process on 127.0.0.1 with ``--idle-timeout 3 --request-timeout 2``
(where the checkout has a connection policy; the default cap of 1,024 connections), the clients
in a thread. An older checkout without the policy is started with its defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SILENT = 1100


def _still_open(socks: list[socket.socket]) -> int:
    count = 0
    for sock in socks:
        sock.setblocking(False)
        try:
            count += sock.recv(1) != b""
        except BlockingIOError:
            count += 1
        except OSError:
            pass
    return count


def _clients(port: int, result: dict[str, Any]) -> None:
    silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(SILENT)]
    slow = socket.create_connection(("127.0.0.1", port))
    newcomer = socket.create_connection(("127.0.0.1", port), timeout=5)
    newcomer.sendall(b"GET /x HTTP/1.1\r\nhost: h\r\n\r\n")
    result["served"] = bool(newcomer.recv(100))
    result["at 1 s"] = _still_open(silent)
    started = time.monotonic()
    result["slowloris"] = "still open after 10 s"
    for _ in range(20):
        try:
            slow.sendall(b"G")  # a request that never ends, one byte every 0.5 s
            time.sleep(0.5)
        except OSError:
            result["slowloris"] = f"closed after {time.monotonic() - started:.1f} s"
            break
    time.sleep(max(0.0, started + 10 - time.monotonic()))
    result["at 11 s"] = _still_open(silent)


async def _run(port: int) -> dict[str, Any]:
    from examples import durable_server

    try:
        from examples import _policy
    except ImportError:  # a checkout before the policy
        await durable_server.start("127.0.0.1", port)
    else:
        policy = _policy.ConnectionPolicy(idle_timeout=3, request_timeout=2)
        await durable_server.start("127.0.0.1", port, policy=policy)
    result: dict[str, Any] = {}
    thread = threading.Thread(target=_clients, args=(port, result))
    thread.start()
    while thread.is_alive():
        await asyncio.sleep(0.1)
    # Connections still open are cancelled when the loop ends: not worth a traceback each.
    asyncio.get_running_loop().set_exception_handler(lambda loop, context: None)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", default=str(ROOT), help="directory holding the checkout")
    parser.add_argument("--port", type=int, default=47007)
    args = parser.parse_args()
    sys.path.insert(0, args.code)
    result = asyncio.run(_run(args.port))
    print(
        f"newcomer served: {result['served']}; silent connections held at 1 s: "
        f"{result['at 1 s']}/{SILENT}, at 11 s: {result['at 11 s']}/{SILENT}; "
        f"slowloris {result['slowloris']}"
    )


if __name__ == "__main__":
    main()
