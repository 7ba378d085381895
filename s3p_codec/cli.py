"""The ``s3p-codec`` command line: decode packet captures, summarise them.

::

    s3p-codec decode FILE... [--decode-as PORT=PROTO]... [--format table|jsonl|parquet] [--out PATH]
    s3p-codec stats FILE... [--decode-as PORT=PROTO]... [--format table|json]
    s3p-codec fuzz PROTOCOL HOST:PORT [--seconds N] [--seed S] [--allow-remote]

Each sub-command is one ``register`` function in ``COMMANDS``: it adds its parser to the
sub-parsers and sets ``handler`` (a function taking the parsed arguments and returning the exit
status). Adding a command group (``s3p-codec spark ...``) is one more entry in that list.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from s3p_codec._extras import MissingExtra
from s3p_codec._version import __version__

__all__ = ["COMMANDS", "build_parser", "main"]

SubParsers = Any  # argparse's _SubParsersAction is private; typed loosely on purpose
Register = Callable[[SubParsers], None]


def _add_capture_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="pcap or pcapng files (.gz too)")
    parser.add_argument(
        "--decode-as",
        action="append",
        default=[],
        metavar="PORT=PROTO",
        help="decode conversations on PORT as PROTO (s3p, rustlog, s2s, pravega, durable); "
        "repeatable; like Wireshark's Decode As",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: on a terminal, for runs over half a second)",
    )


def _ports(parser: argparse.ArgumentParser, specs: list[str]) -> dict[int, str]:
    from s3p_codec.capture import parse_decode_as  # noqa: PLC0415 - keeps --help fast

    try:
        return parse_decode_as(specs)
    except ValueError as exc:
        parser.error(str(exc))


def register_decode(sub: SubParsers) -> None:
    """``decode``: one row per decoded event, as a table, JSON lines or Parquet."""
    parser = sub.add_parser(
        "decode",
        help="decode captures into one row per event",
        description="Decode packet captures into one row per protocol event.",
    )
    _add_capture_inputs(parser)
    parser.add_argument("--format", choices=("table", "jsonl", "parquet"), default="table")
    parser.add_argument("--out", metavar="PATH", help="output file (default: stdout)")
    parser.set_defaults(handler=lambda args: _decode(parser, args))


def _decode(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from s3p_codec.capture import (  # noqa: PLC0415 - keeps --help fast
        decode_files,
        format_table,
        write_jsonl,
        write_parquet,
    )

    ports = _ports(parser, args.decode_as)
    if args.format == "parquet" and not args.out:
        parser.error("--format parquet needs --out PATH")
    rows = decode_files(args.files, ports, progress=args.progress)
    if args.format == "parquet":
        count = write_parquet(rows, args.out)
        print(f"{count} rows written to {args.out}", file=sys.stderr)
        return 0
    with _output(args.out) as out:
        if args.format == "jsonl":
            write_jsonl(rows, out)
        else:
            for line in format_table(rows):
                out.write(line + "\n")
    return 0


def register_stats(sub: SubParsers) -> None:
    """``stats``: per protocol conversations, events, bytes, errors, latency percentiles."""
    parser = sub.add_parser(
        "stats",
        help="per-protocol summary of captures",
        description="Per protocol: conversations, events, requests, replies, bytes, errors, "
        "gaps and request-to-reply latency percentiles (ms).",
    )
    _add_capture_inputs(parser)
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.set_defaults(handler=lambda args: _stats(parser, args))


def _stats(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from s3p_codec.capture import decode_files, format_summary, summarize  # noqa: PLC0415

    ports = _ports(parser, args.decode_as)
    table = summarize(decode_files(args.files, ports, progress=args.progress))
    if args.format == "json":
        print(json.dumps(table, indent=2))
    else:
        for line in format_summary(table):
            print(line)
    return 0


class _output:
    """stdout, or a file opened for writing (closed on exit)."""

    def __init__(self, path: str | None) -> None:
        self._path = path
        self._file: TextIO | None = None

    def __enter__(self) -> TextIO:
        if self._path is None or self._path == "-":
            return sys.stdout
        self._file = open(self._path, "w", encoding="utf-8")
        return self._file

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()


def register_spark(sub: SubParsers) -> None:
    """``spark decode``/``spark stats``: the same on Spark (pyspark loads only when they run)."""
    from s3p_codec.spark.commands import register  # noqa: PLC0415

    register(sub)


def register_fuzz(sub: SubParsers) -> None:
    """``fuzz``: drive generated valid and malformed traffic at a running server."""
    from s3p_codec.testing.command import register  # noqa: PLC0415

    register(sub)


COMMANDS: list[Register] = [register_decode, register_stats, register_spark, register_fuzz]
"""Every sub-command (or command group) of ``s3p-codec``, in the order ``--help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with one sub-parser per entry of ``COMMANDS``."""
    parser = argparse.ArgumentParser(
        prog="s3p-codec", description="Decode captures of S3P, RustLog, S2S, Pravega and "
        "Durable Streams traffic."
    )  # fmt: skip
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in COMMANDS:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.handler(args)
    except BrokenPipeError:  # `s3p-codec decode x.pcap | head`
        sys.stderr.close()
        return 1
    except KeyboardInterrupt:
        return 130
    except MissingExtra as exc:  # a feature whose extra is not installed: one line, no traceback
        print(exc, file=sys.stderr)
        return 2
    return status
