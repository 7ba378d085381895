"""An S2-compatible server with in-memory basins and streams, on 127.0.0.1.

::

    python -m examples.s2_server --port 8080              # HTTP/2 (cleartext) and HTTP/1.1
    python -m examples.s2_server --port 0 --heartbeat 1    # tests: OS-chosen port, fast beats

Point the official Python SDK at it with direct endpoints (no TLS, the basin goes in the
``s2-basin`` header)::

    S2(token, endpoints=Endpoints(account="http://127.0.0.1:8080",
                                  basin="http://127.0.0.1:8080"))

One port speaks both HTTP/2 with prior knowledge (what the SDK sends to an ``http://``
endpoint; the client preface ``PRI * HTTP/2.0`` tells it apart) through ``h2``, and HTTP/1.1
through ``h11``. Both feed one transport-free request handler (:class:`Server`):

- S2S sessions (``Content-Type``/``Accept: s2s/proto``) on ``/v1/streams/{stream}/records``:
  append sessions (POST) answer one ``AppendAck`` per ``AppendInput`` in order; read sessions
  (GET) send ``ReadBatch`` frames, a heartbeat (an empty batch with the tail) once caught up and
  then every ``--heartbeat`` seconds (5-15 s, random, by default), and follow the stream live
  unless a limit or ``wait`` ends them. Frames are compressed as negotiated from
  ``Accept-Encoding`` (zstd, else gzip), from 1 KiB up. ``match_seq_num`` and fencing-token
  mismatches end an append session with a 412 terminal frame (``{"seq_num_mismatch": N}`` /
  ``{"fencing_token_mismatch": "..."}``); a read that starts past the tail gets 416 with the
  tail (unless ``clamp=true``); an unknown stream, 404 ``stream_not_found``.
- The REST calls the SDK makes around sessions: create (``POST /v1/streams``), ensure
  (``PUT``), list, delete and get-config of streams, check tail (``GET .../records/tail``), and
  the unary protobuf append and read (``application/x-protobuf``; request bodies may carry
  ``Content-Encoding``).
- A fence command record (one header with an empty name and value ``fence``) sets the stream's
  fencing token to its body; a trim command record is stored like any record.

Connections follow the example servers' policy (``examples/_policy.py``): ``--idle-timeout``
(300 s without a request in progress; an open session is never idle), ``--request-timeout``
(30 s for a request head, or an HTTP/2 frame, to arrive whole), ``--max-connections`` (1024,
shedding the idlest) and ``--max-connections-per-address`` (off).

All the S2S byte work is the codec's (``s3p_codec.s2s``): framing, compression, protobuf,
session rules and the request/response checks. What is here is state and transport.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import gzip
import json
import logging
import random
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qsl, unquote

import attrs
import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings
import h11
import zstandard

from examples import _cli, _policy
from s3p_codec import RemoteProtocolError, Role, s2s
from s3p_codec.s2s import http as s2s_http
from s3p_codec.s2s._compression import decompress as s2s_decompress

__all__ = ["Basin", "Server", "ServerLimits", "Store", "Stream", "main", "serve"]

log = logging.getLogger("s2_server")

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
PROTOBUF = b"application/x-protobuf"
JSON = b"application/json"
MAX_BATCH_RECORDS = 1000
MAX_BATCH_BYTES = 1024 * 1024
Headers = list[tuple[bytes, bytes]]


@attrs.frozen
class ServerLimits:
    """What one HTTP/2 client may hold of the server (0 turns a bound off).

    ``max_unsent_per_connection``: bytes of responses produced for a connection's streams and
    not yet taken by the client (flow control). Read sessions and unary reads produce only
    what the stream's window and this budget let through, so a client that opens 100 sessions
    with ``SETTINGS_INITIAL_WINDOW_SIZE=0`` makes the server hold nothing.
    ``stream_progress_timeout``: seconds a stream may wait for the client to open its window;
    then it is reset (``CANCEL``). ``max_resets`` within ``reset_window`` seconds: streams the
    client may reset on one connection (Rapid Reset, CVE-2023-44487); past it the connection
    ends with ``GOAWAY`` ``ENHANCE_YOUR_CALM``, as the fixed servers do.
    """

    max_unsent_per_connection: int = 4 * 1024 * 1024
    stream_progress_timeout: float = 30.0
    max_resets: int = 200
    reset_window: float = 10.0

    def __attrs_post_init__(self) -> None:
        for name in attrs.fields_dict(ServerLimits):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")


# -- state ------------------------------------------------------------------------------------


@attrs.define
class Stream:
    """One stream: its records, fencing token, and the waiters woken by appends."""

    name: str
    created_at: str
    records: list[s2s.SequencedRecord] = attrs.field(factory=list)
    fencing_token: str | None = None
    changed: asyncio.Condition = attrs.field(factory=asyncio.Condition)
    deleted: bool = False

    @property
    def tail(self) -> s2s.StreamPosition:
        last = self.records[-1].timestamp if self.records else 0
        return s2s.StreamPosition(len(self.records), last)

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "created_at": self.created_at, "deleted_at": None}


@attrs.define
class Basin:
    name: str
    streams: dict[str, Stream] = attrs.field(factory=dict)


class AppendRefused(Exception):
    """An append that must end the session (or the unary call) with ``terminal``."""

    def __init__(self, terminal: s2s.Terminal) -> None:
        super().__init__(terminal.message or terminal.code)
        self.terminal = terminal


class Store:
    """In-memory basins (created on first use) and streams.

    ``frames`` counts the append-session frames received per compression (what tests and
    ``--verbose`` logs show to prove that negotiation happened on the wire); ``sessions`` counts
    sessions opened. While ``draining`` is set, every session frame sent carries the
    "reconnect advised" flag, as a draining S2 server does.
    """

    def __init__(self) -> None:
        self.basins: dict[str, Basin] = {}
        self.frames: Counter[s2s.Compression] = Counter()
        self.sessions: Counter[s2s.Session] = Counter()
        self.draining = False

    def basin(self, name: str) -> Basin:
        if name not in self.basins:
            self.basins[name] = Basin(name)
        return self.basins[name]

    def create(self, basin: str, name: str) -> Stream | None:
        streams = self.basin(basin).streams
        if name in streams:
            return None
        now = datetime.datetime.now(datetime.UTC).isoformat()
        streams[name] = Stream(name, now)
        return streams[name]

    def get(self, basin: str, name: str) -> Stream | None:
        return self.basin(basin).streams.get(name)

    async def delete(self, basin: str, name: str) -> bool:
        stream = self.basin(basin).streams.pop(name, None)
        if stream is None:
            return False
        stream.deleted = True
        async with stream.changed:
            stream.changed.notify_all()
        return True

    async def append(self, stream: Stream, batch: s2s.AppendInput) -> s2s.AppendAck:
        """Check the batch's conditions, then sequence its records; wakes live readers."""
        tail = stream.tail
        if batch.match_seq_num is not None and batch.match_seq_num != tail.seq_num:
            raise AppendRefused(
                s2s.Terminal(
                    status=412,
                    code="seq_num_mismatch",
                    message=f"expected match_seq_num {tail.seq_num}",
                    seq_num_mismatch=tail.seq_num,
                )
            )
        if batch.fencing_token is not None and batch.fencing_token != (stream.fencing_token or ""):
            raise AppendRefused(
                s2s.Terminal(
                    status=412,
                    code="fencing_token_mismatch",
                    message="fencing token mismatch",
                    fencing_token_mismatch=stream.fencing_token or "",
                )
            )
        now = int(time.time() * 1000)
        timestamp = tail.timestamp
        for record in batch.records:
            # Timestamps never go back: a client timestamp below the last one is raised to it.
            wanted = record.timestamp if record.timestamp is not None else now
            timestamp = max(timestamp, wanted)
            if (
                len(record.headers) == 1
                and record.headers[0].name == b""
                and record.headers[0].value == b"fence"
            ):
                stream.fencing_token = record.body.decode("utf-8", "replace")
            stream.records.append(
                s2s.SequencedRecord(len(stream.records), timestamp, record.body, record.headers)
            )
        first = stream.records[tail.seq_num]
        end = stream.tail
        async with stream.changed:
            stream.changed.notify_all()
        return s2s.AppendAck(s2s.StreamPosition(first.seq_num, first.timestamp), end, end)


# -- the request handler, free of transport ---------------------------------------------------


class Response:
    """What a transport gives the handler to answer one request (status, body chunks, end)."""

    async def start(self, status: int, headers: Headers) -> None:
        raise NotImplementedError

    async def send(self, data: bytes) -> None:
        raise NotImplementedError

    async def end(self) -> None:
        raise NotImplementedError

    async def room(self) -> int:
        """Bytes the client will take now, waiting until there are some: what a response may
        produce before it sends (the transport's own back-pressure holds the rest)."""
        return MAX_BATCH_BYTES


@attrs.frozen
class Request:
    method: bytes
    target: bytes
    headers: Headers
    body: AsyncIterator[bytes]

    def header(self, name: bytes) -> bytes | None:
        for key, value in self.headers:
            if key == name:
                return value
        return None


def _json(status: int, value: object) -> tuple[int, Headers, bytes]:
    body = json.dumps(value, separators=(",", ":")).encode()
    return status, [(b"content-type", JSON), (b"content-length", str(len(body)).encode())], body


def _error(status: int, code: str, message: str) -> tuple[int, Headers, bytes]:
    return s2s_http.error_response(s2s.ErrorResponse(status, code, message))


async def _whole(body: AsyncIterator[bytes], limit: int = 8 << 20) -> bytes:
    chunks = bytearray()
    async for chunk in body:
        chunks += chunk
        if len(chunks) > limit:
            raise ValueError("request body too large")
    return bytes(chunks)


