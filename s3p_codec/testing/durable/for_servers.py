"""The server direction: Durable Streams requests, their bytes, and requests a server refuses.

``malformed()`` is refused from the bytes alone; ``decisions()`` is well formed but wrong for
the server's state (the ``Target`` setup creates the streams it relies on).
"""

from __future__ import annotations

from hypothesis import strategies as st

from s3p_codec import durable
from s3p_codec.testing._strategies import Malformed
from s3p_codec.testing.durable._subscriptions import (
    subscription_decisions,
    subscription_malformed,
)
from s3p_codec.testing.durable._wire import STREAM, TYPES, C, _client

#: The JSON-mode stream the cases use.
JSON_STREAM = "/v1/stream/fuzz-json"
#: The ``Host`` header line every generated request carries.
HOST = b"host: 127.0.0.1\r\n"


def _request(line: bytes, headers: bytes = b"", body: bytes = b"") -> bytes:
    return line + b"\r\n" + HOST + headers + b"\r\n" + body


def request_rules(path: str = STREAM) -> dict[str, st.SearchStrategy[durable.Request]]:
    """What ``requests()`` draws from, by type name: each type is a rule of the live fuzzer."""
    names = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=16)
    return {
        "Create": st.builds(
            durable.Create,
            names.map(lambda n: f"/v1/stream/new-{n}"),
            content_type=st.sampled_from(TYPES[:2]),
        ),
        "Append": st.builds(
            durable.Append, st.just(path), st.binary(min_size=1, max_size=64), st.just(TYPES[0])
        ),
        "Read": st.builds(durable.Read, st.just(path), st.sampled_from(["-1", "now"])),
        "Head": st.builds(durable.Head, st.just(path)),
    }


def requests(path: str = STREAM) -> st.SearchStrategy[durable.Request]:
    """Requests on ``path`` (a ``text/plain`` stream) and creates of fresh streams."""
    return st.one_of(*request_rules(path).values())


def request_wire() -> st.SearchStrategy[tuple[durable.Request, bytes]]:
    """``(request, its exact HTTP/1.1 bytes)`` as a client-role codec writes them."""
    return requests().map(lambda r: (r, _client().send(r)))


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


def malformed_rules(
    limits: durable.Limits | None = None,
) -> dict[str, st.SearchStrategy[Malformed]]:
    """The rule families of ``malformed()`` by name: the live fuzzer runs each once before
    repeating any."""
    lim = limits or durable.Limits()
    return {
        "headers": _headers(),
        "HTTP framing": _framing(lim),
        "subscription requests": subscription_malformed(),
    }


def malformed(limits: durable.Limits | None = None) -> st.SearchStrategy[Malformed]:
    """Requests a strict server refuses from their bytes alone, with the status it must send."""
    return st.one_of(*malformed_rules(limits).values())


def decisions() -> st.SearchStrategy[Malformed]:
    """Well-formed requests that the server's state makes wrong (needs the ``Target`` setup)."""
    return subscription_decisions() | stream_decisions()


def stream_decisions() -> st.SearchStrategy[Malformed]:
    """Well-formed stream requests that the server's state makes wrong (``Target`` setup)."""
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
