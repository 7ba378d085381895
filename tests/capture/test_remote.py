"""Captures in object storage: rows from ``s3://`` URLs and globs equal rows from the same local
files; a missing object, bucket or credentials is one line naming the URL and the store's words.
Runs against a real S3-compatible server on 127.0.0.1 (``tests/s3_support.py``)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from s3p_codec import capture
from s3p_codec.capture._inputs import expand_inputs
from s3p_codec.cli import main
from tests.s3_support import child_environment, s3, s3_server, upload
from tests.spark.captures import rotated_set

__all__ = ["s3", "s3_server"]  # fixtures used by the tests below

pytestmark = pytest.mark.network


def _rows(paths: list[str]) -> list[tuple[Any, ...]]:
    return [row.as_tuple()[1:] for row in capture.decode_files(paths)]


def test_decode_files_of_an_s3_glob_equal_the_local_rows(s3: Any, tmp_path: Path) -> None:
    local = [str(p) for p in rotated_set(tmp_path, per_file=5)]
    assert len(local) > 10  # cap.pcap10 must come after cap.pcap2, unlike in a listing
    upload(s3, [Path(p) for p in local], "caps", "day1/")
    urls = expand_inputs(["s3://caps/day1/cap.pcap*"])
    assert urls == [f"s3://caps/day1/{Path(p).name}" for p in local]
    assert expand_inputs(["s3://caps/day1/"]) == urls
    from_s3 = repr(_rows(urls))
    assert from_s3 == repr(_rows(local)).replace(str(tmp_path) + "/", "s3://caps/day1/")
    assert {row.file for row in capture.decode_files(urls)} <= set(urls)


def test_the_decode_command_reads_an_s3_glob(
    s3: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local = rotated_set(tmp_path)
    upload(s3, local, "caps")
    assert main(["decode", str(tmp_path / "cap.pcap*"), "--format", "jsonl"]) == 0
    expected = capsys.readouterr().out.replace(str(tmp_path) + "/", "s3://caps/")
    assert main(["decode", "s3://caps/cap.pcap*", "--format", "jsonl"]) == 0
    captured = capsys.readouterr()
    assert captured.out == expected
    assert main(["stats", str(tmp_path / "cap.pcap*"), "--format", "json"]) == 0
    local_stats = capsys.readouterr().out
    assert main(["stats", "s3://caps/", "--format", "json"]) == 0
    assert capsys.readouterr().out == local_stats


def test_a_file_url_reads_the_local_file(tmp_path: Path) -> None:
    local = [str(p) for p in rotated_set(tmp_path)]
    urls = expand_inputs([f"file://{tmp_path}/cap.pcap*"])
    assert urls == local


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("s3://caps/missing.pcap", "no such object"),
        (
            "s3://no-such-bucket/cap.pcap",
            "AWS Error NO_SUCH_BUCKET during ListObjectsV2 operation: "
            "The specified bucket does not exist",
        ),
        ("s3://caps/nothing-*.pcap", "no object matches this pattern"),
    ],
)
def test_a_missing_object_or_bucket_is_one_line(
    s3: Any, tmp_path: Path, url: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    upload(s3, rotated_set(tmp_path)[:1], "caps")
    assert main(["decode", url]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"s3p-codec: {url}: {words}"]


def test_missing_credentials_are_one_line(s3: Any, s3_server: str, tmp_path: Path) -> None:
    """Without credentials the request goes out unsigned and the store refuses it: its words."""
    upload(s3, rotated_set(tmp_path)[:1], "caps")
    env = child_environment(s3_server, tmp_path, AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None)
    done = subprocess.run(
        [sys.executable, "-m", "s3p_codec", "stats", "s3://caps/cap.pcap"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "s3p-codec: s3://caps/cap.pcap: "
        "AWS Error ACCESS_DENIED during HeadObject operation: No response body."
    ]


def test_decode_follow_of_an_s3_glob_decodes_objects_as_they_appear(
    s3: Any, s3_server: str, tmp_path: Path
) -> None:
    """``decode --follow URL`` lists the pattern again and again and decodes each new object,
    conversations carried across objects: the rows of ``decode`` on the same files (up to the
    rows of conversations still open, which a follow gives only once they end)."""
    from s3p_codec.capture import FlowTable
    from s3p_codec.capture._drivers import decode_in_turn

    (tmp_path / "local").mkdir()
    files = rotated_set(tmp_path / "local")
    local = [str(p) for p in files]
    count = len(list(decode_in_turn(local, FlowTable.with_limits(None))))
    expected = subprocess.run(
        [sys.executable, "-m", "s3p_codec", "decode", *local, "--format", "jsonl",
         "-c", str(count)],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout.replace(str(tmp_path / "local") + "/", "s3://caps/day1/")  # fmt: skip
    upload(s3, files[:1], "caps", "day1/")
    follow = subprocess.Popen(
        [sys.executable, "-m", "s3p_codec", "decode", "--follow", "s3://caps/day1/cap.pcap*",
         "--format", "jsonl", "-c", str(count)],
        env=child_environment(s3_server, tmp_path), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        for path in files[1:]:
            time.sleep(1.0)  # one object per tick of the store's clock
            upload(s3, [path], "caps", "day1/")
        out, err = follow.communicate(timeout=120)
    finally:
        if follow.poll() is None:
            follow.kill()
    assert follow.returncode == 0, err
    assert len(files) > 3
    assert out == expected


def test_decode_follow_of_a_glob_in_a_missing_bucket_is_one_line_not_a_wait(
    s3: Any, s3_server: str, tmp_path: Path
) -> None:
    """A store that refuses the listing ends the follow at once with its words (a follow of a
    missing bucket would otherwise poll for ever)."""
    done = subprocess.run(
        [sys.executable, "-m", "s3p_codec", "decode", "--follow", "s3://no-such-bucket/cap*"],
        env=child_environment(s3_server, tmp_path), capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "s3p-codec: s3://no-such-bucket/cap*: AWS Error NO_SUCH_BUCKET during ListObjectsV2 "
        "operation: The specified bucket does not exist"
    ]
