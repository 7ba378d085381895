"""``s3p-codec spark decode`` and ``s3p-codec spark stats``: the capture CLI, run on Spark.

::

    s3p-codec spark decode 'captures/*.pcap*' --out events.parquet [--master URL]
    s3p-codec spark stats 'captures/*.pcap*' [--master URL] [--format table|json]
    s3p-codec spark stream 'captures/*.pcap*' --out events --checkpoint events.ckpt [--trigger S]

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
    _decoding(parser)


def _decoding(parser: argparse.ArgumentParser) -> None:
    """``--decode-as`` and ``--master``: the same in every Spark command."""
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

    stream = commands.add_parser(
        "stream",
        help="decode capture files as they appear (Structured Streaming) into Parquet",
        description="A Spark Structured Streaming query: capture files matching PATTERN are "
        "decoded as they appear (rotated sets in capture order), conversations that span files "
        "are carried across micro-batches as a snapshot of their decoding state, and rows are "
        "appended to the Parquet directory --out exactly once. Restarted with the same "
        "--checkpoint, the query goes on where it stopped. Runs until Ctrl-C or SIGTERM, which "
        "let the running micro-batch finish (a second one abandons it); a line per micro-batch "
        "on stderr says its files, rows and time.",
    )
    stream.add_argument("pattern", metavar="PATTERN", help="a directory or a quoted glob")
    stream.add_argument("--out", required=True, metavar="DIR", help="Parquet output directory")
    stream.add_argument(
        "--checkpoint", required=True, metavar="DIR", help="the query's progress and state"
    )
    stream.add_argument(
        "--trigger", type=float, default=10.0, metavar="SECONDS",
        help="seconds between micro-batches (default 10)",
    )  # fmt: skip
    stream.add_argument(
        "--state-timeout", type=float, default=300.0, metavar="SECONDS",
        help="finish a conversation once capture time is this far past its last segment; "
        "the batch decoder's idle timeout (default 300)",
    )  # fmt: skip
    stream.add_argument(
        "--max-files-per-trigger", type=int, default=None, metavar="N",
        help="at most N new files per micro-batch (default: all)",
    )  # fmt: skip
    stream.add_argument(
        "--max-state-bytes", type=int, default=64 << 20, metavar="BYTES",
        help="largest decoding state one conversation may keep between micro-batches (a "
        "single message in flight that large closes it with a StateLimit row; default 64 MiB)",
    )  # fmt: skip
    stream.add_argument(
        "-q", "--quiet", action="store_true", help="no line per micro-batch on stderr"
    )
    _decoding(stream)
    stream.set_defaults(handler=lambda args: _stream(stream, args))


def _prepare(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[Any, Any, Any]:
    from s3p_codec.spark import expand_paths  # noqa: PLC0415 - heavy imports on use only

    ports = _ports(parser, args)
    files = expand_paths(args.patterns)
    if not files:
        parser.error(f"no capture file matches {' '.join(args.patterns)}")
    return _session(args), files, ports


def _ports(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[int, str]:
    from s3p_codec.capture import parse_decode_as  # noqa: PLC0415

    try:
        return parse_decode_as(args.decode_as)
    except ValueError as exc:
        parser.error(str(exc))


def _session(args: argparse.Namespace) -> Any:
    from s3p_codec.spark import spark_session  # noqa: PLC0415

    master = args.master
    if master is None and _UNDER_SPARK_SUBMIT not in os.environ:
        master = "local[*]"
        problem = missing_java()
        if problem is not None:  # before the JVM gateway fails with 20 lines of traceback
            print(f"s3p-codec spark: {problem}", file=sys.stderr)
            raise SystemExit(2)
    return spark_session(master)


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


def _stream(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from s3p_codec.spark._stream import run_until_stopped, start_stream  # noqa: PLC0415

    ports = _ports(parser, args)
    if args.max_state_bytes < 1:
        parser.error("--max-state-bytes must be positive")
    spark = _session(args)
    # Timeouts are in capture time, and capture time only moves with new files: a micro-batch
    # without data would only repeat the last one's timeouts, and delay the next file's batch.
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")
    query = start_stream(
        spark, args.pattern, args.out, args.checkpoint, ports,
        trigger_seconds=args.trigger, timeout=args.state_timeout,
        max_state_bytes=args.max_state_bytes, max_files_per_trigger=args.max_files_per_trigger,
    )  # fmt: skip
    print(f"streaming {args.pattern} into {args.out} (checkpoint {args.checkpoint}); "
          "Ctrl-C or SIGTERM stops after the running micro-batch",
          file=sys.stderr, flush=True)  # fmt: skip
    return run_until_stopped(query, sys.stderr, quiet=args.quiet)
