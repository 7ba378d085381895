"""Round trips of every event type through both roles, in any chunking (hypothesis).

A client-role connection encodes a request, a server-role connection must parse the very same
event back; a server-role connection encodes a response, the client must type it back.

Responses come from ``s3p_codec.testing.durable.responses()``. Requests are drawn here: every
field combination the codec writes (any path, forks, TTL or expiry, producers, every read
option), where ``s3p_codec.testing.durable.requests()`` draws what a live server can be sent
(its fuzzed streams, no read that waits).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, Role, durable
from s3p_codec.durable import LiveMode
from s3p_codec.testing.durable import request_for, responses

PATHS = st.from_regex(r"/[A-Za-z0-9._~/-]{0,30}", fullmatch=True)
TOKENS = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=16)
OFFSETS = st.builds(durable.offsets.format_offset, st.integers(0, 9), st.integers(0, 10**12))
READ_OFFSETS = (
    st.none()
    | st.sampled_from(["-1", "now"])
    | OFFSETS
    | TOKENS.filter(lambda t: durable.offsets.offset_error(t) is None)
)
CONTENT_TYPES = st.none() | st.sampled_from(["text/plain", "application/json", "image/png"])
INTS = st.integers(0, 2**53 - 1)
CURSORS = st.integers(0, 10**9).map(str)
TIMESTAMPS = st.sampled_from(["2030-01-01T00:00:00Z", "2030-01-01T00:00:00.5+02:00"])


@st.composite
def creates(draw: st.DrawFn) -> durable.Create:
    ttl, expires = draw(st.sampled_from([(None, None), (1, None), (None, "x")]))
    forked = draw(st.booleans())
    fork_offset = draw(st.none() | OFFSETS) if forked else None
    sub = draw(st.none() | st.integers(0, 99)) if fork_offset else None
    return durable.Create(
        draw(PATHS),
        content_type=draw(CONTENT_TYPES),
        ttl_seconds=draw(st.integers(0, 10**6)) if ttl else None,
        expires_at=draw(TIMESTAMPS) if expires else None,
        closed=draw(st.booleans()),
        body=draw(st.binary(max_size=40)),
        forked_from=draw(PATHS) if forked else None,
        fork_offset=fork_offset,
        fork_sub_offset=sub,
    )


@st.composite
def appends(draw: st.DrawFn) -> durable.Append:
    body = draw(st.binary(max_size=40))
    return durable.Append(
        draw(PATHS),
        body,
        content_type=draw(st.sampled_from(["text/plain", "application/json"]))
        if body
        else draw(CONTENT_TYPES),
        seq=draw(st.none() | TOKENS),
        producer=draw(st.none() | st.builds(durable.Producer, TOKENS, INTS, INTS)),
        close=draw(st.booleans()) if body else True,
    )


@st.composite
def reads(draw: st.DrawFn) -> durable.Read:
    offset = draw(READ_OFFSETS)
    live = draw(st.none() | st.sampled_from(LiveMode)) if offset is not None else None
    return durable.Read(
        draw(PATHS),
        offset=offset,
        live=live,
        cursor=draw(st.none() | CURSORS),
        if_none_match=draw(st.none() | TOKENS.map(lambda t: f'"{t}"')),
    )


REQUESTS = st.one_of(
    creates(),
    appends(),
    reads(),
    st.builds(durable.Head, PATHS),
    st.builds(durable.Delete, PATHS),
    st.builds(durable.Options, PATHS),
)


def feed(conn: durable.Connection, data: bytes, cuts: list[int]) -> list[object]:
    events: list[object] = []
    points = sorted({c for c in cuts if 0 < c < len(data)})
    for start, end in zip([0, *points], [*points, len(data)], strict=True):
        conn.receive_data(data[start:end])
        while (event := conn.next_event()) is not NEED_DATA:
            events.append(event)
    return events


@given(REQUESTS, st.lists(st.integers(1, 500), max_size=6))
def test_every_request_round_trips_in_any_chunking(
    request: durable.Request, cuts: list[int]
) -> None:
    wire = durable.Connection(Role.CLIENT).send(request)
    assert feed(durable.Connection(Role.SERVER), wire, cuts) == [request]


@given(responses(), st.lists(st.integers(1, 700), max_size=6))
def test_every_response_round_trips_in_any_chunking(
    response: durable.Response, cuts: list[int]
) -> None:
    request = request_for(response)
    client, server = durable.Connection(Role.CLIENT), durable.Connection(Role.SERVER)
    server.receive_data(client.send(request))
    assert server.next_event() == request
    wire = server.send(response)
    assert feed(client, wire, cuts) == [response]
