"""The package as users get it: a wheel and an sdist that install and work with no extras.

Builds both with ``python -m build --no-isolation`` (hatchling, ``build`` and ``twine`` come
with the ``dev`` extra; no isolated build environment, so no download), which builds the wheel
*from the sdist*: a file the wheel needs but the sdist lacks fails here. Checks both with
``twine check``, checks the sdist carries nothing of the machine it was built on, installs the
wheel into a fresh virtual environment with only its core dependencies, and checks there that
``s3p_codec`` and every protocol package import and work, that ``s3p-codec --help`` runs, and
that a feature whose extra is missing says so in one line naming the extra.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

from s3p_codec._version import __version__

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

# Runs inside the fresh environment: each protocol codec encodes one request.
SMOKE = textwrap.dedent(
    """
    import uuid
    import s3p_codec
    from s3p_codec import Role, durable, pravega, rustlog, s2s, s3p
    from s3p_codec.io.sync import connect  # noqa: F401 - the blocking adapter needs no extra
    from s3p_codec.io.asyncio import serve  # noqa: F401

    assert s3p.Connection(Role.CLIENT).send(s3p.Create(b"x")).startswith(b"*")
    assert rustlog.Connection(Role.CLIENT).send(rustlog.Ping())[4:].startswith(b"{")
    app = s2s.Connection(Role.CLIENT, s2s.Session.APPEND)
    assert app.send(s2s.AppendInput((s2s.AppendRecord(b"r"),)))
    assert pravega.Connection(Role.CLIENT).send(pravega.Hello())
    assert durable.Connection(Role.CLIENT, host="h").send(durable.Head("/v1/stream/x"))
    print("ok", s3p_codec.__file__)
    """
)
EXTRAS = {
    "import s3p_codec.capture": "capture",
    "import s3p_codec.io.trio": "trio",
    "from s3p_codec.spark import decode": "spark",
    "from s3p_codec.testing import s3p": "testing",
}


def _run(*command: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # No PYTHONPATH: the fresh environment must import the installed wheel, not this checkout.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(c) for c in command],
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
        env=env,
    )


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    assert "Building wheel from sdist" in built.stdout + built.stderr  # sdist alone suffices
    return out


def _one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_build_makes_a_wheel_and_an_sdist_that_twine_accepts(dist: Path) -> None:
    wheel, sdist = _one(dist, "*.whl"), _one(dist, "*.tar.gz")
    checked = _run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_both_carry_the_version(dist: Path) -> None:
    assert _one(dist, "*.whl").name.startswith(f"s3p_codec-{__version__}-")
    assert _one(dist, "*.tar.gz").name == f"s3p_codec-{__version__}.tar.gz"


def test_the_wheel_holds_the_package_its_data_and_the_license(dist: Path) -> None:
    names = zipfile.ZipFile(_one(dist, "*.whl")).namelist()
    for required in ("s3p_codec/py.typed", "s3p_codec/spark/log4j2.properties",
                     "s3p_codec/s3p/_connection.py", "s3p_codec/_extras/__init__.py"):
        assert required in names, required
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "examples/", "docs/")) for n in names)
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(_one(dist, "*.whl")).read(metadata).decode()
    assert "License-Expression: Apache-2.0" in text
    assert "Provides-Extra: capture" in text


def test_the_sdist_holds_what_the_test_suite_needs(dist: Path) -> None:
    with tarfile.open(_one(dist, "*.tar.gz")) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for required in ("pyproject.toml", "LICENSE", "README.md", "CHANGELOG.md", ".ci/test",
                     "s3p_codec/py.typed", "tests/test_architecture.py", "examples/s3p_server.py",
                     "examples/captures/s3p.pcap", "fuzz/run.py", "docs/conf.py"):
        assert required in names, required
    assert not any("node_modules" in n or n.startswith("docs/_build") for n in names)


# Made by running or building things here, never part of the source.
LOCAL = (".venv/", "__pycache__/", ".pyc", ".hypothesis/", ".pytest_cache/", ".mypy_cache/",
         ".ruff_cache/", ".egg-info/", ".ipynb_checkpoints/", "dist/", ".coverage")


def _git_files() -> set[str] | None:
    listed = _run("git", "-C", ROOT, "ls-files", "-z")
    return set(listed.stdout.split("\0")) - {""} if listed.returncode == 0 else None


def test_the_sdist_holds_nothing_of_this_machine(dist: Path) -> None:
    """Only source: no caches or environments, no untracked file, no path of the build host."""
    host_paths = {str(ROOT).encode(), str(Path.home()).encode()} - {b"/", b""}
    leaks: list[str] = []
    with tarfile.open(_one(dist, "*.tar.gz")) as archive:
        members = [m for m in archive.getmembers() if m.isfile() and "/" in m.name]
        names = {m.name.split("/", 1)[1] for m in members}
        for member in members:
            data = archive.extractfile(member)
            if data is not None and any(p in data.read() for p in host_paths):
                leaks.append(member.name)
    assert not [n for n in names if any(part in f"/{n}/" or n.endswith(part) for part in LOCAL)]
    assert leaks == []
    tracked = _git_files()
    if tracked is not None:  # a git checkout: the sdist is what git holds (PKG-INFO added)
        assert sorted(names - tracked - {"PKG-INFO"}) == []


@pytest.fixture(scope="module")
def fresh_python(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment holding the wheel and its core dependencies only."""
    home = tmp_path_factory.mktemp("fresh")
    venv.EnvBuilder(with_pip=False).create(home)
    python = home / "bin" / "python"
    installed = _run(sys.executable, "-m", "pip", "--python", python, "install", "-q",
                     _one(dist, "*.whl"))  # fmt: skip
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]
    return python


