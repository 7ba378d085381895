"""The CLI reference, generated from ``s3p_codec.cli.build_parser()`` (``cli-reference``).

Every sub-command's ``--help`` text is printed by argparse itself at build time, so the page
cannot drift from the parsers.
"""

from __future__ import annotations

import argparse
import os

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

from s3p_codec.cli import build_parser

UNDERLINES = "-~^\""


def _sub_commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse exposes sub-parsers only through this
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _walk(parser: argparse.ArgumentParser, path: list[str], depth: int) -> list[str]:
    title = f"``{' '.join(path)}``"
    lines = [title, UNDERLINES[min(depth, len(UNDERLINES) - 1)] * len(title), ""]
    lines += [".. code-block:: text", ""]
    lines += ["   " + line for line in parser.format_help().rstrip().splitlines()]
    lines.append("")
    for name, child in _sub_commands(parser).items():
        lines += _walk(child, [*path, name], depth + 1)
    return lines


class CliReference(SphinxDirective):
    """``.. cli-reference::``: one section per command, with argparse's own help text."""

    def run(self) -> list[nodes.Node]:
        os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal width; fix it
        parser = build_parser()
        parser.prog = "s3p-codec"
        lines = _walk(parser, ["s3p-codec"], 0)
        node = nodes.section()
        nested_parse_with_titles(self.state, StringList(lines, source="<cli-reference>"), node)
        return node.children


def setup(app: Sphinx) -> dict[str, object]:
    """Register the ``cli-reference`` directive."""
    app.add_directive("cli-reference", CliReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
