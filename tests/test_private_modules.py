"""h11's rule, checked on the source: implementation modules are private, public names come from
each package's ``__init__``.

- No module imports a private module (or a private name) of a package it is not inside: for
  ``s3p_codec.s3p._wire`` only modules under ``s3p_codec.s3p`` may; the rest of the library uses
  ``s3p_codec.s3p`` (``from s3p_codec import s3p``). The owner of a private name is the package
  above its first ``_`` part, so ``s3p_codec.testing._strategies`` serves all of
  ``s3p_codec.testing`` and its per-protocol packages.
- ``s3p_codec._core`` and ``s3p_codec._extras`` are private packages of the whole library
  (their owner is ``s3p_codec``): every layer imports their modules directly (``_core.h11input``,
  ``_core.checkpoint``, ``_extras.testing``...), so the rule does not send those imports through
  their ``__init__``.
- Every module of a public package is private (``_x.py``) unless it is listed in
  ``KEPT_PUBLIC`` below, with the reason it is part of the public face. The packages in
  ``NOT_YET_SPLIT`` are left out of this half only.
- ``ALLOWED`` lists the private imports across packages that stay, each with its reason.

The source is parsed, not imported, so a module whose optional extra is missing is checked too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.import_support import PACKAGE
from tests.import_support import imported_names as _imports
from tests.import_support import module_name as _module_name

# Public submodules, each kept on purpose: importable by its dotted name and documented there.
KEPT_PUBLIC = {
    # The console script's entry point (``s3p-codec = "s3p_codec.cli:main"`` in pyproject.toml).
    "s3p_codec.cli": "the s3p-codec command's entry point",
    # The typing Protocols a codec satisfies, documented on their own page (docs/contract.rst).
    "s3p_codec.contract": "the sans-IO contract, documented as a module",
    # One adapter per I/O framework, imported by name so that a blocking program never loads
    # asyncio or trio (docs/io.rst, the README and every example import them so).
    "s3p_codec.io.asyncio": "the asyncio adapter",
    "s3p_codec.io.sync": "the blocking-socket adapter",
    "s3p_codec.io.trio": "the trio adapter (the trio extra)",
    # The helpers a Durable Streams server needs are modules of their own: ``durable.__all__``
    # exports them by name and docs/protocols/durable.rst documents them as modules.
    "s3p_codec.durable.cursor": "exported as durable.cursor (CDN cursors)",
    "s3p_codec.durable.jsonmode": "exported as durable.jsonmode (JSON-mode bodies)",
    "s3p_codec.durable.offsets": "exported as durable.offsets (offsets and sentinels)",
    "s3p_codec.durable.producer": "exported as durable.producer (the idempotent producer)",
    "s3p_codec.durable.sse": "exported as durable.sse (SSE encoding and parsing)",
    # The HTTP requests and responses that open S2S sessions, for callers who bring their own
    # HTTP (the s2s package docstring; examples/s2_server.py serves HTTP/2 with it).
    "s3p_codec.s2s.http": "building and checking the HTTP that opens a session",
    # The fuzzer's documented entry points (docs/tutorials/fuzzing.rst, its sample program).
    "s3p_codec.testing.command": "make_target, used by the fuzzing sample",
    "s3p_codec.testing.live": "live.fuzz, the live fuzzer",
    "s3p_codec.testing.target": "the Target protocol a fuzz target of your own implements",
    # Each protocol's two directions: the tutorial names ``<protocol>.for_servers`` as the home
    # of ``malformed_rules()`` and ``request_rules()``; ``for_clients`` is its mirror.
    **{
        f"s3p_codec.testing.{protocol}.{direction}": "a documented direction of the cases"
        for protocol in ("s3p", "rustlog", "s2s", "pravega", "durable")
        for direction in ("for_servers", "for_clients")
    },
}

# Packages whose modules are all still importable as public: their layout is reorganised on its
# own, and they leave this list when it is. The import rule applies to them all the same.
NOT_YET_SPLIT: dict[str, str] = {}


SOURCES = sorted(PACKAGE.rglob("*.py"))
PACKAGES = {_module_name(path) for path in SOURCES if path.name == "__init__.py"}

# Private imports across packages that stay, each with its reason.
ALLOWED = {
    ("s3p_codec.cli", "s3p_codec.spark._commands"): (
        "the command line registers the spark sub-commands from spark's private command module, "
        "so that building the parser imports neither pyspark nor the pipeline"
    ),
    ("s3p_codec.cli", "s3p_codec.replay._command"): (
        "the command line registers the replay sub-command from replay's private command module, "
        "which replay keeps out of its public names and loads only when the parser is built"
    ),
}


def _owner(name: str) -> str | None:
    """The package a private dotted name belongs to: the package above its first ``_`` part (a
    private name of a module belongs to the module's package)."""
    parts = name.split(".")
    if parts[0] != "s3p_codec":
        return None
    for index, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            owner = ".".join(parts[:index])
            while owner not in PACKAGES:
                owner = owner.rpartition(".")[0]
            return owner
    return None


def _allowed(module: str, name: str) -> bool:
    return any(
        module == importer and (name == target or name.startswith(target + "."))
        for importer, target in ALLOWED
    )


def _violations(module: str, is_package: bool, source: str) -> list[str]:
    bad = []
    for line, name in _imports(module, is_package, source):
        owner = _owner(name)
        if owner is None or module == owner or module.startswith(owner + "."):
            continue
        if not _allowed(module, name):
            bad.append(f"line {line}: {name} (private to {owner})")
    return bad


def test_every_module_is_walked() -> None:
    names = {_module_name(path) for path in SOURCES}
    assert {"s3p_codec.s3p._wire", "s3p_codec.capture", "s3p_codec.spark"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_private_module_of_another_package(path: Path) -> None:
    bad = _violations(_module_name(path), path.name == "__init__.py", path.read_text())
    assert not bad, f"{path.relative_to(PACKAGE)} imports another package's private parts: {bad}"


def _public_packages() -> list[Path]:
    return [
        folder
        for folder in sorted({PACKAGE, *(p.parent for p in PACKAGE.rglob("__init__.py"))})
        if not any(part.startswith("_") for part in folder.relative_to(PACKAGE.parent).parts)
    ]


def _unlisted_public_modules(kept: dict[str, str]) -> list[str]:
    found = []
    for folder in _public_packages():
        package = _module_name(folder / "__init__.py")
        if package in NOT_YET_SPLIT:
            continue
        for path in sorted(folder.glob("*.py")):
            if path.name.startswith("_"):  # private, or __init__/__main__
                continue
            if _module_name(path) not in kept:
                found.append(_module_name(path))
    return found


def test_every_public_package_keeps_its_implementation_private() -> None:
    assert _unlisted_public_modules(KEPT_PUBLIC) == [], (
        "rename these to _name.py, or list them in KEPT_PUBLIC with the reason they are public"
    )


def test_the_lists_name_modules_and_packages_that_exist() -> None:
    modules = {_module_name(path) for path in SOURCES}
    assert sorted(set(KEPT_PUBLIC) - modules) == []
    packages = {_module_name(folder / "__init__.py") for folder in _public_packages()}
    assert sorted(set(NOT_YET_SPLIT) - packages) == []
    assert sorted(i for i, _ in ALLOWED if i not in modules) == []
    assert sorted(t for _, t in ALLOWED if t not in modules) == []


def test_the_checker_sees_private_imports() -> None:
    # Guard against a checker that can never fail: every spelling of a foreign private import.
    source = (
        "import s3p_codec.s3p._wire\n"
        "from s3p_codec.s3p import _wire\n"
        "from s3p_codec.s3p._wire import WireReader\n"
        "from ..s3p import _wire\n"
        "from s3p_codec.testing._strategies import Malformed\n"
        "from s3p_codec.s3p import Connection\n"
        "from s3p_codec._core import Role\n"
        "from s3p_codec._core.buffer import ReceiveBuffer\n"
        "from s3p_codec.capture.pcap import _decode_with_dpkt\n"
    )
    bad = _violations("s3p_codec.capture.detect", False, source)
    assert [entry.split(":")[0] for entry in bad] == [
        "line 1", "line 2", "line 3", "line 3", "line 4", "line 5", "line 5"
    ]  # fmt: skip
    # Inside the owning package (a subpackage too), the same imports are fine.
    assert _violations("s3p_codec.s3p._connection", False, source)[0].startswith("line 5")
    assert _violations("s3p_codec.testing.s3p", True, source)[0].startswith("line 1")
    assert _violations("s3p_codec.testing.s3p._target", False, source.split("\n", 4)[4]) == [
        "line 5: s3p_codec.capture.pcap._decode_with_dpkt (private to s3p_codec.capture)"
    ]
    # A private name of a module belongs to the module's package: its siblings may use it.
    assert _violations("s3p_codec.capture.scan", False, source.split("\n", 7)[7]) == []


def test_the_checker_sees_public_modules_nobody_kept() -> None:
    unlisted = _unlisted_public_modules({})
    assert {"s3p_codec.cli", "s3p_codec.io.sync", "s3p_codec.testing.s3p.for_servers"} <= set(
        unlisted
    )
    assert not [name for name in unlisted if name.rpartition(".")[2].startswith("_")]
    assert not [name for name in unlisted if name.startswith(tuple(NOT_YET_SPLIT))]
