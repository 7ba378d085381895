"""The Structured Streaming query: capture files rotated into a directory while it runs are
decoded into exactly the rows of the batch decoder, and a query killed and restarted from its
checkpoint neither loses nor duplicates a row."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from s3p_codec import capture
from s3p_codec.spark.flows import rows_to_batch
from s3p_codec.spark.stream import committed_files
from tests.spark.captures import rotated_set

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]


def batch_rows(paths: Sequence[Path]) -> list[str]:
    """The single-process decoder's rows of ``paths``, comparable with the Parquet rows."""
    rows = list(capture.decode_files([str(p) for p in paths]))
    return sorted(map(repr, rows_to_batch(rows).to_pylist()))


def parquet_rows(out: Path) -> list[str]:
    rows: list[str] = []
    for path in committed_files(out):  # what Spark's own readers see
        rows += map(repr, pq.read_table(path).to_pylist())
    return sorted(rows)


def wait_for(condition: Callable[[], bool], seconds: float, why: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out: {why}")
        time.sleep(0.5)


def rotate_in(files: Sequence[Path], watch: Path, pause: float) -> list[Path]:
    """Move ``files`` into ``watch`` one by one (a rename: a file appears whole, as tcpdump's
    rotation makes it appear once closed)."""
    moved = []
    for path in files:
        target = watch / path.name
        os.rename(path, target)
        moved.append(target)
        time.sleep(pause)
    return moved


def test_files_rotated_in_while_the_query_runs_give_the_batch_rows(
    spark: Any, tmp_path: Path
) -> None:
    from s3p_codec.spark import start_stream

    stage, watch = tmp_path / "stage", tmp_path / "watch"
    stage.mkdir()
    watch.mkdir()
    files = rotated_set(stage)  # every conversation spans several files
    broken = stage / f"cap.pcap{len(files)}"
    broken.write_bytes(b"not a capture at all")  # an error row, not a failed query
    out = tmp_path / "out"
    query = start_stream(spark, str(watch / "cap.pcap*"), str(out), str(tmp_path / "ckpt"),
                         trigger_seconds=0.5, timeout=2.0)  # fmt: skip
    try:
        moved = rotate_in([*files, broken], watch, pause=0.4)
        want = batch_rows(moved)
        assert any("capture_error" in row for row in want)
        wait_for(lambda: len(parquet_rows(out)) >= len(want), 120, "rows in Parquet")
        time.sleep(2)  # nothing more comes: every row once
        assert query.exception() is None
    finally:
        query.stop()
    assert parquet_rows(out) == want


def _start(watch: Path, out: Path, checkpoint: Path, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "s3p_codec", "spark", "stream", str(watch / "cap.pcap*"),
             "--out", str(out), "--checkpoint", str(checkpoint), "--trigger", "0.5",
             "--state-timeout", "2", "--master", "local[1]"],
            cwd=ROOT, stdout=sink, stderr=sink, env=env, start_new_session=True,
        )  # fmt: skip


def _kill(process: subprocess.Popen[bytes]) -> None:
    """No goodbye: SIGKILL to the driver and its JVM and Python workers."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(30)


@pytest.mark.slow
def test_a_query_killed_and_restarted_from_its_checkpoint_loses_and_repeats_nothing(
    tmp_path: Path,
) -> None:
    stage, watch = tmp_path / "stage", tmp_path / "watch"
    stage.mkdir()
    watch.mkdir()
    files = rotated_set(stage, per_file=6)
    out, checkpoint, log = tmp_path / "out", tmp_path / "ckpt", tmp_path / "query.log"
    half = len(files) // 2
    first = _start(watch, out, checkpoint, log)
    try:
        moved = rotate_in(files[:half], watch, pause=0.2)
        # Killed once a micro-batch has committed its rows and its state (the conversations
        # still open across the files not there yet).
        wait_for(lambda: bool(parquet_rows(out)), 120, "a first micro-batch")
        wait_for((checkpoint / "commits" / "0").exists, 60, "the first commit")
    finally:
        _kill(first)
    seen_before_restart = len(parquet_rows(out))
    second = _start(watch, out, checkpoint, log)
    try:
        moved += rotate_in(files[half:], watch, pause=0.2)
        want = batch_rows(moved)
        wait_for(lambda: len(parquet_rows(out)) >= len(want), 150, "every row after restart")
        time.sleep(3)  # timeouts have fired; nothing more may come
    finally:
        _kill(second)
    assert 0 < seen_before_restart < len(want)
    assert parquet_rows(out) == want, log.read_text()[-3000:]


class FakeState:
    """What ``decode_group`` uses of PySpark's ``GroupState``."""

    def __init__(self) -> None:
        self.value: tuple[Any, ...] | None = None
        self.hasTimedOut = False
        self.timeout_ms: int | None = None

    @property
    def exists(self) -> bool:
        return self.value is not None

    @property
    def get(self) -> tuple[Any, ...]:
        assert self.value is not None
        return self.value

    def update(self, value: tuple[Any, ...]) -> None:
        self.value = value

    def remove(self) -> None:
        self.value = None

    def setTimeoutTimestamp(self, ms: int) -> None:
        self.timeout_ms = ms

    def getCurrentWatermarkMs(self) -> int:
        return 0


