"""A RustLog broker with in-memory topics, on the asyncio adapter.

::

    python -m examples.rustlog_broker --port 9092               # 127.0.0.1 unless --host
    python -m examples.rustlog_broker --port 9092 --segment-bytes 65536 --retention-bytes 1048576

The codec (``s3p_codec.rustlog``) frames, parses and checks every request; a request with an
unknown type or bad fields comes out as a recoverable error whose ``Error`` response the adapter
sends, and framing or JSON errors end the connection. What is left here is what only a broker
with state decides, in :class:`Broker` (no I/O, so tests drive it directly):

- Produce: "Topic must exist (return Error if not)" (404, with ``available_topics`` in the
  details as in the spec's example), "Partition must exist" (405). "Records get consecutive
  offsets starting from base_offset"; each gets the broker's clock in microseconds.
- Partitions are logs of segments. The active segment is sealed and a new one opened once it
  holds ``--segment-bytes`` of payload ("segment_count: Number of log segments (active +
  sealed)"). Retention (``--retention-bytes``) drops the oldest sealed segments while the log is
  larger than that, which moves ``log_start_offset``.
- Fetch: "Error response if `offset` before log start offset" (416, with the spec's
  ``valid_range`` details); "Empty response if `offset` beyond high watermark"; ``max_bytes`` is
  a soft limit: records are added until their payloads reach it ("may slightly exceed"), and at
  least one is returned when there is one. A response is also kept within the frame limit.
- A record whose FetchResponse could not fit in one frame (10,485,760 bytes) could never be read
  back, so Produce refuses it with 413 RecordTooLarge, though its own Produce frame fitted.
- OffsetCommit: ``success: false`` "if topic/partition doesn't exist"; commits are "per-group,
  per-topic, per-partition" and "in-memory only". OffsetFetch answers null for no commit
  (including for a topic that does not exist).
- CreateTopic of an existing topic answers ``success: false, partitions_created: 0``.
- MetricsFetch answers one JSON object of counters (the schema the codec decided).

Connections follow the example servers' policy (``examples/_policy.py``): ``--idle-timeout``
(300 s), ``--request-timeout`` (30 s), ``--max-connections`` (1024, shedding the idlest) and
``--max-connections-per-address`` (off).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence

import attrs

from examples import _cli, _policy
from s3p_codec import RemoteProtocolError, Role, rustlog
from s3p_codec.io import ConnectionClosed
from s3p_codec.io.asyncio import AsyncioConnection

__all__ = ["Broker", "Partition", "fetch_frame_size", "main", "run", "start"]

log = logging.getLogger("rustlog_broker")

ErrorCode = rustlog.ErrorCode
# The bytes of a one-record FetchResponse other than the base64 payload, with every number at
# its widest (20 digits), so that a frame estimate is never short.
_FETCH_OVERHEAD = len(b'{"type":"FetchResponse","records":[],"next_offset":18446744073709551615}')
_RECORD_OVERHEAD = len(
    b'{"offset":18446744073709551615,"timestamp":18446744073709551615,"payload":""},'
)


def _b64_size(size: int) -> int:
    return (size + 2) // 3 * 4


def fetch_frame_size(payload_sizes: Sequence[int]) -> int:
    """An upper bound of the payload size of a FetchResponse holding records of these sizes."""
    return _FETCH_OVERHEAD + sum(_RECORD_OVERHEAD + _b64_size(s) for s in payload_sizes)


MAX_READABLE_RECORD = max(
    n
    for n in range(rustlog.MAX_FRAME_SIZE * 3 // 4 - 200, rustlog.MAX_FRAME_SIZE * 3 // 4)
    if fetch_frame_size([n]) <= rustlog.MAX_FRAME_SIZE
)
"""The largest record whose FetchResponse fits in one frame."""


@attrs.define
class Segment:
    base_offset: int
    timestamps: list[int] = attrs.Factory(list)
    payloads: list[bytes] = attrs.Factory(list)
    size: int = 0


@attrs.define
class Partition:
    """One partition's log: segments of consecutive offsets, oldest first."""

    segment_bytes: int
    retention_bytes: int | None
    segments: list[Segment] = attrs.Factory(lambda: [Segment(0)])
    size: int = 0  # payload bytes held

    @property
    def log_start_offset(self) -> int:
        return self.segments[0].base_offset

    @property
    def high_watermark(self) -> int:
        active = self.segments[-1]
        return active.base_offset + len(active.payloads)

    def append(self, records: Sequence[bytes], timestamp: int) -> int:
        base = self.high_watermark
        for payload in records:
            active = self.segments[-1]
            if active.payloads and active.size >= self.segment_bytes:
                active = Segment(active.base_offset + len(active.payloads))
                self.segments.append(active)  # the old one is sealed
            active.timestamps.append(timestamp)
            active.payloads.append(payload)
            active.size += len(payload)
            self.size += len(payload)
        self._retain()
        return base

    def _retain(self) -> None:
        if self.retention_bytes is None:
            return
        while len(self.segments) > 1 and self.size > self.retention_bytes:
            dropped = self.segments.pop(0)
            self.size -= dropped.size

    def read(self, offset: int, max_bytes: int) -> list[rustlog.Record]:
        """Records from ``offset`` (inclusive) until ``max_bytes`` is reached (soft limit)."""
        out: list[rustlog.Record] = []
        taken = 0
        frame = _FETCH_OVERHEAD
        for segment in self.segments:
            end = segment.base_offset + len(segment.payloads)
            if end <= offset:
                continue
            for index in range(max(0, offset - segment.base_offset), len(segment.payloads)):
                payload = segment.payloads[index]
                frame += _RECORD_OVERHEAD + _b64_size(len(payload))
                if out and (taken >= max_bytes or frame > rustlog.MAX_FRAME_SIZE):
                    return out
                out.append(
                    rustlog.Record(segment.base_offset + index, segment.timestamps[index], payload)
                )
                taken += len(payload)
        return out

    def describe(self, number: int) -> rustlog.PartitionInfo:
        return rustlog.PartitionInfo(
            number, self.high_watermark, self.log_start_offset, len(self.segments)
        )


