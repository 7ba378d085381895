"""``stats``, the ``error`` filter and ``Row.is_error`` count the same rows (issue 31, item 2)."""

from __future__ import annotations

from pathlib import Path

from s3p_codec import capture
from s3p_codec.capture._rowfilter import compile_filter

CAPTURES = Path(__file__).parents[2] / "examples" / "captures"


def test_the_error_filter_finds_what_stats_counts() -> None:
    rows = list(capture.decode_files(sorted(str(p) for p in CAPTURES.glob("*.pcap*"))))
    keep = compile_filter("error")
    summary = {entry["protocol"]: entry["errors"] for entry in capture.summarize(rows)}
    filtered: dict[str, int] = {}
    for row in rows:
        assert keep(row) == row.is_error == capture.is_error(row.kind, row.error_code)
        if keep(row):
            filtered[row.protocol] = filtered.get(row.protocol, 0) + 1
    assert {p: n for p, n in summary.items() if n} == filtered
    assert filtered.get("s3p", 0) >= 3  # the S3P samples' error replies
    s3p_errors = [r for r in rows if compile_filter("protocol==s3p and error")(r)]
    assert {r.event_type for r in s3p_errors} >= {"ErrorReply"}
