"""The client direction: Durable Streams responses, their bytes, and bytes a client refuses.

Kept apart from ``for_servers`` because a client is fuzzed with what a server writes: each case
carries the request the client must have sent (``pending``) before its bytes arrive, and an
SSE response is several events, not one.
"""

from __future__ import annotations

from hypothesis import strategies as st

from s3p_codec import Role, durable
from s3p_codec.testing._strategies import MalformedReply
from s3p_codec.testing.durable._wire import STREAM, TYPES, C, _client

_TOKEN = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=16)
"""Header values that survive HTTP unchanged (printable ASCII, no whitespace)."""
_INT = st.integers(0, (1 << 53) - 1)


def stream_offsets() -> st.SearchStrategy[str]:
    """Offsets a server may mint: the reference shape ``%016d_%016d`` (never a sentinel)."""
    return st.builds(durable.offsets.format_offset, st.integers(0, 10**6), st.integers(0, 10**12))


def _appended() -> st.SearchStrategy[durable.Appended]:
    plain = st.builds(durable.Appended, stream_offsets(), st.booleans())
    accepted = st.builds(durable.Appended, stream_offsets(), st.booleans(), _INT, _INT)
    duplicate = st.builds(
        durable.Appended, st.none() | stream_offsets(), st.booleans(), _INT, _INT, st.just(True)
    )
    return st.one_of(plain, accepted, duplicate)


def responses() -> st.SearchStrategy[durable.Response]:
    """Every response kind the codec models, valid, each answering ``request_for`` itself.

    Content types of the fuzzed streams and others (``image/png``, a charset parameter), TTLs
    and both forms of an RFC 3339 expiry, entity tags and cursors of any printable ASCII,
    producer outcomes (accepted, duplicate, with or without an offset), error statuses named
    or not.
    """
    types = st.sampled_from([*TYPES, "text/plain; charset=utf-8", "image/png"])
    expiries = st.sampled_from(["2030-01-01T00:00:00Z", "2030-01-01T00:00:00.5+02:00"])
    maybe = st.none() | _TOKEN
    created = st.builds(
        lambda offset, kind, closed, existed: durable.Created(
            offset, kind, None if existed else "/v1/stream/fuzz", closed, existed
        ),
        stream_offsets(),
        types,
        st.booleans(),
        st.booleans(),
    )
    info = st.builds(
        durable.StreamInfo,
        stream_offsets(),
        st.none() | types,
        st.booleans(),
        st.none() | st.integers(0, 10**9),
        st.none() | expiries,
        maybe,
    )
    chunk = st.builds(
        durable.Chunk,
        st.binary(max_size=64),
        stream_offsets(),
        st.none() | types,
        st.booleans(),
        st.booleans(),
        maybe,
        maybe,
        st.sampled_from([durable.CATCH_UP_CACHE_CONTROL, "no-store", None]),
    )
    timeout = st.builds(
        durable.LongPollTimeout,
        stream_offsets(),
        _TOKEN,
        st.booleans(),
    )
    error = st.builds(
        durable.ErrorResponse,
        st.sampled_from(list(C)) | st.integers(400, 599),
        st.text(max_size=20),
        st.booleans(),
        st.none() | stream_offsets(),
        st.none() | _INT,
        st.none() | _INT,
        st.none() | _INT,
    )
    return st.one_of(
        created,
        _appended(),
        info,
        st.just(durable.Deleted()),
        chunk,
        st.builds(durable.NotModified, maybe),
        timeout,
        st.builds(durable.SSEStart, st.booleans()),
        st.just(durable.OptionsOk()),
        error,
    )


def request_for(response: durable.Response) -> durable.Request:
    """The request ``response`` answers in ``response_wire`` (HTTP pairs them one to one)."""
    if isinstance(response, durable.Created):
        return durable.Create(STREAM, content_type=response.content_type)
    if isinstance(response, durable.Appended):
        producer = None
        if response.producer_epoch is not None:
            producer = durable.Producer("fuzz", response.producer_epoch, response.producer_seq or 0)
        return durable.Append(STREAM, b"x", TYPES[0], producer=producer, close=response.closed)
    if isinstance(response, durable.StreamInfo):
        return durable.Head(STREAM)
    if isinstance(response, durable.Deleted):
        return durable.Delete(STREAM)
    if isinstance(response, durable.LongPollTimeout):
        return durable.Read(STREAM, "-1", durable.LiveMode.LONG_POLL)
    if isinstance(response, durable.SSEStart):
        return durable.Read(STREAM, "-1", durable.LiveMode.SSE)
    if isinstance(response, durable.OptionsOk):
        return durable.Options(STREAM)
    return durable.Read(STREAM, "-1")


