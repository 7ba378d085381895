"""A small RustLog client: produce, consume and admin commands, on blocking sockets.

::

    python -m examples.rustlog_client --port 9092 create logs --partitions 3
    python -m examples.rustlog_client --port 9092 produce logs 0 "hello" "world"
    printf 'a\\nb\\n' | python -m examples.rustlog_client --port 9092 produce logs 0 -
    python -m examples.rustlog_client --port 9092 consume logs 0 --group g --commit
    python -m examples.rustlog_client --port 9092 list | describe logs [--partition 0]
    python -m examples.rustlog_client --port 9092 metrics | ping

Every answer is printed as one JSON line. An Error response ends the command with status 1 and
its code and message on stderr. :class:`Client` is the same thing as a library: one method per
request type, each returning the typed response (``rustlog.Error`` included).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from types import TracebackType

import attrs

from examples import _cli
from s3p_codec import Role, rustlog
from s3p_codec.io.sync import SyncConnection, connect

__all__ = ["Client", "main"]


class Client:
    """One connection to a broker; requests one at a time, as the protocol's default."""

    def __init__(self, host: str = "127.0.0.1", port: int = 9092, timeout: float = 10.0):
        self.conn: SyncConnection[rustlog.Event, rustlog.Event] = connect(
            rustlog.Connection(Role.CLIENT), host, port, timeout=timeout
        )

    def request(self, request: rustlog.Request) -> rustlog.Response:
        self.conn.send(request)
        response = self.conn.next_event()
        assert not isinstance(response, rustlog.REQUEST_TYPES), response
        return response  # type: ignore[return-value]

    def create_topic(self, topic: str, partitions: int) -> rustlog.Response:
        return self.request(rustlog.CreateTopic(topic, partitions))

    def produce(self, topic: str, partition: int, records: Sequence[bytes]) -> rustlog.Response:
        return self.request(rustlog.Produce(topic, partition, tuple(records)))

    def fetch(
        self, topic: str, partition: int, offset: int, max_bytes: int = 1 << 20, group: str = ""
    ) -> rustlog.Response:
        return self.request(rustlog.Fetch(group, topic, partition, offset, max_bytes))

    def consume(
        self, topic: str, partition: int, offset: int, max_bytes: int = 1 << 20, group: str = ""
    ) -> Iterator[rustlog.Record]:
        """Every record from ``offset`` up to the high watermark at the time of reading."""
        while True:
            response = self.fetch(topic, partition, offset, max_bytes, group)
            if isinstance(response, rustlog.Error):
                raise RuntimeError(f"{int(response.code)} {response.message}")
            assert isinstance(response, rustlog.FetchResponse)
            if not response.records:
                return
            yield from response.records
            offset = response.next_offset

    def commit(self, group: str, topic: str, partition: int, offset: int) -> rustlog.Response:
        return self.request(rustlog.OffsetCommit(group, topic, partition, offset))

    def committed(self, group: str, topic: str, partition: int) -> rustlog.Response:
        return self.request(rustlog.OffsetFetch(group, topic, partition))

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def to_json(event: object) -> object:
    """A JSON-ready view of a response (payloads shown as UTF-8 text where they are)."""
    if isinstance(event, bytes):
        try:
            return event.decode()
        except UnicodeDecodeError:
            return {"hex": event.hex()}
    if isinstance(event, rustlog.JsonObject):
        return event.to_python()
    if isinstance(event, tuple) and hasattr(event, "_asdict"):
        return {k: to_json(v) for k, v in event._asdict().items()}
    if isinstance(event, tuple):
        return [to_json(item) for item in event]
    if attrs.has(type(event)):
        fields = attrs.asdict(event, recurse=False)  # type: ignore[arg-type]
        return {"type": type(event).TYPE, **{k: to_json(v) for k, v in fields.items()}}  # type: ignore[attr-defined]
    return event


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _cli.parser("rustlog_client", __doc__)
    _cli.add_address(parser, 9092, server=False)
    parser.add_argument("--timeout", type=float, default=10.0)
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create", help="create a topic")
    create.add_argument("topic")
    create.add_argument("--partitions", type=int, default=1)
    produce = commands.add_parser("produce", help="append records ('-': one per stdin line)")
    produce.add_argument("topic")
    produce.add_argument("partition", type=int)
    produce.add_argument("records", nargs="+")
    consume = commands.add_parser("consume", help="print records up to the high watermark")
    consume.add_argument("topic")
    consume.add_argument("partition", type=int)
    consume.add_argument("--group", default="rustlog-client")
    consume.add_argument("--from", dest="offset", type=int, default=None,
                         help="start offset (default: the group's commit, else 0)")  # fmt: skip
    consume.add_argument("--max-bytes", type=int, default=1 << 20)
    consume.add_argument("--commit", action="store_true", help="commit the next offset")
    commands.add_parser("list", help="list topics")
    describe = commands.add_parser("describe", help="describe a topic or one partition")
    describe.add_argument("topic")
    describe.add_argument("--partition", type=int, default=None)
    commands.add_parser("metrics", help="broker metrics")
    commands.add_parser("ping", help="Ping -> Pong")
    return parser.parse_args(argv)


def _request_for(args: argparse.Namespace) -> rustlog.Request:
    if args.command == "create":
        return rustlog.CreateTopic(args.topic, args.partitions)
    if args.command == "produce":
        lines = args.records
        if lines == ["-"]:
            lines = sys.stdin.read().splitlines()
        return rustlog.Produce(args.topic, args.partition, tuple(r.encode() for r in lines))
    if args.command == "list":
        return rustlog.ListTopics()
    if args.command == "describe":
        if args.partition is None:
            return rustlog.DescribeTopic(args.topic)
        return rustlog.DescribePartition(args.topic, args.partition)
    if args.command == "metrics":
        return rustlog.MetricsFetch()
    return rustlog.Ping()


def _print(event: object) -> int:
    print(json.dumps(to_json(event), ensure_ascii=False))
    if isinstance(event, rustlog.Error):
        print(f"error {int(event.code)}: {event.message}", file=sys.stderr)
        return 1
    if isinstance(event, rustlog.CreateTopicResponse | rustlog.OffsetCommitResponse) and not (
        event.success
    ):
        # The broker refused (a topic that exists, an offset not stored): a failure, exit 1.
        print(f"error: {event.TYPE} success=false", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with Client(args.host, args.port, args.timeout) as client:
        if args.command != "consume":
            return _print(client.request(_request_for(args)))
        offset = args.offset
        if offset is None:
            committed = client.committed(args.group, args.topic, args.partition)
            if isinstance(committed, rustlog.Error):
                return _print(committed)
            assert isinstance(committed, rustlog.OffsetFetchResponse)
            offset = committed.offset or 0
        next_offset = offset
        try:
            for record in client.consume(
                args.topic, args.partition, offset, args.max_bytes, args.group
            ):
                _print(record)
                next_offset = record.offset + 1
        except RuntimeError as exc:
            print(f"error {exc}", file=sys.stderr)
            return 1
        if args.commit:
            return _print(client.commit(args.group, args.topic, args.partition, next_offset))
    return 0


if __name__ == "__main__":
    from examples._cli import run as run_cli

    sys.exit(run_cli(main, "python -m examples.rustlog_client"))
