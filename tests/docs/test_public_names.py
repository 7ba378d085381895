"""Every public name is in the API reference, and no private type shows in a public signature.

h11's rule, held by a test: the names a package's ``__init__`` exports (``__all__``) are its
public face, so each must appear in the API reference (``docs/api/*.rst``, rendered by the
``api-package`` directive of ``docs/_ext/apiref.py`` or listed by ``automodule :members:``); and
a user reading a public signature must never meet a type they cannot import by a public name.

A *private type* is a class whose name starts with ``_``, or a class of ours defined in a
private module (any dotted part below ``s3p_codec`` starting with ``_``) that no public module
exports: ``Role`` lives in ``s3p_codec._core.types`` but ``s3p_codec`` exports it, so it is
public. A *public signature* is the annotations of a public function, of the ``__init__``, the
public methods and properties of a public class, and of its fields (attrs fields included).
Annotations are resolved with ``typing.get_type_hints`` in the defining module's namespace plus
its ``if TYPE_CHECKING:`` imports; an annotation that still cannot be evaluated is read as text,
each dotted name looked up in that namespace, so nothing is skipped unseen.
"""

from __future__ import annotations

import ast
import builtins
import collections.abc
import importlib
import inspect
import re
import sys
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("sphinx", reason="the docs extra is not installed")
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from apiref import (  # noqa: E402 - lives beside the docs
    is_public_module,
    package_sections,
    public_modules,
    public_names,
)

MODULES = public_modules("s3p_codec")
# ``type X = ...`` aliases (Python 3.12+); on 3.11 no value is one.
ALIAS_TYPE: tuple[type, ...] = tuple(filter(None, [getattr(typing, "TypeAliasType", None)]))
PACKAGES = [name for name in MODULES if hasattr(importlib.import_module(name), "__path__")]

# Known private types in public signatures, by type, each with the reason it is not fixed yet.
# A known type that no longer occurs fails the test, so the list only shrinks.
KNOWN: dict[str, str] = {}


def _documented() -> dict[str, set[str]]:
    """Module -> names the API reference documents there, read from ``docs/api/*.rst``."""
    found: dict[str, set[str]] = {}
    for page in sorted((ROOT / "docs" / "api").glob("*.rst")):
        text = page.read_text()
        for root in re.findall(r"^\.\. api-package:: (\S+)$", text, re.MULTILINE):
            for module, members in package_sections(root):
                found.setdefault(module, set()).update(members)
        listed = r"^\.\. automodule:: (\S+)\n(?:   :\S+:.*\n)*?   :members: (.+)$"
        for module, members in re.findall(listed, text, re.MULTILINE):
            found.setdefault(module, set()).update(m.strip() for m in members.split(","))
    return found


def _undocumented() -> list[str]:
    documented = _documented()
    where: dict[int, list[str]] = {}
    for module, names in documented.items():
        for name in names:
            where.setdefault(id(getattr(importlib.import_module(module), name)), []).append(name)
    missing = []
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        for name in getattr(package, "__all__", []):
            value = getattr(package, name)
            if inspect.ismodule(value) or name == "__version__":
                continue  # a subpackage has its own page; the version is stated in the index
            if name in documented.get(package_name, set()):
                continue
            # A lazily loaded name is documented in the module that defines it: the same object.
            if name not in where.get(id(value), []):
                missing.append(f"{package_name}.{name}")
    return missing


def test_every_exported_name_is_in_the_api_reference() -> None:
    assert _undocumented() == []


def test_the_reference_check_sees_lazy_names_and_listed_members() -> None:
    documented = _documented()
    assert "Append" in documented["s3p_codec.s3p"]
    assert "Connection" in documented["s3p_codec.contract"]
    assert {"s3p_codec", "s3p_codec.capture", "s3p_codec.testing.s3p"} <= set(PACKAGES)


# --- private types in public signatures -------------------------------------------------------


def _exported_ids() -> set[int]:
    """Every object a public module exports by a public name."""
    ids: set[int] = set()
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in public_names(module):
            value = getattr(module, name, None)
            if inspect.isclass(value):
                ids.add(id(value))
    return ids


