"""S2S payload compression: none, zstd, gzip; negotiation; streamed, capped decompression.

"The server selects compression based on the Accept-Encoding header": zstd if listed, else
gzip, else none. "Messages smaller than 1 KiB are not compressed (compression flag = 0) even if
an algorithm is selected." Decompression never trusts the peer: output is produced in bounded
steps and stops one byte past the cap (zip bombs), and zstd frames "may carry no content-size
header": a zstd payload's frame and block headers are walked first (whole frames and nothing
else; a truncated frame is an error rather than a short read), a declared size over the cap is
refused before any work, one frame with a declared size is decompressed in one call, and
anything else is read through a streaming reader in 64 KiB steps, stopping one byte past the
cap.

``zstandard`` is the optional extra ``s3p-codec[zstd]``; without it, zstd frames are refused
with a precise error and zstd is never negotiated.
"""

from __future__ import annotations

import enum
import gzip
import zlib
from typing import Any

from s3p_codec._core import RemoteProtocolError
from s3p_codec._core.extras import MissingExtra
from s3p_codec.s2s._events import ErrorCode
from s3p_codec.s2s._limits import MAX_ZSTD_WINDOW

__all__ = [
    "MAX_ZSTD_WINDOW",
    "Codec",
    "Compression",
    "ZSTD_MISSING",
    "compress",
    "decompress",
    "negotiate",
    "zstd_available",
]


_zstd: Any
try:
    import zstandard as _zstd
except ImportError:  # pragma: no cover - the dev extra installs it
    _zstd = None


ZSTD_MISSING = "zstd needs the zstandard package: pip install 's3p-codec[zstd]'"
"""The one message for zstd used without its extra, whatever the payload size."""


def zstd_available() -> bool:
    """Whether zstd can be used (the ``zstandard`` package is installed)."""
    return _zstd is not None


class Compression(enum.IntEnum):
    """The two compression bits of the flag byte. 3 is "Reserved" (an error on decode)."""

    NONE = 0
    ZSTD = 1
    GZIP = 2

    @property
    def encoding(self) -> str:
        """The HTTP content-coding token (``identity`` for NONE)."""
        return {0: "identity", 1: "zstd", 2: "gzip"}[self.value]


def negotiate(accept_encoding: str | bytes | None) -> Compression:
    """Pick from an ``Accept-Encoding`` value: "Zstd is preferred ... Gzip is used as fallback
    ... None is used if no encoding is specified". A token with ``q=0`` is refused."""
    if accept_encoding is None:
        return Compression.NONE
    if isinstance(accept_encoding, bytes):
        accept_encoding = accept_encoding.decode("latin-1")
    offered: set[str] = set()
    for item in accept_encoding.split(","):
        token, _, params = item.strip().partition(";")
        token = token.strip().lower()
        refused = False
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    refused = float(value.strip()) == 0.0
                except ValueError:
                    refused = True
        if token and not refused:
            offered.add(token)
    if "zstd" in offered and _zstd is not None:
        return Compression.ZSTD
    if "gzip" in offered:
        return Compression.GZIP
    return Compression.NONE


class Codec:
    """Per-connection compression state: zstd contexts are made once and reused, since making
    one costs more than decompressing a typical frame. Not for use by two threads at once
    (one connection is driven by one thread, as every sans-IO codec is)."""

    __slots__ = ("_compressor", "_decompressor", "_max_window")

    def __init__(self, max_window: int = MAX_ZSTD_WINDOW) -> None:
        self._compressor: Any = None
        self._decompressor: Any = None
        self._max_window = max_window

    def __getstate__(self) -> int:
        # A snapshot keeps the bound only: each payload is compressed on its own, so the zstd
        # contexts carry nothing from one message to the next and are made again on first use.
        return self._max_window

    def __setstate__(self, max_window: int) -> None:
        self._compressor = self._decompressor = None
        self._max_window = max_window

    def compress(self, data: bytes, compression: Compression) -> bytes:
        """Compress ``data`` (the caller applies the 1 KiB threshold).

        Raises ``MissingExtra`` (extra ``zstd``) for zstd without the zstandard package.
        """
        if compression is Compression.ZSTD:
            if _zstd is None:
                raise MissingExtra("zstd", "S2S zstd compression", "zstandard")
            if self._compressor is None:
                self._compressor = _zstd.ZstdCompressor()
            return bytes(self._compressor.compress(data))
        return compress(data, compression)

    def decompress(self, data: bytes, compression: Compression, max_size: int) -> bytes:
        """See the module function ``decompress``."""
        if compression is Compression.ZSTD and _zstd is not None:
            if self._decompressor is None:
                self._decompressor = _zstd.ZstdDecompressor(max_window_size=self._max_window)
            return _unzstd(data, max_size, self._decompressor)
        return decompress(data, compression, max_size)


def compress(data: bytes, compression: Compression) -> bytes:
    """Compress ``data`` (the caller applies the 1 KiB threshold).

    Raises ``MissingExtra`` (extra ``zstd``) for zstd without the zstandard package.
    """
    if compression is Compression.ZSTD:
        if _zstd is None:
            raise MissingExtra("zstd", "S2S zstd compression", "zstandard")
        return bytes(_zstd.ZstdCompressor().compress(data))
    if compression is Compression.GZIP:
        return gzip.compress(data, compresslevel=6, mtime=0)
    return data


def _error(what: str) -> RemoteProtocolError:
    return RemoteProtocolError(f"bad compressed payload: {what}", code=ErrorCode.BAD_FRAME)


