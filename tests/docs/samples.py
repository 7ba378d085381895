"""Find the code samples of the documentation pages (shared by the tests that run them).

- ``.. code-block:: python`` blocks: run in order, one namespace per page, from the repository
  root (so ``examples/captures/...`` paths work);
- ``.. literalinclude:: ../samples/NAME.py``: whole programs under ``docs/samples``, each run as
  a script;
- ``.. code-block:: console`` blocks with ``:class: runs``: each ``$ `` line is a command run from
  a scratch directory that sees ``examples/``.

Other console blocks (installing, starting long-running servers, cluster set-up) are shown, not
run; the commands they show are exercised by their own tests (``tests/examples``, ``tests/spark``).
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SAMPLES = DOCS / "samples"
# Pages whose Python samples need a SparkSession: tests/spark runs them with the shared one.
SPARK_PAGES = ("tutorials/spark.rst",)

_DIRECTIVE = re.compile(r"^(\s*)\.\. ([\w-]+)::\s*(.*)$")
_OPTION = re.compile(r"^\s*:([\w-]+):\s*(.*)$")


@attrs.frozen
class Block:
    """One directive of a page: its name, argument, options and indented body."""

    page: str
    line: int
    name: str
    argument: str
    options: dict[str, str]
    body: str


def pages() -> list[Path]:
    """Every page of the documentation that can hold samples."""
    skip = {"_build", "_inventories", "samples", "_ext"}
    return sorted(
        p for p in DOCS.rglob("*.rst") if not skip & set(p.relative_to(DOCS).parts)
    )


def blocks(page: Path) -> list[Block]:
    """Every directive of ``page`` with its options and body (dedented)."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    for number, line in enumerate(lines):
        match = _DIRECTIVE.match(line)
        if not match:
            continue
        indent = len(match.group(1))
        options: dict[str, str] = {}
        body: list[str] = []
        at = number + 1
        while at < len(lines) and (option := _OPTION.match(lines[at])):
            options[option.group(1)] = option.group(2)
            at += 1
        for text in lines[at:]:
            if text.strip() and len(text) - len(text.lstrip()) <= indent:
                break
            body.append(text)
        width = min((len(t) - len(t.lstrip()) for t in body if t.strip()), default=0)
        found.append(
            Block(
                str(page.relative_to(DOCS)),
                number + 1,
                match.group(2),
                match.group(3).strip(),
                options,
                "\n".join(t[width:] for t in body).strip("\n") + "\n",
            )
        )
    return found


def python_blocks(page: Path) -> list[Block]:
    """The Python samples of ``page``, in order."""
    return [b for b in blocks(page) if b.name == "code-block" and b.argument == "python"]


def included_programs() -> list[Path]:
    """Every ``docs/samples`` program a page includes."""
    found = []
    for page in pages():
        for block in blocks(page):
            if block.name == "literalinclude":
                found.append((page.parent / block.argument).resolve())
    return sorted(set(found))


def commands() -> list[tuple[str, str]]:
    """``(page, command)`` for each ``$ `` line of the console blocks marked ``:class: runs``."""
    found = []
    for page in pages():
        for block in blocks(page):
            if block.name == "code-block" and "runs" in block.options.get("class", "").split():
                for line in block.body.splitlines():
                    if line.startswith("$ "):
                        found.append((block.page, line[2:].strip()))
    return found
