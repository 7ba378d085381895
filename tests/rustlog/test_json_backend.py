"""The standard library and orjson backends give identical results."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, RemoteProtocolError, Role, rustlog
from s3p_codec.rustlog import _json_backend as json_backend
from s3p_codec.rustlog._limits import MAX_JSON_DEPTH
from s3p_codec.testing.rustlog import request_for, requests, responses
from tests.rustlog.frames import BACKENDS, frame

needs_orjson = pytest.mark.skipif(rustlog.ORJSON is None, reason="orjson not installed")


def outcome_of(
    role: Role, data: bytes, backend: str, request: rustlog.Request | None = None
) -> list[object]:
    """Everything a connection makes of ``data``: events and (code, fatal, message) of errors."""
    conn = rustlog.Connection(role, json=backend, pipelining=True)
    if role is Role.CLIENT:
        for _ in range(4):
            conn.send(request or rustlog.MetricsFetch())
    conn.receive_data(data)
    out: list[object] = []
    for _ in range(8):
        try:
            event = conn.next_event()
        except RemoteProtocolError as exc:
            out.append((exc.code, exc.fatal, exc.message, exc.reply))
            if exc.fatal:
                break
            continue
        if event is NEED_DATA:
            break
        out.append(event)
    return out


outcome = outcome_of


def nested(depth: int) -> bytes:
    return b'{"type":"Ping","x":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


TRICKY = [
    b'{"type":"Ping","x":"\\ud800"}',
    b'{"type":"Ping","x":1e400}',
    b'{"type":"Ping","x":18446744073709551616}',
    b'{"type":"Ping","x":NaN}',
    b'\xef\xbb\xbf{"type":"Ping"}',
    b'{"type":"Ping","type":"Ping"}',
    b'{"type":"Fetch","type":"Ping"}',
    b'{"type":"Fetch","group_id":"g","topic":"t","partition":-0,"offset":1,"max_bytes":2}',
    b'{"type":"Fetch","group_id":"g","topic":"t","partition":0,"offset":18446744073709551616,'
    b'"max_bytes":2}',
    b'{"type":"Fetch","group_id":"\\ud800","topic":"t","partition":0,"offset":1,"max_bytes":2}',
    b'{"type":"Ping","x":"\xed\xa0\x80"}',
    b'{"type":"Ping","x":' + b"9" * 5000 + b"}",
    b'{"type":"Ping"}\n ',
    b'{"type":"Ping","x":"\x01"}',
    nested(MAX_JSON_DEPTH),
    nested(MAX_JSON_DEPTH + 1),
    nested(900),
    nested(1030),
    b'{"type":"Ping","x":"' + b"[" * 100 + b'"}',
    b"[" * 1000 + b"]" * 1000,
    b"[" * 65 + b"]" * 65,
    b'{"type":' + b"[" * 999 + b"]" * 999 + b"}",
]
TRICKY_RESPONSES = [
    b'{"type":"MetricsFetchResponse","metrics":{"a":18446744073709551616}}',
    b'{"type":"MetricsFetchResponse","metrics":{"a":-9223372036854775809}}',
    b'{"type":"MetricsFetchResponse","metrics":{"a":1e19}}',
    b'{"type":"MetricsFetchResponse","metrics":{"a":9223372036854775808.0}}',
    b'{"type":"MetricsFetchResponse","metrics":{"a":1e400}}',
    b'{"type":"MetricsFetchResponse","metrics":{"a":0.1,"b":-0.0,"c":1E-7}}',
    b'{"type":"MetricsFetchResponse","metrics":{"\\ud800":1}}',
]


@needs_orjson
@pytest.mark.parametrize("payload", TRICKY, ids=lambda p: repr(p[:30]))
def test_backends_agree_on_tricky_requests(payload: bytes) -> None:
    assert outcome(Role.SERVER, frame(payload), "json") == outcome(
        Role.SERVER, frame(payload), "orjson"
    )


@needs_orjson
@pytest.mark.parametrize("payload", TRICKY_RESPONSES, ids=lambda p: repr(p[40:70]))
def test_backends_agree_on_tricky_responses(payload: bytes) -> None:
    assert outcome(Role.CLIENT, frame(payload), "json") == outcome(
        Role.CLIENT, frame(payload), "orjson"
    )


def test_nesting_over_the_bound_is_malformed_json() -> None:
    for depth in (MAX_JSON_DEPTH + 1, 900, 1030):
        (result,) = outcome(Role.SERVER, frame(nested(depth)), "json")
        assert isinstance(result, tuple)
        assert result[1] is True
        assert "nested deeper" in result[2]
    assert outcome(Role.SERVER, frame(nested(MAX_JSON_DEPTH)), "json") == [rustlog.Ping()]


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    payload = b'{"type":"Ping","x":"' + b"[" * 1000 + b'"}'
    assert outcome(Role.SERVER, frame(payload), "json") == [rustlog.Ping()]


@needs_orjson
@given(st.binary(max_size=200))
def test_backends_agree_on_random_bytes(data: bytes) -> None:
    assert outcome(Role.SERVER, data, "json") == outcome(Role.SERVER, data, "orjson")
    assert outcome(Role.CLIENT, data, "json") == outcome(Role.CLIENT, data, "orjson")


@needs_orjson
@given(st.lists(st.text(max_size=30), max_size=6), st.integers(0, 3))
def test_backends_agree_on_json_made_of_random_tokens(tokens: list[str], cut: int) -> None:
    text = (
        '{"type":"Produce","topic":"t","partition":0,"records":['
        + ",".join('"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in tokens)
        + "]}"
    )
    data = frame(text.encode("utf-8", "surrogatepass")[: len(text) - cut])
    assert outcome(Role.SERVER, data, "json") == outcome(Role.SERVER, data, "orjson")


@needs_orjson
@given(requests())
def test_backends_encode_requests_to_the_same_bytes(event: rustlog.Request) -> None:
    assert rustlog.Connection(Role.CLIENT, json="json").send(event) == rustlog.Connection(
        Role.CLIENT, json="orjson"
    ).send(event)


def _has_float(value: object) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, tuple):
        return any(_has_float(item) for item in value)
    if isinstance(value, rustlog.JsonObject):
        return any(_has_float(item) for item in value.values())
    return False


@needs_orjson
@given(responses())
def test_backends_encode_responses_alike(event: rustlog.Response) -> None:
    request = request_for(event)
    wires = []
    for name in ("json", "orjson"):
        server = rustlog.Connection(Role.SERVER, json=name)
        server.receive_data(rustlog.Connection(Role.CLIENT).send(request))
        server.next_event()
        wires.append(server.send(event))
    # Floats may be spelled differently (1e-07 / 1e-7); the events decoded are the same.
    for wire in wires:
        for name in ("json", "orjson"):
            client = rustlog.Connection(Role.CLIENT, json=name)
            client.send(request)
            client.receive_data(wire)
            assert client.next_event() == event
    free_form = getattr(event, "metrics", getattr(event, "details", None))
    if not _has_float(free_form):
        assert wires[0] == wires[1]


def test_backend_resolution() -> None:
    assert json_backend.backend("json") is rustlog.STDLIB
    assert json_backend.backend(None) is json_backend.default_backend()
    assert json_backend.backend(rustlog.STDLIB) is rustlog.STDLIB
    if rustlog.ORJSON is not None:
        assert json_backend.default_backend() is rustlog.ORJSON
        assert rustlog.Connection(Role.CLIENT).json.name == "orjson"
    with pytest.raises(ValueError, match="unknown"):
        json_backend.backend("yaml")


def test_stdlib_decoder_reads_utf8_only() -> None:
    utf16 = '{"type":"Ping"}'.encode("utf-16")
    (result,) = outcome(Role.SERVER, frame(utf16), "json")
    assert isinstance(result, tuple)
    assert result[1] is True


def deep(levels: int) -> str:
    """A JSON array value nesting ``levels`` containers (itself included)."""
    return "[" * levels + "]" * levels


# (payload template with {v}, the nesting level of the value's own container, role)
PLACES = [
    ('{{"type":"Ping","x":{v}}}', 2, Role.SERVER),
    ('{{"type":"Compact","x":{v}}}', 2, Role.SERVER),
    ('{{"type":"Fetch","partition":{v}}}', 2, Role.SERVER),
    ('{{"type":"Produce","topic":"t","partition":0,"records":["",{v}]}}', 3, Role.SERVER),
    ('{{"type":"FetchResponse","records":[{{"offset":1,"timestamp":2,"payload":"","x":{v}}}],'
     '"next_offset":2}}', 4, Role.CLIENT),
    ('{{"type":"ListTopicsResponse","topics":[{{"name":"a","partition_count":1,"x":{v}}}]}}',
     4, Role.CLIENT),
    ('{{"type":"DescribeTopicResponse","topic":"a","partitions":[{{"partition":0,'
     '"high_watermark":1,"log_start_offset":0,"segment_count":1,"x":{v}}}]}}', 4, Role.CLIENT),
    ('{{"type":"MetricsFetchResponse","metrics":{{"x":{v}}}}}', 3, Role.CLIENT),
    ('{{"type":"Error","code":1,"message":"m","details":{{"x":{v}}}}}', 3, Role.CLIENT),
    ('{{"type":"Error","code":1,"message":"m","x":{v}}}', 2, Role.CLIENT),
]  # fmt: skip


@pytest.mark.parametrize(("template", "level", "role"), PLACES, ids=lambda v: str(v)[:30])
def test_nesting_bound_holds_wherever_the_depth_hides(
    template: str, level: int, role: Role
) -> None:
    at_bound = template.format(v=deep(MAX_JSON_DEPTH - level + 1)).encode()
    over = template.format(v=deep(MAX_JSON_DEPTH - level + 2)).encode()
    name = json.loads(at_bound)["type"]
    response_type = getattr(rustlog, name, None)
    sent = request_for(response_type) if response_type in rustlog.RESPONSE_TYPES else None

    def outcome(role: Role, data: bytes, backend: str) -> list[object]:
        return outcome_of(role, data, backend, sent)

    for backend in BACKENDS:
        (within,) = outcome(role, frame(at_bound), backend)
        # At the bound the message is decoded (or rejected as an invalid field, recoverably).
        assert not (isinstance(within, tuple) and within[1]), within
        (beyond,) = outcome(role, frame(over), backend)
        assert isinstance(beyond, tuple)
        assert beyond[1] is True
        assert "nested deeper" in beyond[2]
    if rustlog.ORJSON is not None:
        for payload in (at_bound, over, template.format(v=deep(1000)).encode()):
            assert outcome(role, frame(payload), "json") == outcome(role, frame(payload), "orjson")


@pytest.mark.parametrize("name", BACKENDS)
def test_the_fast_loads_of_a_backend_agree_with_its_loads(name: str) -> None:
    backend = json_backend.backend(name)
    assert backend.loads_fast is not None
    for payload in (b'{"type":"Ping","a":[1,2.5,"\\u00e9"]}', b"[]", b"1", b'"x"'):
        assert backend.loads_fast(bytearray(payload)) == backend.loads(payload)
    for bad in (b"{", b"\xff", b"NaN", b"{]"):
        with pytest.raises(backend.fast_failures):
            backend.loads_fast(bytearray(bad))
        with pytest.raises(json_backend.JsonDecodeFailure):
            backend.loads(bad)


def test_a_backend_without_fast_loads_is_given_bytes() -> None:
    seen: list[type] = []

    def loads(payload: bytes) -> object:
        seen.append(type(payload))
        return json_backend.STDLIB.loads(payload)

    custom = json_backend.JsonBackend("custom", loads, json_backend.STDLIB.dumps, True)
    server = rustlog.Connection(Role.SERVER, json=custom)
    server.receive_data(frame(b'{"type":"Ping"}') + frame(b'{"type":"Nope"}') + frame(b"{"))
    assert server.next_event() == rustlog.Ping()
    with pytest.raises(RemoteProtocolError) as info:
        server.next_event()
    assert not info.value.fatal
    with pytest.raises(RemoteProtocolError) as info:
        server.next_event()
    assert info.value.fatal
    assert seen
    assert set(seen) == {bytes}


def _nested(depth: int) -> object:
    value: object = {}
    for level in range(depth - 1):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize("depth", [1, 2, 63, 64, 65, 200])
def test_too_deep_counts_levels_exactly(depth: int) -> None:
    from s3p_codec.rustlog._json_backend import too_deep

    assert too_deep(_nested(depth), 64) is (depth > 64)
    # An empty container is a level too: [[]] is two levels deep.
    assert too_deep([[[]]], 2)
    assert not too_deep([[[]]], 3)
    assert not too_deep(5, 0)
    assert too_deep({}, 0)


def test_too_deep_on_a_wide_frame_holds_no_copy_of_its_children() -> None:
    """3.4 million ``{}`` in one frame: the walk used to push every child (doubling memory)."""
    import tracemalloc

    from s3p_codec.rustlog._json_backend import too_deep

    wide: list[object] = [{} for _ in range(1_000_000)]
    wide.append([[{"deep": [1]}]])
    tracemalloc.start()
    try:
        assert not too_deep(wide, 64)
        assert too_deep(wide, 4)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024
