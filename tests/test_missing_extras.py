"""Every missing optional package is a ``MissingExtra`` naming its extra (issue 31, items 9
and 12), and the light ``capture`` extra decodes to a table and JSON lines without pandas or
pyarrow. Each case runs in a child process where the package is hidden (``sys.modules[name] =
None``), so the shared environment is never touched."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
CAPTURE = ROOT / "examples" / "captures" / "s3p.pcap"


def _run(hidden: list[str], code: str) -> subprocess.CompletedProcess[str]:
    hide = "".join(f"sys.modules[{name!r}] = None\n" for name in hidden)
    program = f"import sys\n{hide}" + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


def _raises_missing_extra(hidden: list[str], call: str, extra: str) -> None:
    done = _run(
        hidden,
        f"""
        from s3p_codec._extras import MissingExtra
        try:
            {call}
        except MissingExtra as exc:
            print(exc.extra, exc)
        else:
            print("no error")
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{extra} "), done.stdout
    assert f"pip install 's3p-codec[{extra}]'" in done.stdout


@pytest.mark.parametrize(
    ("hidden", "call", "extra"),
    [
        (
            ["orjson"],
            "from s3p_codec import rustlog, Role; rustlog.Connection(Role.CLIENT, json='orjson')",
            "orjson",
        ),
        (
            ["zstandard"],
            "from s3p_codec import s2s, Role; "
            "s2s.Connection(Role.CLIENT, s2s.Session.APPEND, compression=s2s.Compression.ZSTD)",
            "zstd",
        ),
        (
            ["pandas"],
            "from s3p_codec import capture; capture.rows_to_dataframe([])",
            "parquet",
        ),
        (
            ["pyarrow"],
            "from s3p_codec import capture; capture.write_parquet([], 'never.parquet')",
            "parquet",
        ),
        (
            ["pyarrow"],
            "from s3p_codec import capture; list(capture.decode_files(['s3://b/cap.pcap']))",
            "remote",
        ),
        (
            ["fsspec"],
            "from s3p_codec import capture; list(capture.decode_files(['memory://b/cap.pcap']))",
            "remote",
        ),
        (
            ["cryptography"],
            "from s3p_codec.durable import Jwks, verify_webhook; "
            "verify_webhook('t=1,kid=k,ed25519=AA', b'{}', Jwks(()), 1.0)",
            "webhooks",
        ),
    ],
    ids=["orjson", "zstd", "pandas", "pyarrow", "pyarrow-s3", "fsspec-other", "cryptography"],
)
def test_a_missing_package_raises_missing_extra(hidden: list[str], call: str, extra: str) -> None:
    _raises_missing_extra(hidden, call, extra)


def test_the_light_capture_extra_decodes_without_pandas_or_pyarrow() -> None:
    done = _run(
        ["pandas", "pyarrow", "numpy"],
        f"""
        from s3p_codec.cli import main
        assert main(["decode", {str(CAPTURE)!r}, "-c", "2"]) == 0
        assert main(["decode", {str(CAPTURE)!r}, "--format", "jsonl", "-c", "1"]) == 0
        assert main(["stats", {str(CAPTURE)!r}]) == 0
        """,
    )
    assert done.returncode == 0, done.stderr
    assert "Create" in done.stdout


def test_parquet_output_without_its_extra_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "rows.parquet"
    done = _run(
        ["pyarrow"],
        f"""
        from s3p_codec.cli import main
        sys.exit(main(["decode", {str(CAPTURE)!r}, "--out", {str(out)!r}]))
        """,
    )
    assert done.returncode == 2
    assert done.stderr == (
        "s3p-codec decode --format parquet needs the 'parquet' extra (pyarrow is missing): "
        "pip install 's3p-codec[parquet]'\n"
    )


def test_pyproject_keeps_the_capture_extra_light() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    heavy = ("pandas", "pyarrow", "numpy")
    assert not [d for d in extras["capture"] if d.startswith(heavy)]
    assert {d.split(">")[0] for d in extras["parquet"]} >= {"pandas", "pyarrow"}


def test_the_pandas_3_warning_of_pyspark_workers_is_silenced_by_its_filter() -> None:
    """Item 9: the filter the Spark session gives its Python workers matches pyspark's words."""
    pytest.importorskip("pyspark")
    from s3p_codec.spark._session import PANDAS_WARNING

    check = (
        "from pyspark.sql.pandas.utils import require_minimum_pandas_version as check; check()"
    )
    env_runs = []
    for warnings in ("default", PANDAS_WARNING):
        done = subprocess.run(
            [sys.executable, "-c", check], capture_output=True, text=True, timeout=120,
            check=True, env={"PATH": "", "PYTHONWARNINGS": warnings},
        )  # fmt: skip
        env_runs.append(done.stderr)
    import pandas

    if int(pandas.__version__.split(".")[0]) >= 3:
        assert "does not yet fully support pandas" in env_runs[0]
    assert env_runs[1] == ""
