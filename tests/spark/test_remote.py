"""``s3p-codec spark stats/decode/stream`` on ``s3://`` inputs from a real S3-compatible server on
127.0.0.1: the same rows as from the local files, and a missing object is an error row while
the job goes on. Run as a child process: Spark's Python workers take the AWS environment of
the JVM, which must have it from its start (as on a cluster, where it is set per executor)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from s3p_codec import capture
from tests.s3_support import child_environment, s3, s3_server, upload
from tests.spark.captures import rotated_set

__all__ = ["s3", "s3_server"]  # fixtures used by the tests below

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.network]


def _spark(endpoint: str, tmp: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "s3p_codec", "spark", *argv, "--master", "local[2]"],
        env=child_environment(endpoint, tmp), capture_output=True, text=True, timeout=280,
        check=False,
    )  # fmt: skip


def test_spark_stats_and_decode_of_an_s3_glob_equal_the_local_rows(
    s3: Any, s3_server: str, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    local = [str(p) for p in rotated_set(tmp_path, per_file=5)]
    upload(s3, [Path(p) for p in local], "caps", "day1/")
    stats = _spark(s3_server, tmp_path, "stats", "s3://caps/day1/cap.pcap*", "--format", "json")
    assert stats.returncode == 0, stats.stderr
    expected = capture.summarize(capture.decode_files(local))
    assert json.loads(stats.stdout) == json.loads(json.dumps(expected))

    out = tmp_path / "events.parquet"
    missing = "s3://caps/day1/missing.pcap"
    done = _spark(s3_server, tmp_path, "decode", "s3://caps/day1/", missing, "--out", str(out))
    assert done.returncode == 0, done.stderr
    rows = pq.read_table(out).to_pylist()
    errors = [r for r in rows if r["file"] == missing]
    assert len(errors) == 1
    assert "no such object" in repr(errors[0])
    got = sorted(repr(tuple(r.values())) for r in rows if r["file"] != missing)
    prefix = str(tmp_path) + "/"
    want = sorted(
        repr(r.as_tuple()).replace(prefix, "s3://caps/day1/") for r in capture.decode_files(local)
    )
    assert got == want


def test_spark_stream_of_an_s3_glob_gives_the_rows_of_decode(
    s3: Any, s3_server: str, tmp_path: Path
) -> None:
    """Objects put in the bucket one by one while the query runs (as a rotating capture's
    uploader puts them) are listed by the query's own source and decoded into the rows of
    ``decode`` on the same files, conversations carried across objects."""
    from tests.spark.test_stream import batch_rows, parquet_rows, wait_for

    (tmp_path / "local").mkdir()
    files = rotated_set(tmp_path / "local", per_file=6)
    out, checkpoint, log = tmp_path / "out", tmp_path / "ckpt", tmp_path / "query.log"
    s3.mkdir("caps")
    with log.open("ab") as sink:
        query = subprocess.Popen(
            [sys.executable, "-m", "s3p_codec", "spark", "stream", "s3://caps/day1/cap.pcap*",
             "--out", str(out), "--checkpoint", str(checkpoint), "--trigger", "0.5",
             "--state-timeout", "2", "--master", "local[1]"],
            env=child_environment(s3_server, tmp_path), stdout=sink, stderr=sink,
            start_new_session=True,
        )  # fmt: skip
    try:
        upload(s3, files[:1], "caps", "day1/")
        wait_for(lambda: "batch 0:" in log.read_text(), 150, "the first micro-batch")
        for path in files[1:]:
            upload(s3, [path], "caps", "day1/")
            time.sleep(1.0)  # the store's clock ticks in seconds: one object per tick
        prefix = str(tmp_path / "local") + "/"
        want = sorted(row.replace(prefix, "s3://caps/day1/") for row in batch_rows(files))
        wait_for(lambda: len(parquet_rows(out)) >= len(want), 150, "every row")
        time.sleep(2)  # nothing more may come
        query.send_signal(signal.SIGTERM)
        assert query.wait(90) == 0, log.read_text()[-3000:]
    finally:
        if query.poll() is None:
            query.kill()
    assert parquet_rows(out) == want, log.read_text()[-3000:]
    batches = [line for line in log.read_text().splitlines() if line.startswith("batch ")]
    assert len(batches) > len(files) // 2  # objects came a few per micro-batch, not at once
