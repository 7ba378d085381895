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

from tests.import_support import PACKAGE, imported_names
from tests.import_support import module_name as _module_name

PROTOCOLS = ("s3p", "rustlog", "s2s", "pravega", "durable")
FORBIDDEN = {
    "socket", "ssl", "selectors", "asyncio", "trio", "anyio", "threading", "multiprocessing",
    "concurrent", "subprocess", "time", "random", "secrets", "os", "pathlib", "signal",
}  # fmt: skip


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``, relative ones resolved."""
    return imported_names(_module_name(path), path.name == "__init__.py", path.read_text())


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


# -- state changes go through each package's table (``<package>/_state.py``) --------------------


def _table_names(tree: ast.Module) -> set[str]:
    """Module constants bound to one trigger's moves: ``_ON_X = TRANSITIONS.on(Trigger.X)``."""
    names: set[str] = set()
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Call) and _is_table_method(value.func, "on"):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _is_table_method(func: ast.expr, method: str) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and func.attr == method
        and isinstance(func.value, ast.Name)
        and func.value.id == "TRANSITIONS"
    )


def _is_table_lookup(value: ast.expr | None, steps: set[str]) -> bool:
    """``TRANSITIONS.next(state, trigger)`` or ``_ON_X[state]`` (a ``Step`` of the table)."""
    if isinstance(value, ast.Call):
        return _is_table_method(value.func, "next")
    if isinstance(value, ast.Subscript):
        return isinstance(value.value, ast.Name) and value.value.id in steps
    return False


def _state_assignments(path: Path) -> Iterator[tuple[int, str, ast.expr | None, bool]]:
    """(line, function, value, table lookup?) of every assignment to ``self._state``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    steps = _table_names(tree)
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign | ast.AugAssign):
                targets, value = [node.target], node.value
            else:
                continue
            for target in targets:
                for leaf in ast.walk(target):
                    if (
                        isinstance(leaf, ast.Attribute)
                        and leaf.attr == "_state"
                        and isinstance(leaf.value, ast.Name)
                        and leaf.value.id == "self"
                    ):
                        lookup = isinstance(node, ast.Assign) and _is_table_lookup(value, steps)
                        yield node.lineno, function.name, value, lookup


STATEFUL = [p for p in SANS_IO if "self._state" in p.read_text()]


def test_the_state_machines_are_found() -> None:
    found = {p.relative_to(PACKAGE).parts[0] for p in STATEFUL}
    assert set(PROTOCOLS) <= found


@pytest.mark.parametrize("path", STATEFUL, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_state_change_goes_through_the_table(path: Path) -> None:
    # Outside ``__init__`` a connection never names the state it moves to: it names what
    # happened, and ``_state.TRANSITIONS`` (one table per package) says where that leads.
    bad = [
        f"line {line} ({function}): self._state = {ast.unparse(value) if value else '?'}"
        for line, function, value, lookup in _state_assignments(path)
        if function != "__init__" and not lookup
    ]
    assert not bad, f"{path.name} sets a state without its table: {bad}"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_package_defines_its_states_in_its_state_module(protocol: str) -> None:
    elsewhere = [
        f"{path.relative_to(PACKAGE)}: class {node.name}"
        for path in _sources(protocol)
        if path.name != "_state.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
        and (node.name == "ConnectionState" or "StateEnum" in map(ast.unparse, node.bases))
    ]
    assert (PACKAGE / protocol / "_state.py").is_file()
    assert not elsewhere, f"states defined outside {protocol}/_state.py: {elsewhere}"


def test_the_state_checker_sees_a_bypass(tmp_path: Path) -> None:
    # Guard against a checker that can never fail.
    probe = tmp_path / "probe.py"
    probe.write_text(
        "_ON_X = TRANSITIONS.on(Trigger.X)\n"
        "class C:\n"
        "    def __init__(self):\n"
        "        self._state = ConnectionState.OPEN\n"
        "    def ok(self):\n"
        "        self._state = _ON_X[self._state]\n"
        "        self._state = TRANSITIONS.next(self._state, Trigger.Y)\n"
        "    def bad(self):\n"
        "        self._state = ConnectionState.CLOSED\n"
        "        self._state = _CLOSED\n"
        "        self._state, other = _ON_X[self._state], 1\n"
    )
    found = [(function, lookup) for _, function, _, lookup in _state_assignments(probe)]
    assert found == [
        ("__init__", False),
        ("ok", True),
        ("ok", True),
        ("bad", False),
        ("bad", False),
        ("bad", False),
    ]
