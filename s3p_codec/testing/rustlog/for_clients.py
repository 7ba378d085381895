"""The client direction: valid RustLog responses, their frames, and frames a client refuses.

Kept apart from ``for_servers`` because a client is fuzzed with what a server writes: each case
carries the requests the client must have sent (``pending``) before its bytes arrive.
"""

from __future__ import annotations

import base64

from hypothesis import strategies as st

from s3p_codec import Role, rustlog
from s3p_codec.testing._strategies import MalformedReply
from s3p_codec.testing.rustlog._wire import (
    BAD,
    TOO_LARGE,
    U16,
    U32,
    U64,
    _client,
    _frame,
    _json,
    _json_objects,
    _texts,
    topics,
)


def _fetch_responses() -> st.SearchStrategy[rustlog.FetchResponse]:
    """Records in increasing offset order (gaps of 1-3 between them), ``next_offset`` = last
    record offset + 1; without records, any ``next_offset``."""

    def build(
        start: int, rows: list[tuple[int, int, bytes]], empty_next: int
    ) -> rustlog.FetchResponse:
        records = []
        offset = start
        for gap, stamp, body in rows:
            records.append(rustlog.Record(offset, stamp, body))
            offset += gap
        next_offset = records[-1].offset + 1 if records else empty_next
        return rustlog.FetchResponse(tuple(records), next_offset)

    rows = st.lists(
        st.tuples(st.integers(1, 3), st.integers(0, U64), st.binary(max_size=32)), max_size=6
    )
    return st.builds(build, st.integers(0, U64 - 32), rows, st.integers(0, U64))


def responses() -> st.SearchStrategy[rustlog.Response]:
    """Every response type with every field over its whole range (for fuzzing clients).

    u32, u64 and usize fields anywhere in range, topics of 1-255 characters, any text where
    the spec says "string", records in offset order with gaps, free-form JSON
    (``json_values()``) in metrics and ``Error`` details, and ``Error`` codes beyond those the
    spec names (any u16: "Add new error codes" is a backward compatible change).
    """
    u32 = st.integers(0, U32)
    u64 = st.integers(0, U64)
    partitions = st.lists(st.builds(rustlog.PartitionInfo, u32, u64, u64, u64), max_size=4)
    return st.one_of(
        st.builds(rustlog.ProduceResponse, u64, u64),
        _fetch_responses(),
        st.builds(rustlog.OffsetCommitResponse, st.booleans()),
        st.builds(rustlog.OffsetFetchResponse, st.none() | u64),
        st.builds(rustlog.CreateTopicResponse, st.booleans(), u32),
        st.builds(
            rustlog.ListTopicsResponse,
            st.lists(st.builds(rustlog.TopicInfo, topics(), u32), max_size=4).map(tuple),
        ),
        st.builds(rustlog.DescribeTopicResponse, topics(), partitions.map(tuple)),
        st.builds(rustlog.DescribePartitionResponse, topics(), u32, u64, u64, u64),
        st.builds(rustlog.MetricsFetchResponse, _json_objects()),
        st.just(rustlog.Pong()),
        st.builds(
            rustlog.Error,
            st.sampled_from(rustlog.ErrorCode) | st.integers(0, U16),
            _texts(),
            st.none() | _json_objects(),
        ),
    )


_SAMPLE_REQUESTS: dict[type[rustlog.Request], rustlog.Request] = {
    rustlog.Produce: rustlog.Produce("t", 0, (b"x",)),
    rustlog.Fetch: rustlog.Fetch("g", "t", 0, 0, 1),
    rustlog.OffsetCommit: rustlog.OffsetCommit("g", "t", 0, 0),
    rustlog.OffsetFetch: rustlog.OffsetFetch("g", "t", 0),
    rustlog.CreateTopic: rustlog.CreateTopic("t", 1),
    rustlog.ListTopics: rustlog.ListTopics(),
    rustlog.DescribeTopic: rustlog.DescribeTopic("t"),
    rustlog.DescribePartition: rustlog.DescribePartition("t", 0),
    rustlog.MetricsFetch: rustlog.MetricsFetch(),
    rustlog.Ping: rustlog.Ping(),
}
_REQUEST_OF = {response: request for request, response in rustlog.RESPONSE_TO.items()}


