"""Capture inputs named by URL (``s3://bucket/prefix/``, ``gs://...``, ``file://...``).

The plan:

1. A URL names a *store* and a path in it. The store is an Arrow filesystem (``pyarrow.fs``):
   Arrow's own clients for the stores it knows (S3 and S3-compatible stores, GCS, HDFS, Azure),
   and for any other scheme the fsspec filesystem of that scheme wrapped as an Arrow one, so one
   code path lists and reads them all. Why Arrow's S3 client and not s3fs: ``docs/decisions.rst``
   (it starts in a tenth of the time and moves the bytes outside the GIL).
2. Credentials and endpoints are each store's own (for S3 the AWS SDK's chain: environment
   variables, config and credentials files, profiles, instance roles; ``AWS_ENDPOINT_URL`` or
   ``AWS_ENDPOINT_URL_S3`` for a compatible store, or Arrow's ``?endpoint_override=`` on the
   URL): nothing here names any.
3. A prefix stands for the objects directly under it; a glob is matched here, component by
   component (``*`` never crosses a ``/``), against a listing of the part before its first
   wildcard.
4. Objects are read forward in blocks of ``BLOCK_SIZE`` bytes, one ranged read per block, the
   next block fetched by a background thread while the current one is decoded, so the decoder
   does not wait on the store's latency and memory stays two blocks whatever the object's size
   (figures in ``benchmarks/capture_bench.py --url``).

Plain paths never come here: they are opened with ``open()``. pyarrow is imported only when a
URL is met (the ``remote`` extra), so local decoding does not pay for it.
"""

from __future__ import annotations

import fnmatch
import glob
import re
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any
from urllib.parse import unquote, urlsplit

from s3p_codec._extras import MissingExtra
from s3p_codec.capture._pcap import rotation_key

__all__ = [
    "BLOCK_SIZE",
    "RemoteInputError",
    "expand_url",
    "is_url",
    "local_path",
    "open_input",
    "input_size",
    "LATE_UPLOAD",
    "Seen",
    "list_objects",
    "new_objects",
]

BLOCK_SIZE = 8 << 20
"""Bytes per ranged read of an object: large enough that a GET's latency is spread over many
records, small enough that memory per open object stays a few MiB."""

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://")

_ARROW_SCHEMES = frozenset({"s3", "gs", "gcs", "hdfs", "viewfs", "abfs", "abfss"})
"""Schemes Arrow's own filesystems serve; any other goes through fsspec."""


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


class _Store:
    """The filesystem a URL names, and the translation between its paths and URLs."""

    def __init__(self, fs: Any, path: str, url_of: Callable[[str], str]) -> None:
        self.fs = fs  # a pyarrow.fs.FileSystem
        self.path = path  # the URL's path inside ``fs``
        self.url_of = url_of


def _store(url: str) -> _Store:
    """The store of ``url``; a one-line error when the extra is missing or the store refuses."""
    scheme, _, rest = url.partition("://")
    try:
        from pyarrow import fs as arrow_fs  # noqa: PLC0415 - only URLs need it
    except ImportError:
        raise MissingExtra("remote", f"reading {scheme}:// URLs", "pyarrow") from None
    if scheme.lower() in _ARROW_SCHEMES:
        # Only ``scheme://authority`` goes to Arrow's URI parser, which refuses the ``[``
        # of a glob; the path is joined after it.
        # Arrow's options in a query (``?endpoint_override=...``) are kept, and given back on
        # every URL a listing makes, so each object is read from the same store.
        rest, mark, query = rest.partition("?")
        options = mark + query
        authority, _, inner = rest.partition("/")
        root = f"{scheme}://{authority}"
        try:
            fs, base = arrow_fs.FileSystem.from_uri(root + options)
        except Exception as exc:
            raise RemoteInputError(url, _words(exc)) from None
        # Bucket stores give the bucket as ``base`` ("caps" for s3://caps): their paths start
        # with it. HDFS gives "" and its paths start at "/".
        base = base.rstrip("/")
        start = f"{base}/" if base else "/"
        return _Store(fs, start + inner, lambda path: root + path[len(base) :] + options)
    try:
        import fsspec  # noqa: PLC0415
    except ImportError:
        raise MissingExtra("remote", f"reading {scheme}:// URLs", "fsspec") from None
    try:
        other, inner = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise RemoteInputError(url, _words(exc)) from None
    handler = arrow_fs.PyFileSystem(arrow_fs.FSSpecHandler(other))
    return _Store(handler, inner, other.unstrip_protocol)


