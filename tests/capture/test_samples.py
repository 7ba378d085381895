"""The bundled sample captures, checked against tools and programs no one here wrote.

- Every reassembled byte stream equals what tshark's ``-z follow,tcp,raw`` prints for that flow.
- The decoded events equal what the example clients sent and received: the recording script kept
  each client's command line and output next to each capture (``<name>.json``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from s3p_codec import Direction
from s3p_codec.capture import FlowTable, Row, decode_files, read_segments

CAPTURES = Path(__file__).resolve().parents[2] / "examples" / "captures"
SAMPLES = sorted(p for p in CAPTURES.iterdir() if ".pcap" in p.name)
PROTOCOL_OF = {  # s2s_h2: S2S over HTTP/2; pravega_official: Pravega; s3p_v020: S3P v0.2.0
    p: p.name.split(".")[0].removesuffix("_h2").removesuffix("_official").removesuffix("_v020")
    for p in SAMPLES
}


def test_there_is_a_sample_of_every_protocol_and_they_are_small() -> None:
    assert sorted(set(PROTOCOL_OF.values())) == ["durable", "pravega", "rustlog", "s2s", "s3p"]
    assert sum(p.stat().st_size for p in SAMPLES) < 2 * 1024 * 1024


class _Recorder:
    """An Observer that keeps the bytes it is fed, a lost byte as None (gap)."""

    def __init__(self) -> None:
        self.data = {d: bytearray() for d in Direction}
        self.gaps = 0

    def observe(self, direction: Direction, data: bytes) -> Sequence[Any]:
        self.data[direction] += data
        return []

    def gap(self, direction: Direction, size: int) -> Sequence[Any]:
        self.gaps += size
        return []

    def close(self, direction: Direction) -> Sequence[Any]:
        return []


def _reassembled(path: Path) -> list[_Recorder]:
    recorders: list[_Recorder] = []

    def factory(protocol: str) -> _Recorder:
        recorders.append(_Recorder())
        return recorders[-1]

    table = FlowTable(observers=factory)
    for segment in read_segments(str(path)):
        table.add(segment)
    table.finish()
    return recorders


def _tshark_follow(tshark: str, path: Path) -> list[tuple[bytes, bytes]]:
    """(client bytes, server bytes) of every TCP stream, as tshark reassembles them."""
    listing = subprocess.run(
        [tshark, "-r", str(path), "-T", "fields", "-e", "tcp.stream"],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    streams = sorted({int(s) for s in listing.split()})
    args = [arg for n in streams for arg in ("-z", f"follow,tcp,raw,{n}")]
    out = subprocess.run(
        [tshark, "-r", str(path), "-q", *args],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    flows = []
    for block in out.split("=" * 67)[1:]:
        lines = block.strip("\n").splitlines()
        if not lines or not lines[0].startswith("Follow: tcp,raw"):
            continue
        first, second = bytearray(), bytearray()
        for line in lines[4:]:
            if line.startswith("\t"):
                second += bytes.fromhex(line.strip())
            elif line.strip():
                first += bytes.fromhex(line.strip())
        flows.append((bytes(first), bytes(second)))
    return flows


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_reassembled_streams_equal_tshark_follow_tcp_raw(path: Path) -> None:
    tshark = shutil.which("tshark")
    if tshark is None:
        pytest.skip("tshark is not installed (the README's test command installs it)")
    theirs = _tshark_follow(tshark, path)
    ours = _reassembled(path)
    assert len(theirs) == len(ours) > 0
    assert sum(r.gaps for r in ours) == 0
    mine = [
        (bytes(r.data[Direction.CLIENT_TO_SERVER]), bytes(r.data[Direction.SERVER_TO_CLIENT]))
        for r in ours
    ]
    assert sorted(mine) == sorted(theirs)


def _decoded(name: str) -> tuple[list[Row], list[dict[str, Any]]]:
    (path,) = [p for p in SAMPLES if p.name.split(".")[0] == name]
    rows = list(decode_files([str(path)]))
    steps = json.loads((CAPTURES / f"{name}.json").read_text())["steps"]
    assert {r.protocol for r in rows} == {name}
    assert [r for r in rows if r.kind not in ("event", "undecoded")] == []
    return rows, steps


def _events(rows: list[Row], direction: str, kind: str) -> list[Any]:
    return [r.event for r in rows if r.direction == direction and r.event_type == kind]


def test_s3p_sample_holds_what_the_client_sent_and_printed() -> None:
    rows, steps = _decoded("s3p")
    assert all(r.kind == "event" for r in rows)
    appends = _events(rows, "client_to_server", "Append")
    assert [a.records for a in appends] == [(b"hello", b"world"), (b"a", b"b"), (b"c",), (b"x",)]
    replies = _events(rows, "server_to_client", "AppendReply")
    printed = (steps[1]["stdout"] + steps[2]["stdout"]).split()
    assert [r.timestamp.format().decode() for r in replies] == printed
    (read_reply,) = _events(rows, "server_to_client", "ReadReply")
    assert [f"{ts.format().decode()} {data.decode()}" for ts, data in read_reply.records] == (
        steps[3]["stdout"].splitlines()
    )
    (error,) = _events(rows, "server_to_client", "ErrorReply")
    assert steps[4]["status"] == 1
    assert error.code == "ERR_UNKNOWN_STREAM"


def _jsonable(value: Any) -> Any:
    import attrs

    if attrs.has(type(value)):
        return {f.name: _jsonable(getattr(value, f.name)) for f in attrs.fields(type(value))}
    if hasattr(value, "_asdict"):
        return {k: _jsonable(v) for k, v in value._asdict().items()}
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode()
    if hasattr(value, "value"):
        return value.value
    return value


def test_rustlog_sample_holds_what_the_client_sent_and_printed() -> None:
    rows, steps = _decoded("rustlog")
    assert all(r.kind == "event" for r in rows)
    produced = _events(rows, "client_to_server", "Produce")
    assert [(p.topic, p.partition, p.records) for p in produced] == [
        ("logs", 0, (b"hello", b"world")), ("logs", 1, (b"other",)), ("nope", 0, (b"x",)),
    ]  # fmt: skip
    responses = [r.event for r in rows if r.direction == "server_to_client"]
    for step in steps:
        for line in step["stdout"].splitlines():
            printed = json.loads(line)
            kind = printed.pop("type", None)
            if kind is None:  # a consumed record
                fetched = [
                    rec for e in responses if type(e).__name__ == "FetchResponse"
                    for rec in e.records
                ]  # fmt: skip
                assert printed in [_jsonable(rec) for rec in fetched]
                continue
            candidates = [_jsonable(e) for e in responses if type(e).__name__ == kind]
            assert any(
                all(c.get(k) == v for k, v in printed.items() if k != "details") for c in candidates
            ), (kind, printed, candidates)


def test_pravega_sample_holds_what_the_client_sent_and_printed() -> None:
    rows, steps = _decoded("pravega")
    assert all(r.kind == "event" for r in rows)
    (append,) = _events(rows, "client_to_server", "Append")
    assert append.events == tuple(f"event {i}".encode() for i in range(20))
    assert steps[0]["stdout"] == "wrote 20 events, last event number 19\n"
    assert append.event_number == 19
    (acked,) = _events(rows, "server_to_client", "DataAppended")
    assert acked.event_number == 19
    read = b"".join(e.data for e in _events(rows, "server_to_client", "SegmentRead"))
    printed = steps[1]["stdout"].splitlines()
    assert printed == [f"event {i}" for i in range(20)]
    for line in printed:  # each event is stored as its Event frame: type 0, length, data
        assert b"\x00\x00\x00\x00" + len(line).to_bytes(4, "big") + line.encode() in read


def test_durable_sample_holds_what_the_client_sent_and_printed() -> None:
    rows, steps = _decoded("durable")
    assert all(r.kind == "event" for r in rows)
    out = steps[0]["stdout"]
    appends = _events(rows, "client_to_server", "Append")
    assert [json.loads(a.body) for a in appends] == [[{"order": 1}, {"order": 2}], {"order": 3}]
    chunks = _events(rows, "server_to_client", "Chunk")
    assert f"catch-up: {chunks[0].data.decode()}" in out
    (live,) = _events(rows, "server_to_client", "SSEData")
    assert f"live: {live.data.decode()}" in out
    (created,) = _events(rows, "server_to_client", "Created")
    assert f"create: {created!r}" in out
    assert all(f"{e!r}" in out for e in _events(rows, "server_to_client", "Appended"))


def test_s2s_sample_holds_what_the_client_sent_and_received() -> None:
    rows, steps = _decoded("s2s")
    # The REST call that created the stream carries no S2S frames: the Observer passes over it,
    # and the capture layer accounts for its bytes in one row per direction.
    undecoded = [r for r in rows if r.kind == "undecoded"]
    assert [(r.direction, r.first_packet) for r in undecoded] == [
        ("client_to_server", 4), ("server_to_client", 6),
    ]  # fmt: skip
    rows = [r for r in rows if r.kind == "event"]
    printed = steps[0]["stdout"].splitlines()[1:]  # after the REST create's status line
    received = [repr(r.event) for r in rows if r.direction == "server_to_client"]
    assert received == printed
    inputs = _events(rows, "client_to_server", "AppendInput")
    bodies = [tuple(rec.body for rec in i.records) for i in inputs]
    assert bodies == [(b"hello", b"world"), (b"x" * 3000,), (b"last",)]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_segments_and_rows_pickle_for_other_drivers(path: Path) -> None:
    """Spark ships segments to workers and rows back: both must survive pickling."""
    import pickle

    from s3p_codec.capture import decode_flow, flow_key

    segments = list(read_segments(str(path)))
    assert pickle.loads(pickle.dumps(segments)) == segments
    key = flow_key(segments[0])
    rows = decode_flow([s for s in segments if flow_key(s) == key])
    again = pickle.loads(pickle.dumps(rows))
    assert again == rows
    assert [r.event for r in again] == [r.event for r in rows]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_a_pcapng_written_by_editcap_decodes_like_the_pcap(path: Path, tmp_path: Path) -> None:
    editcap = shutil.which("editcap")  # ships with tshark
    if editcap is None:
        pytest.skip("editcap is not installed (the README's test command installs tshark)")
    converted = tmp_path / "sample.pcapng"
    subprocess.run([editcap, "-F", "pcapng", str(path), str(converted)], check=True, timeout=60)
    assert converted.read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"  # a pcapng section header
    ours = [(r.first_packet, r.event_type, r.event) for r in decode_files([str(path)])]
    theirs = [(r.first_packet, r.event_type, r.event) for r in decode_files([str(converted)])]
    assert theirs == ours