def request_for(response: rustlog.Response | type[rustlog.Response]) -> rustlog.Request:
    """A request that ``response`` answers (its type - 0x80); a ``Ping`` for an ``Error``.

    ``response`` may also be a response class (``rustlog.FetchResponse``): a request that any
    response of that class answers.
    """
    kind = response if isinstance(response, type) else type(response)
    return _SAMPLE_REQUESTS[_REQUEST_OF.get(kind, rustlog.Ping)]


def requests_for(reply: rustlog.Response) -> tuple[rustlog.Request, ...]:
    """``(request_for(reply),)``: the requests to send before ``reply``, as in the other
    protocol modules."""
    return (request_for(reply),)


def _served(request: rustlog.Request, response: rustlog.Response) -> bytes:
    """The frame our server-role codec writes for ``response`` once it has read ``request``."""
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(_client().send(request))
    server.next_event()
    return server.send(response)


def reply_wire() -> st.SearchStrategy[tuple[rustlog.Response, bytes]]:
    """``(response, its exact frame)`` as our server-role codec writes it, in answer to
    ``request_for(response)``."""
    return responses().map(lambda response: (response, _served(request_for(response), response)))


def _refused(
    label: str,
    data: bytes,
    pending: tuple[rustlog.Request, ...] = (rustlog.Ping(),),
    code: int = BAD,
    *,
    fatal: bool = True,
    half_close: bool = False,
) -> MalformedReply:
    return MalformedReply(label, data, code, fatal, pending, half_close=half_close)


_PONG = _json({"type": "Pong"})


def _reply_framing(lim: rustlog.Limits) -> st.SearchStrategy[MalformedReply]:
    """Frame lengths of 0, at and over the limit (header only), cut headers; a record over
    ``max_record_size`` when that limit is below the frame size (and small)."""
    at = lim.max_frame_size
    cases = [
        _refused("frame length 0", b"\0\0\0\0" + _frame(_PONG)),
        _refused("frame length over the limit (header only)", (at + 1).to_bytes(4, "big"),
                 code=TOO_LARGE),
        _refused("frame length 2^32-1 (header only)", b"\xff\xff\xff\xff", code=TOO_LARGE),
        _refused("frame length at the limit (header only), then end", at.to_bytes(4, "big"),
                 half_close=True),
    ]  # fmt: skip
    size = lim.max_record_size + 1
    if size <= 1 << 16 and size * 4 // 3 + 128 <= lim.max_frame_size:
        # "Each record ≤ 10MB after Base64 decoding": checked when the limit is under the frame
        # size; a well-framed response, so the error is not fatal.
        record = {"offset": 0, "timestamp": 0, "payload": base64.b64encode(b"r" * size).decode()}
        body = _json({"type": "FetchResponse", "records": [record], "next_offset": 1})
        pending = (_SAMPLE_REQUESTS[rustlog.Fetch],)
        cases.append(
            _refused("record over the limit after base64", _frame(body), pending, TOO_LARGE,
                     fatal=False)
        )  # fmt: skip
    cut = st.integers(1, 3).map(
        lambda n: _refused("length header cut, then end", _frame(_PONG)[:n], half_close=True)
    )
    return st.one_of(st.sampled_from(cases), cut)


def _reply_off_by_one() -> st.SearchStrategy[MalformedReply]:
    """A valid response frame whose length is one short (the JSON loses its ``}``) or one
    long (the JSON gains the next frame's first byte)."""

    def build(pair: tuple[rustlog.Response, bytes], delta: int) -> MalformedReply:
        response, wire = pair
        payload = wire[4:]
        data = (len(payload) + delta).to_bytes(4, "big") + payload + _frame(_PONG)
        return _refused(f"frame length {delta:+d}", data, (request_for(response),))

    return st.builds(build, reply_wire(), st.sampled_from((-1, 1)))