_ARROW_S3_ERROR = re.compile(r"^When [^:]*: (AWS Error .*?)(?: \(Request ID: [^)]*\))?\s*$", re.S)


def _words(exc: BaseException) -> str:
    """The store's message for ``exc``, on one line (Arrow's "When getting information for
    key ...: " preamble, which restates the URL, is dropped)."""
    text = " ".join(str(exc).split())
    found = _ARROW_S3_ERROR.match(text)
    if found:
        text = found.group(1)
    return text or type(exc).__name__


def _missing(store: _Store, url: str) -> RemoteInputError:
    """Why the object of ``url`` is not there: the store's words when listing its parent fails
    (a missing bucket, refused credentials), else "no such object"."""
    from pyarrow import fs as arrow_fs  # noqa: PLC0415

    parent = store.path.rstrip("/").rpartition("/")[0] or store.path
    try:
        store.fs.get_file_info(arrow_fs.FileSelector(parent))
    except FileNotFoundError:
        pass  # the "directory" is missing too, in a bucket that is there
    except Exception as exc:
        return RemoteInputError(url, _words(exc))
    return RemoteInputError(url, "no such object")


def expand_url(pattern: str) -> list[str]:
    """The objects ``pattern`` names: a prefix ending in ``/`` (or a "directory") stands for
    the objects directly under it, a glob for those it matches, anything else for itself.
    Returns ``[pattern]`` when nothing matches or the store refuses the listing, so that
    reading it reports why (an error row and one line)."""
    if not is_remote(pattern):
        return [pattern]
    try:
        found = list_objects(pattern)
    except Exception:
        return [pattern]
    return sorted(url for url, _mtime in found) or [pattern]


def list_objects(pattern: str) -> list[tuple[str, int]]:
    """``(URL, modification time in ns)`` of each object ``pattern`` names (as
    ``expand_url`` reads it), in no particular order; ``[]`` when none. Raises
    ``RemoteInputError`` when the store refuses the listing."""
    from pyarrow import fs as arrow_fs  # noqa: PLC0415

    store = _store(pattern)
    try:
        if glob.has_magic(store.path):
            infos = _glob(store, store.path)
        else:
            # One look at the path (a HEAD): an object is itself, a "directory" is listed.
            info = None if pattern.endswith("/") else store.fs.get_file_info(store.path)
            if info is None or info.type == arrow_fs.FileType.Directory:
                listing = store.fs.get_file_info(arrow_fs.FileSelector(store.path.rstrip("/")))
                infos = [entry for entry in listing if entry.type == arrow_fs.FileType.File]
            else:
                infos = [info] if info.type == arrow_fs.FileType.File else []
    except Exception as exc:
        raise RemoteInputError(pattern, _words(exc)) from None
    return [(store.url_of(info.path), int(info.mtime_ns or 0)) for info in infos]


LATE_UPLOAD = 600.0
"""Seconds an object may be older than the newest object taken and still be new: the longest
upload expected to finish after a newer one began (a multipart upload keeps the time it
began)."""

Seen = list[list[Any]]
"""``[[mtime_ms, url], ...]``: the objects taken lately (JSON, as Spark keeps offsets)."""


