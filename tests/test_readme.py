"""The README's code examples run as written.

Those that need a running server or a Spark session are left out here: the same calls run in
tests/io, tests/examples and tests/spark.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
OFFLINE = [block for block in BLOCKS if "connect(" not in block and "spark" not in block]


def test_the_readme_has_offline_examples() -> None:
    assert len(OFFLINE) >= 2


@pytest.mark.parametrize("block", OFFLINE, ids=[b.splitlines()[0][:40] for b in OFFLINE])
def test_readme_example_runs(block: str) -> None:
    exec(compile(block, "README.md", "exec"), {})


def test_the_files_the_readme_commands_write_are_ignored_by_git() -> None:
    """Running the README's commands in a clone must not dirty it: every output file they name
    (``--out PATH``, the fuzz reports) is covered by ``.gitignore``."""
    import shutil
    import subprocess

    root = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("needs git and a clone")
    text = (root / "README.md").read_text(encoding="utf-8")
    outputs = set(re.findall(r"--out ([\w./-]+)", text))
    outputs |= set(re.findall(r"fuzz-report-\w+\.(?:json|txt)", text))
    assert {"events.jsonl", "fuzz-report-s3p.json"} <= outputs
    for name in sorted(outputs):
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", "--no-index", name], cwd=root, check=False
        )
        assert ignored.returncode == 0, f"{name} would dirty the clone"
