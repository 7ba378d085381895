"""``s3p-codec fuzz PROTOCOL HOST:PORT [--seconds N] [--seed S] [--timeout T]
[--min-timeout F] [--parallel P] [--allow-remote] [--s3p-version 0.1.0|0.2.0]``.

Drives ``live.fuzz`` at a running server, prints the readable summary and writes it with the
JSON report (``--report PATH``, default ``fuzz-report-<protocol>.json``, and the same name with
``.txt``). Exit status: 0 without
findings, 1 with findings, 2 for a usage error. Only loopback addresses are fuzzed unless
``--allow-remote`` is given: fuzzing someone else's server is not a default.
"""

from __future__ import annotations

import argparse
import importlib
import ipaddress
import socket
import sys
from typing import TYPE_CHECKING, Any

from s3p_codec import PROTOCOLS

if TYPE_CHECKING:
    from s3p_codec.testing.target import Target

__all__ = ["PROTOCOLS", "make_target", "parse_address", "register", "run"]


def make_target(protocol: str, s3p_version: str | None = None) -> Target:
    """The ``Target`` of ``s3p_codec.testing.<protocol>`` with its default limits
    (``s3p_version``: the S3P version of the server under test; S3P only)."""
    module = importlib.import_module(f"s3p_codec.testing.{protocol}")
    if protocol == "s3p" and s3p_version is not None:
        versioned: Target = module.Target(version=s3p_version)
        return versioned
    target: Target = module.Target()
    return target


def parse_address(text: str, *, allow_remote: bool) -> tuple[str, int]:
    """``HOST:PORT`` -> ``(host, port)``; ValueError if malformed or (without
    ``allow_remote``) not a loopback address."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    host = host.strip("[]")
    try:
        resolved = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        raise ValueError(f"cannot resolve {host!r}: {exc}") from None
    addresses = {ipaddress.ip_address(info[4][0]) for info in resolved}
    if not allow_remote and not all(address.is_loopback for address in addresses):
        raise ValueError(
            f"{host} is not a loopback address; pass --allow-remote to fuzz a remote server"
        )
    return host, int(port_text)


def unreachable(host: str, port: int, timeout: float) -> str | None:
    """Why no server can be fuzzed at ``host:port`` (``nothing listens on HOST:PORT``), or None
    when a connection opens. A refused connection is not a finding about a server."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except ConnectionRefusedError:
        return f"nothing listens on {host}:{port}"
    except OSError as exc:
        return f"cannot connect to {host}:{port}: {exc.strerror or exc}"


def register(sub: Any) -> None:
    """Add the ``fuzz`` sub-command to the ``s3p-codec`` parser."""
    parser = sub.add_parser(
        "fuzz",
        help="fuzz the framing of a running server",
        description="Send generated valid and malformed traffic to a running server and check "
        "every answer against what the protocol requires.",
    )
    parser.add_argument("protocol", choices=PROTOCOLS)
    parser.add_argument("address", metavar="HOST:PORT")
    parser.add_argument("--seconds", type=float, default=10.0, help="time budget (10)")
    parser.add_argument("--seed", type=int, default=0, help="same seed, same traffic (0)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=2.0,
        help="longest wait for one answer (2 s); the wait adapts to the server's answer times",
    )
    parser.add_argument(
        "--min-timeout", type=float, default=0.5, help="shortest adapted wait for an answer (0.5 s)"
    )
    parser.add_argument(
        "--parallel", type=int, default=8, help="cases in flight at once, each on its own "
        "connection (8)",
    )  # fmt: skip
    parser.add_argument("--report", metavar="PATH", help="JSON report path")
    parser.add_argument("--allow-remote", action="store_true", help="allow a non-loopback address")
    parser.add_argument(
        "--s3p-version",
        choices=("0.1.0", "0.2.0"),
        help="the S3P version the server speaks (0.1.0); S3P has no handshake",
    )
    parser.set_defaults(handler=lambda args: run(parser, args))


def run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run one campaign; 0 without findings, 1 with."""
    try:
        from s3p_codec.testing import live  # noqa: PLC0415 - hypothesis loads only when fuzzing
    except ImportError as exc:
        print(f"s3p-codec fuzz needs the testing extra ({exc.name} is missing): "
              "pip install 's3p-codec[testing]'", file=sys.stderr)  # fmt: skip
        return 2
    try:
        host, port = parse_address(args.address, allow_remote=args.allow_remote)
    except ValueError as exc:
        parser.error(str(exc))
    if args.seconds <= 0 or args.timeout <= 0 or args.min_timeout <= 0 or args.parallel < 1:
        parser.error("--seconds, --timeout, --min-timeout and --parallel must be positive")
    problem = unreachable(host, port, args.timeout)
    if problem is not None:
        # Nothing to fuzz: say so, and keep an earlier campaign's report as it was.
        print(f"s3p-codec fuzz: {problem}", file=sys.stderr)
        return 2
    report = live.fuzz(
        make_target(args.protocol, args.s3p_version),
        host,
        port,
        seconds=args.seconds,
        seed=args.seed,
        case_timeout=args.timeout,
        timeout_floor=args.min_timeout,
        parallel=args.parallel,
    )
    path = args.report or f"fuzz-report-{args.protocol}.json"
    report.write_json(path)
    text = path.removesuffix(".json") + ".txt"
    with open(text, "w", encoding="utf-8") as out:
        out.write(report.summary() + "\n")
    print(report.summary())
    print(f"reports written to {path} and {text}", file=sys.stderr)
    return 0 if report.ok else 1
