"""The layering of DESIGN.md, checked on the source: imports only point down.

- Nothing under ``_core/`` or a protocol package imports I/O, clocks, threads or randomness:
  time and randomness come in as arguments, so every codec stays deterministic and sans-IO.
- ``_core/`` imports nothing else of ours; a protocol package imports only ``_core`` and itself.
- Drivers (io, capture, spark, testing, cli) use only the public face of protocol packages.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "s3p_codec"
PROTOCOLS = ("s3p", "rustlog", "s2s", "pravega", "durable")
FORBIDDEN = {
    "socket", "ssl", "selectors", "asyncio", "trio", "anyio", "threading", "multiprocessing",
    "concurrent", "subprocess", "time", "random", "secrets", "os", "pathlib", "signal",
}  # fmt: skip


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``, relative ones resolved."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield node.lineno, module
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}"


def _sources(*folders: str) -> list[Path]:
    found: list[Path] = []
    for folder in folders:
        root = PACKAGE / folder
        if root.is_dir():
            found.extend(sorted(root.rglob("*.py")))
    return found


SANS_IO = _sources("_core", *PROTOCOLS)


def test_the_sans_io_layers_exist() -> None:
    assert (PACKAGE / "_core" / "buffer.py") in SANS_IO


@pytest.mark.parametrize("path", SANS_IO, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_sans_io_layers_import_no_io_clock_thread_or_randomness(path: Path) -> None:
    bad = [
        f"line {line}: {name}" for line, name in _imports(path) if name.split(".")[0] in FORBIDDEN
    ]
    assert not bad, f"{path.name} imports I/O, clocks, threads or randomness: {bad}"


@pytest.mark.parametrize("path", SANS_IO, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_sans_io_layers_import_only_core_and_themselves(path: Path) -> None:
    own = _module_name(path).split(".")
    own_layer = own[1] if len(own) > 1 else ""
    bad = []
    for line, name in _imports(path):
        parts = name.split(".")
        if parts[0] != "s3p_codec" or len(parts) < 2:
            continue
        if parts[1] not in {"_core", own_layer, "_version"}:
            bad.append(f"line {line}: {name}")
    assert not bad, f"{path.name} reaches sideways or up the layers: {bad}"


DRIVERS = [
    p
    for p in sorted(PACKAGE.rglob("*.py"))
    if p.relative_to(PACKAGE).parts[0] not in {"_core", *PROTOCOLS}
]


@pytest.mark.parametrize("path", DRIVERS, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_drivers_use_only_the_public_face_of_protocol_packages(path: Path) -> None:
    bad = []
    for line, name in _imports(path):
        parts = name.split(".")
        internal = len(parts) >= 3 and (
            parts[2].startswith("_") or (PACKAGE / parts[1] / f"{parts[2]}.py").exists()
        )
        if parts[:1] == ["s3p_codec"] and parts[1:2] and parts[1] in PROTOCOLS and internal:
            bad.append(f"line {line}: {name}")
    assert not bad, f"{path.name} imports protocol internals: {bad}"


def test_the_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    # Guard against a checker that can never fail: feed it a module that breaks the rule.
    fake = PACKAGE / "_core" / "_arch_probe_never_committed.py"
    fake.write_text("import time\nfrom . import buffer\n")
    try:
        names = [name for _, name in _imports(fake)]
    finally:
        fake.unlink()
    assert "time" in names
    assert "s3p_codec._core.buffer" in names