@attrs.define
class Broker:
    """All broker state and every answer; one method per request type, no I/O."""

    segment_bytes: int = 1 << 20
    retention_bytes: int | None = None
    clock: Callable[[], int] = attrs.field(default=lambda: time.time_ns() // 1000)
    topics: dict[str, list[Partition]] = attrs.Factory(dict)
    commits: dict[tuple[str, str, int], int] = attrs.Factory(dict)
    counters: Counter[str] = attrs.Factory(Counter)
    requests: Counter[str] = attrs.Factory(Counter)
    fetches_by_group: Counter[str] = attrs.Factory(Counter)
    connections: int = 0
    gatekeeper: _policy.Gatekeeper | None = None

    def handle(self, request: rustlog.Event) -> rustlog.Response:
        self.requests[request.TYPE] += 1
        response = self._dispatch(request)
        if isinstance(response, rustlog.Error):
            self.counters["errors"] += 1
        return response

    def _dispatch(self, request: rustlog.Event) -> rustlog.Response:
        match request:
            case rustlog.Produce():
                return self.produce(request)
            case rustlog.Fetch():
                return self.fetch(request)
            case rustlog.OffsetCommit():
                return self.offset_commit(request)
            case rustlog.OffsetFetch():
                offset = self.commits.get((request.group, request.topic, request.partition))
                return rustlog.OffsetFetchResponse(offset)
            case rustlog.CreateTopic():
                return self.create_topic(request)
            case rustlog.ListTopics():
                return rustlog.ListTopicsResponse(
                    tuple(rustlog.TopicInfo(n, len(p)) for n, p in sorted(self.topics.items()))
                )
            case rustlog.DescribeTopic():
                partitions = self.topics.get(request.topic)
                if partitions is None:
                    return self._no_topic(request.topic)
                return rustlog.DescribeTopicResponse(
                    request.topic, tuple(p.describe(i) for i, p in enumerate(partitions))
                )
            case rustlog.DescribePartition():
                found = self._partition(request.topic, request.partition)
                if isinstance(found, rustlog.Error):
                    return found
                return rustlog.DescribePartitionResponse(
                    request.topic, *found.describe(request.partition)
                )
            case rustlog.MetricsFetch():
                return rustlog.MetricsFetchResponse(self.metrics())
            case rustlog.Ping():
                return rustlog.Pong()
        return rustlog.Error(ErrorCode.INVALID_REQUEST, f"unsupported {request.TYPE}")

    def _no_topic(self, topic: str) -> rustlog.Error:
        return rustlog.Error(
            ErrorCode.TOPIC_NOT_FOUND,
            f"Topic '{topic}' not found",
            {"available_topics": sorted(self.topics)},
        )

    def _partition(self, topic: str, number: int) -> Partition | rustlog.Error:
        partitions = self.topics.get(topic)
        if partitions is None:
            return self._no_topic(topic)
        if number >= len(partitions):
            return rustlog.Error(
                ErrorCode.PARTITION_NOT_FOUND,
                f"Partition {number} of topic '{topic}' not found",
                {"partition_count": len(partitions)},
            )
        return partitions[number]

    def produce(self, request: rustlog.Produce) -> rustlog.Response:
        found = self._partition(request.topic, request.partition)
        if isinstance(found, rustlog.Error):
            return found
        for index, record in enumerate(request.records):
            if len(record) > MAX_READABLE_RECORD:
                return rustlog.Error(
                    ErrorCode.RECORD_TOO_LARGE,
                    f"record {index} of {len(record)} bytes could never be fetched in one frame",
                    {"max_record_bytes": MAX_READABLE_RECORD},
                )
        base = found.append(request.records, self.clock())
        self.counters["records_produced"] += len(request.records)
        self.counters["bytes_in"] += sum(map(len, request.records))
        return rustlog.ProduceResponse(base, len(request.records))

    def fetch(self, request: rustlog.Fetch) -> rustlog.Response:
        self.fetches_by_group[request.group_id] += 1
        found = self._partition(request.topic, request.partition)
        if isinstance(found, rustlog.Error):
            return found
        start, high = found.log_start_offset, found.high_watermark
        if request.offset < start:
            return rustlog.Error(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"Offset {request.offset} out of range",
                {"valid_range": {"start": start, "end": high}, "high_watermark": high},
            )
        records = found.read(request.offset, request.max_bytes)
        next_offset = records[-1].offset + 1 if records else request.offset
        self.counters["records_fetched"] += len(records)
        self.counters["bytes_out"] += sum(len(r.payload) for r in records)
        return rustlog.FetchResponse(tuple(records), next_offset)

    def offset_commit(self, request: rustlog.OffsetCommit) -> rustlog.Response:
        found = self._partition(request.topic, request.partition)
        if isinstance(found, rustlog.Error):
            return rustlog.OffsetCommitResponse(False)
        self.commits[(request.group, request.topic, request.partition)] = request.offset
        return rustlog.OffsetCommitResponse(True)

    def create_topic(self, request: rustlog.CreateTopic) -> rustlog.Response:
        if request.topic in self.topics:
            return rustlog.CreateTopicResponse(False, 0)
        self.topics[request.topic] = [
            Partition(self.segment_bytes, self.retention_bytes)
            for _ in range(request.partition_count)
        ]
        return rustlog.CreateTopicResponse(True, request.partition_count)

    def metrics(self) -> dict[str, object]:
        return {
            "requests_total": sum(self.requests.values()),
            "requests_by_type": dict(sorted(self.requests.items())),
            "errors_total": self.counters["errors"],
            "protocol_errors_total": self.counters["protocol_errors"],
            "connections_active": self.connections,
            "connections_total": self.counters["connections"],
            "records_produced": self.counters["records_produced"],
            "records_fetched": self.counters["records_fetched"],
            "bytes_in": self.counters["bytes_in"],
            "bytes_out": self.counters["bytes_out"],
            "topics": len(self.topics),
            "partitions": sum(len(p) for p in self.topics.values()),
            "fetches_by_group": dict(sorted(self.fetches_by_group.items())),
        }

    async def serve_connection(self, conn: AsyncioConnection[rustlog.Event, rustlog.Event]) -> None:
        """Answer requests in order until the peer closes or breaks the framing."""
        self.connections += 1
        self.counters["connections"] += 1
        try:
            while True:
                try:
                    request = await conn.next_event()
                except ConnectionClosed:
                    return
                except RemoteProtocolError as error:
                    # The adapter has already sent error.reply; a fatal error closed the socket.
                    self.counters["protocol_errors"] += 1
                    self.counters["errors"] += 1
                    log.debug("protocol error: %s", error)
                    if error.fatal:
                        return
                    continue
                await conn.send(self.handle(request))
        finally:
            self.connections -= 1


async def run(
    broker: Broker,
    host: str,
    port: int,
    ready: asyncio.Event | None = None,
    policy: _policy.ConnectionPolicy | None = None,
) -> None:
    """Serve ``broker`` until cancelled, under ``policy`` (the defaults when None)."""
    server = await start(broker, host, port, policy)
    bound = server.sockets[0].getsockname()
    print(f"rustlog broker listening on {bound[0]}:{bound[1]}", flush=True)
    if ready is not None:
        ready.set()
    async with server:
        await server.serve_forever()


async def start(
    broker: Broker, host: str, port: int, policy: _policy.ConnectionPolicy | None = None
) -> asyncio.Server:
    """Listen on ``host:port`` (0: any free port); ``broker.gatekeeper`` applies ``policy``."""
    broker.gatekeeper = _policy.Gatekeeper(policy or _policy.ConnectionPolicy())
    return await _policy.serve_guarded(
        broker.gatekeeper,
        lambda: rustlog.Connection(Role.SERVER),
        broker.serve_connection,
        host,
        port,
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=_cli.prog("rustlog_broker"), description=__doc__.split("\n")[0]
    )
    _cli.add_address(parser, 9092, server=True)
    parser.add_argument(
        "--segment-bytes", type=int, default=1 << 20, help="roll a segment at this size"
    )
    parser.add_argument(
        "--retention-bytes",
        type=int,
        default=None,
        help="drop the oldest sealed segments while a partition holds more (default: keep all)",
    )
    _policy.add_arguments(parser)
    _cli.add_verbose(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    _cli.setup_logging(args.verbose)
    broker = Broker(segment_bytes=args.segment_bytes, retention_bytes=args.retention_bytes)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(
            run(broker, args.host, args.port, policy=_policy.ConnectionPolicy.from_args(args))
        )
    return 0


if __name__ == "__main__":
    from examples._cli import run as run_cli

    sys.exit(run_cli(main, "python -m examples.rustlog_broker"))
