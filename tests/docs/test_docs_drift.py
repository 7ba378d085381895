"""What the README and the Spark tutorial show matches what runs (issue 31, items 10 and 11)."""

from __future__ import annotations

import glob
import re
import sys
import zipfile
from pathlib import Path

import pytest

from s3p_codec import capture

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text()
SPARK_TUTORIAL = (ROOT / "docs" / "tutorials" / "spark.rst").read_text()
SHOWN = ("conversations", "events", "requests", "replies", "bytes", "errors", "gaps")


def _console_lines(rst: str) -> list[str]:
    """The commands of the ``console`` blocks, continuation lines joined."""
    lines: list[str] = []
    for block in re.findall(r"\.\. code-block:: console\n(?:   :.*\n)*\n((?:   .*\n|\n)+)", rst):
        text = re.sub(r"\\\n\s*", " ", block)
        lines += [line.strip()[2:] for line in text.splitlines() if line.strip().startswith("$ ")]
    return lines


def test_the_readme_demo_table_is_what_the_demo_prints() -> None:
    """The demo runs ``spark stats 'examples/captures/*.pcap*'``; Spark's rows equal the single
    process decoder's (tests/spark), so the same summary is checked here without a JVM."""
    block = README.split("prints the per-protocol summary:", 1)[1].split("```")[1]
    header, *lines = block.strip().splitlines()
    names = header.split()
    shown = {}
    for line in lines:
        cells = dict(zip(names, line.split(), strict=False))
        shown[cells["protocol"]] = {k: int(cells[k]) for k in SHOWN} | {
            "latency_p50_ms": float(cells["latency_p50_ms"])
        }
    paths = sorted(glob.glob(str(ROOT / "examples" / "captures" / "*.pcap*")))
    actual = {
        entry["protocol"]: {k: entry[k] for k in SHOWN}
        | {"latency_p50_ms": round(entry["latency_p50_ms"], 3)}
        for entry in capture.summarize(capture.decode_files(paths))
    }
    assert shown == actual


def test_spark_stream_output_is_named_the_same_everywhere() -> None:
    def outs(text: str) -> set[str]:
        return set(re.findall(r"spark stream \S+ --out (\S+)", text))

    assert outs(README)
    assert outs(README) == outs(SPARK_TUTORIAL)


def test_the_local_paths_of_the_spark_tutorial_exist() -> None:
    for line in _console_lines(SPARK_TUTORIAL):
        for pattern in re.findall(r"spark (?:stats|decode) '([^']+)'", line):
            if pattern.startswith(("s3://", "/shared/")):  # a cluster's mount or bucket
                continue
            assert glob.glob(str(ROOT / pattern)), f"{line}: {pattern} matches no file"


def test_the_cluster_commands_work_from_a_pip_install_of_pyspark() -> None:
    pyspark = pytest.importorskip("pyspark")
    lines = _console_lines(SPARK_TUTORIAL)
    assert not [line for line in lines if "sbin/" in line]  # not in pip's pyspark
    starts = [line.split()[1] for line in lines if line.startswith("spark-class ")]
    assert starts == [
        "org.apache.spark.deploy.master.Master",
        "org.apache.spark.deploy.worker.Worker",
    ]
    assert (Path(sys.executable).parent / "spark-class").exists()
    (core,) = (Path(pyspark.__file__).parent / "jars").glob("spark-core_*.jar")
    with zipfile.ZipFile(core) as jar:
        names = set(jar.namelist())
    for start in starts:
        assert start.replace(".", "/") + ".class" in names
    packing = [line for line in lines if "s3p_env" in line]
    assert any("venv-pack" in line and "-o s3p_env.tar.gz" in line for line in packing)
    assert any("--archives s3p_env.tar.gz#env" in line for line in lines)
