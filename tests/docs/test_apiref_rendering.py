"""The API reference's two rendering fixes, checked without a full build (issue 31, item 7);
``test_sphinx_build.py`` (slow) checks the built HTML for the same faults."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from s3p_codec import pravega, s3p

pytest.importorskip("sphinx", reason="the docs extra is not installed")
sys.path.insert(0, str(Path(__file__).parents[2] / "docs" / "_ext"))

import apiref


def test_attrs_defaults_are_shown_as_values() -> None:
    def render(cls: type, signature: str) -> str | None:
        done = apiref.real_attrs_defaults(None, "class", "", cls, None, signature, None)
        assert done is not None
        return done[0]

    timestamp, id_ = "attr_dict['timestamp'].default", "attr_dict['id'].default"
    assert render(s3p.Append, f"(stream, records, timestamp={timestamp}, id={id_})") == (
        "(stream, records, timestamp=None, id=None)"
    )
    request_id = "attr_dict['request_id'].default"
    assert render(pravega.Append, f"(writer_id, events, request_id={request_id})") == (
        "(writer_id, events, request_id=-1)"
    )


def test_attribute_docstrings_are_sentences_not_type_and_text() -> None:
    from sphinx.ext.napoleon import Config
    from sphinx.ext.napoleon.docstring import GoogleDocstring

    apiref._sentence_attribute_docstrings()
    lines = GoogleDocstring(
        ["Requests awaiting a reply (client: sent; server: received and not yet answered)."],
        Config(),
        what="property",
        name="s3p_codec.s3p.Connection.pending",
    ).lines()
    assert not [line for line in lines if line.startswith(":type:")]
    assert "Requests awaiting a reply (client: sent;" in "\n".join(lines)
