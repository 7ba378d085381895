"""Hypothesis strategies for Durable Streams servers: requests, their bytes, malformed requests.

Durable Streams is HTTP/1.1: a malformed case is one whole request whose answer must be the
HTTP status in ``code``. Two groups:

- ``malformed()``: broken headers and framing a server refuses without looking at its streams
  (TTL "0|[1-9][0-9]*", TTL together with Expires-At, producer headers "all or none", offsets
  containing ``, & = ? /``, ``live`` values, bad Content-Length and chunk sizes, a head over the
  size limit (431), a body over the limit announced by Content-Length alone (413), no Host);
- ``decisions()``: requests that are well formed but wrong for the server's state (append to a
  missing stream 404, another Content-Type than the stream's 409, invalid JSON on a JSON
  stream 400, an empty append body 400).

HTTP lets a server close the connection after any error response, so every case is ``fatal``
in the sense that the exchange is over once the response has been read; the live driver then
checks that a fresh connection is served.
"""

from __future__ import annotations

import attrs
import h11
from hypothesis import strategies as st

from s3p_codec import Role, durable
from s3p_codec.testing.strategies import Answer, Malformed, Valid

__all__ = ["Target", "decisions", "malformed", "request_wire", "requests"]

C = durable.ErrorCode
STREAM = "/v1/stream/fuzz"
JSON_STREAM = "/v1/stream/fuzz-json"
HOST = b"host: 127.0.0.1\r\n"


def _request(line: bytes, headers: bytes = b"", body: bytes = b"") -> bytes:
    return line + b"\r\n" + HOST + headers + b"\r\n" + body


def _client() -> durable.ClientConnection:
    return durable.Connection(Role.CLIENT, host="127.0.0.1")


# --- valid -------------------------------------------------------------------------------------

TYPES = ("text/plain", "application/octet-stream", "application/json")


def requests(path: str = STREAM) -> st.SearchStrategy[durable.Request]:
    """Requests on ``path`` (a ``text/plain`` stream) and creates of fresh streams."""
    names = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=16)
    return st.one_of(
        st.builds(
            durable.Create,
            names.map(lambda n: f"/v1/stream/new-{n}"),
            content_type=st.sampled_from(TYPES[:2]),
        ),
        st.builds(
            durable.Append, st.just(path), st.binary(min_size=1, max_size=64), st.just(TYPES[0])
        ),
        st.builds(durable.Read, st.just(path), st.sampled_from(["-1", "now"])),
        st.builds(durable.Head, st.just(path)),
    )


def request_wire() -> st.SearchStrategy[tuple[durable.Request, bytes]]:
    """``(request, its exact HTTP/1.1 bytes)`` as a client-role codec writes them."""
    return requests().map(lambda r: (r, _client().send(r)))


# --- malformed ---------------------------------------------------------------------------------


def _case(label: str, data: bytes, status: int) -> Malformed:
    return Malformed(label, data, status, fatal=True, reply=True)


def _headers() -> st.SearchStrategy[Malformed]:
    put = b"PUT /v1/stream/fuzz-new HTTP/1.1"
    post = b"POST " + STREAM.encode() + b" HTTP/1.1"
    plain = b"content-type: text/plain\r\n"
    producer = plain + b"content-length: 1\r\n"
    cases = [
        (
            "Stream-TTL with a leading zero",
            _request(put, b"stream-ttl: 01\r\ncontent-length: 0\r\n"),
        ),
        ("Stream-TTL negative", _request(put, b"stream-ttl: -1\r\ncontent-length: 0\r\n")),
        ("Stream-TTL not an integer", _request(put, b"stream-ttl: 1.5\r\ncontent-length: 0\r\n")),
        (
            "Stream-TTL with Stream-Expires-At",
            _request(
                put,
                b"stream-ttl: 10\r\nstream-expires-at: 2030-01-01T00:00:00Z\r\n"
                b"content-length: 0\r\n",
            ),
        ),
        (
            "Stream-Expires-At not RFC 3339",
            _request(put, b"stream-expires-at: soon\r\ncontent-length: 0\r\n"),
        ),
        ("Producer-Id alone", _request(post, producer + b"producer-id: p\r\n", b"x")),
        (
            "Producer-Epoch not a number",
            _request(
                post, producer + b"producer-id: p\r\nproducer-epoch: x\r\nproducer-seq: 0\r\n", b"x"
            ),
        ),
        (
            "Producer-Seq negative",
            _request(
                post,
                producer + b"producer-id: p\r\nproducer-epoch: 0\r\nproducer-seq: -1\r\n",
                b"x",
            ),
        ),
        ("offset with a comma", _request(b"GET " + STREAM.encode() + b"?offset=a,b HTTP/1.1")),
        ("offset with a slash", _request(b"GET " + STREAM.encode() + b"?offset=a/b HTTP/1.1")),
        (
            "offset of 300 characters",
            _request(b"GET " + STREAM.encode() + b"?offset=" + b"1" * 300 + b" HTTP/1.1"),
        ),
        (
            "live not long-poll or sse",
            _request(b"GET " + STREAM.encode() + b"?offset=-1&live=push HTTP/1.1"),
        ),
        ("live=sse without an offset", _request(b"GET " + STREAM.encode() + b"?live=sse HTTP/1.1")),
    ]
    return st.sampled_from([_case(label, data, C.BAD_REQUEST) for label, data in cases])


