"""The official server conformance suite (npm ``@durable-streams/server-conformance-tests``
0.3.6) against ``examples/durable_server.py``.

vitest runs ``conformance/conformance.test.mjs`` (which calls
``runConformanceTests({baseUrl, subscriptions: true})``, the reserved ``__ds`` subscription
APIs of sections 6-7 included)
against the example server started on 127.0.0.1. Every failure must be listed, with its reason,
in ``conformance/baseline.json``; a failure outside it fails this test. The count of passed
tests is printed (``pytest -s``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.durable._servers import CONFORMANCE, ensure_node_modules, example_server

pytestmark = [pytest.mark.network, pytest.mark.slow]

MIN_TESTS = 338  # the suite's size in 0.3.6 with the opt-in subscription tests


def _run_suite(base_url: str, report: Path) -> dict[str, str]:
    """Full test name -> vitest status (passed, failed, skipped, ...)."""
    vitest = CONFORMANCE / "node_modules" / ".bin" / "vitest"
    proc = subprocess.run(
        [str(vitest), "run", "--reporter=json", f"--outputFile={report}"],
        cwd=CONFORMANCE,
        env={**os.environ, "DURABLE_STREAMS_URL": base_url, "LONG_POLL_TIMEOUT_MS": "2000"},
        capture_output=True,
        timeout=110,
        check=False,
    )
    if not report.exists():
        raise AssertionError(f"vitest wrote no report:\n{proc.stdout[-3000:]!r}{proc.stderr!r}")
    data = json.loads(report.read_text())
    results: dict[str, str] = {}
    for file_result in data["testResults"]:
        for case in file_result["assertionResults"]:
            results[case["fullName"]] = case["status"]
    return results


def test_the_official_conformance_suite_passes_outside_the_baseline(tmp_path: Path) -> None:
    ensure_node_modules()
    baseline = json.loads((CONFORMANCE / "baseline.json").read_text())["known_failures"]
    with example_server() as url:
        results = _run_suite(url, tmp_path / "report.json")
    passed = sorted(name for name, status in results.items() if status == "passed")
    failed = sorted(name for name, status in results.items() if status == "failed")
    ran = len(passed) + len(failed)
    summary = f"conformance: {len(passed)}/{ran} passed ({len(results)} incl. skipped)"
    print(summary)
    assert ran >= MIN_TESTS, f"the suite did not run fully: {summary}"
    subscriptions = [name for name in results if "Reserved subscription APIs" in name]
    assert len(subscriptions) == 6, f"the subscription tests did not all run: {subscriptions}"
    unexpected = [name for name in failed if name not in baseline]
    assert not unexpected, f"{summary}; failures outside the baseline: {unexpected}"
