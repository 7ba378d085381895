"""A SparkSession configured for this pipeline, in local mode or on a cluster.

Local mode is the embedded default (``local[*]``): one JVM on this machine, no web UI, bound to
127.0.0.1 only, quiet logs, and as many shuffle partitions as cores (Spark's default of 200 costs
seconds of scheduling on small inputs). Python workers run the same interpreter as the driver, so
they import the same ``s3p_codec``. On a cluster (``--master spark://...``, ``yarn``, ``k8s://``)
only the settings that do not depend on the machine are applied; spark-submit decides the rest.

The JVMs a session starts itself (local mode; the executors of a ``master`` URL given here) run
Java's quick compiler only (``JIT_OPTIONS``): in this pipeline the JVM moves a few rows per
flow and copies payload bytes it never looks at, and the optimising compiler, which compiles
Spark's generated code again for every query, cost two to four times that work in CPU
(measured per JVM thread on 64 MiB of capture: 4.5 to 4.9 CPU s of compiler threads beside
1.1 to 1.8 s of task threads; with the quick compiler only, 0.3 to 0.5 s beside the same task
time). Heavy Spark SQL of your own in the same session may prefer the default: pass
``spark.driver.extraJavaOptions`` (and ``spark.executor.extraJavaOptions``) in ``extra_conf``.
"""

from __future__ import annotations

import os
import re
import sys
import warnings

from pyspark.sql import SparkSession

from s3p_codec.spark._datasource import register

__all__ = ["ARROW_BATCH_BYTES", "DEFAULT_MASTER", "JIT_OPTIONS", "local_cores", "spark_session"]

#: The embedded default: local mode on every core.
DEFAULT_MASTER = "local[*]"
JIT_OPTIONS = "-XX:TieredStopAtLevel=1"
"""JVM options of the driver in local mode and of the executors of a ``master`` URL: the quick
(C1) compiler only, see the module docstring."""
ARROW_BATCH_BYTES = 64 << 20
"""Bytes of rows Spark puts in one Arrow batch for a Python task: ``decode`` shuffles each
flow's segments in chunk rows of up to 8 MiB, so a bound on rows alone (Spark's 10,000) would
not bound a decoding task's memory."""
_LOG4J = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
_LOCAL = re.compile(r"^local(?:\[(\*|\d+)(?:,\s*\d+)?\])?$")


def local_cores(master: str) -> int | None:
    """How many cores a ``local``/``local[N]``/``local[*]`` master uses; None for a cluster."""
    match = _LOCAL.match(master.strip())
    if match is None:
        return None
    cores = match.group(1)
    if cores is None:
        return 1
    if cores == "*":
        return os.cpu_count() or 1
    return max(1, int(cores))


PANDAS_WARNING = "ignore:PySpark does not yet fully support pandas:FutureWarning"
"""A ``PYTHONWARNINGS`` entry for pyspark's "does not yet fully support pandas >= 3.0.0".

Silenced on purpose rather than pinning pandas < 3: this pipeline moves rows as Arrow record
batches (``mapInArrow``) and never goes through pandas on the workers, so the warning says
nothing about it, while a pin would fight the pandas 3 a notebook user may already have.
"""


def spark_session(
    master: str | None = DEFAULT_MASTER,
    app_name: str = "s3p-codec",
    *,
    shuffle_partitions: int | None = None,
    extra_conf: dict[str, str] | None = None,
) -> SparkSession:
    """Get or create the SparkSession, with the data sources of this package registered.

    ``master=None`` keeps whatever spark-submit configured (the cluster case).
    """
    # pyspark warns that pandas 3 is "not yet fully supported"; this pipeline moves data as
    # Arrow tables and never goes through pandas, so the warning is noise here.
    warnings.filterwarnings("ignore", message=".*PySpark does not yet fully support pandas.*")
    cores = local_cores(master) if master is not None else None
    if cores is not None:
        # Workers must import the same s3p_codec as the driver: use this very interpreter.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        # Without this Spark resolves the host name and may bind to a public interface.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # Local workers are started by the JVM this process starts: they inherit its variables.
        present = os.environ.get("PYTHONWARNINGS", "")
        if PANDAS_WARNING not in present:
            os.environ["PYTHONWARNINGS"] = ",".join(w for w in (present, PANDAS_WARNING) if w)
    builder = SparkSession.builder.appName(app_name)
    conf: dict[str, str] = {
        # The same warning in every Python worker, on its stderr, once per task: silenced
        # there too, deliberately and for that one message (see PANDAS_WARNING).
        "spark.executorEnv.PYTHONWARNINGS": PANDAS_WARNING,
        "spark.ui.showConsoleProgress": "false",
        "spark.log.level": "ERROR",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.execution.arrow.maxBytesPerBatch": str(ARROW_BATCH_BYTES),
    }
    if master is not None:
        builder = builder.master(master)
        conf["spark.executor.extraJavaOptions"] = JIT_OPTIONS
    if cores is not None:
        conf |= {
            "spark.ui.enabled": "false",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.sql.shuffle.partitions": str(shuffle_partitions or cores),
            "spark.default.parallelism": str(cores),
            # Errors only: without this the JVM prints its log4j banner and start-up warnings.
            "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={_LOG4J} {JIT_OPTIONS}",
        }
    elif shuffle_partitions is not None:
        conf["spark.sql.shuffle.partitions"] = str(shuffle_partitions)
    conf |= extra_conf or {}
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark
