"""Capture files to packets: pcap and pcapng, optionally gzip-compressed, from a file or a pipe.

The plan:

1. ``maybe_gunzip`` looks at the first two bytes (peeked, or read and put back in front with
   ``PrefixedStream``: a pipe cannot seek) and unzips when they are gzip's magic.
2. ``read_packets`` reads the capture header: a classic pcap file (``classic_header``: byte
   order, timestamp resolution, one link type for the file) or a pcapng section header. Then
   the records, strictly forward, each yielded as soon as it is complete (rows of a live
   capture come while it is written). pcapng interfaces keep their own link type and
   timestamp resolution.
3. Every read is bounded by the bytes the file really holds (``read_exactly`` reads long
   records in chunks of ``READ_CHUNK``), and a record longer than ``MAX_RECORD`` (a pcapng block
   longer than ``MAX_BLOCK``) is corruption: a record claiming gigabytes costs what is there.
4. A file cut inside a record says where it breaks off (``CaptureFileError``), after every whole
   record before it. The reader of records in place (``_scan``) words its errors with the same
   functions (``record_header_cut``, ``record_too_long``, ``record_cut``).

``capture_order`` sorts the files of a rotated set (``cap2`` before ``cap10``).
"""

from __future__ import annotations

import gzip
import io
import re
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from s3p_codec.capture._packets import Packet

__all__ = [
    "MAX_BLOCK",
    "MAX_RECORD",
    "PCAP_MAGIC",
    "READ_CHUNK",
    "CaptureFileError",
    "PrefixedStream",
    "capture_order",
    "classic_header",
    "maybe_gunzip",
    "open_capture",
    "read_exactly",
    "read_packets",
    "record_cut",
    "record_header_cut",
    "record_too_long",
    "rotation_key",
]

_GZIP_MAGIC = b"\x1f\x8b"


class CaptureFileError(Exception):
    """A capture file is unreadable (bad header) or ends in the middle of a record.

    Segments read before a truncation are still valid: the reader yields them first and raises
    at the point where the file breaks off, so callers can keep what came before.
    """

    def __init__(self, file: str, message: str) -> None:
        super().__init__(f"{file}: {message}")
        self.file = file
        self.message = message

    def __reduce__(self) -> tuple[object, ...]:
        return (CaptureFileError, (self.file, self.message))


