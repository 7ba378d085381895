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
    assert len(OFFLINE) >= 5


@pytest.mark.parametrize("block", OFFLINE, ids=[b.splitlines()[0][:40] for b in OFFLINE])
def test_readme_example_runs(block: str) -> None:
    exec(compile(block, "README.md", "exec"), {})
