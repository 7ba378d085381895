"""One run of ``s3p-codec decode``/``stats``/``live``: where rows come from, which are kept,
where they go, and what the user is told.

Sources: capture files (directories and globs expanded), standard input (``-``), a growing file
(``--follow``) or tcpdump on an interface (``live``). The last three are streams: rows are
written and flushed one by one as soon as complete, and Ctrl-C ends the run cleanly with the
``stats`` summary of what was seen (exit 0). Every input that cannot be read is one line on
stderr; when none could be read at all the exit status is 2, as tshark's.

The sources are the drivers of ``_drivers`` (files, streams, followed files and objects) and
tcpdump, started here (``start_tcpdump``); rows are kept by ``-Y`` (``_rowfilter``), counted
into the ``stats`` summary and written by ``_table``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import IO, TextIO, cast

import attrs

from s3p_codec.capture._drivers import (
    FileOutcome,
    FollowedFile,
    decode_files,
    decode_followed,
    decode_followed_objects,
    decode_stream,
)
from s3p_codec.capture._flows import Limits
from s3p_codec.capture._inputs import expand_inputs, unreadable_reason
from s3p_codec.capture._packets import Packet
from s3p_codec.capture._pcap import PrefixedStream, read_packets
from s3p_codec.capture._remote import is_remote
from s3p_codec.capture._rowfilter import FilterError, RowFilter, compile_filter
from s3p_codec.capture._rows import COLUMN_NAMES, Row
from s3p_codec.capture._table import (
    STATS_COLUMNS,
    Summary,
    format_summary,
    format_table,
    write_json,
    write_jsonl,
    write_parquet,
)

__all__ = ["CaptureRun", "TcpdumpError", "start_tcpdump"]


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
