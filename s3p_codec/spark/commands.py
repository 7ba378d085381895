"""``s3p-codec spark decode`` and ``s3p-codec spark stats``: the capture CLI, run on Spark.

::

    s3p-codec spark decode 'captures/*.pcap*' --out events.parquet [--master URL]
    s3p-codec spark stats 'captures/*.pcap*' [--master URL] [--format table|json]

Patterns are expanded by the driver (quote them so the shell does not). ``--master`` defaults to
``local[*]`` (Spark embedded in this process), or, when the command runs under ``spark-submit``,
to the master spark-submit was given. This module imports pyspark only when a Spark command
runs, so the rest of the command line stays fast and works without the extra.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from typing import Any

__all__ = ["register"]

_UNDER_SPARK_SUBMIT = "PYSPARK_GATEWAY_PORT"  # set by spark-submit for a Python driver


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "patterns", nargs="+", metavar="PATTERN", help="capture files, directories or globs"
    )
    parser.add_argument(
        "--decode-as",
        action="append",
        default=[],
        metavar="PORT=PROTO",
        help="decode conversations on PORT as PROTO; repeatable",
    )
    parser.add_argument(
        "--master",
        metavar="URL",
        help="Spark master: local[*] (default), local[N], spark://host:7077, yarn, ...; "
        "under spark-submit the default is the master spark-submit was given",
    )


def register(sub: Any) -> None:
    """Add the ``spark`` command group to the ``s3p-codec`` sub-parsers."""
    group = sub.add_parser(
        "spark",
        help="decode captures on Spark (local mode or a cluster)",
        description="The capture decoder as a Spark job: files read in parallel, TCP segments "
        "shuffled by connection, each connection decoded in one place.",
    )
    commands = group.add_subparsers(dest="spark_command", required=True, metavar="COMMAND")

    decode = commands.add_parser(
        "decode",
        help="decode captures into a Parquet dataset of events",
        description="Decode captures into a Parquet dataset (a directory of part files) with "
        "the columns of 's3p-codec decode'.",
    )
    _common(decode)
    decode.add_argument("--out", required=True, metavar="PATH", help="Parquet output directory")
    decode.set_defaults(handler=lambda args: _decode(decode, args))

    stats = commands.add_parser(
        "stats",
        help="per-protocol summary, computed by Spark",
        description="Per protocol: conversations, events, requests, replies, bytes, errors, "
        "gaps and request-to-reply latency percentiles (ms), as 's3p-codec stats' prints them.",
    )
    _common(stats)
    stats.add_argument("--format", choices=("table", "json"), default="table")
    stats.set_defaults(handler=lambda args: _stats(stats, args))


def _prepare(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[Any, Any, Any]:
    from s3p_codec.capture import parse_decode_as  # noqa: PLC0415 - heavy imports on use only
    from s3p_codec.spark import expand_paths, spark_session  # noqa: PLC0415

    try:
        ports = parse_decode_as(args.decode_as)
    except ValueError as exc:
        parser.error(str(exc))
    files = expand_paths(args.patterns)
    if not files:
        parser.error(f"no capture file matches {' '.join(args.patterns)}")
    master = args.master
    if master is None and _UNDER_SPARK_SUBMIT not in os.environ:
        master = "local[*]"
        problem = missing_java()
        if problem is not None:  # before the JVM gateway fails with 20 lines of traceback
            print(f"s3p-codec spark: {problem}", file=sys.stderr)
            raise SystemExit(2)
    return spark_session(master), files, ports


def missing_java() -> str | None:
    """Why a local Spark cannot start here (no ``java``, or a ``JAVA_HOME`` without one), or
    None. Spark 4 runs on Java 17 or newer."""
    home = os.environ.get("JAVA_HOME")
    if home:
        if not os.access(os.path.join(home, "bin", "java"), os.X_OK):
            return f"Spark needs Java 17: JAVA_HOME={home} has no bin/java"
        return None
    if shutil.which("java") is None:
        return (
            "Spark needs Java 17, and no java was found "
            "(install openjdk-17-jre-headless, or set JAVA_HOME)"
        )
    return None


def _decode(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from s3p_codec.spark import decode  # noqa: PLC0415

    spark, files, ports = _prepare(parser, args)
    decode(spark, files, ports).write.mode("overwrite").parquet(args.out)
    written = spark.read.parquet(args.out).count()  # from the Parquet footers: cheap
    print(f"{written} rows from {len(files)} files written to {args.out}", file=sys.stderr)
    return 0


def _stats(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from s3p_codec.spark import decode, format_summary, summarize  # noqa: PLC0415

    spark, files, ports = _prepare(parser, args)
    table = summarize(decode(spark, files, ports))
    if args.format == "json":
        print(json.dumps(table, indent=2))
    else:
        for line in format_summary(table):
            print(line)
    return 0