class Server:
    """Answers S2 requests from any transport (see the module docstring)."""

    def __init__(self, store: Store, heartbeat: tuple[float, float] = (5.0, 15.0)) -> None:
        self.store = store
        self.heartbeat = heartbeat

    async def handle(self, request: Request, response: Response) -> None:
        try:
            await self._route(request, response)
        except ConnectionError:
            log.debug("peer went away during %s %s", request.method, request.target)
        except Exception:  # one request's failure must not take the connection down
            log.exception("request failed: %s %s", request.method, request.target)
            with contextlib.suppress(Exception):
                await self._reply(response, *_error(500, "internal", "internal error"))

    async def _reply(self, response: Response, status: int, headers: Headers, body: bytes) -> None:
        await response.start(status, headers)
        if body:
            await response.send(body)
        await response.end()

    async def _route(self, request: Request, response: Response) -> None:
        if request.header(b"authorization") is None:
            await self._reply(response, *_error(401, "unauthorized", "missing access token"))
            return
        basin = (request.header(b"s2-basin") or b"default").decode("utf-8", "replace")
        path, _, query = request.target.decode("ascii", "replace").partition("?")
        parts = path.split("/")
        s2s_session = s2s_http.CONTENT_TYPE in (
            request.header(b"content-type"),
            request.header(b"accept"),
        )
        if s2s_session:
            await self._session(request, response, basin)
            return
        method = request.method
        if parts == ["", "v1", "streams"] and method == b"POST":
            await self._create(request, response, basin)
        elif parts == ["", "v1", "streams"] and method == b"GET":
            await self._list(response, basin, query)
        elif len(parts) == 4 and parts[:3] == ["", "v1", "streams"] and method == b"PUT":
            name = unquote(parts[3])
            created = self.store.create(basin, name)
            stream = created or self.store.get(basin, name)
            assert stream is not None
            status, headers, body = _json(201 if created else 200, stream.info())
            headers.append((b"s2-provision-result", b"created" if created else b"noop"))
            await self._reply(response, status, headers, body)
        elif len(parts) == 4 and parts[:3] == ["", "v1", "streams"]:
            name = unquote(parts[3])
            stream = self.store.get(basin, name)
            if method == b"DELETE":
                found = await self.store.delete(basin, name)
                await self._reply(response, 202, [], b"")
                if not found:
                    log.debug("delete of missing stream %s", name)
            elif stream is None:
                await self._reply(response, *_error(404, "stream_not_found", name))
            elif method == b"GET":
                await self._reply(response, *_json(200, {"storage_class": "express"}))
            else:
                await self._reply(response, *_error(405, "bad_path", "method not allowed"))
        elif len(parts) == 6 and parts[4:] == ["records", "tail"] and method == b"GET":
            stream = self.store.get(basin, unquote(parts[3]))
            if stream is None:
                await self._reply(response, *_error(404, "stream_not_found", parts[3]))
            else:
                tail = stream.tail
                found_tail = {"tail": {"seq_num": tail.seq_num, "timestamp": tail.timestamp}}
                await self._reply(response, *_json(200, found_tail))
        elif len(parts) == 5 and parts[4] == "records" and method in (b"GET", b"POST"):
            stream = self.store.get(basin, unquote(parts[3]))
            if stream is None:
                await self._reply(response, *_error(404, "stream_not_found", parts[3]))
            elif method == b"POST":
                await self._unary_append(request, response, stream)
            else:
                await self._unary_read(request, response, stream, query)
        else:
            await self._reply(response, *_error(404, "bad_path", f"no route for {path}"))

    async def _create(self, request: Request, response: Response, basin: str) -> None:
        try:
            raw = decompress_body(await _whole(request.body), request.header(b"content-encoding"))
            payload = json.loads(raw)
            name = payload["stream"]
            if not isinstance(name, str) or not name:
                raise TypeError("stream name")
        except Exception:
            log.debug("bad create body", exc_info=True)
            await self._reply(response, *_error(400, "bad_json", 'expected {"stream": name}'))
            return
        stream = self.store.create(basin, name)
        if stream is None:
            await self._reply(response, *_error(409, "resource_already_exists", name))
        else:
            await self._reply(response, *_json(201, stream.info()))

    async def _list(self, response: Response, basin: str, query: str) -> None:
        params = dict(parse_qsl(query))
        prefix = params.get("prefix", "")
        after = params.get("start_after", "")
        try:
            limit = max(0, min(1000, int(params.get("limit", "1000"))))
        except ValueError:
            await self._reply(response, *_error(400, "bad_query", "limit must be an integer"))
            return
        names = sorted(
            name
            for name in self.store.basin(basin).streams
            if name.startswith(prefix) and name > after
        )
        streams = self.store.basin(basin).streams
        page = [streams[name].info() for name in names[:limit]]
        body = {"streams": page, "has_more": len(names) > limit}
        await self._reply(response, *_json(200, body))

    # -- unary protobuf calls ------------------------------------------------------------------

    def _encoding(self, request: Request) -> s2s.Compression:
        return s2s.negotiate(request.header(b"accept-encoding"))

    async def _proto_reply(self, request: Request, response: Response, payload: bytes) -> None:
        compression = self._encoding(request)
        headers: Headers = [(b"content-type", PROTOBUF)]
        if compression is not s2s.Compression.NONE and len(payload) >= 1024:
            payload = compress_body(payload, compression)
            headers.append((b"content-encoding", compression.encoding.encode()))
        headers.append((b"content-length", str(len(payload)).encode()))
        await self._reply(response, 200, headers, payload)

    async def _unary_append(self, request: Request, response: Response, stream: Stream) -> None:
        try:
            body = decompress_body(await _whole(request.body), request.header(b"content-encoding"))
            batch = s2s.decode_append_input(body)
        except (RemoteProtocolError, ValueError, OSError, EOFError) as exc:
            await self._reply(response, *_error(400, "bad_proto", str(exc)))
            return
        if not 1 <= len(batch.records) <= MAX_BATCH_RECORDS:
            await self._reply(response, *_error(422, "invalid", "1..1000 records per append"))
            return
        try:
            ack = await self.store.append(stream, batch)
        except AppendRefused as refused:
            await self._reply(response, *s2s_http.error_response(refused.terminal))
            return
        await self._proto_reply(request, response, s2s.encode_append_ack(ack))

    async def _unary_read(
        self, request: Request, response: Response, stream: Stream, query: str
    ) -> None:
        try:
            parsed = s2s_http.parse_request(
                b"GET", request.target, [(b"accept", s2s_http.CONTENT_TYPE)]
            ).query
        except RemoteProtocolError as exc:
            reply = exc.reply
            assert isinstance(reply, s2s.ErrorResponse)
            await self._reply(response, *s2s_http.error_response(reply))
            return
        del query
        start = self._start(stream, parsed)
        if isinstance(start, s2s.Terminal):
            await self._reply(response, *s2s_http.error_response(start))
            return
        room = await response.room()
        size = min(parsed.bytes, room) if parsed.bytes else room
        records = self._slice(stream, start, parsed, parsed.count, size)
        if not records and parsed.wait:
            deadline = asyncio.get_running_loop().time() + parsed.wait
            async with stream.changed:
                while not records and not stream.deleted:
                    remaining = deadline - asyncio.get_running_loop().time()
                    if remaining <= 0:
                        break
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stream.changed.wait(), remaining)
                    records = self._slice(stream, start, parsed, parsed.count, size)
        batch = s2s.ReadBatch(tuple(records), stream.tail)
        await self._proto_reply(request, response, s2s.encode_read_batch(batch))

    # -- read positions --------------------------------------------------------------------------

    def _start(self, stream: Stream, query: s2s.ReadQuery) -> int | s2s.Terminal:
        tail = stream.tail
        if query.timestamp is not None:
            for record in stream.records:
                if record.timestamp >= query.timestamp:
                    return record.seq_num
            return tail.seq_num
        if query.tail_offset is not None:
            return max(0, tail.seq_num - query.tail_offset)
        start = query.seq_num or 0
        if start > tail.seq_num:
            if query.clamp:
                return tail.seq_num
            return s2s.Terminal(
                status=416,
                code="range_not_satisfiable",
                message="read from unwritten position",
                tail=tail,
            )
        return start

    def _slice(
        self,
        stream: Stream,
        start: int,
        query: s2s.ReadQuery,
        count: int | None,
        size: int | None,
    ) -> list[s2s.SequencedRecord]:
        out: list[s2s.SequencedRecord] = []
        metered = 0
        limit = min(MAX_BATCH_RECORDS, count) if count else MAX_BATCH_RECORDS
        byte_limit = min(MAX_BATCH_BYTES, size) if size else MAX_BATCH_BYTES
        for record in stream.records[start : start + limit]:
            if query.until is not None and record.timestamp >= query.until:
                break
            cost = s2s.metered_bytes((record,))
            if out and metered + cost > byte_limit:
                break
            out.append(record)
            metered += cost
        return out

    # -- S2S sessions ----------------------------------------------------------------------------

    async def _session(self, request: Request, response: Response, basin: str) -> None:
        try:
            opened = s2s_http.parse_request(request.method, request.target, request.headers)
        except RemoteProtocolError as exc:
            reply = exc.reply
            assert isinstance(reply, s2s.ErrorResponse)
            await self._reply(response, *s2s_http.error_response(reply))
            return
        stream = self.store.get(basin, opened.stream)
        if stream is None:
            await self._reply(response, *_error(404, "stream_not_found", opened.stream))
            return
        self.store.sessions[opened.session] += 1
        if opened.session is s2s.Session.READ:
            start = self._start(stream, opened.query)
            if isinstance(start, s2s.Terminal):
                await self._reply(response, *s2s_http.error_response(start))
                return
            status, headers = s2s_http.build_response(s2s.SessionResponse(opened.accept))
            await response.start(status, headers)
            codec = s2s.Connection(Role.SERVER, s2s.Session.READ, compression=opened.accept)
            await self._read_session(codec, response, stream, start, opened.query)
        else:
            status, headers = s2s_http.build_response(s2s.SessionResponse(opened.accept))
            await response.start(status, headers)
            codec = s2s.Connection(Role.SERVER, s2s.Session.APPEND, compression=opened.accept)
            await self._append_session(codec, request, response, stream)

    async def _append_session(
        self, codec: s2s.Connection, request: Request, response: Response, stream: Stream
    ) -> None:
        async for chunk in request.body:
            codec.receive_data(chunk)
            try:
                for event in codec.events():
                    assert isinstance(event, s2s.AppendInput)
                    if codec.last_compression is not None:
                        self.store.frames[codec.last_compression] += 1
                    ack = await self.store.append(stream, event)
                    await response.send(self._frame(codec, ack))
            except AppendRefused as refused:
                await response.send(codec.send(refused.terminal))
                await response.end()
                return
            except RemoteProtocolError as exc:
                log.info("append session error: %s", exc)
                if isinstance(exc.reply, s2s.Terminal):
                    await response.send(codec.send(exc.reply))
                await response.end()
                return
        codec.receive_data(b"")
        try:
            list(codec.events())
        except RemoteProtocolError as exc:
            if isinstance(exc.reply, s2s.Terminal):
                await response.send(codec.send(exc.reply))
        await response.end()

    def _frame(self, codec: s2s.Connection, event: s2s.Event) -> bytes:
        if self.store.draining:
            codec.advise_reconnect()
        return codec.send(event)

    def _beat(self) -> float:
        low, high = self.heartbeat
        return random.uniform(low, high)

    async def _read_session(
        self,
        codec: s2s.Connection,
        response: Response,
        stream: Stream,
        start: int,
        query: s2s.ReadQuery,
    ) -> None:
        loop = asyncio.get_running_loop()
        remaining_count = query.count
        remaining_bytes = query.bytes
        bounded = query.count is not None or query.bytes is not None or query.until is not None
        # No wait given: follow the stream live unless bounded (then stop at the tail).
        wait = query.wait if query.wait is not None else (0 if bounded else None)
        position = start
        caught_up_at: float | None = None
        while not stream.deleted:
            if (
                query.until is not None
                and position < len(stream.records)
                and stream.records[position].timestamp >= query.until
            ):
                break
            room = await response.room()  # back-pressure: produce what the client will take
            size = min(remaining_bytes, room) if remaining_bytes is not None else room
            records = self._slice(stream, position, query, remaining_count, size)
            if records:
                await response.send(self._frame(codec, s2s.ReadBatch(tuple(records), stream.tail)))
                position = records[-1].seq_num + 1
                caught_up_at = None
                if remaining_count is not None:
                    remaining_count -= len(records)
                if remaining_bytes is not None:
                    remaining_bytes -= s2s.metered_bytes(tuple(records))
                if remaining_count == 0 or (remaining_bytes is not None and remaining_bytes <= 0):
                    break
                continue
            # Caught up: say so with a heartbeat, then wait for appends, beating meanwhile.
            now = loop.time()
            if caught_up_at is None:
                caught_up_at = now
                await response.send(self._frame(codec, s2s.Heartbeat(stream.tail)))
            if wait is not None and now - caught_up_at >= wait:
                break
            timeout = self._beat()
            if wait is not None:
                timeout = min(timeout, caught_up_at + wait - now)
            async with stream.changed:
                if len(stream.records) <= position and not stream.deleted:
                    try:
                        await asyncio.wait_for(stream.changed.wait(), max(timeout, 0))
                    except TimeoutError:
                        if wait is None or loop.time() - caught_up_at < wait:
                            await response.send(self._frame(codec, s2s.Heartbeat(stream.tail)))
        await response.end()