def requests_for(response: durable.Response) -> tuple[durable.Request, ...]:
    """``(request_for(response),)``: the same shape as the other protocols' ``requests_for``."""
    return (request_for(response),)


def _sse_events(base64: bool) -> st.SearchStrategy[list[durable.SSEData | durable.SSEControl]]:
    """SSE body events; text payloads are UTF-8 without CR (SSE turns CR into a line end)."""
    if base64:
        data = st.binary(max_size=48).map(durable.SSEData)
    else:
        text = st.text(max_size=24).map(lambda t: t.replace("\r", ""))
        data = text.map(lambda t: durable.SSEData(t.encode()))
    control = st.builds(
        lambda offset, cursor, up_to_date, closed: durable.SSEControl(
            offset, cursor if cursor is not None or closed else "1", up_to_date, closed
        ),
        stream_offsets(),
        st.none() | _TOKEN,
        st.booleans(),
        st.booleans(),
    )
    return st.lists(data | control, max_size=4)


#: The events a client-role codec yields for one response.
ClientEvents = tuple[durable.ClientEvent, ...]


def _serve(request: durable.Request, events: ClientEvents) -> bytes:
    """The bytes our server-role codec writes for ``events`` once it has read ``request``."""
    server = durable.Connection(Role.SERVER)
    server.receive_data(_client().send(request))
    server.next_event()
    return b"".join(server.send(event) for event in events)


def response_wire() -> st.SearchStrategy[tuple[durable.Request, ClientEvents, bytes]]:
    """``(request, events, wire)``: a response as our server-role codec writes it, with the
    request it answers and the events a client reads from it, in order.

    For most responses ``events`` is the response alone; an SSE read gives ``SSEStart``, the
    ``SSEData``/``SSEControl`` events of its body, then ``SSEEnd``.
    """

    def build(
        response: durable.Response, data: st.DataObject
    ) -> tuple[durable.Request, ClientEvents, bytes]:
        events: ClientEvents = (response,)
        if isinstance(response, durable.SSEStart):
            body = data.draw(_sse_events(response.base64))
            events = (response, *body, durable.SSEEnd())
        request = request_for(response)
        return request, events, _serve(request, events)

    return st.builds(build, responses(), st.data())


reply_wire = response_wire
"""The same strategy under the name the other protocols use."""


_OPEN_SSE = durable.Read(STREAM, "-1", durable.LiveMode.SSE)
_SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)
_OFFSET = b"0000000000000000_0000000000000001"


def _chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts if part)


def _sse(text: bytes, *, end: bool = True) -> bytes:
    """An SSE response whose body is ``text`` (one chunk), ended or not."""
    return _SSE_HEAD + _chunked(text) + (b"0\r\n\r\n" if end else b"")


def _response(status: bytes, headers: bytes = b"", body: bytes = b"") -> bytes:
    return b"HTTP/1.1 " + status + b"\r\n" + headers + b"\r\n" + body


def _refused(
    label: str,
    data: bytes,
    pending: tuple[durable.Request, ...],
    code: str = "http",
    *,
    fatal: bool = True,
    half_close: bool = False,
) -> MalformedReply:
    return MalformedReply(label, data, code, fatal, pending, half_close=half_close)


def _reply_off_by_one() -> st.SearchStrategy[MalformedReply]:
    """Content-Length or a chunk size one short or one long."""

    def length(body: bytes, delta: int) -> MalformedReply:
        head = b"stream-next-offset: %s\r\ncontent-length: %d\r\n" % (_OFFSET, len(body) + delta)
        data = _response(b"200 OK", head, body)
        # One short: the last byte answers no request. One long: the body never ends.
        return _refused(f"Content-Length {delta:+d}", data, (_READ,), half_close=delta > 0)

    def chunk(text: bytes, delta: int) -> MalformedReply:
        event = b"event: data\ndata:" + text + b"\n\n"
        body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(event) + delta, event)
        return _refused(f"chunk size {delta:+d}", _SSE_HEAD + body, (_OPEN_SSE,))

    deltas = st.sampled_from((-1, 1))
    return st.one_of(
        st.builds(length, st.binary(min_size=1, max_size=32), deltas),
        st.builds(chunk, st.binary(max_size=16).map(lambda b: b.hex().encode()), deltas),
    )


