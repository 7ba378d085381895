"""The drivers of one process: where packets come from, and the table they go to.

The plan:

1. Capture files (``decode_files``): a rotated set, read in ``capture_order``, one table for
   all of them, so conversations carry on from one file to the next. Each file is scanned into
   the table (``_lanes.scan``): a classic pcap file read in place, its in-order packets through
   the lanes, anything else segment by segment; ``feed_file`` is that step alone, for a caller
   that keeps the table between files (the Spark stream). A file that cannot be read, or
   breaks off, is one ``capture_error`` row, and the next file is decoded. A tqdm bar on stderr
   moves with the bytes read.
2. A stream (``decode_stream``): a pipe, a socket, tcpdump's output; read strictly forward,
   record by record, each row yielded as soon as the packet completing it was read.
3. Followed inputs: a growing file (``FollowedFile``, as ``tail -F``: a rotated file ends the
   capture in hand and the next is decoded from its start, ``decode_followed``), or the objects
   a URL names as they appear (``decode_followed_objects``: one capture rotated over objects,
   decoded as ``decode_files`` decodes a rotated set).
"""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, Any, cast

import attrs

from s3p_codec._core import Observer
from s3p_codec.capture._decoder import default_observer
from s3p_codec.capture._flows import FlowTable, Limits
from s3p_codec.capture._lanes import scan
from s3p_codec.capture._packets import decode_packet
from s3p_codec.capture._pcap import (
    READ_CHUNK,
    CaptureFileError,
    capture_order,
    maybe_gunzip,
    read_packets,
)
from s3p_codec.capture._remote import (
    LATE_UPLOAD,
    RemoteInputError,
    Seen,
    input_size,
    list_objects,
    new_objects,
    open_input,
)
from s3p_codec.capture._rows import Row, capture_error_row, file_error_row
from s3p_codec.capture._scan import SegmentReader

__all__ = [
    "FOLLOW_POLL",
    "OBJECT_POLL",
    "FileOutcome",
    "FollowedFile",
    "decode_files",
    "decode_followed",
    "decode_followed_objects",
    "decode_in_turn",
    "decode_stream",
    "feed_file",
    "follow_objects",
]


@attrs.frozen
class FileOutcome:
    """How reading one input went: ``packets`` read before the end or ``error`` (None: whole).

    ``readable`` is False when not one packet came out of it (missing, not a capture, empty).
    """

    path: str
    packets: int
    error: Exception | None

    @property
    def readable(self) -> bool:
        """True when the input gave at least one packet, or was a whole, valid capture."""
        return self.packets > 0 or self.error is None


def decode_files(
    paths: Iterable[str],
    decode_as: Mapping[int, str] | None = None,
    *,
    progress: bool | None = False,
    observers: Callable[[str], Observer[Any]] = default_observer,
    limits: Limits | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
) -> Iterator[Row]:
    """Rows of one capture, possibly rotated into several files, in one pass.

    Files are read in ``capture_order`` (``cap2`` before ``cap10``) and flows carry on from one
    file to the next. A file that is not a capture, or that breaks off, gives a
    ``capture_error`` row and decoding goes on with the next file; ``on_file`` hears how each
    file went. ``progress`` shows a tqdm bar on stderr (None: only when stderr is a terminal,
    once the run took half a second; tqdm is needed only then).
    """
    ordered = capture_order(paths)
    sizes = {p: input_size(p) for p in ordered}
    table = FlowTable.with_limits(decode_as, observers, limits)
    with _progress_bar(progress, sum(sizes.values())) as bar:
        yield from decode_in_turn(ordered, table, on_file, bar, sizes)
        yield from table.finish()


def decode_in_turn(
    paths: Iterable[str],
    table: FlowTable,
    on_file: Callable[[FileOutcome], None] | None = None,
    bar: Any = None,
    sizes: Mapping[str, int] | None = None,
) -> Iterator[Row]:
    """Rows of ``paths`` fed to ``table`` one after the other, in the order given (which may be
    an endless iterator: the objects a followed URL names as they appear); the conversations
    still open at the end are left open. ``bar`` (tqdm) is advanced by the bytes read, of
    ``sizes``."""
    for index, path in enumerate(paths):
        done = 0
        tick = 4096
        reader: SegmentReader | None = None
        error: Exception | None = None
        try:
            with open_input(path) as raw:
                reader = SegmentReader(path, raw, path, index)
                for rows in scan(reader, raw, table):
                    if rows:
                        yield from rows
                    if bar is not None and reader.packets >= tick:
                        tick = reader.packets + 4096
                        position = raw.tell()
                        bar.update(position - done)
                        done = position
        except (CaptureFileError, OSError) as exc:
            error = exc
            yield file_error_row(path, exc)
        packets = reader.packets if reader is not None else 0
        if on_file is not None:
            on_file(FileOutcome(path, packets, error))
        if bar is not None and sizes is not None:
            bar.update(sizes[path] - done)


