"""The ``s3p-codec`` command line: decode packet captures, summarise them.

::

    s3p-codec decode FILE|DIR|GLOB|-... [--decode-as PORT=PROTO]... [-Y FILTER] [-c N]
                     [--format table|json|jsonl|parquet] [--out PATH]
                     [-t relative|absolute|epoch] [--wide] [-e FIELD]...
    s3p-codec decode --follow FILE ...
    s3p-codec stats FILE|DIR|GLOB|-... [--decode-as PORT=PROTO]... [--format table|json|jsonl]
    s3p-codec live -i IFACE [BPF FILTER...] [decode's options]
    s3p-codec fuzz PROTOCOL HOST:PORT [--seconds N] [--seed S] [--allow-remote]
    s3p-codec replay CAPTURE... --to HOST:PORT [--decode-as PORT=PROTO]... [--pace recorded|xN]
                     [--format text|jsonl] [--baseline HOST:PORT]

Each sub-command is one ``register`` function in ``COMMANDS``: it adds its parser to the
sub-parsers and sets ``handler`` (a function taking the parsed arguments and returning the exit
status). Adding a command group (``s3p-codec spark ...``) is one more entry in that list.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from s3p_codec._extras import MissingExtra, require
from s3p_codec._version import __version__

__all__ = ["COMMANDS", "build_parser", "main"]

SubParsers = Any  # argparse's _SubParsersAction is private; typed loosely on purpose
Register = Callable[[SubParsers], None]


def _add_capture_inputs(parser: argparse.ArgumentParser, *, files: bool = True) -> None:
    if files:
        parser.add_argument(
            "files", nargs="+", metavar="FILE",
            help="pcap or pcapng files (.gz too), directories, quoted globs ('cap-*.pcap*'), "
            "or - for standard input (tcpdump -U -w - | s3p-codec decode -)",
        )  # fmt: skip
    parser.add_argument(
        "--decode-as",
        action="append",
        default=[],
        metavar="PORT=PROTO",
        help="decode conversations on PORT as PROTO (s3p, rustlog, s2s, pravega, durable); "
        "repeatable; like Wireshark's Decode As",
    )
    parser.add_argument(
        "-Y", "--display-filter", metavar="FILTER",
        help="keep only the rows FILTER matches, like tshark -Y: 's3p', "
        "'s3p and error' (every error row, what stats counts: error replies included; "
        "kind==error is only the streams the decoder found broken), 'latency_ms > 5', "
        "'not (s2s or durable)', 'error_code contains UNKNOWN'",
    )  # fmt: skip
    parser.add_argument(
        "-c", "--count", type=_positive_int, metavar="N",
        help="stop after N rows (after the display filter)",
    )  # fmt: skip
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: on a terminal, for runs over half a second)",
    )
    limits = parser.add_argument_group("limits (bounded memory on endless or hostile captures)")
    limits.add_argument(
        "--idle-timeout", type=float, metavar="SECONDS", default=300.0,
        help="close a conversation silent this long in capture time, with an 'evicted' row "
        "(default 300; 0: never)",
    )  # fmt: skip
    limits.add_argument(
        "--max-flows", type=_positive_int, metavar="N", default=50_000,
        help="conversations open at once; the least recently active one is closed beyond "
        "(default 50000)",
    )  # fmt: skip
    limits.add_argument(
        "--max-pending", type=_positive_int, metavar="BYTES", default=4 << 20,
        help="memory one direction may hold behind a missing segment before it is reported as "
        "a gap (default 4194304)",
    )  # fmt: skip


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _ports(parser: argparse.ArgumentParser, specs: list[str]) -> dict[int, str]:
    from s3p_codec.capture import parse_decode_as  # noqa: PLC0415 - keeps --help fast

    try:
        return parse_decode_as(specs)
    except ValueError as exc:
        parser.error(str(exc))


EXTRA_HINT = "pip install 's3p-codec[capture]'"


def _missing(command: str, exc: ImportError) -> int:
    """One line naming the missing package and the extra that brings it; exit status 2."""
    print(
        f"s3p-codec {command} needs the capture extra ({(exc.name or '?').split('.')[0]} "
        f"is missing): {EXTRA_HINT}",
        file=sys.stderr,
    )
    return 2


DECODE_FORMATS = ("table", "json", "jsonl", "parquet")
"""``decode``/``live`` output formats; ``stats`` takes the same ones but Parquet."""
STATS_FORMATS = ("table", "json", "jsonl")


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=DECODE_FORMATS,
        help="output format (default: from --out's suffix, .parquet, .json or .jsonl/.ndjson, "
        "else table); json is one array of rows, jsonl one row per line",
    )  # fmt: skip
    parser.add_argument("--out", metavar="PATH", help="output file (default: stdout)")
    table = parser.add_argument_group("table")
    table.add_argument(
        "-t", "--time", choices=("relative", "absolute", "epoch"), default="relative",
        help="time column: seconds since the earliest packet of all the input files, taken "
        "together in time order, so never negative across files (default; with -, --follow "
        "and live: since the first row), UTC date and time, or epoch seconds; JSON and "
        "Parquet always hold epoch seconds",
    )  # fmt: skip
    table.add_argument(
        "--wide", action="store_true",
        help="cut no cell (default: fit the terminal width, COLUMNS or the tty; error codes, "
        "numbers and times are never cut; a pipe or a file is never cut)",
    )  # fmt: skip
    table.add_argument(
        "-e", "--field", dest="fields", action="append", default=[], metavar="FIELD",
        help="show this column (repeatable, or comma-separated), like tshark -e: any of "
        "capture.COLUMNS, e.g. -e ts -e stream -e error_code -e detail",
    )  # fmt: skip


def _output_format(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    fmt: str | None = args.format
    if fmt is None:
        suffix = os.path.splitext(args.out or "")[1].lower()
        formats = {".parquet": "parquet", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl"}
        fmt = formats.get(suffix, "table")
    if fmt == "parquet" and not args.out:
        parser.error("--format parquet needs --out PATH")
    return fmt


def register_decode(sub: SubParsers) -> None:
    """``decode``: one row per decoded event, as a table, JSON lines or Parquet."""
    parser = sub.add_parser(
        "decode",
        help="decode captures into one row per event",
        description="Decode packet captures into one row per protocol event. With - or "
        "--follow, rows are printed as soon as complete; Ctrl-C prints the stats summary.",
    )
    _add_capture_inputs(parser)
    _add_output(parser)
    parser.add_argument(
        "-f", "--follow", action="store_true",
        help="keep reading the one FILE as it grows (tcpdump -U -w FILE), until Ctrl-C; as "
        "tail -F, a FILE truncated, replaced or removed and created again is said on stderr and "
        "read from its start, its rows under the name FILE[2], FILE[3]...; for a URL "
        "(s3://caps/cap.pcap*), list it every 2 s and decode each new object as it appears, "
        "conversations carried from one object to the next",
    )  # fmt: skip
    parser.set_defaults(handler=lambda args: _run(parser, args, "decode"))


def register_stats(sub: SubParsers) -> None:
    """``stats``: per protocol conversations, events, bytes, errors, latency percentiles."""
    parser = sub.add_parser(
        "stats",
        help="per-protocol summary of captures",
        description="Per protocol: conversations, events, requests, replies, bytes, errors, "
        "gaps and request-to-reply latency percentiles (ms).",
    )
    _add_capture_inputs(parser)
    parser.add_argument(
        "--format", choices=STATS_FORMATS, default="table",
        help="table (default), json (one array) or jsonl (one protocol per line)",
    )  # fmt: skip
    parser.set_defaults(handler=lambda args: _run(parser, args, "stats"), follow=False)


def register_live(sub: SubParsers) -> None:
    """``live``: run tcpdump on an interface and decode what it captures as it comes."""
    parser = sub.add_parser(
        "live",
        help="capture on an interface with tcpdump and decode as it comes",
        description="Run tcpdump -U -w - on IFACE (with an optional BPF filter) and print one "
        "row per event as soon as it is complete; Ctrl-C prints the stats summary.",
    )
    parser.add_argument(
        "-i", "--interface", required=True, metavar="IFACE",
        help="network interface to capture on, as tcpdump -i takes it: lo, eth0, any "
        "(tcpdump -D lists them)",
    )  # fmt: skip
    parser.add_argument(
        "bpf", nargs="*", metavar="FILTER", help="BPF capture filter, as tcpdump takes it"
    )
    parser.add_argument("--tcpdump", default="tcpdump", metavar="PATH", help="tcpdump to run")
    _add_capture_inputs(parser, files=False)
    _add_output(parser)
    parser.set_defaults(handler=lambda args: _run(parser, args, "live"), follow=False)


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> int:
    try:
        from s3p_codec.capture import CaptureRun  # noqa: PLC0415 - keeps --help fast
    except ImportError as exc:
        return _missing(command, exc)
    ports = _ports(parser, args.decode_as)
    fmt = _output_format(parser, args) if command != "stats" else args.format
    if fmt == "parquet":  # checked before any capture is read: MissingExtra, one line
        require("parquet", f"s3p-codec {command} --format parquet", "pyarrow", "pandas")
    if args.progress:
        try:
            import tqdm  # noqa: F401, PLC0415
        except ImportError as exc:
            return _missing(command, exc)
    try:
        run = CaptureRun.from_args(args, command, ports)
    except ValueError as exc:
        parser.error(str(exc))
    return run.execute(fmt, getattr(args, "out", None))


def register_spark(sub: SubParsers) -> None:
    """``spark decode``/``spark stats``: the same on Spark (pyspark loads only when they run)."""
    from s3p_codec.spark._commands import register  # noqa: PLC0415

    register(sub)


def register_fuzz(sub: SubParsers) -> None:
    """``fuzz``: drive generated valid and malformed traffic at a running server."""
    from s3p_codec.testing.command import register  # noqa: PLC0415

    register(sub)


def register_replay(sub: SubParsers) -> None:
    """``replay``: send captured requests to a server again and compare its answers."""
    try:
        from s3p_codec.replay._command import register  # noqa: PLC0415
    except ModuleNotFoundError as missing:
        # Replay reads captures: without the capture extra the command is there and says so
        # when run, and every other command still works.
        error = (
            missing
            if isinstance(missing, MissingExtra)
            else MissingExtra("capture", "s3p-codec replay", missing.name or str(missing))
        )
        parser = sub.add_parser("replay", help="replay captures against a server (capture extra)")
        parser.set_defaults(handler=lambda _args: _raise(error))
        return
    register(sub)


def _raise(error: Exception) -> int:
    raise error


COMMANDS: list[Register] = [
    register_decode,
    register_stats,
    register_live,
    register_spark,
    register_fuzz,
    register_replay,
]
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


def _unwritable_out(out: object) -> str | None:
    """Why ``--out PATH`` cannot be written (its directory is missing or not a directory)."""
    if not isinstance(out, str) or out in ("", "-"):
        return None
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        return f"cannot write {out}: no such directory {parent}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status."""
    args = build_parser().parse_args(argv)
    problem = _unwritable_out(getattr(args, "out", None))
    if problem is not None:  # checked before any work: one line, not a traceback at the end
        print(f"s3p-codec: {problem}", file=sys.stderr)
        return 2
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
