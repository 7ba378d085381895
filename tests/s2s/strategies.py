"""Hypothesis strategies for S2S events (test-only)."""

from __future__ import annotations

from hypothesis import strategies as st

from s3p_codec import s2s

U64 = st.integers(min_value=0, max_value=(1 << 64) - 1)
SMALL_BYTES = st.binary(max_size=40)

positions = st.builds(s2s.StreamPosition, U64, U64)
headers = st.builds(s2s.Header, SMALL_BYTES, SMALL_BYTES)
header_tuples = st.lists(headers, max_size=3).map(tuple)

append_records = st.builds(
    s2s.AppendRecord,
    body=st.binary(max_size=300),
    headers=header_tuples,
    timestamp=st.none() | U64,
)
append_inputs = st.builds(
    s2s.AppendInput,
    records=st.lists(append_records, min_size=1, max_size=8).map(tuple),
    match_seq_num=st.none() | U64,
    fencing_token=st.none() | st.text(max_size=20),
)
sequenced_records = st.builds(
    s2s.SequencedRecord,
    seq_num=U64,
    timestamp=U64,
    body=st.binary(max_size=300),
    headers=header_tuples,
)
read_batches = st.builds(
    s2s.ReadBatch,
    records=st.lists(sequenced_records, min_size=1, max_size=8).map(tuple),
    tail=st.none() | positions,
)
terminals = st.builds(
    s2s.Terminal,
    status=st.integers(min_value=100, max_value=599),
    code=st.sampled_from(["", *[c.value for c in s2s.ErrorCode]]),
    message=st.text(max_size=40),
    seq_num_mismatch=st.none() | U64,
    fencing_token_mismatch=st.none() | st.text(max_size=10),
    tail=st.none() | positions,
)


@st.composite
def acks_for(draw: st.DrawFn, counts: list[int]) -> list[s2s.AppendAck]:
    """Acks that a server could send, in order, for inputs of ``counts`` records."""
    seq = draw(st.integers(min_value=0, max_value=1 << 40))
    acks = []
    for count in counts:
        ts = draw(st.integers(min_value=0, max_value=1 << 45))
        start = s2s.StreamPosition(seq, ts)
        seq += count
        end = s2s.StreamPosition(seq, ts)
        acks.append(s2s.AppendAck(start, end, end))
    return acks


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` split at the given cut points (any order, duplicates allowed)."""
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces = []
    last = 0
    for point in [*points, len(data)]:
        if point > last:
            pieces.append(data[last:point])
            last = point
    return pieces
