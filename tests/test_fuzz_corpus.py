"""The committed fuzz seeds replay cleanly through their harnesses, without atheris.

Every input a campaign turned into a regression case lives in ``fuzz/corpus/<name>/``; this
runs each through its harness's ``TestOneInput`` on every test run, so a regression shows up in
pytest and not only in the next campaign. ``fuzz/line_coverage.py`` is exercised on the way.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"
HARNESSES = sorted(p.stem.removeprefix("fuzz_") for p in FUZZ.glob("fuzz_*.py"))


def _line_coverage() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_line_coverage", FUZZ / "line_coverage.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_there_is_a_harness_and_seeds_for_every_protocol() -> None:
    assert HARNESSES == ["durable", "pravega", "rustlog", "s2s", "s3p"]
    for name in HARNESSES:
        assert len(list((FUZZ / "corpus" / name).iterdir())) >= 5, name


@pytest.mark.parametrize("name", HARNESSES)
def test_every_seed_replays_without_a_finding(name: str) -> None:
    tool = _line_coverage()
    harness = tool._load_harness(name)
    seeds = tool._corpus(name, seeds_only=True)
    for seed in seeds:
        harness.TestOneInput(seed.read_bytes())  # any exception is a finding


def test_line_coverage_reports_lines_reached_by_the_seeds() -> None:
    inputs, statements, run, branches, taken = _line_coverage().measure(
        "rustlog", seeds_only=True, missing=False
    )
    assert inputs >= 5
    assert 0 < run <= statements
    assert 0 < taken <= branches
