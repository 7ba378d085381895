"""``pip install '.[docs]'`` pulls everything the documentation imports (issue 31, item 6).

The API reference imports every public module; each optional package that import brings in
must come with the ``docs`` extra (directly or through the extras it names), or the build fails
for a user who installed only that extra.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[2]

_IMPORTED = """
import importlib, json, sys
sys.path.insert(0, "docs/_ext")
from apiref import public_modules
from importlib.metadata import packages_distributions
before = {m.split(".")[0] for m in sys.modules}
for name in public_modules():
    importlib.import_module(name)
dists = packages_distributions()
tops = {m.split(".")[0] for m in sys.modules} - before
print(json.dumps(sorted({d.lower() for t in tops for d in dists.get(t, [])})))
"""


def _name(requirement: str) -> str:
    return re.split(r"[<>=\[ ;]", requirement, maxsplit=1)[0].lower()


def _closure(extras: dict[str, list[str]], extra: str) -> set[str]:
    names: set[str] = set()
    for requirement in extras[extra]:
        inner = re.fullmatch(r"s3p-codec\[(.+)\]", requirement)
        if inner:
            for name in inner.group(1).split(","):
                names |= _closure(extras, name.strip())
        else:
            names.add(_name(requirement))
    return names


def test_the_docs_extra_brings_what_the_api_reference_imports() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    optional = {_name(r) for e, reqs in extras.items() if e != "dev" for r in reqs}
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED], cwd=ROOT, capture_output=True, text=True,
        timeout=300, check=True,
    )  # fmt: skip
    imported = set(json.loads(done.stdout.splitlines()[-1]))
    needed = {d for d in imported if d in optional}
    assert {"trio", "pyspark", "dpkt", "hypothesis"} & needed  # the scan sees the extras
    assert needed <= _closure(extras, "docs")