def _type_checking_names(module: ModuleType) -> dict[str, Any]:
    """The names a module imports under ``if TYPE_CHECKING:``, imported now."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return {}
    namespace: dict[str, Any] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)):
            continue
        for statement in node.body:
            if isinstance(statement, ast.Import | ast.ImportFrom):
                try:
                    exec(compile(ast.Module([statement], []), module.__name__, "exec"),
                         vars(module).copy(), namespace)  # fmt: skip
                except ImportError:
                    continue  # an optional extra: the text fallback still sees its names
    return namespace


def _namespace(module_name: str) -> dict[str, Any]:
    module = importlib.import_module(module_name)
    return {**vars(module), **_type_checking_names(module)}


def _classes_in(hint: object) -> Iterator[type]:
    """Every class a resolved annotation names, through unions, generics and aliases."""
    if isinstance(hint, typing.TypeVar):
        return
    if isinstance(hint, ALIAS_TYPE):
        yield from _classes_in(hint.__value__)
        return
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return
    if isinstance(hint, type) and origin is None:
        yield hint
    if origin is not None and isinstance(origin, type):
        yield origin
    for argument in typing.get_args(hint):
        if isinstance(argument, list):  # Callable[[A, B], R]
            for item in argument:
                yield from _classes_in(item)
        else:
            yield from _classes_in(argument)


def _classes_in_text(text: str, namespace: dict[str, Any]) -> Iterator[type | str]:
    """The classes a string annotation names, looked up name by name (the fallback)."""
    for dotted in re.findall(r"[A-Za-z_][\w.]*", text):
        head, *rest = dotted.split(".")
        if head in namespace:
            value: Any = namespace[head]
        elif hasattr(builtins, head):
            value = getattr(builtins, head)
        else:
            yield dotted  # unresolvable: judged by its name alone
            continue
        for part in rest:
            value = getattr(value, part, None)
        if isinstance(value, type):
            yield value
        elif isinstance(value, ALIAS_TYPE):
            yield from _classes_in(value)


def _annotated(value: object) -> Iterator[tuple[str, Callable[..., Any] | type]]:
    """``(qualified name, object)`` for each public signature under one public name."""
    if inspect.isfunction(value):
        yield value.__qualname__, value
    if not inspect.isclass(value) or not str(value.__module__).startswith("s3p_codec"):
        return
    yield value.__qualname__, value  # its fields (attrs fields and plain annotations)
    for name, raw in vars(value).items():
        if name.startswith("_") and name != "__init__":
            continue
        function = raw.__func__ if isinstance(raw, staticmethod | classmethod) else raw
        function = function.fget if isinstance(function, property) else function
        if inspect.isfunction(function):
            yield f"{value.__qualname__}.{name}", function


def _hints(target: Callable[..., Any] | type, namespace: dict[str, Any]) -> list[type | str]:
    try:
        hints = typing.get_type_hints(target, globalns=namespace, localns=namespace)
    except (NameError, TypeError, AttributeError):
        raw = (vars(target).get("__annotations__", {}) if isinstance(target, type)
               else getattr(target, "__annotations__", {}))  # fmt: skip
        found: list[type | str] = []
        for annotation in raw.values():
            if isinstance(annotation, str):
                found.extend(_classes_in_text(annotation, namespace))
            else:
                found.extend(_classes_in(annotation))
        return found
    if isinstance(target, type):  # the class's own fields, not those inherited from a base
        own = vars(target).get("__annotations__", {})
        hints = {k: v for k, v in hints.items() if k in own}
    return [cls for hint in hints.values() for cls in _classes_in(hint)]


def _is_private(cls: type | str, exported: set[int]) -> bool:
    if isinstance(cls, str):
        return cls.rsplit(".", 1)[-1].startswith("_")
    if cls.__name__.startswith("_"):
        return cls not in (type(None), type(Ellipsis), type(NotImplemented))
    module = str(cls.__module__)
    if module.startswith("s3p_codec") and not is_public_module(module):
        return id(cls) not in exported
    return False


def _private_types() -> set[str]:
    exported = _exported_ids()
    namespaces: dict[str, dict[str, Any]] = {}
    found: set[str] = set()
    seen: set[int] = set()
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in public_names(module):
            value = getattr(module, name, None)
            for where, target in _annotated(value):
                if id(target) in seen:
                    continue
                seen.add(id(target))
                home = str(getattr(target, "__module__", module_name))
                if home not in namespaces:
                    namespaces[home] = _namespace(home) if home in sys.modules else {}
                if module_name not in namespaces:
                    namespaces[module_name] = _namespace(module_name)
                namespace = {**namespaces[home], **namespaces[module_name]}
                for cls in _hints(target, namespace):
                    if _is_private(cls, exported):
                        label = cls if isinstance(cls, str) else f"{cls.__module__}.{cls.__name__}"
                        found.add(f"{home}.{where}: {label}")
    return found


def test_no_private_type_appears_in_a_public_signature() -> None:
    found = _private_types()
    assert sorted(f for f in found if f.split(": ")[1] not in KNOWN) == []
    still = {f.split(": ")[1] for f in found}
    assert sorted(set(KNOWN) - still) == [], "fixed: remove these from KNOWN"


def test_the_signature_check_sees_private_types() -> None:
    exported = _exported_ids()

    class _Hidden:
        pass

    assert _is_private(_Hidden, exported)
    assert not _is_private(importlib.import_module("s3p_codec").Role, exported)
    # A class of a private module is public once a public module exports it.
    assert not _is_private(importlib.import_module("s3p_codec._core").ReceiveBuffer, exported)
    assert _is_private(importlib.import_module("s3p_codec._core").FrameSync, exported)
    assert not _is_private(collections.abc.Iterable, exported)
    assert _is_private("_wire._Frame", exported)
