"""Shared entry point for the atheris harnesses in this folder.

Each ``fuzz_<name>.py`` defines ``TestOneInput(data)`` and ends with
``if __name__ == "__main__": main(TestOneInput)``. libFuzzer flags pass straight through
(``-max_total_time=60``, ``-runs=N``, a corpus directory).
"""

from __future__ import annotations

import sys
from collections.abc import Callable


def main(test_one_input: Callable[[bytes], None]) -> None:
    import atheris

    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
