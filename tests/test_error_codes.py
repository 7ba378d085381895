"""Every error a codec raises carries its protocol's error code as an enum member, never a bare
string or number written at the raise (a typo there would pass unnoticed)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import s3p_codec

PACKAGES = ("_core", "s3p", "rustlog", "s2s", "pravega", "durable")
ROOT = Path(s3p_codec.__file__).parent


def _modules() -> list[Path]:
    return sorted(path for name in PACKAGES for path in (ROOT / name).rglob("*.py"))


def _bare_codes(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if not name.endswith("ProtocolError"):
                continue
            codes = [k.value for k in node.keywords if k.arg == "code"] + node.args[1:2]
            lines += [node.lineno for code in codes if isinstance(code, ast.Constant)]
        elif isinstance(node, ast.AnnAssign | ast.Assign) and isinstance(node.value, ast.Constant):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id.endswith("_code") for t in targets):
                lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_error_code_is_a_bare_literal(path: Path) -> None:
    assert _bare_codes(ast.parse(path.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize("name", ["s3p", "rustlog", "s2s", "pravega", "durable"])
def test_every_package_defines_its_error_codes_beside_its_events(name: str) -> None:
    package = importlib.import_module(f"s3p_codec.{name}")
    assert package.ErrorCode.__module__ == f"s3p_codec.{name}._events"


