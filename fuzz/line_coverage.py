"""Line and branch coverage of each protocol package by its fuzz corpus.

    python fuzz/line_coverage.py                  # every harness, seed + grown corpus
    python fuzz/line_coverage.py --protocol s3p --seeds-only

libFuzzer's ``cov``/``ft`` count edges and features of the instrumented code; this answers the
question a reader asks instead: which lines of ``s3p_codec/<protocol>/`` did the corpus reach,
and which did it never run. Each corpus file is replayed once through the harness's
``TestOneInput`` under coverage.py, without atheris (a stand-in module provides
``instrument_imports``), so the figures are the corpus's, not the fuzzer's luck in one run.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _corpus(name: str, seeds_only: bool) -> list[Path]:
    folders = [HERE / "corpus" / name] + ([] if seeds_only else [HERE / "work" / name])
    return sorted(p for folder in folders if folder.is_dir() for p in folder.iterdir())


def _load_harness(name: str) -> types.ModuleType:
    stand_in = types.ModuleType("atheris")
    stand_in.instrument_imports = contextlib.nullcontext  # type: ignore[attr-defined]
    sys.modules.setdefault("atheris", stand_in)
    sys.path[:0] = [str(ROOT), str(HERE)]
    spec = importlib.util.spec_from_file_location(f"fuzz_{name}", HERE / f"fuzz_{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(name: str, seeds_only: bool, missing: bool) -> tuple[int, int, int, int, int]:
    """Replay ``name``'s corpus; (inputs, statements, run, branches, taken) of its package."""
    import coverage

    package = ROOT / "s3p_codec" / name
    cov = coverage.Coverage(branch=True, include=[f"{package}/*"], data_file=None)
    inputs = _corpus(name, seeds_only)
    cov.start()
    try:
        harness = _load_harness(name)
        for path in inputs:
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue  # a running campaign pruned its corpus meanwhile
            harness.TestOneInput(data)  # a crash here is a finding: let it show
    finally:
        cov.stop()
    statements = run = branches = taken = 0
    for source in sorted(package.rglob("*.py")):
        analysis = cov._analyze(str(source))  # public API gives lines only, not branch counts
        numbers = analysis.numbers
        statements += numbers.n_statements
        run += numbers.n_statements - numbers.n_missing
        branches += numbers.n_branches
        taken += numbers.n_branches - numbers.n_missing_branches
    if missing:
        report = io.StringIO()
        cov.report(file=report, show_missing=True, skip_covered=True)
        print(report.getvalue())
    return len(inputs), statements, run, branches, taken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--protocol", action="append", help="harness name (repeatable)")
    parser.add_argument("--seeds-only", action="store_true", help="the committed corpus only")
    parser.add_argument("--missing", action="store_true", help="list the lines never run")
    args = parser.parse_args(argv)
    names = args.protocol or sorted(p.stem.removeprefix("fuzz_") for p in HERE.glob("fuzz_*.py"))
    print(f"{'protocol':<9} {'inputs':>7} {'lines':>13} {'%':>6} {'branches':>13} {'%':>6}")
    for name in names:
        # Each harness in its own interpreter: imports and module state stay apart.
        if len(names) > 1:
            import subprocess

            flags = ["--seeds-only"] if args.seeds_only else []
            flags += ["--missing"] if args.missing else []
            out = subprocess.run(
                [sys.executable, __file__, "--protocol", name, *flags],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            print(out.stdout.splitlines()[-1] if not args.missing else out.stdout, flush=True)
            continue
        inputs, statements, run, branches, taken = measure(name, args.seeds_only, args.missing)
        print(
            f"{name:<9} {inputs:>7} {run:>6}/{statements:<6} {100 * run / statements:>6.1f}"
            f" {taken:>6}/{branches:<6} {100 * taken / max(1, branches):>6.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
