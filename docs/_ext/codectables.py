"""Tables generated from the code, so protocol pages cannot drift from it.

- ``.. limits-table:: s3p_codec.s3p.Limits``: every field with its default and its docstring;
- ``.. error-codes:: s3p_codec.s3p.ErrorCode``: every member with its value;
- ``.. event-table:: s3p_codec.s3p``: the attrs classes a package exports, with their summaries;
- ``.. module-map:: s3p_codec.s3p``: the package's modules, with their summaries.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

import attrs
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective


def _resolve(dotted: str) -> Any:
    module_name, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module_name), name)


def _summary(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.split("\n\n")[0].replace("\n", " ").strip()


def _attr_docs(cls: type) -> dict[str, str]:
    docs = ModuleAnalyzer.for_module(cls.__module__).find_attr_docs()
    return {
        name: " ".join(line.strip() for line in lines if line.strip())
        for (scope, name), lines in docs.items()
        if scope == cls.__qualname__
    }


def _cell(text: str) -> str:
    return text.replace("\n", " ") or "\\-"


def _table(header: list[str], rows: list[list[str]], widths: str) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {_cell(row[0])}")
        lines.extend(f"     - {_cell(cell)}" for cell in row[1:])
    return [*lines, ""]


class _Generated(SphinxDirective):
    required_arguments = 1

    def lines(self) -> list[str]:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        node = nodes.container()
        self.state.nested_parse(StringList(self.lines(), source=self.name), 0, node)
        return node.children


class LimitsTable(_Generated):
    """Every field of a ``Limits`` class: name, default, what it bounds."""

    def lines(self) -> list[str]:
        cls = _resolve(self.arguments[0])
        docs = _attr_docs(cls)
        rows = []
        for field in attrs.fields(cls):
            default = field.default
            shown = "(computed)" if isinstance(default, attrs.Factory) else f"``{default!r}``"
            rows.append([f"``{field.name}``", shown, docs.get(field.name, "")])
        return _table(["field", "default", "meaning"], rows, "25 20 55")


class ErrorCodes(_Generated):
    """Every member of an ``ErrorCode`` enum and its wire value."""

    def lines(self) -> list[str]:
        cls = _resolve(self.arguments[0])
        docs = _attr_docs(cls)
        rows = [[f"``{m.name}``", f"``{m.value!r}``", docs.get(m.name, "")] for m in cls]
        return _table(["member", "value", "meaning"], rows, "30 25 45")


class EventTable(_Generated):
    """The attrs classes a package exports (its events and value types), with summaries."""

    def lines(self) -> list[str]:
        package = importlib.import_module(self.arguments[0])
        rows = []
        for name in package.__all__:
            value = getattr(package, name)
            if inspect.isclass(value) and attrs.has(value) and name != "Limits":
                rows.append([f":class:`~{package.__name__}.{name}`", _summary(value)])
        return _table(["class", "what it is"], rows, "30 70")


class ModuleMap(_Generated):
    """Each module of a package, linked, with the first line of its docstring."""

    def lines(self) -> list[str]:
        package = importlib.import_module(self.arguments[0])
        rows = []
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            name = f"{package.__name__}.{info.name}"
            shown = f":mod:`{name}`" if not info.name.startswith("_") else f"``{name}``"
            rows.append([shown, _summary(module).split(". ")[0]])
        return _table(["module", "its job"], rows, "35 65")


def setup(app: Sphinx) -> dict[str, object]:
    """Register the four table directives."""
    app.add_directive("limits-table", LimitsTable)
    app.add_directive("error-codes", ErrorCodes)
    app.add_directive("event-table", EventTable)
    app.add_directive("module-map", ModuleMap)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
