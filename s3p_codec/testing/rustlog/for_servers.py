"""The server direction: valid RustLog requests, their frames, and malformed frames.

Fatal cases (framing, UTF-8, JSON, the ``type``) close the connection, an ``Error`` first
being optional; recoverable ones (unknown ``type``, bad fields) get an ``Error`` (400) and the
connection goes on.
"""

from __future__ import annotations

from hypothesis import strategies as st

from s3p_codec import rustlog
from s3p_codec.testing._strategies import Malformed, Valid
from s3p_codec.testing.rustlog._wire import (
    BAD,
    TOO_LARGE,
    U32,
    U64,
    _client,
    _frame,
    _json,
    _texts,
    topics,
)


def request_rules() -> dict[str, st.SearchStrategy[rustlog.Request]]:
    """Every request type with in-range fields, by type name (each type is a rule of
    the live fuzzer). Consumer groups are any text (the spec types them "string")."""
    u32 = st.integers(0, U32)
    u64 = st.integers(0, U64)
    records = st.lists(st.binary(max_size=64), max_size=8).map(tuple)
    groups = _texts()
    return {
        "Produce": st.builds(rustlog.Produce, topics(), u32, records),
        "Fetch": st.builds(rustlog.Fetch, groups, topics(), u32, u64, u64),
        "OffsetCommit": st.builds(rustlog.OffsetCommit, groups, topics(), u32, u64),
        "OffsetFetch": st.builds(rustlog.OffsetFetch, groups, topics(), u32),
        "CreateTopic": st.builds(rustlog.CreateTopic, topics(), st.integers(1, 1000)),
        "ListTopics": st.just(rustlog.ListTopics()),
        "DescribeTopic": st.builds(rustlog.DescribeTopic, topics()),
        "DescribePartition": st.builds(rustlog.DescribePartition, topics(), u32),
        "MetricsFetch": st.just(rustlog.MetricsFetch()),
        "Ping": st.just(rustlog.Ping()),
    }


def requests() -> st.SearchStrategy[rustlog.Request]:
    """Every request type with in-range fields."""
    return st.one_of(*request_rules().values())


def request_wire() -> st.SearchStrategy[tuple[rustlog.Request, bytes]]:
    """``(request, its exact frame)`` as a client-role codec writes it."""
    return requests().map(lambda r: (r, _client().send(r)))


_PING = _json({"type": "Ping"})


def _fatal(label: str, data: bytes, code: int = BAD, *, half_close: bool = False) -> Malformed:
    return Malformed(label, data, code, fatal=True, reply=False, half_close=half_close)


def _recoverable(label: str, request: dict[str, object]) -> Malformed:
    return Malformed(label, _frame(_json(request)), BAD, fatal=False, reply=True)


def _framing(lim: rustlog.Limits) -> st.SearchStrategy[Malformed]:
    over = lim.max_frame_size + 1
    return st.sampled_from(
        [
            _fatal("frame length 0", b"\0\0\0\0" + _frame(_PING)),
            _fatal("frame length over the limit (header only)", over.to_bytes(4, "big"), TOO_LARGE),
            _fatal("frame length 2^32-1 (header only)", b"\xff\xff\xff\xff", TOO_LARGE),
            _fatal("frame length -1 byte", _frame(_PING)[:3] + bytes([len(_PING) - 1]) + _PING),
            _fatal(
                "frame length +1 byte", (len(_PING) + 1).to_bytes(4, "big") + _PING + _frame(_PING)
            ),
        ]
    )


def _payloads() -> st.SearchStrategy[Malformed]:
    cases = [
        ("invalid UTF-8", b'{"type":"Ping","x":"\xff"}'),
        ("modified UTF-8 NUL (C0 80)", b'{"type":"Ping","x":"\xc0\x80"}'),
        ("UTF-8 surrogate (ED A0 80)", b'{"type":"Ping","x":"\xed\xa0\x80"}'),
        ("overlong UTF-8", b'{"type":"Ping","x":"\xe0\x80\xaf"}'),
        ("truncated JSON", b'{"type":"Ping"'),
        ("trailing bytes after JSON", b'{"type":"Ping"}x'),
        ("two JSON values", b'{"type":"Ping"}{"type":"Ping"}'),
        ("JSON array root", b'[{"type":"Ping"}]'),
        ("JSON string root", b'"Ping"'),
        ("JSON null root", b"null"),
        ("missing type", b'{"topic":"t"}'),
        ("type is a number", b'{"type":1}'),
        ("type is null", b'{"type":null}'),
        ("nesting deeper than 64", b'{"type":"Ping","x":' + b"[" * 65 + b"]" * 65 + b"}"),
        ("single quotes", b"{'type':'Ping'}"),
        ("bare NaN", b'{"type":"Ping","x":NaN}'),
    ]
    return st.sampled_from([_fatal(label, _frame(data)) for label, data in cases])