class PrefixedStream(io.RawIOBase):
    """A stream with bytes already read from it put back in front (no seeking needed): how a
    pipe's first bytes are looked at (gzip or not, pcap or pcapng) and still decoded. Reads
    return the bytes there are, like a raw stream; errors are those of the stream behind."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        super().__init__()
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        """Always true: this stream is for reading."""
        return True

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` from the put-back head first, then from the rest; return the count."""
        view = memoryview(buffer).cast("B")
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(view))
        view[: len(data)] = data
        return len(data)

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes, fewer when no more are there yet (a pipe): gzip's reader asks
        for 8 KiB at a time and must get the bytes already written, not wait for 8 KiB."""
        if self._head:
            if size < 0:
                head, self._head = self._head, b""
                return head + self._rest.read()
            head, self._head = self._head[:size], self._head[size:]
            return head
        read1 = getattr(self._rest, "read1", None)
        return bytes(read1(size) if read1 is not None and size >= 0 else self._rest.read(size))


def maybe_gunzip(raw: IO[bytes]) -> IO[bytes]:
    """``raw`` itself, or a gunzipping reader over it when it starts with gzip's magic.

    ``raw`` may be a pipe: its first two bytes are peeked at (or read and put back in front),
    never sought.
    """
    peek = getattr(raw, "peek", None)
    head = peek(2)[:2] if peek is not None and not raw.seekable() else b""
    source: Any
    if len(head) == 2:
        # A buffered pipe (standard input): looked at, nothing consumed. gzip's reader asks for
        # 8 KiB at a time, so it gets the pipe through ``PrefixedStream``, which hands out what is
        # there instead of waiting for 8 KiB.
        source = raw if head != _GZIP_MAGIC else PrefixedStream(b"", raw)
    elif raw.seekable():
        head = raw.read(2)
        raw.seek(0)
        source = raw
    else:
        head = read_exactly(raw.read, 2)
        source = PrefixedStream(head, raw)
    if head == _GZIP_MAGIC:
        unzipped: IO[bytes] = gzip.GzipFile(fileobj=source, mode="rb")  # type: ignore[assignment]
        return unzipped
    stream: IO[bytes] = source
    return stream


def open_capture(path: str) -> IO[bytes]:
    """Open ``path`` for reading, transparently gunzipping it (the caller closes it)."""
    return maybe_gunzip(open(path, "rb"))


#: A classic pcap file's magic: its byte order and timestamp units per second.
PCAP_MAGIC = {
    b"\xd4\xc3\xb2\xa1": ("<", 1_000_000),
    b"\xa1\xb2\xc3\xd4": (">", 1_000_000),
    b"\x4d\x3c\xb2\xa1": ("<", 1_000_000_000),  # nanosecond timestamps
    b"\xa1\xb2\x3c\x4d": (">", 1_000_000_000),
}
_PCAPNG_SHB = b"\x0a\x0d\x0d\x0a"
MAX_RECORD = 1 << 18
"""Largest classic pcap record accepted, whatever the file header's snap length says: libpcap's
``MAXIMUM_SNAPLEN`` (256 KiB, its bound for every link type read here) and Wireshark's
``WTAP_MAX_PACKET_SIZE_STANDARD``, both of which refuse a longer record as corruption. Trusting
the snap length let a 9 MB gzip whose record claims 2 GiB of zeros end in MemoryError."""
MAX_BLOCK = 64 << 20
"""Largest pcapng block accepted (libpcap stops at 16 MiB); a longer one is corruption."""
READ_CHUNK = 1 << 20
"""Reads longer than this go in chunks of this size, so a record that claims more bytes than
the file still holds costs only what the file holds (a 4 GiB claim in a 1 KiB file allocates
at most one chunk, instead of 4 GiB up front)."""


def read_exactly(read: Callable[[int], bytes], size: int) -> bytes:
    """Up to ``size`` bytes (fewer only at the end of the stream), memory bounded by the bytes
    that really come: a pipe's short reads are retried, and large sizes are read in chunks."""
    data = read(size) if size <= READ_CHUNK else read(READ_CHUNK)
    if len(data) == size or not data:
        return bytes(data)
    parts = bytearray(data)
    while len(parts) < size:
        more = read(min(size - len(parts), READ_CHUNK))
        if not more:
            break
        parts += more
    return bytes(parts)


def classic_header(head: bytes) -> tuple[str, int, int, int] | None:
    """(byte order, timestamp units per second, snap length, link type) of the 24-byte header
    of a classic pcap file; None when ``head`` does not start with a pcap magic."""
    known = PCAP_MAGIC.get(head[:4])
    if known is None:
        return None
    order, divisor = known
    snaplen, network = struct.unpack(order + "II", head[16:24])
    return order, divisor, snaplen, network & 0x0FFFFFFF  # the upper bits carry FCS information


def record_header_cut(name: str, number: int, got: int) -> CaptureFileError:
    """The error of a classic pcap file that ends inside the header of record ``number``."""
    return CaptureFileError(
        name, f"broken after packet {number - 1} (record header cut at {got} of 16)"
    )


def record_too_long(name: str, number: int, caplen: int) -> CaptureFileError:
    """The error of a record that claims more than ``MAX_RECORD`` bytes."""
    return CaptureFileError(
        name, f"broken at packet {number} (claims {caplen} bytes, over the {MAX_RECORD}"
        " bytes any record may hold, MAX_RECORD)"
    )  # fmt: skip


