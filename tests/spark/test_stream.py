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
from s3p_codec.spark._flows import rows_to_batch
from s3p_codec.spark._stream import committed_files
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


def test_a_conversation_longer_than_max_state_bytes_streams_the_rows_of_decode(
    spark: Any, tmp_path: Path
) -> None:
    # One S3P conversation of 1,500 appends over 15 files, with 32 KiB of state allowed per
    # conversation: carried whole from micro-batch to micro-batch, never cut.
    from s3p_codec.spark import start_stream
    from tests.spark._pcaps import conversation, s3p_exchanges, write_rotated

    stage, watch = tmp_path / "stage", tmp_path / "watch"
    stage.mkdir()
    watch.mkdir()
    packets = conversation(("10.0.0.1", 40000), ("10.0.0.2", 7500),
                           s3p_exchanges(b"long", 1500))  # fmt: skip
    files = write_rotated(stage, "cap.pcap", packets, len(packets) // 15 + 1)
    assert sum(p.stat().st_size for p in files) > 4 * 32 * 1024
    # One file per micro-batch is taken oldest first, by modification time in milliseconds:
    # files written within one millisecond would tie. A rotating tcpdump writes them seconds
    # apart; so do these.
    for age, path in enumerate(reversed(files), 1):
        os.utime(path, (time.time() - 10 * age, time.time() - 10 * age))
    out = tmp_path / "out"
    query = start_stream(spark, str(watch / "cap.pcap*"), str(out), str(tmp_path / "ckpt"),
                         trigger_seconds=0.5, max_state_bytes=32 * 1024,
                         max_files_per_trigger=1)  # fmt: skip
    try:
        moved = rotate_in(files, watch, pause=0.2)
        want = batch_rows(moved)
        wait_for(lambda: len(parquet_rows(out)) >= len(want), 180, "rows in Parquet")
        time.sleep(2)
        assert query.exception() is None
    finally:
        query.stop()
    got = parquet_rows(out)
    assert not [row for row in got if "StateLimit" in row]
    assert got == want


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


@pytest.mark.slow
def test_sigterm_lets_the_running_micro_batch_commit_and_stops_with_one_line(
    tmp_path: Path,
) -> None:
    stage, watch = tmp_path / "stage", tmp_path / "watch"
    stage.mkdir()
    watch.mkdir()
    files = rotated_set(stage)
    out, checkpoint, log = tmp_path / "out", tmp_path / "ckpt", tmp_path / "query.log"
    query = _start(watch, out, checkpoint, log)
    try:
        moved = rotate_in(files, watch, pause=0.1)
        wait_for(lambda: "batch " in log.read_text(), 120, "a line per micro-batch")
        wait_for(lambda: len(parquet_rows(out)) >= len(batch_rows(moved)), 120, "every row")
        query.send_signal(signal.SIGTERM)
        status = query.wait(90)
    finally:
        if query.poll() is None:
            _kill(query)
    text = log.read_text()
    assert status == 0, text[-3000:]
    assert "stopped after batch" in text
    assert "Traceback" not in text, text[-3000:]
    assert "Py4J" not in text, text[-3000:]
    assert parquet_rows(out) == batch_rows(moved)


def _run(paths: Sequence[Path], state: Path, **options: Any) -> list[str]:
    """One micro-batch of ``decode_set`` over ``paths`` (given in any order)."""
    from s3p_codec.spark._stream import decode_set

    batches = decode_set("set", [str(p) for p in paths], str(state), {}, **options)
    return [repr(r) for rows in batches for r in rows_to_batch(rows).to_pylist()]


def _newest(state: Path) -> bytes:
    """The newest snapshot's ``FlowTable`` blob in ``state``."""
    newest = sorted(state.rglob("*.snap"))[-1]
    return newest.read_bytes().split(b"\n", 1)[1]


def test_a_capture_set_split_over_micro_batches_gives_the_rows_of_one_pass(
    tmp_path: Path,
) -> None:
    files = rotated_set(tmp_path)  # four conversations, each across several files
    state = tmp_path / "state"
    rows: list[str] = []
    for start in range(0, len(files), 2):
        rows += _run(list(reversed(files[start : start + 2])), state)  # any order within one
    assert sorted(rows) == batch_rows(files)
    assert not capture.FlowTable.restore(_newest(state)).flows  # all closed: keys only
    assert len(list(state.rglob("*.snap"))) == 3  # the newest three are kept


def test_a_retried_micro_batch_gives_the_same_rows_once_from_the_parent_snapshot(
    tmp_path: Path,
) -> None:
    files = rotated_set(tmp_path)
    state = tmp_path / "state"
    first = _run(files[:2], state)
    second = _run(files[2:4], state)
    again = _run(files[2:4], state)  # the task or the query failed after the snapshot
    assert again == second
    rest = _run(files[4:], state)
    assert sorted(first + second + rest) == batch_rows(files)


def test_a_conversation_far_longer_than_max_state_bytes_is_carried_whole(tmp_path: Path) -> None:
    # 3,000 appends of 1 KiB over 30 files and micro-batches, with 64 KiB of state allowed:
    # each batch resumes from the snapshot, decodes only its own file, and nothing is cut.
    from tests.spark._pcaps import conversation, s3p_exchanges, write_rotated

    packets = conversation(("10.0.0.1", 40000), ("10.0.0.2", 7500),
                           s3p_exchanges(b"long", 3000))  # fmt: skip
    files = write_rotated(tmp_path, "cap.pcap", packets, len(packets) // 30 + 1)
    state = tmp_path / "state"
    rows: list[str] = []
    for path in files:
        rows += _run([path], state, max_state_bytes=64 * 1024)
        assert len(_newest(state)) < 64 * 1024
    assert not any("StateLimit" in row for row in rows)
    assert sorted(rows) == batch_rows(files)


def test_a_conversation_over_max_state_bytes_is_closed_with_a_row_that_says_so(
    tmp_path: Path,
) -> None:
    # The first file ends inside one 300 KB append: that message in flight is the state.
    from s3p_codec import Role, s3p
    from tests.spark._pcaps import conversation, write_pcap

    wire = s3p.Connection(Role.CLIENT).send(s3p.Append(b"big", (b"b" * 300_000,)))
    pieces = [("c", wire[at : at + 1460]) for at in range(0, len(wire), 1460)]
    packets = conversation(("10.0.0.1", 40000), ("10.0.0.2", 7500), pieces)
    first = write_pcap(tmp_path / "cap.pcap", packets[:150])  # about 215 KB of it
    state = tmp_path / "state"
    rows = _run([first], state, max_state_bytes=100_000)
    assert any("StateLimit" in row and "state_limit" in row for row in rows)
    assert not capture.FlowTable.restore(_newest(state)).flows


def test_a_snapshot_this_version_cannot_read_gives_a_row_and_decoding_goes_on(
    tmp_path: Path,
) -> None:
    from s3p_codec.spark._snapshots import SnapshotChain

    files = rotated_set(tmp_path)
    state = tmp_path / "state"
    SnapshotChain(str(state), "set").save(0, ["older.pcap"], b"S3PK\x00old")  # format 0
    rows = _run(files, state)
    assert any("SnapshotError" in row and "not restored" in row for row in rows)
    assert any("'kind': 'event'" in row for row in rows)


def test_a_file_that_is_not_a_capture_gives_its_error_row_and_the_set_goes_on(
    tmp_path: Path,
) -> None:
    files = rotated_set(tmp_path)
    broken = tmp_path / f"cap.pcap{len(files)}"
    broken.write_bytes(b"not a capture at all")
    rows = _run([*files, broken], tmp_path / "state")
    assert sorted(rows) == batch_rows([*files, broken])
    assert any("capture_error" in row for row in rows)


def test_capture_sets_are_named_by_the_rotation() -> None:
    from s3p_codec.spark._stream import capture_set

    assert capture_set("/d/cap.pcap") == capture_set("/d/cap.pcap12") == "/d/cap.pcap"
    assert capture_set("/d/cap-1700000000.pcap") == capture_set("/d/cap-1700000060.pcap")
    assert capture_set("/d/a.pcap") != capture_set("/d/b.pcap")


def test_a_batch_line_says_files_rows_and_time() -> None:
    from s3p_codec.spark._stream import batch_line

    progress = {"batchId": 3, "sources": [{"numInputRows": 2}], "sink": {"numOutputRows": 40},
                "durationMs": {"triggerExecution": 1250, "addBatch": 1100, "walCommit": 60,
                               "getBatch": 3}}  # fmt: skip
    line = "batch 3: 2 files, 40 rows in 1.25 s (addBatch 1.10, walCommit 0.06)"
    assert batch_line(progress) == line


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
