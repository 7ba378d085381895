"""One local SparkSession for every Spark test (starting the JVM costs seconds; do it once).

Tests that need it are marked ``spark``; they are skipped, with the reason, when Java is
missing (``.ci/setup`` installs it, so CI always runs them).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17 (installed by .ci/setup)")
    from s3p_codec.spark import spark_session

    session = spark_session("local[2]", "s3p-codec-tests")
    yield session
    session.stop()
