"""The documentation builds with Sphinx with no warning (``-W``: warnings are errors).

The same command as a local build (``python -m sphinx -W -b html docs docs/_build/html``), into a
scratch directory. Intersphinx reads the local inventories under ``docs/_inventories``, so the
build needs no network.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("sphinx", reason="the docs extra is not installed")


@pytest.mark.slow
def test_the_docs_build_without_a_warning(tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(tmp_path / "html")],
        check=False, capture_output=True, text=True, timeout=300, cwd=ROOT, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-5000:]
    html = tmp_path / "html"
    built = {page.relative_to(html).as_posix() for page in html.rglob("*.html")}
    for page in ("index.html", "contract.html", "cli.html", "changelog.html", "api/s3p.html",
                 "protocols/durable.html", "tutorials/spark.html"):
        assert page in built, page
    # Issue 31.7: attrs defaults as values, and attribute docstrings not read as "type: text".
    api = "".join(page.read_text() for page in (html / "api").glob("*.html"))
    assert "attr_dict[" not in api
    assert '<dt class="field-odd">Type<' not in api
    text = re.sub(r"<[^>]+>", "", (html / "api" / "s3p.html").read_text())
    assert "Append(stream, records, timestamp=None, id=None)" in text
    assert "Requests awaiting a reply (client: sent; server: received" in text
    cli = re.sub(r"<[^>]+>", "", (html / "cli.html").read_text())
    assert "--decode-as" in cli  # generated from the parsers
    assert "usage: s3p-codec spark stats" in cli
