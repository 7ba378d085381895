"""Run the atheris harnesses of ``fuzz/`` with a time budget.

    python fuzz/run.py --protocol s3p --seconds 600     # one long campaign
    python fuzz/run.py --seconds 60                     # every harness, 60 s each
    python fuzz/run.py --smoke                          # what the test command runs

Each harness runs in its own process, starts from its seed corpus ``fuzz/corpus/<name>/`` and
grows a working corpus under ``fuzz/work/<name>/`` (not committed), with the dictionary
``fuzz/work/<name>.dict`` (see ``dictionaries.py``) and its log in ``fuzz/work/<name>.log``.
A crash fails the run and leaves its input under ``fuzz/crashes/``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import dictionaries  # noqa: E402  (needs the paths above)

SMOKE_SECONDS = 4


def harnesses() -> dict[str, Path]:
    return {p.stem.removeprefix("fuzz_"): p for p in sorted(HERE.glob("fuzz_*.py"))}


def run_one(name: str, path: Path, seconds: int, runs: int | None) -> tuple[int, dict[str, str]]:
    seeds = HERE / "corpus" / name
    work = HERE / "work" / name
    crashes = HERE / "crashes"
    for folder in (seeds, work, crashes):
        folder.mkdir(parents=True, exist_ok=True)
    dictionary = work.parent / f"{name}.dict"
    dictionary.write_text(dictionaries.render(name))
    cmd = [
        sys.executable,
        str(path),
        f"-dict={dictionary}",
        f"-max_total_time={seconds}",
        f"-artifact_prefix={crashes}/{name}-",
        "-print_final_stats=1",
        str(work),
        str(seeds),
    ]
    if runs is not None:
        cmd.insert(2, f"-runs={runs}")
    # libFuzzer's progress goes to work/<name>.log, to follow a long campaign with tail -f.
    log = work.parent / f"{name}.log"
    with log.open("w") as sink:
        proc = subprocess.run(
            cmd, stdout=sink, stderr=subprocess.STDOUT, check=False, cwd=HERE.parent
        )
    text = log.read_text(errors="replace")
    if proc.returncode != 0:
        sys.stderr.write(text[-4000:])
    return proc.returncode, _stats(text)


def _stats(log: str) -> dict[str, str]:
    """Executions, speed and libFuzzer's last coverage figures from a run's log."""
    stats = {"execs": "?", "exec/s": "?", "cov": "?", "ft": "?"}
    for line in log.splitlines():
        if "stat::number_of_executed_units" in line:
            stats["execs"] = line.split(":")[-1].strip()
        elif "stat::average_exec_per_sec" in line:
            stats["exec/s"] = line.split(":")[-1].strip()
        elif line.startswith("#") and " cov: " in line:
            words = line.split()
            for key in ("cov", "ft"):
                if f"{key}:" in words:
                    stats[key] = words[words.index(f"{key}:") + 1]
    return stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--protocol", action="append", help="harness name (repeatable)")
    parser.add_argument("--seconds", type=int, default=60, help="time budget per harness")
    parser.add_argument("--runs", type=int, default=None, help="stop each harness after N inputs")
    parser.add_argument("--smoke", action="store_true", help=f"{SMOKE_SECONDS} s per harness")
    args = parser.parse_args(argv)
    found = harnesses()
    names = args.protocol or list(found)
    unknown = [n for n in names if n not in found]
    if unknown:
        parser.error(f"no harness for {unknown}; have {sorted(found)}")
    seconds = SMOKE_SECONDS if args.smoke else args.seconds
    failed = []
    for name in names:
        began = time.monotonic()
        code, stats = run_one(name, found[name], seconds, args.runs)
        took = time.monotonic() - began
        status = "ok" if code == 0 else f"FAILED (exit {code})"
        print(
            f"fuzz {name:<8} {stats['execs']:>10} execs in {took:6.1f} s"
            f" ({stats['exec/s']}/s, cov {stats['cov']}, ft {stats['ft']})  {status}",
            flush=True,
        )
        if code != 0:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
