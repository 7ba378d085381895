"""Shared entry point for the atheris harnesses in this folder.

Each ``fuzz_<name>.py`` defines ``TestOneInput(data)`` and ends with
``if __name__ == "__main__": main(TestOneInput)``. libFuzzer flags pass straight through
(``-max_total_time=60``, ``-runs=N``, a corpus directory).
"""

from __future__ import annotations

import sys
from collections.abc import Callable


def step_for(selector: int, length: int, small: int) -> int:
    """How many bytes to feed at a time: all at once when the selector's top bit is set (the
    batched paths, and cheap executions), else 1 to ``small`` bytes (chunk boundaries)."""
    return max(1, length) if selector & 0x80 else selector % small + 1


def main(test_one_input: Callable[[bytes], None]) -> None:
    import atheris

    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
