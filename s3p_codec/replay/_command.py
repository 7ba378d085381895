"""``s3p-codec replay``: the command line face of the replay package.

Exit status 0 when nothing differs, 1 when something does, 2 on a usage error, an unreadable
capture or a target that cannot be reached (one line each on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

__all__ = ["register"]

_SPEED = re.compile(r"x(\d+(?:\.\d+)?)")


def _pace(text: str) -> float | None:
    """``recorded`` is 1.0 (as recorded), ``xN`` N times faster, ``fast`` None (no waits)."""
    if text == "recorded":
        return 1.0
    if text == "fast":
        return None
    match = _SPEED.fullmatch(text)
    if match is None or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"must be recorded, fast or xN (x2, x0.5), not {text!r}")
    return float(match.group(1))


def _positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value


def register(sub: Any) -> None:
    """Add the ``replay`` sub-parser and its handler."""
    parser = sub.add_parser(
        "replay",
        help="send captured requests to a server again and show where its answers differ",
        description="Replay each conversation of the captures that was recorded from its start "
        "to HOST:PORT, through the protocol's client codec, and compare every answer with the "
        "recorded one (server-assigned timestamps, offsets, cursors and ETags are paired, not "
        "compared). Exit status: 0 identical, 1 differences, 2 usage or connection errors.",
    )
    parser.add_argument(
        "files", nargs="+", metavar="CAPTURE", help="pcap or pcapng files (.gz too)"
    )
    parser.add_argument("--to", required=True, metavar="HOST:PORT", help="the server to replay to")
    parser.add_argument(
        "--decode-as", action="append", default=[], metavar="PORT=PROTO",
        help="decode conversations on PORT as PROTO (s3p, rustlog, s2s, pravega, durable)",
    )  # fmt: skip
    parser.add_argument(
        "--pace", type=_pace, default=None, metavar="recorded|xN|fast",
        help="send requests as recorded (recorded), N times faster (x2), or each as soon as "
        "the previous one is answered (fast, the default)",
    )  # fmt: skip
    parser.add_argument("--format", choices=("text", "jsonl"), default="text")
    parser.add_argument(
        "--baseline", metavar="HOST:PORT",
        help="replay to this server too and report only differences it does not show",
    )  # fmt: skip
    parser.add_argument(
        "--timeout", type=_positive, default=5.0, metavar="SECONDS",
        help="longest wait for one answer, server-pushed data included (5)",
    )  # fmt: skip
    parser.add_argument(
        "--grace", type=_positive, default=0.25, metavar="SECONDS",
        help="wait for a live answer to a request that had none recorded (0.25)",
    )  # fmt: skip
    parser.add_argument(
        "--concurrency", type=int, default=8, metavar="N",
        help="conversations replayed at once when the capture has them overlap (8)",
    )  # fmt: skip
    parser.set_defaults(handler=lambda args: _run(parser, args))


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from s3p_codec import capture, replay  # noqa: PLC0415 - keeps --help fast

    try:
        ports = capture.parse_decode_as(args.decode_as)
        target = replay.parse_target(args.to)
        baseline = replay.parse_target(args.baseline) if args.baseline else None
    except ValueError as exc:
        parser.error(str(exc))
    if args.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    try:
        conversations = replay.load_conversations(args.files, ports)
    except (OSError, capture.CaptureFileError) as exc:
        print(f"s3p-codec replay: {exc}", file=sys.stderr)
        return 2
    options = replay.Options(
        speed=args.pace, timeout=args.timeout, concurrency=args.concurrency, grace=args.grace
    )
    results = replay.replay_conversations(conversations, target, baseline=baseline,
                                          options=options)  # fmt: skip
    write = replay.write_jsonl if args.format == "jsonl" else replay.write_text
    summary = write(results, sys.stdout)
    sys.stdout.flush()
    for error in dict.fromkeys(r.error for r in results if r.error is not None):
        print(f"s3p-codec replay: {error}", file=sys.stderr)
    return summary.exit_status
