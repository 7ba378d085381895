"""Every public name of every package has a docstring, so the API reference is complete.

What counts as public (the same definition the API reference uses: ``docs/_ext/apiref.py``):

- a *public module* is ``s3p_codec`` or any module below it none of whose dotted parts (after
  ``s3p_codec``) starts with ``_``; ``s3p_codec._core`` is private, but the names it gives to
  ``s3p_codec.__all__`` are checked there;
- the *public names* of a public module are its ``__all__`` when it has one, otherwise every
  name not starting with ``_`` that the module defines itself (classes and functions whose
  ``__module__`` is the module, and top-level assignments in its source);
- of each public class of ours, its *public members*: methods, class and static methods and
  properties defined in the class's own body whose names do not start with ``_`` (enum members
  and attrs fields are described by their class).

What must be documented:

- each public module has a module docstring;
- each public class or function has a docstring of its own (not one inherited from a base);
- each public member has a docstring of its own;
- each public name that is data (a constant, a type alias, a table) has an attribute docstring
  (a string literal right after the assignment, or ``#:`` comments before it) in the module that
  defines it, as Sphinx's autodoc finds it;
- a public function or member whose own body raises a named exception (``raise Name(...)``,
  not a bare re-raise) mentions that exception's name in its docstring, so a reader learns what
  it raises without reading the code. Not counted: a name the same body also catches (raised
  and handled inside), and ``AssertionError`` (an "unreachable" marker). Exceptions raised by
  the functions it calls are not traced; their own docstrings say so.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("sphinx", reason="the docs extra is not installed")
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from apiref import public_modules, public_names  # noqa: E402 - lives beside the docs
from sphinx.pycode import ModuleAnalyzer  # noqa: E402

MODULES = public_modules("s3p_codec")


def _own_doc(value: object) -> str | None:
    # A class's own docstring only: inspect.getdoc would inherit a base class's.
    doc = vars(value).get("__doc__") if inspect.isclass(value) else getattr(value, "__doc__", None)
    return doc.strip() if isinstance(doc, str) and doc.strip() else None


def _defining_module(module_name: str, name: str, depth: int = 0) -> str:
    """The module whose source assigns ``name``, following ``from X import name`` chains."""
    module = importlib.import_module(module_name)
    if depth > 10:
        return module_name
    tree = ast.parse(inspect.getsource(module))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _defining_module(node.module, alias.name, depth + 1)
    return module_name


def _members(cls: type) -> Iterator[tuple[str, Callable[..., Any] | property]]:
    for name, raw in vars(cls).items():
        if name.startswith("_") or isinstance(raw, enum.Enum):
            continue
        if isinstance(raw, staticmethod | classmethod):
            yield name, raw.__func__
        elif isinstance(raw, property) or inspect.isfunction(raw):
            yield name, raw


def _is_ours(value: object) -> bool:
    return str(getattr(value, "__module__", "")).startswith("s3p_codec")


def _names_raised(function: Callable[..., Any]) -> set[str]:
    """Exception names in ``raise Name(...)``/``raise Name`` of the function's own body."""
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return set()
    tree = ast.parse(source)
    definition = tree.body[0]
    raised: set[str] = set()
    caught: set[str] = {"AssertionError"}  # an "unreachable" marker, not part of the API
    pending = list(ast.iter_child_nodes(definition))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue  # a nested definition raises on its own account
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            types = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            caught.update(t.id for t in types if isinstance(t, ast.Name))
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, ast.Name) and target.id[:1].isupper():
                raised.add(target.id)
            elif isinstance(target, ast.Attribute) and target.attr[:1].isupper():
                raised.add(target.attr)
        pending.extend(ast.iter_child_nodes(node))
    return raised - caught


def _problems() -> list[str]:
    problems: list[str] = []
    seen: set[int] = set()
    attr_docs: dict[str, dict[tuple[str, str], list[str]]] = {}

    def check_callable(label: str, value: Callable[..., Any] | property) -> None:
        function = value.fget if isinstance(value, property) else value
        doc = _own_doc(function)
        if doc is None:
            problems.append(f"{label}: no docstring")
            return
        missing = sorted(n for n in _names_raised(function) if n not in doc)
        if missing:
            problems.append(f"{label}: raises {', '.join(missing)} but its docstring does not say")

    for module_name in MODULES:
        module = importlib.import_module(module_name)
        if _own_doc(module) is None:
            problems.append(f"{module_name}: no module docstring")
        for name in public_names(module):
            value = getattr(module, name)
            label = f"{module_name}.{name}"
            if inspect.ismodule(value):
                continue
            if inspect.isclass(value) or inspect.isfunction(value):
                if id(value) in seen:
                    continue  # re-exported: checked where first met
                seen.add(id(value))
                if inspect.isfunction(value):
                    check_callable(label, value)
                elif _own_doc(value) is None:
                    problems.append(f"{label}: no docstring")
                if inspect.isclass(value) and _is_ours(value):
                    for member_name, member in _members(value):
                        check_callable(f"{label}.{member_name}", member)
                continue
            where = _defining_module(module_name, name)
            if where not in attr_docs:
                attr_docs[where] = ModuleAnalyzer.for_module(where).find_attr_docs()
            if ("", name) not in attr_docs[where]:
                problems.append(f"{label}: no attribute docstring in {where}")
    return sorted(set(problems))


def test_every_public_name_has_a_docstring_that_names_what_it_raises() -> None:
    problems = _problems()
    assert not problems, "undocumented public names:\n" + "\n".join(problems)


def test_the_check_sees_public_modules_from_every_layer() -> None:
    for expected in ("s3p_codec", "s3p_codec.s3p", "s3p_codec.io.sync", "s3p_codec.cli",
                     "s3p_codec.testing.s3p.for_clients"):
        assert expected in MODULES
    assert not any(part.startswith("_") for name in MODULES for part in name.split(".")[1:])


def test_the_checker_flags_a_missing_docstring_and_an_unnamed_raise() -> None:
    # Guard against a check that can never fail: run it on names built to break each rule.
    def undocumented() -> None:
        pass

    def raises_quietly() -> None:
        """Does something."""
        raise KeyError("x")

    def raises_openly() -> None:
        """Does something; raises KeyError when it cannot."""
        raise KeyError("x")

    def raises_and_handles() -> None:
        """Does something."""
        try:
            raise KeyError("x")
        except KeyError:
            pass

    assert _own_doc(undocumented) is None
    assert _names_raised(raises_quietly) == {"KeyError"}
    assert _names_raised(raises_and_handles) == set()
    assert "KeyError" in (_own_doc(raises_openly) or "")
    fake = ModuleType("fake")
    fake.__all__ = ["undocumented"]  # type: ignore[attr-defined]
    fake.undocumented = undocumented  # type: ignore[attr-defined]
    assert public_names(fake) == ["undocumented"]
