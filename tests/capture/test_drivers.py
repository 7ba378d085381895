"""``decode_stream``: a capture read strictly forward from a pipe or a growing file, each row
yielded as soon as the packet completing it was read."""

from __future__ import annotations

import gzip
import io
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from s3p_codec.capture import Row, decode_files, decode_stream
from s3p_codec.capture._drivers import FollowedFile, decode_followed
from tests.capture.synth import Flow, write_capture
from tests.capture.test_decoder import EXPECTED, SERVER, conversation, events

WAIT = 10.0  # seconds a row may take to show up before the test calls it lost


def two_conversations(fmt: str = "pcap") -> tuple[bytes, int]:
    """A capture of two S3P conversations, and where the first one's packets end in it."""
    first = conversation(Flow(("10.0.0.1", 40000), SERVER))
    second = conversation(Flow(("10.0.0.3", 40001), SERVER, ts=1_700_000_001.0))
    whole = write_capture(first + second, fmt=fmt)
    return whole, len(write_capture(first, fmt=fmt))


class Trickler(threading.Thread):
    """Writes ``data`` into ``fd`` in small pieces; stops at ``pause_at`` until released."""

    def __init__(self, write: object, data: bytes, pause_at: int, piece: int = 7) -> None:
        super().__init__(daemon=True)
        self.write = write
        self.data = data
        self.pause_at = pause_at
        self.piece = piece
        self.release = threading.Event()
        self.paused = threading.Event()
        self.written = 0

    def run(self) -> None:
        at = 0
        while at < len(self.data):
            if at == self.pause_at:
                self.paused.set()
                self.release.wait(WAIT)
            end = min(at + self.piece, len(self.data))
            if at < self.pause_at < end:
                end = self.pause_at
            self.write(self.data[at:end])  # type: ignore[operator]
            self.written = at = end
        self.done()

    def done(self) -> None:
        pass


@pytest.mark.parametrize("fmt", ["pcap", "pcapng", "pcap.gz"])
def test_rows_come_from_a_pipe_while_the_writer_is_still_writing(fmt: str) -> None:
    data, first_end = two_conversations(fmt.removesuffix(".gz"))
    if fmt.endswith(".gz"):
        # gzip buffers, so the first conversation is its own member: flushed whole.
        first_gz = gzip.compress(data[:first_end])
        data, first_end = first_gz + gzip.compress(data[first_end:]), len(first_gz)
    read_fd, write_fd = os.pipe()
    writer = Trickler(lambda b: os.write(write_fd, b), data, first_end)
    writer.done = lambda: os.close(write_fd)  # type: ignore[method-assign]
    writer.start()
    rows: list[Row] = []
    with os.fdopen(read_fd, "rb") as stream:
        for row in decode_stream(stream, name="-"):
            rows.append(row)
            if len(rows) == len(EXPECTED):
                # Every row of the first conversation came before the writer was let go on to
                # the second: nothing was held back for the end of the stream.
                assert writer.written <= first_end  # (it goes on by itself after WAIT)
                writer.release.set()
    writer.join(WAIT)
    assert events(rows) == EXPECTED * 2
    assert {r.file for r in rows} == {"-"}


def test_a_stream_gives_the_rows_a_file_gives(tmp_path: Path) -> None:
    data, _ = two_conversations()
    path = tmp_path / "cap.pcap"
    path.write_bytes(data)
    from_file = list(decode_files([str(path)]))
    from_stream = list(decode_stream(io.BytesIO(data), name=str(path)))
    assert from_stream == from_file


def test_a_stream_that_breaks_off_ends_in_a_capture_error_row_after_its_rows() -> None:
    data, first_end = two_conversations()
    rows = list(decode_stream(io.BytesIO(data[: first_end + 30])))
    assert events(rows)[: len(EXPECTED)] == EXPECTED
    errors = [r for r in rows if r.kind == "capture_error"]
    assert len(errors) == 1
    assert "broken inside packet" in errors[0].detail
    (empty,) = decode_stream(io.BytesIO(b""))
    assert empty.detail == "empty file (no capture header)"


def test_a_growing_file_is_followed_until_stopped(tmp_path: Path) -> None:
    data, first_end = two_conversations()
    path = tmp_path / "growing.pcap"
    path.write_bytes(b"")
    out = open(path, "ab")  # noqa: SIM115 - closed by the writer thread

    def append(piece: bytes) -> None:
        out.write(piece)
        out.flush()

    followed = FollowedFile(str(path), poll=0.01)
    writer = Trickler(append, data, first_end, piece=301)

    def finish() -> None:
        out.close()
        followed.stop()  # the writer is done: let the reader end at the end of the file

    writer.done = finish  # type: ignore[method-assign]
    writer.start()
    rows: list[Row] = []
    for row in decode_stream(followed, name=str(path)):  # type: ignore[arg-type]
        rows.append(row)
        if len(rows) == len(EXPECTED):
            assert writer.written <= first_end  # (it goes on by itself after WAIT)
            writer.release.set()
    writer.join(WAIT)
    followed.close()
    assert events(rows) == EXPECTED * 2