def _one_flow() -> tuple[tuple[Any, ...], list[capture.Segment]]:
    segments = list(capture.read_segments(str(ROOT / "examples/captures/s3p.pcap"), 0))
    key = capture.flow_key(segments[0])
    return key, [s for s in segments if capture.flow_key(s) == key]


def _frames(segments: list[capture.Segment]) -> Any:
    from s3p_codec.spark.segments import _batch

    return iter([_batch(segments).to_pandas()])


def _run(key: tuple[Any, ...], frames: Any, state: FakeState, **options: Any) -> list[str]:
    import pyarrow as pa

    from s3p_codec.spark.stream import decode_group

    out = list(decode_group(key, frames, state, {}, **options))  # type: ignore[arg-type]
    schema = capture.arrow_schema()
    tables = [pa.Table.from_pandas(f, schema=schema, preserve_index=False) for f in out]
    return [repr(r) for table in tables for r in table.to_pylist()]


def test_a_conversation_split_over_micro_batches_gives_the_rows_of_one_pass() -> None:
    key, segments = _one_flow()
    half = len(segments) // 2
    state = FakeState()
    rows = _run(key, _frames(segments[:half]), state, timeout=60.0)
    assert state.exists
    assert state.timeout_ms == int((segments[half - 1].ts + 60.0) * 1000)
    rows += _run(key, _frames(segments[half:]), state, timeout=60.0)
    blob, last_ts = state.get  # closed (FIN both ways): only its key is kept, for strays
    table = capture.FlowTable.restore(blob)
    assert not table.flows
    assert table.closed_at(key) is not None
    assert last_ts == segments[-1].ts
    state.hasTimedOut = True  # the watermark passed: finished, state dropped
    rows += _run(key, iter([]), state, timeout=60.0)
    assert not state.exists
    whole = rows_to_batch(capture.decode_flow(segments)).to_pylist()
    assert sorted(rows) == sorted(map(repr, whole))


def test_a_conversation_over_max_state_bytes_is_closed_with_a_row_that_says_so() -> None:
    key, segments = _one_flow()
    state = FakeState()
    rows = _run(key, _frames(segments[:6]), state, max_state_bytes=10)  # open: no FIN yet
    assert not state.exists
    assert any("StateLimit" in row and "state_limit" in row for row in rows)


def test_a_conversation_far_longer_than_max_state_bytes_is_carried_whole() -> None:
    # 2,000 appends of 1 KiB over 40 micro-batches, with 64 KiB of state allowed: each batch
    # resumes from the snapshot, decodes only its own segments, and nothing is cut.
    from tests.capture.test_checkpoint import _s3p_conversation

    segments = _s3p_conversation(2000, b"z" * 1024)
    key = capture.flow_key(segments[0])
    state = FakeState()
    rows: list[str] = []
    per = len(segments) // 40 + 1
    for start in range(0, len(segments), per):
        rows += _run(key, _frames(segments[start : start + per]), state,
                     max_state_bytes=64 * 1024)  # fmt: skip
        assert state.exists
        assert len(state.get[0]) < 64 * 1024
    state.hasTimedOut = True
    rows += _run(key, iter([]), state)
    assert not any("StateLimit" in row for row in rows)
    whole = rows_to_batch(capture.decode_flow(segments)).to_pylist()
    assert sorted(rows) == sorted(map(repr, whole))


def test_a_snapshot_this_version_cannot_read_gives_a_row_and_decoding_goes_on() -> None:
    key, segments = _one_flow()
    state = FakeState()
    state.value = (b"S3PK\x00old", 1.0)  # format 0: an earlier version's checkpoint
    rows = _run(key, _frames(segments), state)
    assert any("SnapshotError" in row and "not restored" in row for row in rows)
    assert any("'kind': 'event'" in row for row in rows)


def test_committed_files_reads_the_sink_log_compactions_included(tmp_path: Path) -> None:
    log = tmp_path / "_spark_metadata"
    log.mkdir()

    def entry(name: str) -> str:
        return json.dumps({"path": f"file://{tmp_path}/{name}", "action": "add"})

    (log / "8").write_text("v1\n" + entry("a.parquet"))
    (log / "9.compact").write_text("v1\n" + entry("a.parquet") + "\n" + entry("b.parquet"))
    (log / "10").write_text("v1\n" + entry("c.parquet"))
    (tmp_path / "orphan.parquet").write_bytes(b"")  # of a batch that never committed
    names = [Path(p).name for p in committed_files(tmp_path)]
    assert names == ["a.parquet", "b.parquet", "c.parquet"]


def test_the_frames_of_one_micro_batch_are_decoded_in_capture_order_whatever_their_order() -> None:
    """Spark hands a group's rows over in several frames, in no particular order."""
    from s3p_codec.spark.segments import _batch

    key, segments = _one_flow()
    half = len(segments) // 2
    frames = iter([_batch(segments[half:]).to_pandas(), _batch(segments[:half]).to_pandas()])
    state = FakeState()
    rows = _run(key, frames, state)
    whole = rows_to_batch(capture.decode_flow(segments)).to_pylist()
    assert sorted(rows) == sorted(map(repr, whole))