def _reply_payloads() -> st.SearchStrategy[MalformedReply]:
    """Payloads that are not one UTF-8 JSON object with a string ``type``: fatal."""
    nested = b"[" * 65 + b"]" * 65
    cases = [
        ("invalid UTF-8", b'{"type":"Pong","x":"\xff"}'),
        ("invalid UTF-8 in a string field", b'{"type":"Error","code":400,"message":"\xfe"}'),
        ("modified UTF-8 NUL (C0 80)", b'{"type":"Pong","x":"\xc0\x80"}'),
        ("UTF-8 surrogate (ED A0 80)", b'{"type":"Pong","x":"\xed\xa0\x80"}'),
        ("UTF-8 byte order mark", b'\xef\xbb\xbf{"type":"Pong"}'),
        ("truncated JSON", b'{"type":"Pong"'),
        ("trailing bytes after JSON", b'{"type":"Pong"}x'),
        ("two JSON values", b'{"type":"Pong"}{"type":"Pong"}'),
        ("JSON array root", b'[{"type":"Pong"}]'),
        ("JSON string root", b'"Pong"'),
        ("JSON null root", b"null"),
        ("missing type", b'{"base_offset":1}'),
        ("type is a number", b'{"type":129}'),
        ("type is null", b'{"type":null}'),
        ("bare NaN", b'{"type":"Pong","x":NaN}'),
        ("nesting deeper than 64 in an unknown field", b'{"type":"Pong","x":' + nested + b"}"),
        ("nesting deeper than 64 in metrics", b'{"type":"MetricsFetchResponse","metrics":{"m":'
         + nested + b"}}"),
        ("nesting deeper than 64 in Error details", b'{"type":"Error","code":400,"message":"m",'
         b'"details":{"d":' + nested + b"}}"),
    ]  # fmt: skip
    pending = {"nesting deeper than 64 in metrics": (rustlog.MetricsFetch(),)}
    return st.sampled_from(
        [
            _refused(label, _frame(data), pending.get(label, (rustlog.Ping(),)))
            for label, data in cases
        ]
    )


def _reply_fields() -> st.SearchStrategy[MalformedReply]:
    """Well-framed responses with a missing, repeated or ill-typed field: the client raises a
    recoverable error (the response still counts as the answer to its request)."""
    produce = (_SAMPLE_REQUESTS[rustlog.Produce],)
    fetch = (_SAMPLE_REQUESTS[rustlog.Fetch],)
    record = {"offset": 0, "timestamp": 0, "payload": "eA=="}

    def fetched(records: object, next_offset: int = 1) -> dict[str, object]:
        return {"type": "FetchResponse", "records": records, "next_offset": next_offset}

    cases: list[tuple[str, bytes, tuple[rustlog.Request, ...]]] = [
        ("a request type as a response", _json({"type": "Ping"}), (rustlog.Ping(),)),
        ("unknown response type", _json({"type": "Frobnicate"}), (rustlog.Ping(),)),
        ("base_offset is a string", _json({"type": "ProduceResponse", "base_offset": "1",
                                           "record_count": 1}), produce),
        ("base_offset is negative", _json({"type": "ProduceResponse", "base_offset": -1,
                                           "record_count": 1}), produce),
        ("base_offset is a float", _json({"type": "ProduceResponse", "base_offset": 1.0,
                                          "record_count": 1}), produce),
        ("base_offset is a bool", _json({"type": "ProduceResponse", "base_offset": True,
                                         "record_count": 1}), produce),
        ("base_offset over u64", _json({"type": "ProduceResponse", "base_offset": U64 + 1,
                                        "record_count": 1}), produce),
        ("base_offset is an array", _json({"type": "ProduceResponse", "base_offset": [1],
                                           "record_count": 1}), produce),
        ("missing record_count", _json({"type": "ProduceResponse", "base_offset": 1}), produce),
        ("repeated field, the last one ill-typed",
         b'{"type":"ProduceResponse","base_offset":1,"record_count":1,"base_offset":"x"}',
         produce),
        ("records not an array", _json(fetched("eA==")), fetch),
        ("record not base64", _json(fetched([{**record, "payload": "!!!"}])), fetch),
        ("record base64 without padding", _json(fetched([{**record, "payload": "eA"}])), fetch),
        ("record is a number", _json(fetched([1])), fetch),
        ("record without payload", _json(fetched([{"offset": 0, "timestamp": 0}])), fetch),
        ("repeated record offset", _json(fetched([record, record])), fetch),
        ("next_offset not last offset + 1", _json(fetched([record], 5)), fetch),
        ("success is a string", _json({"type": "OffsetCommitResponse", "success": "true"}),
         (_SAMPLE_REQUESTS[rustlog.OffsetCommit],)),
        ("offset is a string", _json({"type": "OffsetFetchResponse", "offset": "0"}),
         (_SAMPLE_REQUESTS[rustlog.OffsetFetch],)),
        ("missing success", _json({"type": "CreateTopicResponse", "partitions_created": 1}),
         (_SAMPLE_REQUESTS[rustlog.CreateTopic],)),
        ("topic name with a slash", _json({"type": "ListTopicsResponse",
                                           "topics": [{"name": "a/b", "partition_count": 1}]}),
         (rustlog.ListTopics(),)),
        ("topic name of 256 characters", _json({"type": "DescribeTopicResponse",
                                                "topic": "t" * 256, "partitions": []}),
         (_SAMPLE_REQUESTS[rustlog.DescribeTopic],)),
        ("metrics not an object", _json({"type": "MetricsFetchResponse", "metrics": [1]}),
         (rustlog.MetricsFetch(),)),
        ("Error code is a string", _json({"type": "Error", "code": "400", "message": "m"}),
         (rustlog.Ping(),)),
        ("Error code over u16", _json({"type": "Error", "code": 70000, "message": "m"}),
         (rustlog.Ping(),)),
        ("Error without message", _json({"type": "Error", "code": 400}), (rustlog.Ping(),)),
        ("Error message with a lone surrogate escape",
         b'{"type":"Error","code":400,"message":"\\ud800"}', (rustlog.Ping(),)),
        ("Error details an array", _json({"type": "Error", "code": 400, "message": "m",
                                          "details": [1]}), (rustlog.Ping(),)),
    ]  # fmt: skip
    return st.sampled_from(
        [_refused(label, _frame(data), pending, fatal=False) for label, data, pending in cases]
    )