_READ = durable.Read(STREAM, "-1")


def _reply_limits(lim: durable.Limits) -> st.SearchStrategy[MalformedReply]:
    """At and over the client's bounds; from the header alone where there is one."""
    offset = b"stream-next-offset: %s\r\n" % _OFFSET
    cases = [
        _refused(
            "Content-Length over the body limit (header only)",
            _response(b"200 OK", offset + b"content-length: %d\r\n" % (lim.max_body_size + 1)),
            (_READ,),
        ),
        _refused(
            "Content-Length at the body limit (header only), then end",
            _response(b"200 OK", offset + b"content-length: %d\r\n" % lim.max_body_size),
            (_READ,),
            half_close=True,
        ),
        _refused(
            "response head over the header limit (no end yet)",
            b"HTTP/1.1 200 OK\r\nx-big: " + b"a" * (lim.max_header_size + 1),
            (_READ,),
        ),
    ]
    small = 1 << 16
    if lim.max_body_size < small:
        body = _chunked(b"x" * lim.max_body_size, b"y") + b"0\r\n\r\n"
        head = offset + b"transfer-encoding: chunked\r\n"
        cases.append(
            _refused("chunked body over the body limit", _response(b"200 OK", head, body), (_READ,))
        )
    if lim.max_sse_line < small:
        line = b"data:" + b"x" * lim.max_sse_line
        cases.append(
            _refused("SSE line over the limit (no end yet)", _sse(line, end=False), (_OPEN_SSE,),
                     "sse")
        )  # fmt: skip
    if lim.max_sse_event < small:
        half = b"data:" + b"x" * min(lim.max_sse_line - 5, lim.max_sse_event) + b"\n"
        lines = half * (lim.max_sse_event // max(1, len(half) - 6) + 2)
        cases.append(
            _refused("SSE event over the limit", _sse(b"event: data\n" + lines, end=False),
                     (_OPEN_SSE,), "sse")
        )  # fmt: skip
    return st.sampled_from(cases)


def _reply_http() -> st.SearchStrategy[MalformedReply]:
    """Broken HTTP/1.1 framing: fatal (``"http"``)."""
    offset = b"stream-next-offset: %s\r\n" % _OFFSET
    cases = [
        ("status line without a status code", b"HTTP/1.1 OK\r\n\r\n"),
        ("status code not a number", b"HTTP/1.1 2x0 OK\r\ncontent-length: 0\r\n\r\n"),
        ("HTTP/2 status line", b"HTTP/2 200 OK\r\ncontent-length: 0\r\n\r\n"),
        ("not HTTP at all", b"+OK\r\n\r\n"),
        ("header line without a colon", _response(b"200 OK", offset + b"content-length 0\r\n")),
        ("space before the header colon", _response(b"200 OK", b"content-length : 0\r\n")),
        ("Content-Length negative", _response(b"200 OK", offset + b"content-length: -1\r\n")),
        ("Content-Length in hex", _response(b"200 OK", offset + b"content-length: 0x1\r\n")),
        (
            "repeated Content-Length, different values",
            _response(b"200 OK", offset + b"content-length: 1\r\ncontent-length: 2\r\n", b"xx"),
        ),
        (
            "Transfer-Encoding not chunked",
            _response(b"200 OK", offset + b"transfer-encoding: gzip\r\n", b"x"),
        ),
        (
            "chunk size not hex",
            _response(
                b"200 OK", offset + b"transfer-encoding: chunked\r\n", b"zz\r\nx\r\n0\r\n\r\n"
            ),
        ),
        ("NUL in a header value", _response(b"200 OK", b"stream-next-offset: a\x00b\r\n")),
        ("server closed without a response", b""),
        ("only 100 Continue, then end", b"HTTP/1.1 100 Continue\r\n\r\n"),
        ("101 Switching Protocols, no upgrade asked", b"HTTP/1.1 101 Switching Protocols\r\n\r\n"),
    ]
    half = {"server closed without a response", "only 100 Continue, then end"}
    return st.sampled_from(
        [_refused(label, data, (_READ,), half_close=label in half) for label, data in cases]
    )


def _reply_headers() -> st.SearchStrategy[MalformedReply]:
    """Well-framed responses whose protocol headers are missing, repeated, ill-typed or not
    ASCII: recoverable (``"invalid_response"``), the connection carries on."""
    offset = b"stream-next-offset: %s\r\n" % _OFFSET
    empty = b"content-length: 0\r\n"
    producer = durable.Append(STREAM, b"x", TYPES[0], producer=durable.Producer("p", 0, 0))
    cases: list[tuple[str, bytes, durable.Request]] = [
        ("Create answered without Stream-Next-Offset", _response(b"201 Created", empty),
         durable.Create(STREAM, TYPES[0])),
        ("Read answered without Stream-Next-Offset", _response(b"200 OK", empty), _READ),
        ("long-poll 204 without Stream-Next-Offset", _response(b"204 No Content"),
         durable.Read(STREAM, "-1", durable.LiveMode.LONG_POLL)),
        ("HEAD answered without Stream-Next-Offset", _response(b"200 OK"), durable.Head(STREAM)),
        ("Stream-Next-Offset repeated", _response(b"200 OK", offset + offset + empty), _READ),
        ("Stream-Next-Offset empty", _response(b"200 OK", b"stream-next-offset:\r\n" + empty),
         _READ),
        ("Stream-Next-Offset with a slash", _response(b"200 OK", b"stream-next-offset: a/b\r\n"
                                                      + empty), _READ),
        ("Stream-Next-Offset with a space", _response(b"200 OK", b"stream-next-offset: a b\r\n"
                                                      + empty), _READ),
        ("Stream-Next-Offset not ASCII", _response(b"200 OK", b"stream-next-offset: \xc3\xa9\r\n"
                                                   + empty), _READ),
        ("Stream-Cursor not ASCII", _response(b"200 OK", offset + b"stream-cursor: \xff\r\n"
                                              + empty), _READ),
        ("Stream-TTL not an integer", _response(b"200 OK", offset + b"stream-ttl: 1.5\r\n"),
         durable.Head(STREAM)),
        ("Stream-TTL negative", _response(b"200 OK", offset + b"stream-ttl: -1\r\n"),
         durable.Head(STREAM)),
        ("Producer-Epoch not a number", _response(b"200 OK", offset + b"producer-epoch: x\r\n"
                                                  + empty), producer),
        ("Producer-Seq negative", _response(b"200 OK", offset + b"producer-seq: -1\r\n" + empty),
         producer),
        ("Producer-Epoch over 2^53-1", _response(b"200 OK", offset + b"producer-epoch: %d\r\n"
                                                 % (1 << 53) + empty), producer),
        ("error with Producer-Expected-Seq not a number",
         _response(b"409 Conflict", b"producer-expected-seq: x\r\n" + empty), producer),
    ]  # fmt: skip
    return st.sampled_from(
        [
            _refused(label, data, (request,), "invalid_response", fatal=False)
            for label, data, request in cases
        ]
    )


def _control(fields: bytes) -> bytes:
    return b"event: control\ndata:" + fields + b"\n\n"


def _reply_sse(lim: durable.Limits) -> st.SearchStrategy[MalformedReply]:
    """SSE bodies a client refuses (``"sse"``): bad control JSON, bad base64, bad UTF-8."""
    b64_head = _SSE_HEAD.replace(b"\r\n\r\n", b"\r\nstream-sse-data-encoding: base64\r\n\r\n")
    cursor = b',"streamCursor":"1"'
    cases = [
        ("control event not JSON", _sse(_control(b"{streamNextOffset}"))),
        ("control event a JSON array", _sse(_control(b'["' + _OFFSET + b'"]'))),
        ("control without streamNextOffset", _sse(_control(b'{"upToDate":true}'))),
        ("control streamNextOffset a number", _sse(_control(b'{"streamNextOffset":1}'))),
        ("control streamNextOffset an object",
         _sse(_control(b'{"streamNextOffset":{"o":"' + _OFFSET + b'"}}'))),
        ("control streamCursor a number",
         _sse(_control(b'{"streamNextOffset":"' + _OFFSET + b'","streamCursor":5}'))),
        ("control upToDate a string",
         _sse(_control(b'{"streamNextOffset":"' + _OFFSET + cursor + b',"upToDate":"true"}'))),
        ("control streamClosed null",
         _sse(_control(b'{"streamNextOffset":"' + _OFFSET + cursor + b',"streamClosed":null}'))),
        ("invalid UTF-8 in an SSE line", _sse(b"event: data\ndata:\xff\n\n")),
        ("UTF-8 surrogate in an SSE line", _sse(b"event: data\ndata:\xed\xa0\x80\n\n")),
        ("base64 data not a multiple of 4", b64_head + _chunked(b"event: data\ndata:eA=\n\n")
         + b"0\r\n\r\n"),
        ("base64 data with a bad character", b64_head + _chunked(b"event: data\ndata:e!==\n\n")
         + b"0\r\n\r\n"),
        ("base64 data not ASCII", b64_head + _chunked("event: data\ndata:éé==\n\n".encode())
         + b"0\r\n\r\n"),
    ]  # fmt: skip
    deep = b'{"streamNextOffset":"' + _OFFSET + cursor + b',"x":' + b"[" * 100_000
    if lim.max_sse_line > len(deep) + 16 and lim.max_sse_event > len(deep) + 16:
        cases.append(
            ("control JSON nested 100000 deep", _sse(_control(deep + b"]" * 100_000 + b"}")))
        )
    refused = [_refused(label, data, (_OPEN_SSE,), "sse") for label, data in cases]
    refused.append(
        _refused(
            "SSE body ends inside an event",
            _sse(b"event: data\ndata:x\n"),
            (_OPEN_SSE,),
            "sse",
            fatal=False,
        )
    )
    return st.sampled_from(refused)


def _reply_orders() -> st.SearchStrategy[MalformedReply]:
    """Valid responses in illegal orders, and bodies where HTTP allows none: fatal."""

    def unasked(triple: tuple[durable.Request, ClientEvents, bytes]) -> MalformedReply:
        return _refused("a response with no request pending", triple[2], ())

    def extra(
        triple: tuple[durable.Request, ClientEvents, bytes],
        other: tuple[durable.Request, ClientEvents, bytes],
    ) -> MalformedReply:
        return _refused("one response too many", triple[2] + other[2], (triple[0],))

    offset = b"stream-next-offset: %s\r\n" % _OFFSET
    with_body = b"content-length: 3\r\n\r\nabc"
    bodies: list[tuple[str, bytes, durable.Request]] = [
        ("body on a 204", b"HTTP/1.1 204 No Content\r\n" + offset + b"stream-cursor: 1\r\n"
         b"stream-up-to-date: true\r\n" + with_body,
         durable.Read(STREAM, "-1", durable.LiveMode.LONG_POLL)),
        ("body on a 304", b"HTTP/1.1 304 Not Modified\r\n" + with_body, _READ),
        ("body on a HEAD response", b"HTTP/1.1 200 OK\r\n" + offset + with_body,
         durable.Head(STREAM)),
    ]  # fmt: skip
    return st.one_of(
        response_wire().map(unasked),
        st.builds(extra, response_wire(), response_wire()),
        st.sampled_from([_refused(label, data, (req,)) for label, data, req in bodies]),
    )


def _reply_truncated() -> st.SearchStrategy[MalformedReply]:
    """A valid response cut at a field boundary of its head or inside its body, then end."""

    def build(
        triple: tuple[durable.Request, ClientEvents, bytes], data: st.DataObject
    ) -> MalformedReply:
        request, _, wire = triple
        head_end = wire.index(b"\r\n\r\n") + 4
        # Every cut before the head is complete, and any cut inside a body.
        lines = [i + 2 for i in range(head_end - 4) if wire[i : i + 2] == b"\r\n"]
        last = len(wire) - 1 if len(wire) > head_end else head_end - 1
        cut = data.draw(st.sampled_from([1, *lines]) | st.integers(1, last))
        return _refused("response cut by end of stream", wire[:cut], (request,), half_close=True)

    return st.builds(build, response_wire(), st.data())


def malformed_replies(limits: durable.Limits | None = None) -> st.SearchStrategy[MalformedReply]:
    """Server bytes a strict Durable Streams client refuses, with the code our client raises.

    ``pending`` holds the one ``durable.Request`` in flight (HTTP/1.1 here has one exchange at a
    time), or nothing. Codes: ``"http"`` (broken HTTP/1.1 framing, a body over
    ``Limits.max_body_size`` from its Content-Length, bytes answering no request: fatal),
    ``"sse"`` (a broken SSE body: fatal, except a body ending inside an event) and
    ``"invalid_response"`` (a well-framed response missing or misusing a protocol header: not
    fatal). Cases aimed at the SSE line and event bounds and at a chunked body over the limit
    appear only when those ``limits`` are under 64 KiB, to keep cases small.
    """
    lim = limits or durable.Limits()
    return st.one_of(
        _reply_off_by_one(),
        _reply_limits(lim),
        _reply_http(),
        _reply_headers(),
        _reply_sse(lim),
        _reply_orders(),
        _reply_truncated(),
    )
