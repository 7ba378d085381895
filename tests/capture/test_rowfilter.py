"""Display filters (``-Y``): the grammar, null handling, and a precise error for each mistake."""

from __future__ import annotations

import pytest

from s3p_codec.capture import Row
from s3p_codec.capture._rowfilter import FilterError, compile_filter


def row(**changes: object) -> Row:
    base: dict[str, object] = {
        "file": "f.pcap", "first_packet": 4, "last_packet": 4, "ts": 1.0, "conversation": "f#1",
        "client": "10.0.0.1:40000", "server": "10.0.0.2:7500", "direction": "client_to_server",
        "protocol": "s3p", "kind": "event", "event_type": "Append", "pair_id": 0,
        "latency_ms": None, "stream": "orders", "offset": None, "count": 2,
        "payload_bytes": 10, "wire_bytes": 58, "error_code": None, "detail": "",
    }  # fmt: skip
    base.update(changes)
    return Row(**base)  # type: ignore[arg-type]


APPEND = row()
REPLY = row(direction="server_to_client", event_type="AppendReply", latency_ms=1.5, stream=None)
ERROR = row(kind="error", event_type="RemoteProtocolError", error_code="ERR_BAD_FORMAT")
S2S = row(protocol="s2s", stream="logs/a")
ALL = [APPEND, REPLY, ERROR, S2S]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("s3p", [APPEND, REPLY, ERROR]),
        ("S2S", [S2S]),
        ("error", [ERROR]),
        ("protocol==s3p and kind==error", [ERROR]),
        ("protocol == S3P && kind != event", [ERROR]),
        ("latency_ms", [REPLY]),
        ("latency_ms > 1", [REPLY]),
        ("latency_ms < 1", []),  # a null never matches a comparison
        ("not latency_ms < 1", ALL),
        ("stream contains 'ord' or stream contains \"/\"", [APPEND, ERROR, S2S]),
        ("not (s2s or error)", [APPEND, REPLY]),
        ("!s3p || wire_bytes >= 58 and count == 2", ALL),
        ("event_type == AppendReply", [REPLY]),
        ("first_packet<=4 and pair_id==0", ALL),
        ("error_code == 'ERR_BAD_FORMAT'", [ERROR]),
    ],
)
def test_filters_keep_what_they_say(text: str, kept: list[Row]) -> None:
    keep = compile_filter(text)
    assert [r for r in ALL if keep(r)] == kept


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty filter"),
        ("kafka", "unknown name 'kafka' at column 1"),
        ("latency > 1", "unknown column 'latency' at column 1"),
        ("latency_ms > fast", "latency_ms is a number; 'fast' at column 14 is not"),
        ("count contains 1", "'contains' needs a text column, count is a number"),
        ("(s3p", "filter '(s3p' ends too early"),
        ("s3p)", "unexpected ')' at column 4"),
        ("s3p s2s", "unexpected 's2s' at column 5"),
        ("protocol == ==", "expected a value at column 13"),
        ("protocol ==", "filter 'protocol ==' ends too early"),
        ("== s3p", "expected a column or a protocol at column 1"),
    ],
)
def test_each_mistake_is_a_precise_filter_error(text: str, message: str) -> None:
    with pytest.raises(FilterError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        compile_filter(text)


ERROR_REPLY = row(
    direction="server_to_client", event_type="ErrorReply", error_code="ERR_UNKNOWN_STREAM"
)
BROKEN_FILE = row(kind="capture_error", event_type="CaptureFileError", error_code="capture_file")


def test_error_is_every_row_stats_counts() -> None:
    """One definition of an error (issue 31, item 2): error replies are errors too."""
    keep = compile_filter("error")
    assert [r for r in [*ALL, ERROR_REPLY, BROKEN_FILE] if keep(r)] == [
        ERROR,
        ERROR_REPLY,
        BROKEN_FILE,
    ]
    assert all(r.is_error == keep(r) for r in [*ALL, ERROR_REPLY, BROKEN_FILE])
    assert compile_filter("s3p and error")(ERROR_REPLY)
    assert not compile_filter("kind==error")(ERROR_REPLY)  # the narrower, documented one
