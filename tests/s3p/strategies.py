"""Hypothesis strategies for S3P events and wire values (valid by construction), per version."""

from __future__ import annotations

from hypothesis import strategies as st

from s3p_codec.s3p import (
    Append,
    AppendReply,
    Create,
    Delete,
    ErrorCode,
    ErrorReply,
    Ok,
    Read,
    ReadReply,
    Reply,
    Request,
    Timestamp,
    TimestampStrategy,
    Trim,
)
from s3p_codec.s3p._events import MAX_U64
from s3p_codec.s3p._schema import default_floor, floor_of
from s3p_codec.s3p._version import RULES, Version
from s3p_codec.s3p._wire import ErrorString, SimpleString, WireValue

names = st.binary(min_size=1, max_size=24)
payloads = st.binary(min_size=1, max_size=40)
u64 = st.one_of(st.integers(0, 20), st.integers(0, MAX_U64))
timestamps = st.builds(Timestamp, u64, u64)
maybe_timestamps = st.none() | timestamps

requests: st.SearchStrategy[Request] = st.one_of(
    st.builds(Create, names, st.none() | st.sampled_from(TimestampStrategy)),
    st.builds(
        Append, names, st.lists(payloads, min_size=1, max_size=5).map(tuple), maybe_timestamps
    ),
    st.builds(
        Read,
        names,
        st.none() | st.integers(1, 10_000),
        st.none() | st.integers(0, 30_000),
        maybe_timestamps,
    ),
    st.builds(Trim, names, timestamps),
    st.builds(Delete, names),
)

requests_v020: st.SearchStrategy[Request] = st.one_of(
    st.builds(Create, names),
    st.builds(
        Append,
        names,
        st.lists(payloads, min_size=1, max_size=5).map(tuple),
        st.none(),
        st.none() | u64,
    ),
    st.builds(
        Read,
        names,
        st.none() | st.integers(1, 10_000),
        st.none() | st.integers(0, 30_000),
        st.none(),
        maybe_timestamps,
    ),
    st.builds(Trim, names, st.none(), timestamps),
    st.builds(Delete, names),
)
"""v0.2.0 requests: ``ID``, ``MIN_ID``, no ``TIMESTAMP_STRATEGY``."""

messages = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)
V010_CODES = sorted(RULES[Version.V0_1_0].codes)
error_replies = st.builds(ErrorReply, st.sampled_from(V010_CODES), messages)
error_replies_v020 = st.builds(ErrorReply, st.sampled_from(ErrorCode), messages)


@st.composite
def reply_for(draw: st.DrawFn, request: Request) -> Reply:
    """A valid, non-error reply to ``request``."""
    if isinstance(request, Append):
        return AppendReply(draw(timestamps))
    if isinstance(request, Read):
        limit = min(request.count or 100, 6)
        zero = default_floor(RULES[Version.V0_2_0 if request.min_id else Version.V0_1_0])
        after = floor_of(request, zero)
        if after == Timestamp(MAX_U64, MAX_U64):
            return ReadReply(())
        near = st.builds(Timestamp, st.just(max(after.ms, 0)), st.integers(0, 3))
        stamps = draw(st.lists(timestamps | near, max_size=limit, unique=True))
        stamps = sorted(s for s in stamps if s > after)
        return ReadReply(tuple((s, draw(payloads)) for s in stamps))
    return Ok()


@st.composite
def conversations(draw: st.DrawFn, version: str = "0.1.0") -> list[tuple[Request, Reply]]:
    """Pipelined requests, each with a valid reply; the last reply may be an Error (v0.1.0
    closes after any), and in v0.2.0 any reply may be a recoverable Error."""
    v020 = version == "0.2.0"
    asked = draw(st.lists(requests_v020 if v020 else requests, min_size=1, max_size=6))
    answers: list[Reply] = [draw(reply_for(request)) for request in asked]
    if v020:
        recoverable = sorted(RULES[Version.V0_2_0].recoverable)
        for index in range(len(answers) - 1):
            if draw(st.integers(0, 3)) == 0:
                answers[index] = ErrorReply(draw(st.sampled_from(recoverable)), draw(messages))
    if draw(st.booleans()):
        answers[-1] = draw(error_replies_v020 if v020 else error_replies)
    return list(zip(asked, answers, strict=True))


# --- wire values -------------------------------------------------------------------------

text_bytes = st.binary(max_size=30).map(lambda b: bytes(x % 95 + 32 for x in b))
scalars = st.one_of(
    payloads,
    text_bytes.map(SimpleString),
    text_bytes.map(ErrorString),
)


def _uniform_arrays(children: st.SearchStrategy[WireValue]) -> st.SearchStrategy[WireValue]:
    # All elements of one array share a type (spec section 3).
    return st.one_of(
        st.lists(payloads, max_size=4).map(tuple),
        st.lists(text_bytes.map(SimpleString), max_size=4).map(tuple),
        st.lists(text_bytes.map(ErrorString), max_size=4).map(tuple),
        st.lists(children.filter(lambda v: isinstance(v, tuple)), max_size=3).map(tuple),
    )


wire_values: st.SearchStrategy[WireValue] = st.recursive(scalars, _uniform_arrays, max_leaves=12)
