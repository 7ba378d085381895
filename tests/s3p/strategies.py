"""Hypothesis strategies for S3P events and wire values (valid by construction)."""

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
from s3p_codec.s3p.events import MAX_U64
from s3p_codec.s3p.wire import ErrorString, SimpleString, WireValue

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

messages = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)
error_replies = st.builds(ErrorReply, st.sampled_from(ErrorCode), messages)


@st.composite
def reply_for(draw: st.DrawFn, request: Request) -> Reply:
    """A valid, non-error reply to ``request``."""
    if isinstance(request, Append):
        return AppendReply(draw(timestamps))
    if isinstance(request, Read):
        limit = min(request.count or 100, 6)
        after = request.min_timestamp or Timestamp(0, 0)
        if after == Timestamp(MAX_U64, MAX_U64):
            return ReadReply(())
        stamps = draw(st.lists(timestamps, max_size=limit, unique=True))
        stamps = sorted(s for s in stamps if s > after)
        return ReadReply(tuple((s, draw(payloads)) for s in stamps))
    return Ok()


@st.composite
def conversations(draw: st.DrawFn) -> list[tuple[Request, Reply]]:
    """Pipelined requests, each with a valid reply; the last reply may be an Error."""
    asked = draw(st.lists(requests, min_size=1, max_size=6))
    answers: list[Reply] = [draw(reply_for(request)) for request in asked]
    if draw(st.booleans()):
        answers[-1] = draw(error_replies)
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
