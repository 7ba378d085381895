"""Capture inputs named by URL (``s3://bucket/prefix/``, ``gs://...``, ``file://...``).

One filesystem layer, fsspec, reads every store (s3fs for S3 and S3-compatible stores, gcsfs,
adlfs, HDFS through pyarrow, ...); see ``docs/decisions.rst`` for why fsspec and not
``pyarrow.fs``. Credentials and endpoints are each store's own (for S3 the AWS environment
variables and config files, ``AWS_ENDPOINT_URL``): nothing here names any. Objects are read
forward through a read-ahead cache of ``BLOCK_SIZE`` bytes, one ranged GET per block, so memory
stays bounded whatever the object's size. Plain paths never come here: they are opened with
``open()`` exactly as before. fsspec is imported only when a URL is met (the ``remote`` extra).
"""

from __future__ import annotations

import glob
import re
from typing import IO, Any
from urllib.parse import unquote, urlsplit

from s3p_codec._extras import MissingExtra

__all__ = [
    "BLOCK_SIZE",
    "RemoteInputError",
    "expand_url",
    "is_url",
    "local_path",
    "open_input",
    "input_size",
]

BLOCK_SIZE = 8 << 20
"""Bytes per ranged read of an object: large enough that a GET's latency is spread over many
records, small enough that memory per open object stays a few MiB."""

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://")


class RemoteInputError(OSError):
    """An object that cannot be listed or read: ``message`` is the store's own words, to be
    shown after the URL on one line."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(message)
        self.url = url
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        return (RemoteInputError, (self.url, self.message))


def is_url(path: str) -> bool:
    """True for ``scheme://...`` names (two letters or more: ``C:\\`` stays a path)."""
    return _SCHEME.match(path) is not None


def local_path(path: str) -> str:
    """``path`` itself, or the local file a ``file://`` URL names (read with ``open()``)."""
    if path.startswith("file://"):
        parts = urlsplit(path)
        return unquote(parts.path)
    return path


def is_remote(path: str) -> bool:
    """A URL that needs the filesystem layer (``file://`` URLs are local paths)."""
    return is_url(path) and not path.startswith("file://")


def _filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path inside it; a one-line error when the
    extra is missing or the store is unknown."""
    try:
        import fsspec  # noqa: PLC0415 - only URLs need it
    except ImportError:
        scheme = url.partition("://")[0]
        raise MissingExtra("remote", f"reading {scheme}:// URLs", "fsspec") from None
    try:
        fs, inner = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise RemoteInputError(url, _words(exc)) from None
    return fs, inner


def _words(exc: BaseException) -> str:
    """The store's message for ``exc``, on one line."""
    text = str(exc)
    if isinstance(exc, FileNotFoundError) and (not text or ("/" in text and " " not in text)):
        text = "no such object"  # s3fs's FileNotFoundError carries only the key
    if not text:
        text = type(exc).__name__
    return " ".join(text.split())


def expand_url(pattern: str) -> list[str]:
    """The objects ``pattern`` names: a prefix ending in ``/`` (or a "directory") stands for
    the objects directly under it, a glob for those it matches, anything else for itself.
    Returns ``[pattern]`` when nothing matches or the store refuses the listing, so that
    reading it reports why (an error row and one line)."""
    if not is_remote(pattern):
        return [pattern]
    try:
        fs, inner = _filesystem(pattern)
        if glob.has_magic(inner):
            found = [p for p in sorted(fs.glob(inner)) if fs.isfile(p)]
        elif pattern.endswith("/") or fs.isdir(inner):
            found = sorted(
                entry["name"]
                for entry in fs.ls(inner, detail=True)
                if entry.get("type") == "file"
            )
        else:
            return [pattern]
    except Exception:
        return [pattern]
    return [fs.unstrip_protocol(p) for p in found] or [pattern]


def open_input(path: str) -> IO[bytes]:
    """The bytes of one capture input: ``open(path, "rb")`` for a path, a seekable object
    reader (bounded read-ahead, ranged GETs) for a URL. Errors of the store become
    ``RemoteInputError`` (an ``OSError``) carrying its message."""
    if not is_remote(path):
        return open(local_path(path), "rb")
    fs, inner = _filesystem(path)
    try:
        if glob.has_magic(inner) and not fs.exists(inner):
            raise RemoteInputError(path, "no object matches this pattern")
        stream: IO[bytes] = fs.open(inner, "rb", block_size=BLOCK_SIZE, cache_type="readahead")
    except RemoteInputError:
        raise
    except Exception as exc:
        raise RemoteInputError(path, _words(exc)) from None
    return _Guarded(stream, path)  # type: ignore[return-value]


def input_size(path: str) -> int:
    """Bytes in ``path`` (0 when it cannot be looked at: reading it will say why)."""
    try:
        if not is_remote(path):
            with open(local_path(path), "rb") as f:
                return f.seek(0, 2)
        fs, inner = _filesystem(path)
        return int(fs.size(inner) or 0)
    except Exception:
        return 0


class _Guarded:
    """An object reader whose read errors are ``RemoteInputError`` (the capture readers catch
    ``OSError``): a credential or network failure mid-object is an error row, not a crash."""

    def __init__(self, stream: Any, url: str) -> None:
        self._stream = stream
        self._url = url

    def read(self, size: int = -1) -> bytes:
        try:
            return bytes(self._stream.read(size))
        except OSError:
            raise
        except Exception as exc:
            raise RemoteInputError(self._url, _words(exc)) from None

    def read1(self, size: int = -1) -> bytes:
        return self.read(size)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(memoryview(buffer)))
        memoryview(buffer).cast("B")[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        return int(self._stream.seek(offset, whence))

    def tell(self) -> int:
        return int(self._stream.tell())

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._stream.close()

    @property
    def closed(self) -> bool:
        return bool(self._stream.closed)

    def __enter__(self) -> _Guarded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