def test_the_wheel_works_with_no_extras(fresh_python: Path, tmp_path: Path) -> None:
    names = "print(sorted(d.metadata['Name'].lower() for d in m.distributions()))"
    listed = _run(fresh_python, "-c", f"import importlib.metadata as m; {names}")
    for extra_only in ("dpkt", "pandas", "pyspark", "trio", "hypothesis", "zstandard"):
        assert f"'{extra_only}'" not in listed.stdout, listed.stdout
    smoke = _run(fresh_python, "-c", SMOKE, cwd=tmp_path)  # cwd: not this checkout
    assert smoke.returncode == 0, smoke.stderr[-3000:]
    assert smoke.stdout.startswith("ok ")
    assert Path(smoke.stdout.split(" ", 1)[1].strip()).is_relative_to(fresh_python.parent.parent)


def test_the_command_line_runs_with_no_extras(fresh_python: Path, tmp_path: Path) -> None:
    command = fresh_python.parent / "s3p-codec"
    helped = _run(command, "--help", cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr[-3000:]
    assert helped.stdout.startswith("usage: s3p-codec")
    version = _run(command, "--version", cwd=tmp_path)
    assert version.stdout.strip() == f"s3p-codec {__version__}", version.stdout + version.stderr


@pytest.mark.parametrize(("statement", "extra"), EXTRAS.items())
def test_a_missing_extra_is_named_in_one_line(
    fresh_python: Path, tmp_path: Path, statement: str, extra: str
) -> None:
    run = _run(fresh_python, "-c", statement, cwd=tmp_path)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("s3p_codec._extras.MissingExtra: ")
    assert f"the '{extra}' extra" in last
    assert f"pip install 's3p-codec[{extra}]'" in last


@pytest.mark.parametrize(
    ("arguments", "extra"),
    [(["decode", "x.pcap"], "capture"), (["spark", "stats", "x.pcap"], "spark"),
     (["fuzz", "s3p", "127.0.0.1:9"], "testing")],
)  # fmt: skip
def test_the_command_line_names_a_missing_extra_alone(
    fresh_python: Path, tmp_path: Path, arguments: list[str], extra: str
) -> None:
    run = _run(fresh_python.parent / "s3p-codec", *arguments, cwd=tmp_path)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert f"pip install 's3p-codec[{extra}]'" in lines[0]