def feed_file(table: FlowTable, path: str, file_index: int = 0) -> Iterator[list[Row]]:
    """Feed every packet of the capture file (or object URL) ``path`` to ``table``, as
    ``decode_files`` reads each of its files, and yield the rows they complete, a list at a time
    (empty lists too, every few thousand packets); the conversations still open stay open in
    ``table``, for the next file. Raises ``CaptureFileError`` for a file that is not a capture
    or breaks off, ``OSError`` for one that cannot be read, after the rows of the packets
    before (``decode_files`` makes either a ``capture_error`` row)."""
    with open_input(path) as raw:
        yield from scan(SegmentReader(path, raw, path, file_index), raw, table)


def decode_stream(
    stream: IO[bytes],
    decode_as: Mapping[int, str] | None = None,
    *,
    name: str = "-",
    observers: Callable[[str], Observer[Any]] = default_observer,
    limits: Limits | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
) -> Iterator[Row]:
    """Rows of a pcap or pcapng stream (gzip too) read strictly forward, each yielded as soon as
    the packet completing it was read: ``tcpdump -U -w - | ...``, a socket, a growing file.

    Nothing is sought and nothing is read ahead beyond the current record, so rows come while the
    stream is still being written. Memory is bounded by ``limits`` (idle conversations close
    after ``idle_timeout`` seconds of capture time, at most ``max_flows`` are open, each direction
    holds at most ``max_pending`` bytes behind a hole), so an endless stream decodes in flat
    memory. A stream that is not a capture, or breaks off, ends with a ``capture_error`` row
    (``name`` is the file name rows show). Never raises for bad input; I/O errors of ``stream``
    itself become that row too.
    """
    table = FlowTable.with_limits(decode_as, observers, limits)
    packets = 0
    error: Exception | None = None
    try:
        for packet in read_packets(name, maybe_gunzip(stream)):
            packets = packet.number
            segment = decode_packet(packet, name, 0)
            if segment is not None:
                yield from table.add(segment)
    except (CaptureFileError, OSError) as exc:
        error = exc
        yield file_error_row(name, exc)
    if on_file is not None:
        on_file(FileOutcome(name, packets, error))
    yield from table.finish()


class _NoBar:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _progress_bar(progress: bool | None, total: int) -> Any:
    """A tqdm bar (a context manager giving the bar), or one giving None when not wanted."""
    if progress is False:
        return _NoBar()
    from tqdm import tqdm  # noqa: PLC0415 - only progress bars need it

    return tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        delay=0.5 if progress is None else 0.0,
        disable=None if progress is None else not progress,
        desc="decoding",
        leave=False,
    )


FOLLOW_POLL = 0.05
"""Seconds between looks at a followed file that has no new bytes."""

OBJECT_POLL = 2.0
"""Seconds between listings of a followed URL when the last one had nothing new (a listing is
a request to the store, and objects of a rotating capture come minutes apart)."""


