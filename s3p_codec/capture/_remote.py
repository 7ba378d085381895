"""Capture inputs named by URL (``s3://bucket/prefix/``, ``gs://...``, ``file://...``).

One filesystem layer, fsspec, reads every store (s3fs for S3 and S3-compatible stores, gcsfs,
adlfs, HDFS through pyarrow, ...); see ``docs/decisions.rst`` for why fsspec and not
``pyarrow.fs``. Credentials and endpoints are each store's own (for S3 the AWS environment
variables and config files, ``AWS_ENDPOINT_URL``): nothing here names any. Objects are read
forward in blocks of ``BLOCK_SIZE`` bytes, one ranged GET per block, the next block fetched in
the background while the current one is decoded, so the decoder does not wait on the store's
latency and memory stays two blocks whatever the object's size (fsspec's own read-ahead file
fetches only when its cache runs dry, so the decoding waited on every GET; figures in
``benchmarks/capture_bench.py --url``). Plain paths never come here: they are opened with
``open()`` exactly as before. fsspec is imported only when a URL is met (the ``remote`` extra).
"""

from __future__ import annotations

import glob
import re
from concurrent.futures import Future, ThreadPoolExecutor
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
                entry["name"] for entry in fs.ls(inner, detail=True) if entry.get("type") == "file"
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
        info = fs.info(inner)
        if info.get("type") != "file":
            raise RemoteInputError(path, "not an object (a prefix: name the objects under it)")
        size = int(info["size"])
    except RemoteInputError:
        raise
    except Exception as exc:
        raise RemoteInputError(path, _words(exc)) from None
    return _ObjectReader(fs, inner, path, size)  # type: ignore[return-value]


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


class _ObjectReader:
    """One object read forward in ``BLOCK_SIZE`` ranged reads, the block after the current one
    fetched by a background thread while the current one is consumed (at most two blocks held).

    A seek inside the current block costs nothing; one elsewhere drops both blocks. Errors of
    the store are ``RemoteInputError`` (an ``OSError``, which the capture readers catch), so a
    credential or network failure mid-object is an error row, not a crash."""

    def __init__(self, fs: Any, inner: str, url: str, size: int) -> None:
        self._fs = fs
        self._inner = inner
        self._url = url
        self._size = size
        self._block = b""
        self._block_at = 0  # object offset of ``_block``
        self._pos = 0  # object offset of the next byte read
        self._ahead: tuple[int, Future[bytes]] | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._closed = False

    def _get(self, start: int) -> bytes:
        """The block at ``start`` (a ranged read of the store)."""
        try:
            data = self._fs.cat_file(
                self._inner, start=start, end=min(start + BLOCK_SIZE, self._size)
            )
        except Exception as exc:
            raise RemoteInputError(self._url, _words(exc)) from None
        return bytes(data)

    def _load(self) -> None:
        """Make ``_block`` the block holding ``_pos``, and start fetching the one after it."""
        start = self._pos
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == start:
            self._block = ahead[1].result()
        else:
            if ahead is not None:
                ahead[1].cancel()
            self._block = self._get(start)
        self._block_at = start
        following = start + len(self._block)
        if self._block and following < self._size:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="s3p-codec-read-ahead")
            self._ahead = (following, self._pool.submit(self._get, following))

    def read(self, size: int = -1) -> bytes:
        """``size`` bytes (all the rest when negative), fewer only at the end of the object."""
        if self._closed:
            raise ValueError("I/O operation on closed file")
        want = self._size - self._pos if size < 0 else min(size, self._size - self._pos)
        parts: list[bytes] = []
        while want > 0:
            offset = self._pos - self._block_at
            if not 0 <= offset < len(self._block):
                self._load()
                offset = 0
                if not self._block:
                    break  # the object shrank under us: its end
            piece = (
                self._block[offset : offset + want]
                if offset or want < len(self._block)
                else self._block
            )
            parts.append(piece)
            self._pos += len(piece)
            want -= len(piece)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def read1(self, size: int = -1) -> bytes:
        return self.read(size)

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        """Drop the blocks; a fetch under way is left to finish in its thread."""
        self._closed = True
        self._block = b""
        if self._ahead is not None:
            self._ahead[1].cancel()
            self._ahead = None
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> _ObjectReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