def record_cut(name: str, number: int, got: int, caplen: int) -> CaptureFileError:
    """The error of a file that ends inside record ``number`` (``got`` of its bytes there)."""
    return CaptureFileError(name, f"broken inside packet {number} ({got} of its {caplen} bytes)")


def _classic_records(
    stream: IO[bytes], name: str, order: str, divisor: int
) -> Iterator[tuple[float, int, bytes]]:
    """The records of a classic pcap file after its 24-byte header.

    Read here rather than by dpkt, whose reader hands out a packet cut short by the end of the
    file as if it were whole: a capture killed mid-write must say where it breaks off.
    """
    record = struct.Struct(order + "IIII")
    read = stream.read
    number = 0
    while head := read_exactly(read, 16):
        number += 1
        if len(head) < 16:
            raise record_header_cut(name, number, len(head))
        sec, frac, caplen, _ = record.unpack(head)
        if caplen > MAX_RECORD:
            raise record_too_long(name, number, caplen)
        data = read_exactly(read, caplen)
        if len(data) < caplen:
            raise record_cut(name, number, len(data), caplen)
        yield sec + frac / divisor, 0, data


class _Interface:
    __slots__ = ("linktype", "snaplen", "units")

    def __init__(self, linktype: int, snaplen: int, units: float) -> None:
        self.linktype = linktype
        self.snaplen = snaplen
        self.units = units  # timestamp units per second


_EPB = 6
_SPB = 3
_OLD_PB = 2
_IDB = 1


def _pcapng_records(stream: IO[bytes], name: str) -> Iterator[tuple[float, int, bytes]]:
    """The packets of a pcapng stream (the section header's magic already read), with each
    interface's own link type and timestamp resolution. Blocks other than packets and
    interfaces are skipped; a block cut short or malformed stops the file with an error."""
    read = stream.read
    order = "<"
    interfaces: list[_Interface] = []
    number = 0
    block_type = 0x0A0D0D0A
    first = True
    while True:
        if first:
            head = _PCAPNG_SHB + read_exactly(read, 4)
            first = False
        else:
            head = read_exactly(read, 8)
            if not head:
                return
        if len(head) < 8:
            raise CaptureFileError(name, f"broken after packet {number} (block header cut)")
        if head[:4] == _PCAPNG_SHB:
            magic = read_exactly(read, 4)
            if magic == b"\x4d\x3c\x2b\x1a":
                order = "<"
            elif magic == b"\x1a\x2b\x3c\x4d":
                order = ">"
            else:
                raise CaptureFileError(name, "not a pcap or pcapng file (bad byte-order magic)")
            interfaces = []  # a new section numbers its interfaces afresh
            (length,) = struct.unpack(order + "I", head[4:8])
            body_size = length - 16
            block_type = 0x0A0D0D0A
        else:
            block_type, length = struct.unpack(order + "II", head)
            body_size = length - 12
        if length % 4 or body_size < 0 or length > MAX_BLOCK:
            raise CaptureFileError(
                name, f"broken after packet {number} (block of type {block_type:#x} claims "
                f"{length} bytes)"
            )  # fmt: skip
        body = read_exactly(read, body_size + 4)
        if len(body) < body_size + 4:
            raise CaptureFileError(
                name, f"broken inside the block after packet {number} "
                f"({len(body) + len(head)} of its {length} bytes)"
            )  # fmt: skip
        try:
            packet = _pcapng_block(block_type, body[:body_size], order, interfaces)
        except (struct.error, IndexError) as exc:
            raise CaptureFileError(
                name, f"broken after packet {number} (malformed block {block_type:#x}: {exc})"
            ) from None
        if packet is not None:
            number += 1
            yield packet