def decompress(data: bytes, compression: Compression, max_size: int) -> bytes:
    """Decompress a frame payload, producing at most ``max_size`` bytes or raising.

    Raises ``RemoteProtocolError(bad_frame)`` for corrupt, truncated, trailing-garbage or
    over-cap input; nothing else escapes.
    """
    if compression is Compression.GZIP:
        return _gunzip(data, max_size)
    if compression is Compression.ZSTD:
        return _unzstd(data, max_size)
    return data


_GZIP_STEP = 64 * 1024
_GZIP_FIRST_WINDOW = 512


def _gunzip(data: bytes, max_size: int) -> bytes:
    """Inflate every gzip member, linear in the input whatever the number of members.

    zlib hands back the bytes after a member as a copy (``unused_data``), so feeding it the
    whole rest of the payload per member would be quadratic (2 MiB of empty members: seconds).
    Each member is fed through a window over the payload instead, starting small and doubling
    while the member goes on, so the bytes copied per member stay proportional to its size.
    """
    if not data:
        raise _error("empty gzip payload")
    out = bytearray()
    view = memoryview(data)
    pos, end = 0, len(data)
    # gzip allows several members back to back; each one gets its own decompressor.
    while pos < end:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        window = _GZIP_FIRST_WINDOW
        try:
            while not inflater.eof:
                if pos >= end:
                    raise _error("truncated gzip member")
                piece = view[pos : pos + window]
                pending: bytes | memoryview = piece
                while pending:
                    room = max_size + 1 - len(out)
                    chunk = inflater.decompress(pending, min(room, _GZIP_STEP))
                    out += chunk
                    if len(out) > max_size:
                        raise _error(f"decompresses past {max_size} bytes")
                    pending = inflater.unconsumed_tail
                    if inflater.eof or (not pending and not chunk):
                        break
                pos += len(piece) - len(inflater.unconsumed_tail) - len(inflater.unused_data)
                window = min(window * 2, _GZIP_STEP)
        except zlib.error as exc:
            raise _error(f"gzip: {exc}") from exc
    return bytes(out)


_ZSTD_MAGIC = 0xFD2FB528


def _zstd_frames(data: bytes) -> list[int | None]:
    """Walk zstd frame and block headers (RFC 8878): check that the payload is whole frames
    and nothing else, and return each frame's declared content size (None when absent)."""
    sizes: list[int | None] = []
    pos, end = 0, len(data)
    if end == 0:
        raise _error("empty zstd payload")
    while pos < end:
        if end - pos < 4:
            raise _error("truncated zstd frame header")
        magic = int.from_bytes(data[pos : pos + 4], "little")
        if magic & 0xFFFFFFF0 == 0x184D2A50:  # skippable frame
            if end - pos < 8:
                raise _error("truncated skippable frame")
            pos += 8 + int.from_bytes(data[pos + 4 : pos + 8], "little")
            if pos > end:
                raise _error("truncated skippable frame")
            continue
        if magic != _ZSTD_MAGIC:
            raise _error("not a zstd frame")
        pos += 4
        if pos >= end:
            raise _error("truncated zstd frame header")
        descriptor = data[pos]
        fcs_flag = descriptor >> 6
        single_segment = (descriptor >> 5) & 1
        checksum = (descriptor >> 2) & 1
        dict_id = (0, 1, 2, 4)[descriptor & 3]
        fcs = (single_segment, 2, 4, 8)[fcs_flag]
        pos += 1 + (0 if single_segment else 1) + dict_id
        if end - pos < fcs:
            raise _error("truncated zstd frame header")
        size: int | None = None
        if fcs:
            size = int.from_bytes(data[pos : pos + fcs], "little") + (256 if fcs == 2 else 0)
        sizes.append(size)
        pos += fcs
        while True:
            if end - pos < 3:
                raise _error("truncated zstd block header")
            header = int.from_bytes(data[pos : pos + 3], "little")
            pos += 3
            block_type = (header >> 1) & 3
            if block_type == 3:
                raise _error("reserved zstd block type")
            pos += 1 if block_type == 1 else header >> 3
            if pos > end:
                raise _error("truncated zstd block")
            if header & 1:
                break
        pos += 4 * checksum
        if pos > end:
            raise _error("truncated zstd checksum")
    return sizes


def _unzstd(data: bytes, max_size: int, context: Any = None) -> bytes:
    if _zstd is None:
        raise _error(f"zstd frame received but zstandard is not installed ({ZSTD_MISSING})")
    if context is None:
        context = _zstd.ZstdDecompressor(max_window_size=MAX_ZSTD_WINDOW)
    sizes = _zstd_frames(data)
    if any(size is not None and size > max_size for size in sizes):
        raise _error(f"zstd frame declares more than {max_size} bytes")
    try:
        if len(sizes) == 1 and sizes[0] is not None:
            # One frame that declares its size (checked against the cap above): one call.
            return bytes(context.decompress(data))
        # No declared size, or several frames: stream, one byte past the cap at most.
        reader = context.stream_reader(data, read_across_frames=True)
        chunks = bytearray()
        while len(chunks) <= max_size:
            chunk = reader.read(min(max_size + 1 - len(chunks), 64 * 1024))
            if not chunk:
                break
            chunks += chunk
    except _zstd.ZstdError as exc:
        raise _error(f"zstd: {exc}") from exc
    if len(chunks) > max_size:
        raise _error(f"decompresses past {max_size} bytes")
    return bytes(chunks)