def _fields() -> st.SearchStrategy[Malformed]:
    produce = {"type": "Produce", "topic": "t", "partition": 0, "records": ["eA=="]}

    def change(label: str, key: str, value: object) -> Malformed:
        request = dict(produce)
        if value is _MISSING:
            del request[key]
        else:
            request[key] = value
        return _recoverable(label, request)

    cases = [
        _recoverable("unknown type", {"type": "Frobnicate"}),
        _recoverable("a response type sent to a server", {"type": "Pong"}),
        change("missing topic", "topic", _MISSING),
        change("missing partition", "partition", _MISSING),
        change("missing records", "records", _MISSING),
        change("partition is a float", "partition", 1.0),
        change("partition is a bool", "partition", True),
        change("partition is a string", "partition", "0"),
        change("partition is negative", "partition", -1),
        change("partition over u32", "partition", U32 + 1),
        change("records not an array", "records", "eA=="),
        change("record not base64", "records", ["!!!"]),
        change("record base64 without padding", "records", ["eA"]),
        change("record is a number", "records", [1]),
        change("topic is empty", "topic", ""),
        change("topic has a bad character", "topic", "a/b"),
        change("topic of 256 characters", "topic", "t" * 256),
        change("topic is a number", "topic", 7),
        change("records over 1000", "records", ["eA=="] * 1001),
        _recoverable(
            "partition count 0", {"type": "CreateTopic", "topic": "t", "partition_count": 0}
        ),
        _recoverable(
            "partition count 1001", {"type": "CreateTopic", "topic": "t", "partition_count": 1001}
        ),
        _recoverable(
            "offset over u64",
            {"type": "Fetch", "topic": "t", "partition": 0, "offset": U64 + 1, "max_bytes": 1},
        ),
    ]
    return st.sampled_from(cases)


_MISSING = object()


def _truncated() -> st.SearchStrategy[Malformed]:
    """A frame cut inside its header or payload, then end of stream: the server closes."""

    def build(request: rustlog.Request, data: st.DataObject) -> Malformed:
        wire = _client().send(request)
        cut = data.draw(st.integers(1, len(wire) - 1))
        return _fatal("frame cut by end of stream", wire[:cut], half_close=True)

    return st.builds(build, requests(), st.data())


def recoverable() -> st.SearchStrategy[Malformed]:
    """Only the recoverable cases: the server answers 400 and keeps the connection."""
    return _fields()


def malformed_rules(
    limits: rustlog.Limits | None = None,
) -> dict[str, st.SearchStrategy[Malformed]]:
    """The rule families of ``malformed()`` by name: the live fuzzer runs each once before
    repeating any."""
    lim = limits or rustlog.Limits()
    return {
        "framing": _framing(lim),
        "payloads that are not a request object": _payloads(),
        "request fields (recoverable)": _fields(),
        "frame cut by end of stream": _truncated(),
    }


def malformed(limits: rustlog.Limits | None = None) -> st.SearchStrategy[Malformed]:
    """Malformed frames and requests, each with the status it must get and whether fatal."""
    return st.one_of(*malformed_rules(limits).values())


def edge_cases() -> st.SearchStrategy[Valid]:
    """Requests at the edges the spec allows, which a strict server must not refuse (400/413).

    A topic of 255 characters, 1000 partitions, 1000 records, an unknown extra field ("Unknown
    extra fields are ignored"), JSON with insignificant whitespace and escaped characters.
    """
    forbidden = (BAD, TOO_LARGE)
    produce = {"type": "Produce", "topic": "fuzz", "partition": 0, "records": ["eA=="]}
    cases: list[tuple[str, dict[str, object], rustlog.Request]] = [
        ("topic of 255 characters", {"type": "DescribeTopic", "topic": "t" * 255},
         rustlog.DescribeTopic("t" * 255)),
        ("1000 partitions", {"type": "CreateTopic", "topic": "fuzz-wide", "partition_count": 1000},
         rustlog.CreateTopic("fuzz-wide", 1000)),
        ("1000 records", {**produce, "records": ["eA=="] * 1000},
         rustlog.Produce("fuzz", 0, (b"x",) * 1000)),
        ("unknown extra field", {**produce, "compression": "none"},
         rustlog.Produce("fuzz", 0, (b"x",))),
    ]  # fmt: skip
    valid = [Valid(label, _frame(_json(raw)), event, forbidden) for label, raw, event in cases]
    spaced = (
        b' { "type" : "Produce" , "topic" : "fu\\u007az" , "partition" : 0 , "records" : [ ] } '
    )
    valid.append(
        Valid("whitespace and escapes", _frame(spaced), rustlog.Produce("fuzz", 0, ()), forbidden)
    )
    return st.sampled_from(valid)