def _reply_wrong_type() -> st.SearchStrategy[MalformedReply]:
    """A valid response of another type than the pending request's type + 0x80: fatal."""

    def build(pair: tuple[rustlog.Response, bytes], request: rustlog.Request) -> MalformedReply:
        return _refused("response type does not answer the request", pair[1], (request,))

    def mismatched(args: tuple[tuple[rustlog.Response, bytes], rustlog.Request]) -> bool:
        (response, _), request = args
        return rustlog.RESPONSE_TO[type(request)] is not type(response)

    answers = reply_wire().filter(lambda pair: not isinstance(pair[0], rustlog.Error))
    pairs = st.tuples(answers, st.sampled_from(list(_SAMPLE_REQUESTS.values())))
    return pairs.filter(mismatched).map(lambda args: build(*args))


def _reply_orders() -> st.SearchStrategy[MalformedReply]:
    """Valid responses in illegal orders: none asked for, one too many, answers swapped."""

    def unasked(pair: tuple[rustlog.Response, bytes]) -> MalformedReply:
        return _refused("a response with no request pending", pair[1], ())

    def extra(
        pair: tuple[rustlog.Response, bytes], other: tuple[rustlog.Response, bytes]
    ) -> MalformedReply:
        return _refused("one response too many", pair[1] + other[1], (request_for(pair[0]),))

    swapped = _refused(
        "responses swapped",
        _served(rustlog.ListTopics(), rustlog.ListTopicsResponse(())) + _frame(_PONG),
        (rustlog.Ping(), rustlog.ListTopics()),
    )
    return st.one_of(
        reply_wire().map(unasked), st.builds(extra, reply_wire(), reply_wire()), st.just(swapped)
    )


def _reply_truncated() -> st.SearchStrategy[MalformedReply]:
    """A valid frame cut inside its header, after it, or after a JSON field, then end."""

    def build(pair: tuple[rustlog.Response, bytes], data: st.DataObject) -> MalformedReply:
        response, wire = pair
        fields = [4 + i + 1 for i, byte in enumerate(wire[4:-1]) if byte in b",:"]
        cut = data.draw(st.sampled_from([1, 2, 3, 4, *fields]) | st.integers(1, len(wire) - 1))
        pending = (request_for(response),)
        return _refused("frame cut by end of stream", wire[:cut], pending, half_close=True)

    return st.builds(build, reply_wire(), st.data())


def malformed_replies(limits: rustlog.Limits | None = None) -> st.SearchStrategy[MalformedReply]:
    """Server frames a strict RustLog client refuses, each with the status our client raises.

    ``pending`` holds ``rustlog.Request`` events to send first (a client made with
    ``pipelining=True`` when there are several). Framing, UTF-8, JSON, nesting, a response of
    the wrong type and a response with nothing pending are fatal (400, or 413 for a length over
    the limit, judged from the header alone); a well-framed response with bad fields is not
    (``fatal=False``): it answers its request, and the connection goes on.
    """
    lim = limits or rustlog.Limits()
    return st.one_of(
        _reply_framing(lim),
        _reply_off_by_one(),
        _reply_payloads(),
        _reply_fields(),
        _reply_wrong_type(),
        _reply_orders(),
        _reply_truncated(),
    )