def compress_body(data: bytes, compression: s2s.Compression) -> bytes:
    if compression is s2s.Compression.GZIP:
        return gzip.compress(data)
    return bytes(zstandard.ZstdCompressor().compress(data))


MAX_UNARY_BODY = s2s.Limits().max_payload
"""Largest decompressed body of a unary append: an S2S frame's payload bound, since the body is
the same AppendInput (at most 1000 records and 1 MiB metered, plus protobuf overhead)."""


def decompress_body(data: bytes, encoding: bytes | None, limit: int = MAX_UNARY_BODY) -> bytes:
    """The body of a unary request, decompressed by the codec's capped decompression: a small
    gzip or zstd body must not expand into gigabytes. Raises ``RemoteProtocolError`` past
    ``limit`` or on corrupt input, ``ValueError`` for an unknown encoding."""
    if encoding is None or encoding in (b"identity", b""):
        if len(data) > limit:
            raise ValueError(f"request body over {limit} bytes")
        return data
    if encoding == b"gzip":
        return s2s_decompress(data, s2s.Compression.GZIP, limit)
    if encoding == b"zstd":
        return s2s_decompress(data, s2s.Compression.ZSTD, limit)
    raise ValueError(f"unsupported content-encoding {encoding!r}")


# -- HTTP/2 transport ---------------------------------------------------------------------------


