"""How the local session is configured (no Spark started here)."""

from __future__ import annotations

import os

from s3p_codec.spark import local_cores


def test_local_masters_give_their_core_count() -> None:
    assert local_cores("local") == 1
    assert local_cores("local[2]") == 2
    assert local_cores("local[3, 4]") == 3
    assert local_cores("local[*]") == (os.cpu_count() or 1)


def test_cluster_masters_are_left_to_spark_submit() -> None:
    assert local_cores("spark://10.0.0.1:7077") is None
    assert local_cores("yarn") is None
    assert local_cores("k8s://https://api:6443") is None