def _pcapng_block(
    block_type: int, body: bytes, order: str, interfaces: list[_Interface]
) -> tuple[float, int, bytes] | None:
    if block_type == _IDB:
        linktype, _, snaplen = struct.unpack_from(order + "HHI", body)
        interfaces.append(_Interface(linktype, snaplen, _tsresol(body[8:], order)))
        return None
    if block_type == _EPB:
        iface, high, low, caplen, _ = struct.unpack_from(order + "IIIII", body)
        info = interfaces[iface]
        return ((high << 32) | low) / info.units, info.linktype, body[20 : 20 + caplen]
    if block_type == _SPB:
        (origlen,) = struct.unpack_from(order + "I", body)
        info = interfaces[0]
        caplen = min(origlen, info.snaplen or origlen, len(body) - 4)
        return 0.0, info.linktype, body[4 : 4 + caplen]
    if block_type == _OLD_PB:
        iface, _, high, low, caplen, _ = struct.unpack_from(order + "HHIIII", body)
        info = interfaces[iface]
        return ((high << 32) | low) / info.units, info.linktype, body[20 : 20 + caplen]
    return None


def _tsresol(options: bytes, order: str) -> float:
    """Timestamp units per second from an interface's options (``if_tsresol``, default 10^6)."""
    at = 0
    while at + 4 <= len(options):
        code, size = struct.unpack_from(order + "HH", options, at)
        if code == 0:
            break
        if code == 9 and size >= 1:
            value = options[at + 4]
            return float(2 ** (value & 0x7F)) if value & 0x80 else float(10**value)
        at += 4 + ((size + 3) & ~3)
    return 1_000_000.0


def _reader(stream: IO[bytes], name: str) -> Iterator[tuple[float, int, bytes]]:
    """(timestamp, link type, bytes) of every packet, from the file's first byte on."""
    magic = read_exactly(stream.read, 4)
    if not magic:
        raise CaptureFileError(name, "empty file (no capture header)")
    if magic in PCAP_MAGIC:
        rest = read_exactly(stream.read, 20)
        if len(rest) < 20:
            raise CaptureFileError(name, "not a pcap or pcapng file (header cut short)")
        header = classic_header(magic + rest)
        assert header is not None  # the magic is known
        order, divisor, _, linktype = header
        for ts, _, data in _classic_records(stream, name, order, divisor):
            yield ts, linktype, data
        return
    if magic == _PCAPNG_SHB:
        yield from _pcapng_records(stream, name)
        return
    raise CaptureFileError(name, f"not a pcap or pcapng file (starts with {magic!r})")


def read_packets(path: str, stream: IO[bytes] | None = None) -> Iterator[Packet]:
    """Every record of one capture file, in file order.

    ``stream`` (already gunzipped, see ``maybe_gunzip``) may be a pipe: it is read strictly
    forward, and each packet is yielded as soon as its record is complete. Raises
    ``CaptureFileError`` for a file that is not a capture, and after the last whole record
    of a file that breaks off mid-record (``tcpdump`` killed hard).
    """
    own = stream is None
    fileobj: IO[bytes] = open_capture(path) if stream is None else stream
    try:
        number = 0
        records = _reader(fileobj, path)
        while True:
            try:
                ts, linktype, data = next(records)
            except StopIteration:
                return
            except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                raise CaptureFileError(path, f"broken after packet {number} ({exc})") from None
            number += 1
            yield Packet(number, ts, linktype, data)
    finally:
        if own:
            fileobj.close()


_DIGITS = re.compile(r"(\d+)")


def rotation_key(path: str) -> list[tuple[int, int | str]]:
    """The sort key of ``capture_order``: the name's digit runs compare as numbers."""
    return [(1, int(part)) if part.isdigit() else (0, part) for part in _DIGITS.split(path)]


def capture_order(paths: Iterable[str]) -> list[str]:
    """Files of a rotated set in capture order: digits compare as numbers (``cap2`` < ``cap10``).

    ``tcpdump -C`` names its files ``cap``, ``cap1``, ``cap2``, ...; plain string order would put
    ``cap10`` before ``cap2`` and break flows that span files.
    """
    return sorted(paths, key=rotation_key)
