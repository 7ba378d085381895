"""Record the sample captures: tcpdump on loopback while the example clients talk to the servers.

::

    sudo .venv/bin/python examples/captures/record.py            # every sample below
    sudo .venv/bin/python examples/captures/record.py s3p rustlog

Needs tcpdump (Debian: ``apt-get install tcpdump``) and the right to capture on ``lo`` (root, or
CAP_NET_RAW on tcpdump). Each protocol's example server is started on its usual port, tcpdump
records that port, the example client commands below run one after the other, and everything
stops. Next to each capture, ``<name>.json`` records the commands run and what each client
printed, so tests can check that the decoded events are what the clients sent and received.

``s3p_v020.pcap`` is S3P v0.2.0 (the server and client run with ``--s3p-version 0.2.0``): IDs
given with ``append --id``, ``read --min-id``, and one connection that pipelines past two
recoverable errors (its ``.json`` step lists the replies read in order).

The captures vary on purpose: ``s3p.pcap`` and ``pravega.pcap`` are plain Ethernet-framed
loopback captures, ``rustlog.pcap`` is recorded on the ``any`` pseudo-interface (Linux cooked
headers), ``durable.pcap.gz`` is gzip-compressed, ``s2s.pcap`` carries S2S appends and reads
over HTTP/1.1 (a small client below), ``s2s_h2.pcap`` the official SDK (PyPI ``s2-sdk``)
speaking S2S over HTTP/2 with prior knowledge to the same example server: append sessions
without, with zstd and with gzip compression, each on its own connection, then a read session
asking for zstd (its ``.json`` lists, one JSON object a line, each batch appended with its ack
and the records read). ``pravega_official.pcap`` is the official Pravega client (PyPI
``pravega``, the Rust client) against the example store and its controller (only the store's
port is recorded, not the controller's gRPC): a writer over two segments, a committed and an
aborted transaction, a reader group (table-segment commands) and a byte stream.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PY = sys.executable

Step = list[str] | tuple[list[str], str] | Callable[[int], str]
"""A client command (argv after ``python -m``), with stdin text, or a function of the port."""


def _wait_for_port(port: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


def _s2s_client(port: int) -> str:
    """Create a stream, then append to it and read it back with S2S over HTTP/1.1."""
    sys.path.insert(0, str(ROOT))
    from s3p_codec import Role, s2s  # noqa: PLC0415 - only this step needs it
    from s3p_codec.io.sync import connect  # noqa: PLC0415

    host = f"127.0.0.1:{port}"
    lines = []
    body = b'{"stream": "orders"}'
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/streams HTTP/1.1\r\nhost: " + host.encode() + b"\r\n"
            b"authorization: Bearer demo\r\ns2-basin: demo\r\ncontent-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body
        )
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    lines.append(reply.split(b"\r\n", 1)[0].decode())
    append = s2s.SessionRequest(s2s.Session.APPEND, "orders", basin="demo", token="demo")
    with connect(s2s.Http1Connection(Role.CLIENT, host=host), "127.0.0.1", port) as conn:
        conn.send(append)
        lines.append(repr(conn.next_event()))
        for batch in ((b"hello", b"world"), (b"x" * 3000,), (b"last",)):
            conn.send(s2s.AppendInput(tuple(s2s.AppendRecord(body) for body in batch)))
            lines.append(repr(conn.next_event()))
        conn.send(s2s.EndOfBody())
    read = s2s.SessionRequest(
        s2s.Session.READ, "orders", basin="demo", token="demo",
        query=s2s.ReadQuery(seq_num=0, count=4),
    )  # fmt: skip
    with connect(s2s.Http1Connection(Role.CLIENT, host=host), "127.0.0.1", port) as conn:
        conn.send(read)
        for event in conn:
            lines.append(repr(event))
    return "\n".join(lines) + "\n"


def _s3p_v020_pipeline(port: int) -> str:
    """One v0.2.0 connection, pipelined: two recoverable errors, then a READ still answered."""
    sys.path.insert(0, str(ROOT))
    from s3p_codec import Role, s3p  # noqa: PLC0415 - only this step needs it
    from s3p_codec.io.sync import connect  # noqa: PLC0415

    requests = [
        s3p.Create(b"orders"),  # ERR_STREAM_EXISTS: recoverable in v0.2.0
        s3p.Append(b"orders", (b"late",), id=1),  # ERR_NON_MONOTONIC_ID: recoverable too
        s3p.Read(b"orders", count=2, min_id=s3p.Id(0, 0)),
    ]
    codec = s3p.Connection(Role.CLIENT, version="0.2.0")
    with connect(codec, "127.0.0.1", port, timeout=5) as conn:
        for request in requests:
            conn.send(request)
        return "".join(f"{conn.next_event()!r}\n" for _ in requests)


S2S_SDK_BATCHES = {
    "none": [["hello", "world"], ["again"]],
    "zstd": [["z" * 1500], ["small"]],  # 1500 bytes: over the 1 KiB compression threshold
    "gzip": [["g" * 1200, "h"]],
}


def _s2s_sdk(port: int) -> str:
    """The official S2 SDK over HTTP/2: create a stream, append in sessions, read it back."""
    import s2_sdk  # noqa: PLC0415 - only this step needs it

    url = f"http://127.0.0.1:{port}"
    lines: list[str] = []

    def client(compression: str) -> s2_sdk.S2:
        return s2_sdk.S2(
            "demo", endpoints=s2_sdk.Endpoints(account=url, basin=url),
            compression=s2_sdk.Compression(compression), retry=s2_sdk.Retry(max_attempts=1),
        )  # fmt: skip

    async def main() -> None:
        async with client("none") as s2:
            await s2.basin("demo-basin").create_stream("orders")
        for compression, batches in S2S_SDK_BATCHES.items():
            async with client(compression) as s2:
                stream = s2.basin("demo-basin").stream("orders")
                async with stream.append_session() as session:
                    tickets = [
                        await session.submit(
                            s2_sdk.AppendInput(
                                records=[s2_sdk.Record(body=b.encode()) for b in batch]
                            )
                        )
                        for batch in batches
                    ]
                    for batch, ticket in zip(batches, tickets, strict=True):
                        ack = await ticket
                        lines.append(json.dumps({
                            "compression": compression, "append": batch,
                            "start": ack.start.seq_num, "end": ack.end.seq_num,
                        }))  # fmt: skip
        total = sum(len(b) for batches in S2S_SDK_BATCHES.values() for b in batches)
        read: list[str] = []
        async with client("zstd") as s2:
            stream = s2.basin("demo-basin").stream("orders")
            limit = s2_sdk.ReadLimit(count=total)
            async with stream.read_session(start=s2_sdk.SeqNum(0), limit=limit) as reader:
                async for batch in reader:
                    read += [r.body.decode() for r in batch.records]
        lines.append(json.dumps({"read": read}))

    asyncio.run(asyncio.wait_for(main(), 30))
    return "\n".join(lines) + "\n"


def _pravega_official(port: int) -> str:
    """The official Pravega client (PyPI ``pravega``) through the store's controller on 9090."""
    import pravega_client  # noqa: PLC0415 - only this step needs it

    lines = []
    manager = pravega_client.StreamManager("tcp://127.0.0.1:9090")
    manager.create_scope("demo")
    manager.create_stream("demo", "orders", 2)
    writer = manager.create_writer("demo", "orders")
    for i in range(20):
        writer.write_event(f"order-{i}", routing_key=f"customer-{i % 3}")
    writer.flush()
    lines.append("wrote 20 events")
    txn_writer = manager.create_transaction_writer("demo", "orders", 1)
    committed, aborted = txn_writer.begin_txn(), txn_writer.begin_txn()
    for i in range(3):
        committed.write_event(f"txn-{i}", routing_key="customer-0")
        aborted.write_event(f"aborted-{i}", routing_key="customer-1")
    committed.commit()
    aborted.abort()
    lines.append("committed 3 events, aborted 3")
    reader = manager.create_reader_group("demo-group", "demo", "orders").create_reader("r1")

    async def read(count: int) -> list[str]:
        events: list[str] = []
        while len(events) < count:
            piece = await reader.get_segment_slice_async()
            events.extend(bytes(event.data()).decode() for event in piece)
            reader.release_segment(piece)
        return events

    events = asyncio.run(asyncio.wait_for(read(23), 30))
    reader.reader_offline()
    lines.append("read " + " ".join(sorted(events)))
    manager.create_stream("demo", "bytes", 1)
    stream = manager.create_byte_stream("demo", "bytes")
    stream.write(bytes(range(256)) * 4)
    stream.flush()
    stream.seek(100, 0)
    buffer = bytearray(50)
    got = stream.readinto(buffer)
    stream.truncate(512)
    lines.append(f"byte stream: read {got} bytes at 100, head now {stream.current_head_offset()}")
    return "\n".join(lines) + "\n"