class FollowedFile(io.RawIOBase):
    """A file read as it grows (``tail -F``): a read waits for the bytes instead of ending,
    until ``stop()`` is called (then it ends at the bytes there are).

    While waiting it looks at the path as ``tail -F`` does, since a capture file is rotated
    under a follower (renamed, ``logrotate copytruncate``, tcpdump started again on the name):
    a file shorter than the read position was truncated, and a path naming another file
    (device and inode) was replaced, once the old file has been read to its end. Either way
    reads end there (the capture in hand is over) and ``next_file()`` opens the path again.
    A path that is gone is waited for, the old file still read meanwhile. Each change is one
    call of ``notify`` with a short sentence.

    ``name`` is what rows call the file: the path, then ``PATH[2]``, ``PATH[3]``... for the
    files that came after it, since rows number packets per file and name a conversation by
    file and packet: two files under one name would give two conversations one id.
    """

    def __init__(
        self,
        path: str,
        poll: float = FOLLOW_POLL,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__()
        self._path = path
        self._poll = poll
        self._notify = notify if notify is not None else (lambda _: None)
        self._stopped = threading.Event()
        self._file = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._ident = _identity(os.fstat(self._file.fileno()))
        self._ended = False  # the open file was truncated or replaced: reads end
        self._gone = False  # the path names no file (noticed once)
        self._generation = 1  # how many files the path has named, this one included

    @property
    def name(self) -> str:
        """The name rows give the file being read (see the class)."""
        return _generation_name(self._path, self._generation)

    def readable(self) -> bool:
        """Always true: a followed file is only read."""
        return True

    def stop(self) -> None:
        """Let reads end at the end of the file from now on."""
        self._stopped.set()

    def read(self, size: int = -1) -> bytes:
        """Exactly ``size`` bytes (``READ_CHUNK`` when negative), waiting for the file to grow;
        fewer only once ``stop()`` was called, or the file was truncated or replaced, and the
        file ends."""
        if size < 0:
            size = READ_CHUNK
        got = bytearray()
        while len(got) < size and not self._ended:
            stopped = self._stopped.is_set()  # before the read: bytes written before stop() count
            more = self._file.read(size - len(got))
            if more:
                got += more
            elif stopped or self._rotated():
                break
            else:
                self._stopped.wait(self._poll)
        return bytes(got)

    def read1(self, size: int = -1) -> bytes:
        """The bytes there are, up to ``size``: waits only while there are none."""
        if size < 0:
            size = READ_CHUNK
        while not self._ended:
            stopped = self._stopped.is_set()
            more = self._file.read1(size)
            if more or stopped or self._rotated():
                return more
            self._stopped.wait(self._poll)
        return b""

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` as ``read`` would; return the count."""
        data = self.read(len(memoryview(buffer)))
        memoryview(buffer).cast("B")[: len(data)] = data
        return len(data)

    def next_file(self) -> bool:
        """After reads ended on a truncated or replaced file: open the path again and read it
        from its start (True). False when there is nothing to go on to: the file did not change,
        or the path is gone and ``stop()`` was called (until then it is waited for)."""
        while self._ended:
            try:
                fresh = open(self._path, "rb")  # noqa: SIM115 - closed by close()
            except FileNotFoundError:  # gone between the look and the open
                self._went()
                if self._stopped.wait(self._poll):
                    return False
                continue
            if self._gone:
                self._gone = False
                self._notify(f"file back; following the new file as {self._next_name()}")
            self._file.close()
            self._file = fresh
            self._generation += 1
            self._ident = _identity(os.fstat(fresh.fileno()))
            self._ended = False
            return True
        return False

    def _went(self) -> None:
        if not self._gone:
            self._gone = True
            self._notify("file gone; waiting for it to come back")

    def _rotated(self) -> bool:
        """Called once every byte of the open file was read: True (reads end) when the path
        now names another file or the open file was truncated."""
        size = os.fstat(self._file.fileno()).st_size
        position = self._file.tell()
        try:
            named = os.stat(self._path)
        except FileNotFoundError:
            self._went()  # the old file is still read, should its writer go on with it
            return False
        if _identity(named) != self._ident:
            if size > position:
                return False  # the old file grew meanwhile: read it to its end first
            what = "back" if self._gone else "replaced"
            self._notify(f"file {what}; following the new file as {self._next_name()}")
        elif size < position:
            self._notify(f"file truncated; decoding it again from its start as {self._next_name()}")
        else:
            if self._gone:  # renamed away and back: the same file, read on
                self._gone = False
                self._notify("file back; following it again")
            return False
        self._gone = False
        self._ended = True
        return True

    def _next_name(self) -> str:
        return _generation_name(self._path, self._generation + 1)

    def close(self) -> None:
        """Close the underlying file."""
        self._file.close()
        super().close()


def _generation_name(path: str, generation: int) -> str:
    return path if generation == 1 else f"{path}[{generation}]"


def _identity(stat: os.stat_result) -> tuple[int, int]:
    return (stat.st_dev, stat.st_ino)


def decode_followed(
    followed: FollowedFile,
    decode_as: Mapping[int, str] | None = None,
    *,
    limits: Limits | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
) -> Iterator[Row]:
    """Rows of a followed file, through every file its path names in turn: each new file starts
    with its own capture header, so the conversations still open are finished as at the end of
    a capture (their last rows out) before the next file is decoded from its first packet.
    Rows name each file as ``followed.name`` does."""
    stream = cast(IO[bytes], followed)
    while True:
        name = followed.name
        yield from decode_stream(stream, decode_as, name=name, limits=limits, on_file=on_file)
        if not followed.next_file():
            return


def follow_objects(pattern: str, *, poll: float = OBJECT_POLL) -> Iterator[str]:
    """The objects the URL ``pattern`` names, then each new one as it appears, for ever: the
    objects of each listing oldest first (``new_objects``; those of one listing in capture
    order, as a set uploaded at once has no useful order of time). Raises ``RemoteInputError``
    when the store refuses a listing."""
    seen: Seen = []
    late_ms = int(LATE_UPLOAD * 1000)
    while True:
        batch, seen = new_objects(list_objects(pattern), seen, late_ms, None)
        yield from capture_order(url for _mtime, url in batch)
        if not batch:
            time.sleep(poll)


def decode_followed_objects(
    pattern: str,
    decode_as: Mapping[int, str] | None = None,
    *,
    limits: Limits | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
    poll: float = OBJECT_POLL,
) -> Iterator[Row]:
    """Rows of the objects a URL names, as they appear (``decode --follow 's3://caps/cap*'``):
    one capture rotated over objects, so conversations carry on from one object to the next,
    as ``decode_files`` decodes a rotated set. Ends when the store refuses a listing
    (``on_file`` hears it for ``pattern``), with the rows of the conversations still open."""
    table = FlowTable.with_limits(decode_as, limits=limits)
    try:
        yield from decode_in_turn(follow_objects(pattern, poll=poll), table, on_file)
    except RemoteInputError as exc:
        if on_file is not None:
            on_file(FileOutcome(pattern, 0, exc))
        yield capture_error_row(pattern, type(exc).__name__, exc.message)
    yield from table.finish()