# -- a followed file that is truncated, replaced or removed (``tail -F``) ----------------------

OLD = write_capture(conversation(Flow(("10.0.0.1", 40000), SERVER), mss=4)[:-7])
"""A capture whose one conversation is still open, its last request cut inside a frame: 8 event
rows while followed, and its error row only once the conversation is finished."""
NEW = write_capture(conversation(Flow(("10.0.0.3", 40001), SERVER, ts=1_700_000_001.0)))


class Rotation:
    """Follows ``path`` (holding ``OLD``); once its 8 rows are out, ``change`` runs in a thread
    with this object, then the follower is stopped: so a run ends by itself, even a failing one."""

    def __init__(self, path: Path, change: Callable[[Rotation], None]) -> None:
        path.write_bytes(OLD)
        self.path = path
        self.notices: list[str] = []
        self.followed = FollowedFile(str(path), poll=0.01, notify=self.notices.append)
        self.thread = threading.Thread(target=self._run, args=(change,), daemon=True)

    def _run(self, change: Callable[[Rotation], None]) -> None:
        try:
            time.sleep(0.1)  # the reader goes on to the cut frame behind those rows
            change(self)
        finally:
            self.followed.stop()

    def notice(self, count: int) -> None:
        """Wait until the follower said ``count`` things."""
        deadline = time.monotonic() + WAIT
        while len(self.notices) < count and time.monotonic() < deadline:
            time.sleep(0.01)

    def rows(self) -> list[Row]:
        rows: list[Row] = []
        for row in decode_followed(self.followed):
            rows.append(row)
            if len(rows) == 8:
                self.thread.start()
        self.thread.join(WAIT)
        self.followed.close()
        return rows


def _old_then_new(rows: list[Row], path: Path, old_end: str = "error") -> None:
    """Everything of the old file (its open conversation finished as at the end of a capture)
    came before the new file, which was decoded from its own header under the name PATH[2]."""
    old, new = rows[:9], rows[9:]
    assert events(old) == EXPECTED[:8]
    assert old[8].kind == old_end
    assert {r.file for r in old} == {str(path)}
    assert events(new) == EXPECTED
    assert {r.file for r in new} == {f"{path}[2]"}
    assert new[0].first_packet == 4  # packets counted from the new file's start
    assert len({r.conversation for r in rows}) == 2


def test_a_followed_file_truncated_in_place_is_decoded_again(tmp_path: Path) -> None:
    def truncate_then_write(run: Rotation) -> None:  # logrotate copytruncate, then tcpdump
        with open(run.path, "r+b") as out:
            out.truncate(0)
            run.notice(1)
            out.write(NEW)

    path = tmp_path / "cap.pcap"
    run = Rotation(path, truncate_then_write)
    _old_then_new(run.rows(), path)
    assert run.notices == [f"file truncated; decoding it again from its start as {path}[2]"]


def test_a_followed_file_replaced_by_rename_is_read_to_its_end_then_left(
    tmp_path: Path,
) -> None:
    def rotate(run: Rotation) -> None:
        # The writer finishes the old file (the rest of its conversation) as it is rotated
        # away, the new one taking its name at once: the old file's last bytes are not lost.
        rest = write_capture(conversation(Flow(("10.0.0.1", 40000), SERVER), mss=4))[len(OLD) :]
        fresh = tmp_path / "fresh.pcap"
        fresh.write_bytes(NEW)
        with open(run.path, "ab") as old:
            old.write(rest)
        os.link(run.path, tmp_path / "cap.pcap.1")
        os.replace(fresh, run.path)
        run.notice(1)

    path = tmp_path / "cap.pcap"
    run = Rotation(path, rotate)
    rows = run.rows()
    assert events(rows[:10]) == EXPECTED  # the old conversation whole, then the new file
    assert {r.file for r in rows[:10]} == {str(path)}
    assert events(rows[10:]) == EXPECTED
    assert {r.file for r in rows[10:]} == {f"{path}[2]"}
    assert run.notices == [f"file replaced; following the new file as {path}[2]"]


def test_a_followed_file_removed_is_waited_for_until_it_comes_back(tmp_path: Path) -> None:
    def remove_then_create(run: Rotation) -> None:
        os.remove(run.path)
        run.notice(1)
        time.sleep(0.05)  # several looks at a path that is gone: said once
        run.path.write_bytes(NEW)
        run.notice(2)

    path = tmp_path / "cap.pcap"
    run = Rotation(path, remove_then_create)
    _old_then_new(run.rows(), path)
    assert run.notices == [
        "file gone; waiting for it to come back",
        f"file back; following the new file as {path}[2]",
    ]


def test_a_file_read_to_its_end_is_not_taken_for_a_new_one(tmp_path: Path) -> None:
    path = tmp_path / "cap.pcap"
    path.write_bytes(OLD)
    notices: list[str] = []
    followed = FollowedFile(str(path), poll=0.01, notify=notices.append)
    followed.stop()
    rows = list(decode_followed(followed))
    followed.close()
    assert events(rows) == EXPECTED[:8]
    assert notices == []