class _H2Response(Response):
    def __init__(self, transport: _H2Connection, stream_id: int) -> None:
        self.transport = transport
        self.stream_id = stream_id

    async def start(self, status: int, headers: Headers) -> None:
        await self.transport.send_headers(self.stream_id, status, headers)

    async def send(self, data: bytes) -> None:
        await self.transport.send_data(self.stream_id, data, end=False)

    async def end(self) -> None:
        await self.transport.send_data(self.stream_id, b"", end=True)

    async def room(self) -> int:
        return await self.transport.room(self.stream_id)


class _H2Connection:
    """One HTTP/2 connection: h2 state, a reader loop, one task per request stream."""

    def __init__(
        self,
        server: Server,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        activity: _policy.Activity | None = None,
        limits: ServerLimits | None = None,
    ) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.activity = activity or _policy.Activity(time.monotonic)
        self.limits = limits or ServerLimits()
        config = h2.config.H2Configuration(client_side=False, header_encoding=None)
        self.h2 = h2.connection.H2Connection(config=config)
        self.bodies: dict[int, asyncio.Queue[bytes | None]] = {}
        self.uncredited: dict[int, int] = {}  # received, not yet taken by the handler
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.window_open = asyncio.Event()
        self.closed = False
        self.unsent = 0  # bytes handlers gave ``send_data`` that h2 has not taken yet
        self.resets = 0  # streams the client reset since ``reset_window_start``
        self.reset_window_start = 0.0
        self.calm_down = False  # too many resets: GOAWAY ENHANCE_YOUR_CALM, then close

    async def flush(self) -> None:
        data = self.h2.data_to_send()
        if data and not self.closed:
            self.writer.write(data)
            with contextlib.suppress(ConnectionError), self.activity.waiting_to_write():
                await self.writer.drain()

    def _budget(self, stream_id: int) -> int:
        """Bytes stream ``stream_id`` may send now: its window, within the connection's
        unsent budget. ``ConnectionError`` once the stream or the connection is gone."""
        if self.closed:
            raise ConnectionError("connection closed")
        try:
            window = self.h2.local_flow_control_window(stream_id)
        except h2.exceptions.StreamClosedError as exc:
            raise ConnectionError("stream reset") from exc
        bound = self.limits.max_unsent_per_connection
        return min(window, bound - self.unsent) if bound else window

    async def _wait_for_window(self, stream_id: int, stuck_since: float) -> None:
        """Wait for a window update; a stream stuck since ``stuck_since`` for longer than
        ``stream_progress_timeout`` is reset (``CANCEL``) and ends in ``ConnectionError``."""
        loop = asyncio.get_running_loop()
        limit = self.limits.stream_progress_timeout
        left = stuck_since + limit - loop.time() if limit else None
        self.window_open.clear()
        with self.activity.waiting_to_write():
            try:
                if left is not None and left <= 0:
                    raise TimeoutError
                async with asyncio.timeout(left):
                    await self.window_open.wait()
            except TimeoutError:
                log.info("stream %d made no progress for %.0f s: reset", stream_id, limit)
                with contextlib.suppress(h2.exceptions.ProtocolError):
                    self.h2.reset_stream(stream_id, h2.errors.ErrorCodes.CANCEL)
                await self.flush()
                raise ConnectionError("stream made no progress") from None

    async def room(self, stream_id: int) -> int:
        """Bytes the client will take on ``stream_id`` now (see ``Response.room``)."""
        stuck_since = asyncio.get_running_loop().time()
        while (budget := self._budget(stream_id)) <= 0:
            await self._wait_for_window(stream_id, stuck_since)
        return budget

    def _client_reset(self) -> None:
        """Count a stream the client reset; past ``max_resets`` in ``reset_window`` seconds
        the connection is told to calm down and closed (Rapid Reset)."""
        bound = self.limits.max_resets
        if not bound:
            return
        now = asyncio.get_running_loop().time()
        if now - self.reset_window_start >= self.limits.reset_window:
            self.reset_window_start, self.resets = now, 0
        self.resets += 1
        if self.resets > bound and not self.calm_down:
            log.info(
                "more than %d streams reset in %.0f s: GOAWAY", bound, self.limits.reset_window
            )
            self.calm_down = True
            with contextlib.suppress(h2.exceptions.ProtocolError):
                self.h2.close_connection(h2.errors.ErrorCodes.ENHANCE_YOUR_CALM)

    async def run(self, preface: bytes) -> None:
        self.h2.initiate_connection()
        self.h2.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 100})
        await self.flush()
        data = preface
        try:
            while data:
                self.activity.bytes_arrived()
                try:
                    events = self.h2.receive_data(data)
                except h2.exceptions.ProtocolError as exc:
                    log.info("HTTP/2 error: %s", exc)
                    await self.flush()
                    return
                if events:
                    self.activity.partial_since = None  # a whole frame: the client progresses
                for event in events:
                    self.on_event(event)
                    if self.calm_down:
                        break
                self.activity.serving(bool(self.tasks))
                await self.flush()
                if self.calm_down:
                    return
                data = await self.reader.read(65536)
        except ConnectionError:
            pass
        finally:
            self.closed = True
            self.window_open.set()
            for task in self.tasks.values():
                task.cancel()
            for task in list(self.tasks.values()):
                with contextlib.suppress(BaseException):
                    await task

    def on_event(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.RequestReceived):
            stream_id = event.stream_id
            assert stream_id is not None
            headers = [(bytes(k), bytes(v)) for k, v in event.headers or []]
            pseudo = dict(headers)
            queue: asyncio.Queue[bytes | None] = asyncio.Queue()
            self.bodies[stream_id] = queue
            request = Request(
                method=pseudo.get(b":method", b"GET"),
                target=pseudo.get(b":path", b"/"),
                headers=[(k, v) for k, v in headers if not k.startswith(b":")],
                body=self.body(stream_id, queue),
            )
            if event.stream_ended is not None:
                queue.put_nowait(None)
            task = asyncio.get_running_loop().create_task(
                self.server.handle(request, _H2Response(self, stream_id))
            )
            self.tasks[stream_id] = task

            def forget(_: asyncio.Task[None], sid: int = stream_id) -> None:
                self.tasks.pop(sid, None)
                self.activity.serving(bool(self.tasks))
                unread = self.uncredited.pop(sid, 0)
                if unread and not self.closed:
                    # Received but never taken by the handler (a PUT answered 401): the
                    # connection window is given back, or 80 such requests shut it for good.
                    with contextlib.suppress(h2.exceptions.ProtocolError):
                        self.h2.increment_flow_control_window(unread)
                if self.bodies.pop(sid, None) is not None and not self.closed:
                    # Answered before its request body ended: "a server can send a complete
                    # response prior to the client sending an entire request ... the server
                    # SHOULD send a RST_STREAM with an error code of NO_ERROR" (RFC 9113 8.1),
                    # so the client stops sending, and nothing more is queued or credited.
                    with contextlib.suppress(h2.exceptions.ProtocolError):
                        self.h2.reset_stream(sid, h2.errors.ErrorCodes.NO_ERROR)
                    asyncio.get_running_loop().create_task(self.flush())

            task.add_done_callback(forget)
        elif isinstance(event, h2.events.DataReceived):
            queue_for = self.bodies.get(event.stream_id or 0)
            length = event.flow_controlled_length or 0
            if queue_for is not None and event.stream_id is not None:
                # Credited when the handler takes it (``body``): a stream's unread data is
                # bounded by its flow-control window, whatever the client sends.
                queue_for.put_nowait(bytes(event.data or b""))
                self.uncredited[event.stream_id] = self.uncredited.get(event.stream_id, 0) + length
            elif length:
                # A stream already answered or reset: its data is dropped, and only the
                # connection window is given back so that the other streams keep flowing.
                with contextlib.suppress(h2.exceptions.ProtocolError):
                    self.h2.increment_flow_control_window(length)
        elif isinstance(event, h2.events.StreamEnded):
            queue_for = self.bodies.get(event.stream_id or 0)
            if queue_for is not None:
                queue_for.put_nowait(None)
        elif isinstance(event, h2.events.StreamReset):
            if event.remote_reset:
                self._client_reset()
            running = self.tasks.get(event.stream_id or 0)
            if running is not None:
                running.cancel()
        elif isinstance(event, h2.events.WindowUpdated | h2.events.RemoteSettingsChanged):
            self.window_open.set()
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.closed = True

    async def body(
        self, stream_id: int, queue: asyncio.Queue[bytes | None]
    ) -> AsyncIterator[bytes]:
        while True:
            if queue.empty():
                with self.activity.waiting_to_read():
                    chunk = await queue.get()
            else:
                chunk = queue.get_nowait()
            if chunk is None:
                self.bodies.pop(stream_id, None)
                return
            credit = self.uncredited.pop(stream_id, 0)
            if credit and not self.closed:
                with contextlib.suppress(h2.exceptions.ProtocolError):
                    self.h2.acknowledge_received_data(credit, stream_id)
                await self.flush()
            if chunk:
                yield chunk

    async def send_headers(self, stream_id: int, status: int, headers: Headers) -> None:
        if self.closed:
            raise ConnectionError("connection closed")
        self.h2.send_headers(stream_id, [(b":status", str(status).encode()), *headers])
        await self.flush()

    async def send_data(self, stream_id: int, data: bytes, *, end: bool) -> None:
        view = memoryview(data)
        loop = asyncio.get_running_loop()
        stuck_since = loop.time()
        self.unsent += len(view)
        try:
            while view or end:
                if self.closed:
                    raise ConnectionError("connection closed")
                try:
                    window = self.h2.local_flow_control_window(stream_id)
                except h2.exceptions.StreamClosedError as exc:
                    raise ConnectionError("stream reset") from exc
                size = min(len(view), window, self.h2.max_outbound_frame_size)
                if view and size <= 0:
                    await self._wait_for_window(stream_id, stuck_since)
                    continue
                last = size == len(view)
                self.h2.send_data(stream_id, bytes(view[:size]), end_stream=end and last)
                view = view[size:]
                self.unsent -= size
                stuck_since = loop.time()
                await self.flush()
                if last:
                    return
        finally:
            self.unsent -= len(view)


