"""The Spark tutorial's Python samples run, with the one SparkSession all Spark tests share.

``spark_session()`` in the samples is get-or-create, so it returns the shared session instead of
starting a second JVM. The other pages' samples run in ``tests/docs/test_samples.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.docs.samples import DOCS, ROOT, SPARK_PAGES, python_blocks


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("page", SPARK_PAGES)
def test_the_spark_samples_of_a_page_run_in_order(
    page: str, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    found = python_blocks(DOCS / page)
    assert found, f"{page} has no Python sample"
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in found:
        exec(compile(block.body, f"{block.page}:{block.line}", "exec"), namespace)
    assert namespace["spark"] is spark  # the samples reused the shared session
