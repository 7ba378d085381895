"""A real S3-compatible server on 127.0.0.1 (moto's standalone server, as s3fs's own tests use)
and the AWS environment that points the standard credential chain at it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """The endpoint URL of a moto server started for this test session (stopped after it)."""
    server_mod = pytest.importorskip("moto.server", reason="needs the dev extra (moto[server])")
    pytest.importorskip("s3fs", reason="needs the remote extra (s3fs)")
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def s3_environment(endpoint: str, tmp: Path) -> dict[str, str]:
    """The variables a user sets for an S3-compatible store (no project-specific ones)."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp / "no-credentials"),
        "AWS_CONFIG_FILE": str(tmp / "no-config"),
    }


@pytest.fixture
def s3(s3_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An s3fs filesystem on the test server, the environment set for the code under test."""
    import s3fs

    for name, value in s3_environment(s3_server, tmp_path).items():
        monkeypatch.setenv(name, value)
    s3fs.S3FileSystem.clear_instance_cache()
    fs = s3fs.S3FileSystem()
    yield fs
    for bucket in fs.ls(""):
        fs.rm(bucket, recursive=True)
    s3fs.S3FileSystem.clear_instance_cache()


def upload(fs: Any, paths: list[Path], bucket: str, prefix: str = "") -> None:
    """Put local files into ``bucket`` under ``prefix`` (the bucket is made if missing)."""
    if not fs.exists(bucket):
        fs.mkdir(bucket)
    for path in paths:
        fs.put_file(str(path), f"{bucket}/{prefix}{path.name}")
    fs.invalidate_cache()


def child_environment(endpoint: str, tmp: Path, **changes: str | None) -> dict[str, str]:
    """This process's environment with the S3 variables set, ``changes`` applied (None unsets)."""
    env = dict(os.environ)
    env.update(s3_environment(endpoint, tmp))
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env
