"""A command-line S3P client on the blocking-socket adapter.

::

    python -m examples.s3p_client create orders [--client-timestamps]
    python -m examples.s3p_client append orders hello world        # one APPEND, two records
    printf 'a\\nb\\n' | python -m examples.s3p_client append orders  # stdin: one record a line
    python -m examples.s3p_client read orders [--count 10] [--after 1700000001234-0] [--block MS]
    python -m examples.s3p_client tail orders [--after TS] [--block MS] [--max-records N]
    python -m examples.s3p_client trim orders 1700000001235-0
    python -m examples.s3p_client delete orders
    python -m examples.s3p_client --s3p-version 0.2.0 append orders --id 1700000001234 hello
    python -m examples.s3p_client --s3p-version 0.2.0 read orders --min-id 1700000001234-0

``--host``/``--port`` (127.0.0.1:7500) choose the server; ``--s3p-version`` (0.1.0) the version
spoken, which must be the server's (S3P has no handshake). In 0.2.0 mode ``append --id MS``
sends the ``ID`` option, ``read``/``tail --min-id ID`` send ``MIN_ID`` (inclusive) and ``trim``
sends ``MIN_ID``; the timestamp options of 0.1.0 are refused. An error that v0.2.0 makes
recoverable does not end a pipelined ``append``: the other replies are still read and printed.

Records print as ``<timestamp> <payload>`` lines, the payload written raw. Stdin lines are
sent in APPENDs of ``--batch`` records, pipelined (all sent before the first reply is read);
the timestamp of each APPEND's last record is printed. An error reply is printed on stderr as
``ERR_CODE message`` and the exit status is 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from typing import BinaryIO

from examples import _cli
from s3p_codec import LocalProtocolError, RemoteProtocolError, Role, s3p
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.sync import SyncConnection, connect

__all__ = ["S3PError", "main"]

Client = SyncConnection[s3p.Event, s3p.Event]


class S3PError(Exception):
    """The server answered an error reply (and closed the connection)."""

    def __init__(self, reply: s3p.ErrorReply) -> None:
        super().__init__(f"{reply.code} {reply.message}")
        self.reply = reply


def _timestamp(text: str) -> s3p.Timestamp:
    try:
        return s3p.Timestamp.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = _cli.parser("s3p_client", __doc__)
    _cli.add_address(parser, 7500, server=False)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per reply (10)")
    parser.add_argument(
        "--s3p-version",
        choices=[version.value for version in s3p.Version],
        default="0.1.0",
        help="the S3P version the server speaks (0.1.0)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    create = commands.add_parser("create", help="create a stream")
    create.add_argument("stream")
    create.add_argument(
        "--client-timestamps", action="store_true", help="TIMESTAMP_STRATEGY client"
    )

    append = commands.add_parser("append", help="append records (arguments, or stdin lines)")
    append.add_argument("stream")
    append.add_argument("records", nargs="*", help="payloads; none: read stdin lines")
    append.add_argument("--timestamp", type=_timestamp, help="client timestamp <ms>-<seq>")
    append.add_argument("--batch", type=int, default=100, help="records per APPEND (stdin)")
    append.add_argument("--id", type=_ms, help="0.2.0: the ID option, <ms> only")

    read = commands.add_parser("read", help="read records once")
    read.add_argument("stream")
    read.add_argument("--count", type=int)
    read.add_argument("--after", type=_timestamp, help="MIN_TIMESTAMP: records after this")
    read.add_argument("--block", type=int, help="BLOCK: ms to wait when there is nothing")
    read.add_argument("--min-id", type=_timestamp, help="0.2.0 MIN_ID: records from this ID")

    tail = commands.add_parser("tail", help="print records as they arrive (READ with BLOCK)")
    tail.add_argument("stream")
    tail.add_argument("--count", type=int)
    tail.add_argument("--after", type=_timestamp, help="start after this timestamp (0-0)")
    tail.add_argument("--block", type=int, default=5000, help="BLOCK per READ in ms (5000)")
    tail.add_argument("--max-records", type=int, help="stop after this many records")
    tail.add_argument("--min-id", type=_timestamp, help="0.2.0 MIN_ID: start at this ID")

    trim = commands.add_parser("trim", help="remove records strictly before a timestamp")
    trim.add_argument("stream")
    trim.add_argument("until", type=_timestamp)

    delete = commands.add_parser("delete", help="delete a stream")
    delete.add_argument("stream")
    # Records may follow options (``append s --timestamp 5-0 a b``), which argparse's ``*``
    # positional does not allow by itself: collect what it left over.
    args, extra = parser.parse_known_args(argv)
    if args.command == "tail" and args.block < 1:
        parser.error("tail needs --block of at least 1 ms (it waits for new records)")
    v020 = args.s3p_version == "0.2.0"
    for option, needs_v020 in (("id", True), ("min_id", True), ("after", False),
                               ("timestamp", False), ("client_timestamps", False)):  # fmt: skip
        if getattr(args, option, None) not in (None, False) and needs_v020 != v020:
            flag = "--" + option.replace("_", "-")
            parser.error(f"{flag} is an S3P {'0.2.0' if needs_v020 else '0.1.0'} option")
    if extra and args.command == "append" and not any(e.startswith("-") for e in extra):
        args.records = [*args.records, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _ms(text: str) -> int:
    if not text.isdigit() or int(text) >= 1 << 64:
        raise argparse.ArgumentTypeError(f"an ID is an unsigned 64-bit <ms>, got {text!r}")
    return int(text)


def _next_id(last: s3p.Timestamp) -> s3p.Timestamp:
    """The ID right after ``last`` (v0.2.0's MIN_ID is inclusive)."""
    if last.seq < (1 << 64) - 1:
        return s3p.Timestamp(last.ms, last.seq + 1)
    return s3p.Timestamp(last.ms + 1, 0)


def _name(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def request(conn: Client, event: s3p.Request) -> s3p.Reply:
    """Send one request and wait for its reply; an error reply raises :class:`S3PError`."""
    conn.send(event)
    return _reply(conn)


def _reply(conn: Client) -> s3p.Reply:
    reply = conn.next_event()
    if isinstance(reply, s3p.ErrorReply):
        raise S3PError(reply)
    assert isinstance(reply, s3p.Reply), reply
    return reply


def _print_records(reply: s3p.Reply, out: BinaryIO) -> int:
    assert isinstance(reply, s3p.ReadReply)
    for timestamp, payload in reply.records:
        out.write(bytes(timestamp) + b" " + payload + b"\n")
    out.flush()
    return len(reply.records)


def _stdin_batches(source: BinaryIO, size: int) -> Iterator[tuple[bytes, ...]]:
    batch: list[bytes] = []
    for line in source:
        record = line.rstrip(b"\r\n")
        if not record:
            continue  # S3P has no empty records ("$0" is ERR_BAD_FORMAT)
        batch.append(record)
        if len(batch) == size:
            yield tuple(batch)
            batch = []
    if batch:
        yield tuple(batch)


def run(args: argparse.Namespace, conn: Client, stdin: BinaryIO, out: BinaryIO) -> None:
    stream = _name(args.stream)
    if args.command == "create":
        strategy = s3p.TimestampStrategy.CLIENT if args.client_timestamps else None
        request(conn, s3p.Create(stream, strategy))
        out.write(b"OK\n")
    elif args.command == "append":
        if args.records:
            batches: Iterator[tuple[bytes, ...]] = iter([tuple(map(_name, args.records))])
        else:
            batches = _stdin_batches(stdin, args.batch)
        timestamp = args.timestamp
        sent = 0
        for records in batches:  # pipelined: every APPEND goes out before a reply is read
            conn.send(s3p.Append(stream, records, timestamp, args.id))
            sent += 1
            if timestamp is not None:  # client timestamps: keep them increasing across batches
                timestamp = s3p.Timestamp(timestamp.ms, timestamp.seq + len(records))
        failed: S3PError | None = None
        for _ in range(sent):
            try:
                reply = _reply(conn)
            except S3PError as error:
                codec = conn.conn
                if not (isinstance(codec, s3p.Connection) and codec.keeps_open(error.reply.code)):
                    raise
                if failed is not None:  # v0.2.0: recoverable, the next replies follow
                    print(failed, file=sys.stderr)
                failed = error  # the last one is printed by ``main``
                continue
            assert isinstance(reply, s3p.AppendReply)
            out.write(bytes(reply.timestamp) + b"\n")
        if failed is not None:
            out.flush()
            raise failed
    elif args.command == "read":
        read = s3p.Read(stream, args.count, args.block, args.after, args.min_id)
        _print_records(request(conn, read), out)
    elif args.command == "tail":
        after = args.after
        start = args.min_id
        printed = 0
        while args.max_records is None or printed < args.max_records:
            count = args.count
            if args.max_records is not None:
                left = args.max_records - printed
                count = left if count is None else min(count, left)
            reply = request(conn, s3p.Read(stream, count, args.block, after, start))
            printed += _print_records(reply, out)
            assert isinstance(reply, s3p.ReadReply)
            if reply.records:
                if args.s3p_version == "0.2.0":
                    start = _next_id(reply.records[-1][0])
                else:
                    after = reply.records[-1][0]
    elif args.command == "trim":
        if args.s3p_version == "0.2.0":
            request(conn, s3p.Trim(stream, min_id=args.until))
        else:
            request(conn, s3p.Trim(stream, args.until))
        out.write(b"OK\n")
    elif args.command == "delete":
        request(conn, s3p.Delete(stream))
        out.write(b"OK\n")
    out.flush()


def main(
    argv: Sequence[str] | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> int:
    args = parse_args(argv)
    # A blocking READ legitimately waits BLOCK ms before its reply: allow for it.
    timeout = args.timeout + (getattr(args, "block", None) or 0) / 1000
    out = stdout if stdout is not None else sys.stdout.buffer
    try:
        codec = s3p.Connection(Role.CLIENT, version=args.s3p_version)
        with connect(codec, args.host, args.port, timeout=timeout) as conn:
            run(args, conn, stdin if stdin is not None else sys.stdin.buffer, out)
    except S3PError as error:
        print(error, file=sys.stderr)
        return 1
    except (LocalProtocolError, RemoteProtocolError) as error:
        print(f"s3p_client: {error.code} {error}", file=sys.stderr)
        return 1
    except ConnectionClosed:
        print("s3p_client: the server closed the connection", file=sys.stderr)
        return 1
    except (TimeoutError, OSError) as error:
        print(f"s3p_client: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