_S3P_V020 = ["examples.s3p_client", "--s3p-version", "0.2.0"]

PROTOCOLS: dict[str, dict[str, object]] = {
    "s3p": {
        "port": 7500,
        "server": ["examples.s3p_server", "--port", "7500"],
        "steps": [
            ["examples.s3p_client", "create", "orders"],
            ["examples.s3p_client", "append", "orders", "hello", "world"],
            (["examples.s3p_client", "append", "orders", "--batch", "2"], "a\nb\nc\n"),
            ["examples.s3p_client", "read", "orders", "--count", "10"],
            ["examples.s3p_client", "append", "missing", "x"],  # ERR_UNKNOWN_STREAM
            ["examples.s3p_client", "delete", "orders"],
        ],
    },
    "s3p_v020": {
        "port": 7500,
        "server": ["examples.s3p_server", "--port", "7500", "--s3p-version", "0.2.0"],
        "steps": [
            [*_S3P_V020, "create", "orders"],
            [*_S3P_V020, "append", "orders", "--id", "1700000001234", "hello", "world"],
            ([*_S3P_V020, "append", "orders", "--batch", "2"], "a\nb\nc\n"),
            [*_S3P_V020, "read", "orders", "--min-id", "1700000001234-1", "--count", "10"],
            _s3p_v020_pipeline,
            [*_S3P_V020, "trim", "orders", "1700000001234-1"],
            [*_S3P_V020, "delete", "orders"],
        ],
    },
    "rustlog": {
        "port": 9092,
        "interface": "any",
        "server": ["examples.rustlog_broker", "--port", "9092"],
        "steps": [
            ["examples.rustlog_client", "create", "logs", "--partitions", "2"],
            ["examples.rustlog_client", "produce", "logs", "0", "hello", "world"],
            ["examples.rustlog_client", "produce", "logs", "1", "other"],
            ["examples.rustlog_client", "consume", "logs", "0"],
            ["examples.rustlog_client", "produce", "nope", "0", "x"],  # topic not found
            ["examples.rustlog_client", "list"],
            ["examples.rustlog_client", "ping"],
        ],
    },
    "pravega": {
        "port": 12345,
        "server": ["examples.pravega_segment_store", "--port", "12345"],
        "steps": [
            ["examples.pravega_client", "write", "orders", "--count", "20"],
            ["examples.pravega_client", "read", "orders", "--count", "20"],
        ],
    },
    "pravega_official": {
        "port": 12345,
        "server": [
            "examples.pravega_segment_store", "--port", "12345", "--controller-port", "9090",
        ],
        "steps": [_pravega_official],
    },
    "durable": {
        "port": 4437,
        "compress": True,
        "server": ["examples.durable_server", "--port", "4437", "--long-poll-timeout", "1"],
        "steps": [["examples.durable_client", "http://127.0.0.1:4437"]],
    },
    "s2s": {
        "port": 8080,
        "server": ["examples.s2_server", "--port", "8080", "--heartbeat", "1"],
        "steps": [_s2s_client],
    },
    "s2s_h2": {
        "port": 8080,
        "server": ["examples.s2_server", "--port", "8080", "--heartbeat", "1"],
        "steps": [_s2s_sdk],
    },
}