def _framing(lim: durable.Limits) -> st.SearchStrategy[Malformed]:
    post = b"POST " + STREAM.encode() + b" HTTP/1.1"
    plain = b"content-type: text/plain\r\n"
    return st.sampled_from(
        [
            _case("not an HTTP request line", b"GARBAGE\r\n\r\n", C.BAD_REQUEST),
            _case(
                "no Host header", b"GET " + STREAM.encode() + b" HTTP/1.1\r\n\r\n", C.BAD_REQUEST
            ),
            _case(
                "Content-Length not a number",
                _request(post, plain + b"content-length: x1\r\n"),
                C.BAD_REQUEST,
            ),
            _case(
                "chunk size not hex",
                _request(post, plain + b"transfer-encoding: chunked\r\n", b"zz\r\nx\r\n0\r\n\r\n"),
                C.BAD_REQUEST,
            ),
            _case(
                "body over the limit (Content-Length only)",
                _request(post, plain + b"content-length: %d\r\n" % (lim.max_body_size + 1)),
                C.PAYLOAD_TOO_LARGE,
            ),
            _case(
                "request head over the limit",
                b"GET "
                + STREAM.encode()
                + b" HTTP/1.1\r\n"
                + HOST
                + b"x-big: "
                + b"a" * (lim.max_header_size + 1024)
                + b"\r\n\r\n",
                C.REQUEST_HEADER_FIELDS_TOO_LARGE,
            ),
            _case(
                "method PATCH",
                _request(b"PATCH " + STREAM.encode() + b" HTTP/1.1"),
                C.METHOD_NOT_ALLOWED,
            ),
            _case(
                "empty append body",
                _request(post, plain + b"content-length: 0\r\n"),
                C.BAD_REQUEST,
            ),
        ]
    )


def malformed(limits: durable.Limits | None = None) -> st.SearchStrategy[Malformed]:
    """Requests a strict server refuses from their bytes alone, with the status it must send."""
    lim = limits or durable.Limits()
    return st.one_of(_headers(), _framing(lim))


def decisions() -> st.SearchStrategy[Malformed]:
    """Well-formed requests that the server's state makes wrong (needs the ``Target`` setup)."""
    missing = b"/v1/stream/fuzz-missing"
    return st.sampled_from(
        [
            _case(
                "append to a missing stream",
                _request(
                    b"POST " + missing + b" HTTP/1.1",
                    b"content-type: text/plain\r\ncontent-length: 1\r\n",
                    b"x",
                ),
                C.NOT_FOUND,
            ),
            _case(
                "read of a missing stream",
                _request(b"GET " + missing + b"?offset=-1 HTTP/1.1"),
                C.NOT_FOUND,
            ),
            _case(
                "append with another Content-Type",
                _request(
                    b"POST " + STREAM.encode() + b" HTTP/1.1",
                    b"content-type: application/json\r\ncontent-length: 2\r\n",
                    b"{}",
                ),
                C.CONFLICT,
            ),
            _case(
                "invalid JSON on a JSON stream",
                _request(
                    b"POST " + JSON_STREAM.encode() + b" HTTP/1.1",
                    b"content-type: application/json\r\ncontent-length: 3\r\n",
                    b"{x}",
                ),
                C.BAD_REQUEST,
            ),
        ]
    )


# --- live target -------------------------------------------------------------------------------

_METHODS = {
    durable.Create: b"PUT",
    durable.Append: b"POST",
    durable.Read: b"GET",
    durable.Head: b"HEAD",
    durable.Delete: b"DELETE",
}


class _Reader:
    def __init__(self, sent: Malformed | Valid) -> None:
        method = _METHODS.get(type(sent.event), b"GET") if isinstance(sent, Valid) else b"GET"
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
        self._h11.send(h11.Request(method=method, target="/", headers=[("host", "x")]))
        self._h11.send(h11.EndOfMessage())
        self._answer = Answer()

    def feed(self, data: bytes) -> Answer:
        if self._answer.problem or self._answer.finished:
            return self._answer
        try:
            self._h11.receive_data(data)
            while True:
                event = self._h11.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    break
                if isinstance(event, h11.Response):
                    code = event.status_code if event.status_code >= 400 else None
                    self._answer = Answer(True, code, False, None, f"HTTP {event.status_code}")
                elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    self._answer = attrs.evolve(self._answer, finished=True)
                    break
        except h11.RemoteProtocolError as exc:
            self._answer = attrs.evolve(self._answer, finished=True, problem=f"HTTP/1.1: {exc}")
        if not data and not self._answer.finished:
            self._answer = attrs.evolve(self._answer, finished=True)
        return self._answer


class Target:
    """Durable Streams as the live fuzzer drives it (``decisions`` included)."""

    name = "durable"
    default_port = 4437

    def __init__(self, limits: durable.Limits | None = None) -> None:
        self.limits = limits or durable.Limits()

    def _valid(self, request: durable.Request) -> Valid:
        return Valid(type(request).__name__, _client().send(request), request)

    def setup(self) -> list[Valid]:
        return [
            self._valid(durable.Create(STREAM, content_type="text/plain")),
            self._valid(durable.Create(JSON_STREAM, content_type="application/json")),
        ]

    def malformed(self) -> st.SearchStrategy[Malformed]:
        return st.one_of(malformed(self.limits), decisions())

    def valid(self) -> st.SearchStrategy[Valid]:
        return requests().map(self._valid)

    def probe(self) -> Valid:
        return self._valid(durable.Read(STREAM, "now"))

    def reader(self, sent: Malformed | Valid) -> _Reader:
        return _Reader(sent)

    def follow_up(self, sent: Malformed | Valid) -> Valid | None:
        return None
