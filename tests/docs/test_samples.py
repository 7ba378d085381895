"""Every code sample of the documentation runs, so none can rot (what counts: ``samples.py``)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.samples import (
    DOCS,
    ROOT,
    SAMPLES,
    SPARK_PAGES,
    commands,
    included_programs,
    pages,
    python_blocks,
)

PAGES = [p for p in pages() if python_blocks(p) and str(p.relative_to(DOCS)) not in SPARK_PAGES]


def test_the_pages_have_samples_and_every_program_is_shown() -> None:
    assert len(PAGES) >= 8
    programs = included_programs()
    assert programs == sorted(SAMPLES.glob("*.py")), "a sample program no page includes"
    assert len(commands()) >= 3


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_the_python_samples_of_a_page_run_in_order(
    page: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in python_blocks(page):
        code = compile(block.body, f"{block.page}:{block.line}", "exec")
        exec(code, namespace)  # the documentation's own samples, nothing else


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


@pytest.mark.network
@pytest.mark.parametrize("program", included_programs(), ids=lambda p: p.name)
def test_a_sample_program_runs(program: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(program)],
        check=False, capture_output=True, text=True, timeout=120, cwd=ROOT, env=_env(),
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]


@pytest.mark.parametrize(("page", "command"), commands(), ids=[c for _, c in commands()])
def test_a_documented_command_runs(page: str, command: str, tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    argv = shlex.split(command)
    assert argv[0] == "s3p-codec", f"{page}: only s3p-codec commands are run: {command}"
    run = subprocess.run(
        [sys.executable, "-m", "s3p_codec", *argv[1:]],
        check=False, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=_env(),
    )  # fmt: skip
    assert run.returncode == 0, f"{page}: {command}\n{run.stderr[-3000:]}"
    assert run.stdout or any(tmp_path.iterdir())