def _run_step(step: Step, port: int) -> dict[str, object]:
    if callable(step):
        return {"function": step.__name__, "stdout": step(port), "status": 0}
    argv, stdin = (step, "") if isinstance(step, list) else step
    done = subprocess.run(
        [PY, "-m", *argv], input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=60,
        check=False,
    )  # fmt: skip
    return {"argv": argv, "stdin": stdin, "stdout": done.stdout, "status": done.returncode}


def record(name: str, tcpdump: str) -> Path:
    """Record one protocol's capture; return its path."""
    spec = PROTOCOLS[name]
    port = int(spec["port"])  # type: ignore[call-overload]
    raw = HERE / f"{name}.pcap"
    server = subprocess.Popen([PY, "-m", *spec["server"]], cwd=ROOT)  # type: ignore[list-item]
    try:
        _wait_for_port(port)
        time.sleep(0.2)  # the probe connection's closing segments must not open the capture
        interface = str(spec.get("interface", "lo"))
        dump = subprocess.Popen(
            [tcpdump, "-i", interface, "--immediate-mode", "-B", "65536", "-U", "-s", "0",
             "-n", "-w", str(raw), f"tcp port {port}"],
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert dump.stderr is not None
        try:
            dump.stderr.readline()  # "listening on lo, ..." once the capture runs
            log = [_run_step(step, port) for step in spec["steps"]]  # type: ignore[attr-defined]
            time.sleep(1.0)
        finally:  # a failed step must not leave tcpdump writing into the next recording
            dump.send_signal(signal.SIGINT)
            dump.wait(timeout=10)
        stats = dump.stderr.read()
        if not re.search(r"^0 packets dropped by kernel", stats, re.MULTILINE):
            print(f"{name}: tcpdump says: {stats.strip()}", file=sys.stderr)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    out = raw
    if spec.get("compress"):
        out = raw.with_suffix(".pcap.gz")
        out.write_bytes(gzip.compress(raw.read_bytes(), mtime=0))
        raw.unlink()
    (HERE / f"{name}.json").write_text(json.dumps({"port": port, "steps": log}, indent=1) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("protocols", nargs="*", metavar="PROTOCOL", help=", ".join(PROTOCOLS))
    args = parser.parse_args(argv)
    unknown = set(args.protocols) - set(PROTOCOLS)
    if unknown:
        parser.error(f"unknown protocols: {sorted(unknown)}")
    tcpdump = shutil.which("tcpdump") or "/usr/sbin/tcpdump"
    if not Path(tcpdump).exists():
        parser.error("tcpdump not found: apt-get install tcpdump")
    for name in args.protocols or PROTOCOLS:
        path = record(name, tcpdump)
        print(f"{path.name}: {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