# -- HTTP/1.1 transport -------------------------------------------------------------------------


class _H1Response(Response):
    def __init__(self, transport: _H1Connection) -> None:
        self.transport = transport

    async def start(self, status: int, headers: Headers) -> None:
        if not any(k == b"content-length" for k, _ in headers):
            headers = [*headers, (b"transfer-encoding", b"chunked")]
        await self.transport.write(h11.Response(status_code=status, headers=headers))

    async def send(self, data: bytes) -> None:
        if data:
            await self.transport.write(h11.Data(data=data))

    async def end(self) -> None:
        await self.transport.write(h11.EndOfMessage())


BODY_QUEUE_CHUNKS = 16
"""Received body chunks (up to 64 KiB each) an HTTP/1.1 request may have waiting for its
handler. When they are all waiting the connection stops reading, so a client that sends and
never reads is held back by TCP instead of filling the server's memory."""


class _H1Connection:
    """One HTTP/1.1 connection: requests one after the other, bodies full duplex.

    For the connection policy a request "arrives" until its head is complete: a session's body
    may stream for as long as the session lasts, and the handler is busy meanwhile.
    """

    def __init__(
        self,
        server: Server,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        activity: _policy.Activity | None = None,
    ) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.activity = activity or _policy.Activity(time.monotonic)
        self.h11 = h11.Connection(h11.SERVER)

    async def write(self, event: h11.Event) -> None:
        data = self.h11.send(event)
        if data:
            self.writer.write(data)
            with self.activity.waiting_to_write():
                await self.writer.drain()

    async def next_event(self) -> object:
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                data = await self.reader.read(65536)
                if data and not self.activity.busy:
                    self.activity.bytes_arrived()
                self.h11.receive_data(data)
                continue
            return event

    async def run(self, first: bytes) -> None:
        self.h11.receive_data(first)
        while True:
            try:
                event = await self.next_event()
            except h11.RemoteProtocolError as exc:
                with contextlib.suppress(Exception):
                    status, headers, body = _error(400, "bad_request", str(exc))
                    await self.write(h11.Response(status_code=status, headers=headers))
                    await self.write(h11.Data(data=body))
                    await self.write(h11.EndOfMessage())
                return
            if not isinstance(event, h11.Request):
                return
            self.activity.request_arrived()
            queue = self.new_body_queue()
            request = Request(
                event.method,
                event.target,
                [(bytes(k), bytes(v)) for k, v in event.headers],
                self.body(queue),
            )
            pump = asyncio.get_running_loop().create_task(self.pump(queue))
            try:
                await self.server.handle(request, _H1Response(self))
            finally:
                pump.cancel()
                with contextlib.suppress(BaseException):
                    await pump
            self.discard_buffered_body()
            if self.h11.our_state is not h11.DONE or self.h11.their_state is not h11.DONE:
                return
            self.h11.start_next_cycle()
            self.activity.waiting()

    def discard_buffered_body(self) -> None:
        """Skip what is left of a request body the handler did not read, as far as it has
        arrived: a GET's end of message is always there, so the connection stays open for the
        next request; a body still on its way closes the connection instead of being read."""
        while self.h11.their_state is h11.SEND_BODY:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError:
                return
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return

    @staticmethod
    def new_body_queue() -> asyncio.Queue[bytes | BaseException | None]:
        """A request body's chunks on their way to the handler: bounded (back-pressure)."""
        return asyncio.Queue(maxsize=BODY_QUEUE_CHUNKS)

    async def pump(self, queue: asyncio.Queue[bytes | BaseException | None]) -> None:
        """Read the request body into ``queue``, waiting while it is full. A body the client
        breaks off (it closes, or sends what HTTP forbids) reaches the handler as an error,
        which ends the request instead of leaving the handler waiting for ever."""
        while True:
            try:
                event = await self.next_event()
            except (h11.RemoteProtocolError, ConnectionError) as exc:
                while not queue.empty():  # the body is lost: make room for the verdict
                    queue.get_nowait()
                queue.put_nowait(ConnectionError(f"request body broken off: {exc}"))
                return
            if isinstance(event, h11.Data):
                await queue.put(bytes(event.data))
            else:
                await queue.put(None)
                return

    async def body(
        self, queue: asyncio.Queue[bytes | BaseException | None]
    ) -> AsyncIterator[bytes]:
        while True:
            if queue.empty():
                with self.activity.waiting_to_read():
                    chunk = await queue.get()
            else:
                chunk = queue.get_nowait()
            if chunk is None:
                return
            if isinstance(chunk, BaseException):
                raise chunk
            yield chunk


