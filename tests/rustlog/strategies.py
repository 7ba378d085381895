"""Hypothesis strategies for valid RustLog events (used by the property tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from s3p_codec import rustlog
from s3p_codec.rustlog._limits import U16_MAX, U32_MAX, U64_MAX

TOPIC_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"

topics = st.text(TOPIC_ALPHABET, min_size=1, max_size=255)
u32 = st.integers(0, U32_MAX)
u64 = st.integers(0, U64_MAX)
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
records = st.lists(st.binary(max_size=64), max_size=8).map(tuple)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(1 << 63), U64_MAX)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(texts, inner, max_size=4).map(rustlog.JsonObject)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(texts, json_values, max_size=5).map(rustlog.JsonObject)


@st.composite
def fetch_responses(draw: st.DrawFn) -> rustlog.FetchResponse:
    start = draw(st.integers(0, 1 << 40))
    gaps = draw(st.lists(st.integers(1, 3), max_size=6))
    offsets = []
    offset = start
    for gap in gaps:
        offsets.append(offset)
        offset += gap
    rows = tuple(rustlog.Record(o, draw(u64), draw(st.binary(max_size=32))) for o in offsets)
    next_offset = offsets[-1] + 1 if offsets else draw(u64)
    return rustlog.FetchResponse(rows, next_offset)


requests = st.one_of(
    st.builds(rustlog.Produce, topics, u32, records),
    st.builds(rustlog.Fetch, texts, topics, u32, u64, u64),
    st.builds(rustlog.OffsetCommit, texts, topics, u32, u64),
    st.builds(rustlog.OffsetFetch, texts, topics, u32),
    st.builds(rustlog.CreateTopic, topics, st.integers(1, 1000)),
    st.just(rustlog.ListTopics()),
    st.builds(rustlog.DescribeTopic, topics),
    st.builds(rustlog.DescribePartition, topics, u32),
    st.just(rustlog.MetricsFetch()),
    st.just(rustlog.Ping()),
)

responses = st.one_of(
    st.builds(rustlog.ProduceResponse, u64, u64),
    fetch_responses(),
    st.builds(rustlog.OffsetCommitResponse, st.booleans()),
    st.builds(rustlog.OffsetFetchResponse, st.none() | u64),
    st.builds(rustlog.CreateTopicResponse, st.booleans(), u32),
    st.builds(
        rustlog.ListTopicsResponse,
        st.lists(st.builds(rustlog.TopicInfo, topics, u32), max_size=4).map(tuple),
    ),
    st.builds(
        rustlog.DescribeTopicResponse,
        topics,
        st.lists(st.builds(rustlog.PartitionInfo, u32, u64, u64, u64), max_size=4).map(tuple),
    ),
    st.builds(rustlog.DescribePartitionResponse, topics, u32, u64, u64, u64),
    st.builds(rustlog.MetricsFetchResponse, json_objects),
    st.just(rustlog.Pong()),
    st.builds(
        rustlog.Error,
        st.sampled_from(list(rustlog.ErrorCode)) | st.integers(0, U16_MAX),
        texts,
        st.none() | json_objects,
    ),
)


REQUEST_FOR: dict[type[object], rustlog.Request] = {
    rustlog.ProduceResponse: rustlog.Produce("t", 0, ()),
    rustlog.FetchResponse: rustlog.Fetch("g", "t", 0, 0, 1),
    rustlog.OffsetCommitResponse: rustlog.OffsetCommit("g", "t", 0, 0),
    rustlog.OffsetFetchResponse: rustlog.OffsetFetch("g", "t", 0),
    rustlog.CreateTopicResponse: rustlog.CreateTopic("t", 1),
    rustlog.ListTopicsResponse: rustlog.ListTopics(),
    rustlog.DescribeTopicResponse: rustlog.DescribeTopic("t"),
    rustlog.DescribePartitionResponse: rustlog.DescribePartition("t", 0),
    rustlog.MetricsFetchResponse: rustlog.MetricsFetch(),
    rustlog.Pong: rustlog.Ping(),
    rustlog.Error: rustlog.Ping(),
}
"""A request that each response class answers."""
