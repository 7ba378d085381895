"""``decode`` keeps every core busy: one read task per file, several flow partitions per core,
flows spread over them by key, and no step that funnels everything through one task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from s3p_codec.spark import decode
from s3p_codec.spark._pipeline import PARTITIONS_PER_CORE, shuffle_partitions
from tests.spark.captures import FLOWS, rotated_set

pytestmark = pytest.mark.spark


def _plan(df: Any) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def test_shuffle_partitions_are_several_per_core(spark: Any) -> None:
    cores = spark.sparkContext.defaultParallelism
    assert shuffle_partitions(spark) >= PARTITIONS_PER_CORE * cores >= 2 * cores


def test_decode_has_one_read_task_per_file_and_shuffles_by_flow_key(
    spark: Any, tmp_path: Path
) -> None:
    paths = [str(p) for p in rotated_set(tmp_path, per_file=7)]
    df = decode(spark, paths)
    plan = _plan(df)
    assert f"Range (0, {len(paths)}, step=1, splits={len(paths)})" in plan
    wanted = shuffle_partitions(spark)
    assert "hashpartitioning(flow_a_addr#" in plan
    assert f", {wanted}), REPARTITION_BY_NUM" in plan
    assert df.rdd.getNumPartitions() == wanted


def test_decode_sorts_within_partitions_never_globally(spark: Any, tmp_path: Path) -> None:
    plan = _plan(decode(spark, [str(p) for p in rotated_set(tmp_path)]))
    sorts = [line for line in plan.splitlines() if "Sort [" in line]
    assert sorts, plan
    assert all(line.rstrip().endswith(", false, 0") for line in sorts), sorts
    assert "rangepartitioning" not in plan
    assert "SinglePartition" not in plan


def test_flows_spread_over_partitions_each_decoded_in_one(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    df = decode(spark, [str(p) for p in rotated_set(tmp_path, per_file=7)])
    placed = df.select("conversation", F.spark_partition_id().alias("p")).distinct().collect()
    partitions_of: dict[str, set[int]] = {}
    for row in placed:
        partitions_of.setdefault(row["conversation"], set()).add(row["p"])
    assert len(partitions_of) == FLOWS
    assert all(len(p) == 1 for p in partitions_of.values()), partitions_of
    assert len(set().union(*partitions_of.values())) > 1, partitions_of
