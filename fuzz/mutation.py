"""Mutation testing of one or more codec modules with mutmut, outside the working tree.

    .venv/bin/python fuzz/mutation.py s3p_codec/_core/buffer.py --tests tests/_core

copies the files of the repository (tracked, and new ones git does not ignore) to a temporary
directory, writes a ``[mutmut]`` section there (the modules to mutate, the tests to run), and
runs ``mutmut run`` with one worker process. The working tree is never mutated: mutmut writes
its mutated copies under ``mutants/`` of the temporary directory. The script prints, per
module, the mutants generated, killed, survived and not run ("no tests": no test of the
selection reaches the code; timeouts and suspicious results count as not killed), and the name
of each survivor; ``--show`` prints the diff of every survivor too. Not part of the CI run: a
module takes several minutes on one core. Results: docs/development.rst, "Mutation testing".
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def copy_tree(destination: Path) -> None:
    """Copy the files git knows or would add (tracked, and new ones not ignored), as they are in
    the working tree: new tests count before they are committed."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        source = ROOT / raw.decode()
        if not source.is_file():
            continue
        target = destination / raw.decode()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def write_config(
    destination: Path, modules: list[str], tests: list[str], deselect: list[str]
) -> None:
    lines = [
        "[mutmut]",
        "source_paths = s3p_codec",
        "only_mutate =",
        *(f"    {module}" for module in modules),
        "also_copy =",
        "    examples",
        "    fuzz",
        "    benchmarks",
        "    docs",
        "pytest_add_cli_args_test_selection =",
        *(f"    {test}" for test in tests),
        "pytest_add_cli_args =",
        "    -p",
        "    no:cacheprovider",
        *(f"    --deselect={test}" for test in deselect),
        "",
    ]
    (destination / "setup.cfg").write_text("\n".join(lines), encoding="utf-8")


def module_of(mutant: str) -> str:
    """``s3p_codec.s3p._wire.x_parse__mutmut_3`` -> ``s3p_codec.s3p._wire``."""
    return mutant.split(".x_", 1)[0].split(".xǁ", 1)[0]


def statuses(mutmut: Path, workdir: Path) -> list[tuple[str, str]]:
    """``(mutant name, status)`` of every mutant generated in ``workdir``."""
    listing = subprocess.run(
        [str(mutmut), "results", "--all", "true"],
        cwd=workdir,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    out = []
    for line in listing.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name:
            out.append((name, status))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "modules", nargs="+", help="source files to mutate, e.g. s3p_codec/s3p/_wire.py"
    )
    parser.add_argument(
        "--tests", action="append", default=[], help="test directory or file (repeatable)"
    )
    parser.add_argument("--workdir", type=Path, help="keep the copy here (default: a temp dir)")
    parser.add_argument("--show", action="store_true", help="print the diff of each survivor")
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="with --workdir of an earlier run: refresh the copy (new tests) and run again only "
        "the mutants that survived, had no test or were not checked yet (a run cut short)",
    )
    parser.add_argument(
        "--deselect",
        action="append",
        default=[],
        help="a test (file or node id) of the selection to leave out, e.g. one too slow to run "
        "for every mutant (repeatable; the results must say so). Give the same ones to a "
        "--rerun: mutmut forgets every result when the test arguments change",
    )
    parser.add_argument(
        "--profile",
        default="ci",
        help="hypothesis profile of the test runs (tests/conftest.py); 'mutation' draws 20 "
        "examples per property test instead of 100, for packages whose tests are slow",
    )
    args = parser.parse_args(argv)
    tests = args.tests or ["tests"]
    mutmut = Path(sys.executable).with_name("mutmut")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="s3p-mutation-"))
    workdir.mkdir(parents=True, exist_ok=True)
    copy_tree(workdir)
    write_config(workdir, args.modules, tests, args.deselect)
    print(f"copy: {workdir}", flush=True)
    names = []
    if args.rerun:
        names = [
            name
            for name, status in statuses(mutmut, workdir)
            if status in ("survived", "no tests", "not checked")
        ]
    environment = {**os.environ, "HYPOTHESIS_PROFILE": args.profile}
    subprocess.run(
        [str(mutmut), "run", "--max-children", "1", *names],
        cwd=workdir,
        check=False,
        env=environment,
    )
    counts: dict[str, Counter[str]] = {}
    survivors: list[str] = []
    for name, status in statuses(mutmut, workdir):
        counts.setdefault(module_of(name), Counter())[status] += 1
        if status == "survived":
            survivors.append(name)
    for module, count in sorted(counts.items()):
        total = sum(count.values())
        killed = count["killed"]
        other = total - killed - count["survived"]
        print(
            f"{module}: {total} mutants, {killed} killed, {count['survived']} survived, "
            f"{other} not run or other ({dict(count)})"
        )
    for name in survivors:
        if args.show:
            shown = subprocess.run(
                [str(mutmut), "show", name],
                cwd=workdir,
                check=False,
                capture_output=True,
                text=True,
            )
            print(shown.stdout)
        else:
            print(f"survived: {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
