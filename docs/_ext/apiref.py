"""The API reference, generated from the packages' public names (the ``api-package`` directive).

``.. api-package:: s3p_codec.s3p`` documents the package's ``__all__`` under the package's own
name, then every public submodule with the public names the package does not re-export, so each
object is described once. ``public_modules`` and ``public_names`` are the single definition of
"public" that the reference and ``tests/docs/test_docstrings.py`` share.
"""

from __future__ import annotations

import ast
import contextlib
import enum
import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import attrs
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles


def is_public_module(name: str) -> bool:
    """True for a dotted module name none of whose parts below the top starts with ``_``."""
    return not any(part.startswith("_") for part in name.split(".")[1:])


def public_modules(root: str = "s3p_codec") -> list[str]:
    """Every public module and package under ``root``, ``root`` first, in import order."""
    package = importlib.import_module(root)
    found = [root]
    for info in pkgutil.walk_packages(getattr(package, "__path__", []), f"{root}."):
        if is_public_module(info.name):
            found.append(info.name)
    return found


def _top_level_assignments(module: ModuleType) -> list[str]:
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return []
    names: list[str] = []
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names.extend(t.id for t in targets if isinstance(t, ast.Name))
    return names


def public_names(module: ModuleType) -> list[str]:
    """The public names of ``module``.

    Its ``__all__`` when it has one. Otherwise every name not starting with ``_`` that the
    module itself defines: classes and functions whose ``__module__`` is this module, and
    top-level assignments in its source (not what it imports).
    """
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return list(declared)
    names = [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == module.__name__
    ]
    for name in _top_level_assignments(module):
        if not name.startswith("_") and name not in names:
            names.append(name)
    return names


def _documentable(module: ModuleType, names: list[str]) -> list[str]:
    return [n for n in names if not inspect.ismodule(getattr(module, n, None))]


def _automodule(name: str, members: list[str], *, with_docstring: bool = True) -> list[str]:
    lines = [f".. automodule:: {name}"]
    if members:
        lines.append(f"   :members: {', '.join(members)}")
    if not with_docstring:
        lines.append("   :no-index:")
    return [*lines, ""]


def package_sections(root: str) -> list[tuple[str, list[str]]]:
    """What ``.. api-package:: root`` documents: ``(module, member names)`` in page order.

    The package's exported names first, then each public non-package child module with the
    public names the package does not re-export. The directive renders exactly this list, and
    ``tests/test_public_api.py`` reads it to check that every public name is documented.
    """
    package = importlib.import_module(root)
    for name in public_names(package):  # a lazy package that keeps what it loaded shows it
        with contextlib.suppress(AttributeError, ImportError):
            getattr(package, name)
    # Names a package loads lazily (module ``__getattr__``) and does not keep are not in its
    # namespace: autodoc cannot see them there, so they are documented where they are defined.
    exported = {n for n in public_names(package) if n in vars(package)}
    sections = [(root, [n for n in _documentable(package, public_names(package))
                        if n in exported])]
    children = [
        name
        for name in public_modules(root)
        if name.count(".") == root.count(".") + 1
        and not hasattr(importlib.import_module(name), "__path__")
    ]
    for child in children:
        module = importlib.import_module(child)
        rest = [n for n in _documentable(module, public_names(module)) if n not in exported]
        sections.append((child, rest))
    return sections


class ApiPackage(SphinxDirective):
    """``.. api-package:: dotted.name``: the package's public face, then its public modules."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        root = self.arguments[0]
        (_, members), *children = package_sections(root)
        lines = _automodule(root, members)
        for child, rest in children:
            title = f"``{child}``"
            lines += [title, "-" * len(title), ""]
            lines += _automodule(child, rest)
        node = nodes.section()
        content = StringList(lines, source=f"<api-package {root}>")
        nested_parse_with_titles(self.state, content, node)
        return node.children


_ATTR_DEFAULT = re.compile(r"attr_dict\['(\w+)'\]\.default")


def _default_text(value: object) -> str:
    """A default as a reader writes it: ``Compression.NONE``, not ``<Compression.NONE: 0>``."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    return repr(value)


def real_attrs_defaults(  # noqa: PLR0917 - the autodoc-process-signature event's arguments
    app: Sphinx, what: str, name: str, obj: object, options: object, signature: str | None,
    return_annotation: str | None,
) -> tuple[str | None, str | None] | None:
    """The defaults of an attrs class's ``__init__`` as values.

    ``autodoc_preserve_defaults`` copies default expressions from the source, and the source of
    an attrs-generated ``__init__`` says ``attr_dict['timestamp'].default``.
    """
    if not signature or "attr_dict[" not in signature:
        return None
    cls = obj if isinstance(obj, type) else None
    if cls is None or not attrs.has(cls):
        return None
    fields = {field.name: field for field in attrs.fields(cls)}

    def value(match: re.Match[str]) -> str:
        field = fields.get(match.group(1)) or fields.get(match.group(1).lstrip("_"))
        return match.group(0) if field is None else _default_text(field.default)

    return _ATTR_DEFAULT.sub(value, signature), return_annotation


def _sentence_attribute_docstrings() -> None:
    """Read attribute and property docstrings as sentences.

    Napoleon reads the first line of an attribute's docstring as ``type: description`` when it
    has a colon, so "Requests awaiting a reply (client: sent; ...)" rendered as
    "Type: Requests awaiting a reply (client". This package never writes types there (they are
    the annotations), so the whole docstring is the description.
    """
    from sphinx.ext.napoleon.docstring import GoogleDocstring  # noqa: PLC0415

    def parse(self: GoogleDocstring) -> list[str]:
        return list(self._consume_to_end())

    GoogleDocstring._parse_attribute_docstring = parse  # type: ignore[method-assign]


def setup(app: Sphinx) -> dict[str, object]:
    """Register the ``api-package`` directive, real attrs defaults in signatures, and
    attribute docstrings read as sentences."""
    app.add_directive("api-package", ApiPackage)
    app.connect("autodoc-process-signature", real_attrs_defaults)
    _sentence_attribute_docstrings()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
