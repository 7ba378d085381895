"""What every example program shares: its command line's common options, one log format, and
what it does with an ordinary failure (one line on stderr, exit status 1).

A port already in use, a port out of range or a refused connection is a mistake the user can
fix from one sentence; a 30-line traceback (an ``ExceptionGroup`` under trio) hides that
sentence. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from collections.abc import Callable

__all__ = [
    "LOG_FORMAT", "add_address", "add_verbose", "description", "parser", "prog", "run",
    "setup_logging",
]  # fmt: skip


def _ordinary(error: BaseException) -> BaseException | None:
    """The OS-level failure inside ``error`` (looking into exception groups), or None."""
    if isinstance(error, OSError | OverflowError):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = _ordinary(inner)
            if found is not None:
                return found
    return None


def _say(error: BaseException) -> str:
    if isinstance(error, OverflowError):
        return f"bad port: {error}"  # socket's own words: "port must be 0-65535"
    if isinstance(error, OSError) and error.strerror:
        where = f" ({error.filename})" if error.filename else ""
        return f"{error.strerror.lower()}{where}"
    return str(error) or type(error).__name__


def run(main: Callable[[], int | None], prog: str) -> int:
    """Run an example's ``main`` and return its exit status; an address in use, a port out of
    range or a refused connection becomes ``PROG: what went wrong`` on stderr and status 1."""
    try:
        return main() or 0
    except BaseException as error:
        found = _ordinary(error)
        if found is None or isinstance(error, KeyboardInterrupt | SystemExit):
            raise
        print(f"{prog}: {_say(found)}", file=sys.stderr)
        return 1


LOG_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"
"""The one log format of every example server."""


def prog(module: str) -> str:
    """The program name usage lines show: how it is run (``python -m examples.NAME``)."""
    return f"python -m examples.{module}"


def description(doc: str | None) -> str:
    """A module docstring as ``--help`` text: the reStructuredText that reads well in the API
    docs (``::`` before a literal block, ````code````, ``:class:`X```) made plain."""
    lines = []
    for line in (doc or "").strip().splitlines():
        if line.strip() == "::":
            continue
        line = re.sub(r"(\S)::$", r"\1:", line)
        line = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", line)
        lines.append(line.replace("``", ""))
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text)


def parser(module: str, doc: str | None) -> argparse.ArgumentParser:
    """An example's parser: its usage line and its docstring, plain and laid out as written."""
    return argparse.ArgumentParser(
        prog=prog(module),
        description=description(doc),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_address(parser: argparse.ArgumentParser, port: int, *, server: bool) -> None:
    """``--host`` and ``--port``, the same in every example, defaults shown in ``--help``."""
    what = "address to bind" if server else "server address"
    parser.add_argument("--host", default="127.0.0.1", help=f"{what} (127.0.0.1)")
    any_port = "; 0: any" if server else ""
    parser.add_argument("--port", type=int, default=port, help=f"TCP port ({port}{any_port})")


def add_verbose(parser: argparse.ArgumentParser) -> None:
    """``-v``: the same meaning in every example server."""
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log each connection and protocol error"
    )


def setup_logging(verbose: bool) -> None:
    """Log at INFO, or DEBUG with ``-v``, in ``LOG_FORMAT``."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format=LOG_FORMAT)
