"""Sphinx configuration for the s3p_codec documentation.

Build it with ``python -m sphinx -W -b html docs docs/_build/html`` from the repository root.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the package and examples/ from this checkout
sys.path.insert(0, str(HERE / "_ext"))

from s3p_codec import __version__  # noqa: E402

project = "s3p_codec"
author = "the s3p_codec authors"
copyright = "the s3p_codec authors"
release = __version__
version = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "myst_parser",
    "apiref",
    "cliref",
    "codectables",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_inventories", "samples"]
root_doc = "index"
default_role = "py:obj"  # `name` in a docstring links to the object when it can
nitpicky = False

html_theme = "furo"
html_title = f"s3p_codec {release}"

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
autodoc_default_options = {"show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# Inventories are local files (see _inventories/README.txt): the build machines reach no
# documentation site, and a remote fetch would fail the -W build. The links point at the real
# public pages.
intersphinx_mapping = {
    "python": ("https://docs.python.org/3", str(HERE / "_inventories" / "python.inv")),
    "attrs": ("https://www.attrs.org/en/stable", str(HERE / "_inventories" / "attrs.inv")),
    "pyspark": (
        "https://spark.apache.org/docs/latest/api/python",
        str(HERE / "_inventories" / "pyspark.inv"),
    ),
}

myst_heading_anchors = 3
# "ref.python": a short name in an annotation (``Connection``, ``Limits``) matches one class in
# every protocol package; Sphinx links the first and warns. The full names are in the text.
suppress_warnings = ["myst.header", "ref.python"]