def new_objects(
    listing: Sequence[tuple[str, int]], seen: Seen, late_ms: int, max_files: int | None
) -> tuple[list[list[Any]], Seen]:
    """The objects of ``listing`` (URL, mtime in ns) not taken yet, oldest first (at most
    ``max_files``), and the ``seen`` list after taking them.

    An object is new when it is not in ``seen`` and at most ``late_ms`` older than the newest
    taken, so an upload that finishes after a newer one began is still taken, while ``seen``
    keeps only the objects of ``late_ms`` of traffic."""
    taken = {url for _mtime, url in seen}
    floor = max((mtime for mtime, _url in seen), default=None)
    fresh = [
        (mtime_ns // 1_000_000, url)
        for url, mtime_ns in listing
        if url not in taken and (floor is None or mtime_ns // 1_000_000 >= floor - late_ms)
    ]
    # Objects written within one tick of the store's clock are taken in capture order
    # (``cap2`` before ``cap10``): a limit of files per trigger may split them.
    fresh.sort(key=lambda entry: (entry[0], rotation_key(entry[1])))
    candidates = [list(entry) for entry in fresh[:max_files]]
    merged = seen + candidates
    newest = max((mtime for mtime, _url in merged), default=0)
    return candidates, sorted(entry for entry in merged if entry[0] >= newest - late_ms)


def _glob(store: _Store, pattern: str) -> list[Any]:
    """The objects (Arrow ``FileInfo``) matching ``pattern``: the part before its first
    wildcard is listed (recursively only when the wildcard is not in the last component), and
    each path is matched component by component, as a shell glob matches files."""
    from pyarrow import fs as arrow_fs  # noqa: PLC0415

    parts = pattern.split("/")
    first = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    if first == 0 or (first == 1 and not parts[0]):
        return []  # a wildcard in the bucket's name: buckets are not listed
    base = "/".join(parts[:first])
    wanted = parts[first:]
    try:
        listing = store.fs.get_file_info(arrow_fs.FileSelector(base, recursive=len(wanted) > 1))
    except FileNotFoundError:
        return []  # no such "directory" in a bucket that is there (a missing bucket raises)
    found = []
    for entry in listing:
        if entry.type != arrow_fs.FileType.File:
            continue
        names = entry.path[len(base) :].lstrip("/").split("/")
        if len(names) == len(wanted) and all(map(fnmatch.fnmatchcase, names, wanted)):
            found.append(entry)
    return found


def open_input(path: str) -> IO[bytes]:
    """The bytes of one capture input: ``open(path, "rb")`` for a path, a seekable object
    reader (bounded read-ahead, ranged GETs) for a URL. Errors of the store become
    ``RemoteInputError`` (an ``OSError``) carrying its message."""
    if not is_remote(path):
        return open(local_path(path), "rb")
    store = _store(path)  # first: it says which extra is missing
    from pyarrow import fs as arrow_fs  # noqa: PLC0415

    try:
        handle = store.fs.open_input_file(store.path)
        size = handle.size()
    except Exception as exc:
        try:
            kind = store.fs.get_file_info(store.path).type
        except Exception as again:
            raise RemoteInputError(path, _words(again)) from None
        if kind == arrow_fs.FileType.Directory:
            raise RemoteInputError(
                path, "not an object (a prefix: name the objects under it)"
            ) from None
        if kind == arrow_fs.FileType.NotFound:
            if glob.has_magic(store.path):
                raise RemoteInputError(path, "no object matches this pattern") from None
            raise _missing(store, path) from None
        raise RemoteInputError(path, _words(exc)) from None
    return _ObjectReader(handle, path, size)  # type: ignore[return-value]


def input_size(path: str) -> int:
    """Bytes in ``path`` (0 when it cannot be looked at: reading it will say why)."""
    try:
        if not is_remote(path):
            with open(local_path(path), "rb") as f:
                return f.seek(0, 2)
        store = _store(path)
        return int(store.fs.get_file_info(store.path).size or 0)
    except Exception:
        return 0


class _ObjectReader:
    """One object read forward in ``BLOCK_SIZE`` ranged reads, the block after the current one
    fetched by a background thread while the current one is consumed (at most two blocks held).

    A seek inside the current block costs nothing; one elsewhere drops both blocks. Errors of
    the store are ``RemoteInputError`` (an ``OSError``, which the capture readers catch), so a
    credential or network failure mid-object is an error row, not a crash."""

    def __init__(self, handle: Any, url: str, size: int) -> None:
        self._handle = handle  # a pyarrow RandomAccessFile: ``read_at`` is one ranged GET
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
            # ``read_at`` leaves the file position alone, so the background thread and
            # a seek here never race; Arrow releases the GIL while the bytes come.
            data = self._handle.read_at(min(BLOCK_SIZE, self._size - start), start)
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
        """Drop the blocks; a fetch under way is left to finish in its thread, and the
        object's handle is closed after it."""
        if self._closed:
            return
        self._closed = True
        self._block = b""
        ahead, self._ahead = self._ahead, None
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        if ahead is not None and not ahead[1].cancel():
            ahead[1].add_done_callback(lambda _done: self._handle.close())
        else:
            self._handle.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> _ObjectReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
