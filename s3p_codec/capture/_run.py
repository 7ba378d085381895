"""One run of ``s3p-codec decode``/``stats``/``live``: where rows come from, which are kept,
where they go, and what the user is told.

Sources: capture files (directories and globs expanded), standard input (``-``), a growing file
(``--follow``) or tcpdump on an interface (``live``). The last three are streams: rows are
written and flushed one by one as soon as complete, and Ctrl-C ends the run cleanly with the
``stats`` summary of what was seen (exit 0). Every input that cannot be read is one line on
stderr; when none could be read at all the exit status is 2, as tshark's.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import IO, Any, TextIO, cast

import attrs

from s3p_codec.capture._decoder import (
    FileOutcome,
    FlowTable,
    Limits,
    capture_error_row,
    decode_files,
    decode_in_turn,
    decode_stream,
)
from s3p_codec.capture._inputs import (
    LATE_UPLOAD,
    RemoteInputError,
    Seen,
    expand_inputs,
    is_remote,
    list_objects,
    new_objects,
)
from s3p_codec.capture._packets import Packet
from s3p_codec.capture._pcap import READ_CHUNK, PrefixedStream, capture_order, read_packets
from s3p_codec.capture._rowfilter import FilterError, RowFilter, compile_filter
from s3p_codec.capture._table import (
    COLUMN_NAMES,
    STATS_COLUMNS,
    Row,
    Summary,
    format_summary,
    format_table,
)

__all__ = [
    "CaptureRun",
    "FollowedFile",
    "TcpdumpError",
    "decode_followed",
    "decode_followed_objects",
    "follow_objects",
    "start_tcpdump",
]

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


class TcpdumpError(Exception):
    """tcpdump is missing, or stopped before capturing (no permission, no such interface)."""


def start_tcpdump(
    tcpdump: str, interface: str, bpf: list[str]
) -> tuple[subprocess.Popen[bytes], IO[bytes], list[str]]:
    """Run ``tcpdump -U -w - -i IFACE [BPF]``; return the process, its capture stream (header
    already there) and the list its stderr lines go into. Raises ``TcpdumpError`` with one line
    when tcpdump is missing or ends before writing a capture header."""
    command = [tcpdump, "-U", "-w", "-", "-i", interface, *bpf]
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError:
        raise TcpdumpError(
            f"live capture runs {tcpdump}, which is not installed (apt-get install tcpdump, "
            "or --tcpdump PATH)"
        ) from None
    except PermissionError:
        raise TcpdumpError(f"{tcpdump} may not be run by this user") from None
    assert proc.stdout is not None
    assert proc.stderr is not None
    errors: list[str] = []
    stderr = proc.stderr

    def drain() -> None:
        for line in stderr:
            errors.append(line.decode("utf-8", "replace").strip())

    threading.Thread(target=drain, daemon=True).start()
    head = proc.stdout.read(24)  # pcap header: written at once when the capture starts
    if len(head) < 24:
        code = proc.wait()
        time.sleep(0.05)  # let the drain thread take tcpdump's last words
        said = [line for line in errors if line and not line.startswith("listening on")]
        reason = said[-1] if said else f"tcpdump exited with status {code}"
        if "permission" in reason.lower() or "not permitted" in reason.lower():
            reason += " (capturing needs root or the CAP_NET_RAW capability)"
        raise TcpdumpError(reason)
    stream: IO[bytes] = PrefixedStream(head, proc.stdout)  # type: ignore[assignment]
    return proc, stream, errors


@attrs.define
class CaptureRun:
    """The parsed request of one command; ``execute`` runs it and returns the exit status."""

    command: str
    inputs: list[str]
    ports: Mapping[int, str]
    limits: Limits
    keep: RowFilter | None
    count: int | None
    progress: bool | None
    follow: bool
    time: str = "relative"
    interface: str | None = None
    bpf: list[str] = attrs.Factory(list)
    tcpdump: str = "tcpdump"
    wide: bool = False
    fields: list[str] = attrs.Factory(list)
    outcomes: list[FileOutcome] = attrs.Factory(list)
    _paths: list[str] = attrs.Factory(list)
    summary: Summary = attrs.Factory(Summary)
    _cleanup: list[Callable[[], None]] = attrs.Factory(list)

    @classmethod
    def from_args(
        cls, args: argparse.Namespace, command: str, ports: Mapping[int, str]
    ) -> CaptureRun:
        """Check the arguments; raises ValueError (one line) for a bad combination."""
        try:
            keep = compile_filter(args.display_filter) if args.display_filter else None
        except FilterError as exc:
            raise ValueError(f"-Y: {exc}") from None
        limits = Limits(args.idle_timeout, args.max_flows, args.max_pending)
        inputs = list(getattr(args, "files", None) or [])
        if args.follow and (len(inputs) != 1 or inputs == ["-"]):
            raise ValueError("--follow takes exactly one FILE")
        if "-" in inputs and len(inputs) > 1:
            raise ValueError("- (standard input) cannot be mixed with other inputs")
        specs = getattr(args, "fields", None) or []
        fields = [f.strip() for spec in specs for f in spec.split(",") if f.strip()]
        unknown = [f for f in fields if f not in COLUMN_NAMES]
        if unknown:
            raise ValueError(f"-e: unknown field {unknown[0]!r}; fields: {', '.join(COLUMN_NAMES)}")
        return cls(
            command, inputs, ports, limits, keep, args.count, args.progress, args.follow,
            time=getattr(args, "time", "relative"), interface=getattr(args, "interface", None),
            bpf=list(getattr(args, "bpf", [])), tcpdump=getattr(args, "tcpdump", "tcpdump"),
            wide=getattr(args, "wide", False), fields=fields,
        )  # fmt: skip

    @property
    def streaming(self) -> bool:
        """Rows come from a stream that may never end: flush each, Ctrl-C ends cleanly."""
        return self.command == "live" or self.follow or self.inputs == ["-"]

    def _note(self, outcome: FileOutcome) -> None:
        self.outcomes.append(outcome)
        if outcome.error is not None:
            detail = getattr(outcome.error, "message", None)
            if detail is None:
                from s3p_codec.capture._inputs import unreadable_reason  # noqa: PLC0415

                detail = unreadable_reason(outcome.path) or str(outcome.error)
            print(f"s3p-codec: {outcome.path}: {detail}", file=sys.stderr, flush=True)

    def _source(self) -> Iterator[Row]:
        if self.command == "live":
            assert self.interface is not None
            proc, stream, _ = start_tcpdump(self.tcpdump, self.interface, self.bpf)
            self._cleanup.append(lambda: _stop(proc))
            print(f"Capturing on '{self.interface}'", file=sys.stderr, flush=True)  # as tshark
            return decode_stream(
                stream, self.ports, name=self.interface, limits=self.limits, on_file=self._note
            )
        if self.inputs == ["-"]:
            return decode_stream(
                sys.stdin.buffer, self.ports, name="-", limits=self.limits, on_file=self._note
            )
        if self.follow and is_remote(self.inputs[0]):
            return decode_followed_objects(
                self.inputs[0], self.ports, limits=self.limits, on_file=self._note
            )
        if self.follow and os.path.isfile(self.inputs[0]):
            path = self.inputs[0]

            def notify(message: str) -> None:
                print(f"s3p-codec: {path}: {message}", file=sys.stderr, flush=True)

            followed = FollowedFile(path, notify=notify)
            self._cleanup.append(followed.close)
            return decode_followed(followed, self.ports, limits=self.limits, on_file=self._note)
        self._paths = expand_inputs(self.inputs)
        return decode_files(
            self._paths, self.ports, progress=self.progress, limits=self.limits,
            on_file=self._note,
        )  # fmt: skip

    def _rows(self, source: Iterator[Row], interrupted: list[bool]) -> Iterator[Row]:
        """Kept rows, counted into the summary; ends quietly at Ctrl-C on a stream."""
        left = self.count
        try:
            for row in source:
                if self.keep is not None and not self.keep(row):
                    continue
                self.summary.add(row)
                yield row
                if left is not None:
                    left -= 1
                    if left <= 0:
                        return
        except KeyboardInterrupt:
            if not self.streaming:
                raise
            interrupted.append(True)

    def execute(self, fmt: str, out_path: str | None) -> int:
        """Decode and write; 0, or 2 when no input could be read (or tcpdump failed)."""
        interrupted: list[bool] = []
        try:
            try:
                rows = self._rows(self._source(), interrupted)
            except TcpdumpError as exc:
                print(f"s3p-codec: {exc}", file=sys.stderr)
                return 2
            try:
                self._write(rows, fmt, out_path)
            except KeyboardInterrupt:
                if not self.streaming:
                    raise
                interrupted.append(True)
        finally:
            for cleanup in self._cleanup:
                cleanup()
        if interrupted and self.command != "stats":
            for line in format_summary(self.summary.table()):
                print(line, file=sys.stderr)
            return 0
        if self.outcomes and not any(o.readable for o in self.outcomes):
            return 2
        return 0

    def _write(self, rows: Iterator[Row], fmt: str, out_path: str | None) -> None:
        from s3p_codec.capture._table import write_json, write_jsonl, write_parquet  # noqa: PLC0415

        if self.command == "stats":
            for _ in rows:
                pass
            table = self.summary.table()
            if fmt == "json":
                print(json.dumps(table, indent=2))
            elif fmt == "jsonl":
                for entry in table:
                    print(json.dumps({c: entry[c] for c in STATS_COLUMNS}))
            else:
                for line in format_summary(table):
                    print(line)
            return
        if fmt == "parquet":
            assert out_path is not None
            batch = 1000 if self.streaming else 50_000
            count = write_parquet(rows, out_path, batch_rows=batch)
            print(f"{count} rows written to {out_path}", file=sys.stderr)
            return
        with _Output(out_path) as out:
            if fmt == "jsonl":
                write_jsonl(rows, out, flush=self.streaming)
                return
            if fmt == "json":
                write_json(rows, out)
                return
            width = None if self.wide else _terminal_width(out)
            lines = format_table(
                rows, time=self.time, origin=self._origin(), width=width, fields=self.fields
            )
            for line in lines:
                out.write(line + "\n")
                if self.streaming:
                    out.flush()

    def _origin(self) -> float | None:
        """Where ``-t relative`` counts from: the earliest first packet of all input files, so
        that times across files (rotated or not, in any order) never go negative; None for a
        stream (standard input, --follow, live), where it is the first row's time."""
        if self.time != "relative" or self.streaming:
            return None
        firsts = []
        for path in self._paths:
            try:
                packets = cast(Generator[Packet, None, None], read_packets(path))
                with contextlib.closing(packets):
                    first = next(packets, None)
            except Exception:  # unreadable inputs are reported by the decode itself
                continue
            if first is not None:
                firsts.append(first.ts)
        return min(firsts, default=None)


def _terminal_width(out: TextIO) -> int | None:
    """The width to fit the table to: ``COLUMNS``, else the terminal's; None (cut nothing)
    when writing to a pipe or a file, as tshark does."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if out.isatty():
        return shutil.get_terminal_size().columns
    return None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class _Output:
    """stdout, or a file opened for writing (closed on exit)."""

    def __init__(self, path: str | None) -> None:
        self._path = path
        self._file: TextIO | None = None

    def __enter__(self) -> TextIO:
        if self._path is None or self._path == "-":
            return sys.stdout
        self._file = open(self._path, "w", encoding="utf-8")
        return self._file

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
