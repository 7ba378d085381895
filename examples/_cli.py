"""What every example program does with an ordinary failure: one line on stderr, exit status 1.

A port already in use, a port out of range or a refused connection is a mistake the user can
fix from one sentence; a 30-line traceback (an ``ExceptionGroup`` under trio) hides that
sentence. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

__all__ = ["run"]


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