# -- entry points -----------------------------------------------------------------------------


async def serve(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    heartbeat: tuple[float, float] = (5.0, 15.0),
    store: Store | None = None,
    gatekeeper: _policy.Gatekeeper | None = None,
    limits: ServerLimits | None = None,
) -> asyncio.Server:
    """Start the server; ``server.sockets[0].getsockname()[1]`` is the port.

    Connections follow ``gatekeeper``'s policy (the example servers' defaults when None);
    HTTP/2 connections ``limits`` (``ServerLimits()`` when None).
    """
    app = Server(store if store is not None else Store(), heartbeat)
    loop = asyncio.get_running_loop()
    if gatekeeper is None:
        gatekeeper = _policy.Gatekeeper(_policy.ConnectionPolicy())
    gatekeeper.clock = loop.time

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        activity = _policy.Activity(loop.time)
        async with gatekeeper.guard(_policy.peer_address(writer), activity) as guard:
            if guard.refused:
                writer.close()
                return
            await connection(reader, writer, activity)

    async def connection(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, activity: _policy.Activity
    ) -> None:
        try:
            first = await reader.read(len(H2_PREFACE))
            if first:
                activity.bytes_arrived()
            while first and len(first) < len(H2_PREFACE) and H2_PREFACE.startswith(first):
                more = await reader.read(len(H2_PREFACE) - len(first))
                if not more:
                    break
                first += more
            if not first:
                return
            if first == H2_PREFACE:
                await _H2Connection(app, reader, writer, activity, limits).run(first)
            else:
                await _H1Connection(app, reader, writer, activity).run(first)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # The server is shutting down: end this connection's task quietly (a cancelled
            # connection task would be reported by asyncio's stream callback).
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()

    server = await asyncio.start_server(on_connect, host, port)
    gatekeeper.start_sweeper(server)
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=_cli.prog("s2_server"), description=__doc__.splitlines()[0] if __doc__ else ""
    )
    _cli.add_address(parser, 8080, server=True)
    parser.add_argument(
        "--heartbeat",
        type=float,
        default=None,
        help="seconds between read-session heartbeats (default: random 5-15 s)",
    )
    _policy.add_arguments(parser)
    defaults = ServerLimits()
    parser.add_argument(
        "--max-unsent-per-connection", type=int, default=defaults.max_unsent_per_connection,
        metavar="BYTES", help="HTTP/2: bytes of responses produced for a connection and not "
        "yet taken by the client (default 4 MiB; 0: no bound)",
    )  # fmt: skip
    parser.add_argument(
        "--stream-progress-timeout", type=float, default=defaults.stream_progress_timeout,
        metavar="SECONDS", help="HTTP/2: a stream waiting this long for the client to open its "
        "window is reset (default 30; 0: never)",
    )  # fmt: skip
    parser.add_argument(
        "--max-resets", type=int, default=defaults.max_resets, metavar="N",
        help="HTTP/2: client stream resets allowed within --reset-window before GOAWAY "
        "ENHANCE_YOUR_CALM (default 200; 0: no bound)",
    )  # fmt: skip
    parser.add_argument(
        "--reset-window", type=float, default=defaults.reset_window, metavar="SECONDS",
        help="HTTP/2: the window --max-resets counts in (default 10)",
    )  # fmt: skip
    _cli.add_verbose(parser)
    args = parser.parse_args(argv)
    _cli.setup_logging(args.verbose)
    beat = (args.heartbeat, args.heartbeat) if args.heartbeat else (5.0, 15.0)
    try:
        limits = ServerLimits(
            args.max_unsent_per_connection, args.stream_progress_timeout, args.max_resets,
            args.reset_window,
        )  # fmt: skip
    except ValueError as exc:
        parser.error(str(exc))

    async def run() -> None:
        policy = _policy.ConnectionPolicy.from_args(args)
        gatekeeper = _policy.Gatekeeper(policy)
        server = await serve(
            args.host, args.port, heartbeat=beat, gatekeeper=gatekeeper, limits=limits
        )
        port = server.sockets[0].getsockname()[1]
        log.info("listening on %s:%d", args.host, port)
        async with server:
            await server.serve_forever()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())
    return 0


if __name__ == "__main__":
    from examples._cli import run as run_cli

    sys.exit(run_cli(main, "python -m examples.s2_server"))
