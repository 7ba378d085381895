"""The streaming query's state: a chain of decoder snapshots per capture set, beside Spark's
checkpoint, written by the task that decodes the set.

Why not Spark's state store: ``applyInPandasWithState`` costs about half a second per
micro-batch and five more at the first, whatever it does (measured with a step that does
nothing), while a stateless ``mapInArrow`` costs what a query without Python costs. So the
decoding step is stateless to Spark, and keeps its state itself, exactly once:

- snapshot ``k`` of a set is the file ``<state>/<set hash>/<k>.snap``: a JSON header line (the
  set, ``k``, the files of the micro-batch that made it) and the ``FlowTable`` snapshot;
- a micro-batch resumes from the newest snapshot and writes the next one. When the newest was
  made from exactly the files it is given, the micro-batch is a retry (a task or a query
  that failed after the snapshot was written, before Spark committed the batch): it resumes
  from that snapshot's parent and writes the same ``k`` again, giving the same rows, which
  Spark's file sink commits once;
- a snapshot is written to a temporary name and renamed (atomic on a file system), and only
  the newest three are kept.

The state directory must be where every executor can read and write it, as Spark's own
checkpoint location must (a shared mount on a cluster).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Sequence

import attrs

__all__ = ["KEEP", "Resume", "SnapshotChain"]

KEEP = 3
"""Snapshots kept per capture set: the newest, its parent (for a retry), and one more."""


@attrs.frozen
class Resume:
    """Where a micro-batch starts: the snapshot to restore (None: a fresh decoder) and the
    sequence number of the snapshot it writes."""

    blob: bytes | None
    sequence: int


class SnapshotChain:
    """The snapshots of one capture set."""

    def __init__(self, root: str, capture_set: str) -> None:
        digest = hashlib.sha256(capture_set.encode("utf-8", "surrogateescape")).hexdigest()
        self.capture_set = capture_set
        self.folder = os.path.join(root, digest[:24])

    def _sequences(self) -> list[int]:
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        return sorted(int(n[:-5]) for n in names if n.endswith(".snap") and n[:-5].isdigit())

    def _path(self, sequence: int) -> str:
        return os.path.join(self.folder, f"{sequence:012d}.snap")

    def _read(self, sequence: int) -> tuple[list[str], bytes]:
        with open(self._path(sequence), "rb") as f:
            header = json.loads(f.readline())
            return list(header["files"]), f.read()

    def resume(self, files: Sequence[str]) -> Resume:
        """Where the micro-batch that decodes ``files`` (in capture order) starts."""
        sequences = self._sequences()
        if not sequences:
            return Resume(None, 0)
        newest = sequences[-1]
        made_from, blob = self._read(newest)
        if made_from != list(files):
            return Resume(blob, newest + 1)
        # A retry of the micro-batch that made the newest snapshot: from its parent, again.
        if newest - 1 in sequences:
            return Resume(self._read(newest - 1)[1], newest)
        return Resume(None, newest)

    def save(self, sequence: int, files: Sequence[str], blob: bytes) -> None:
        """Write snapshot ``sequence`` (made from ``files``) and forget the old ones."""
        os.makedirs(self.folder, exist_ok=True)
        header = {"set": self.capture_set, "sequence": sequence, "files": list(files)}
        final = self._path(sequence)
        temporary = f"{final}.{os.getpid()}.tmp"
        with open(temporary, "wb") as f:
            f.write(json.dumps(header).encode("utf-8") + b"\n")
            f.write(blob)
        os.replace(temporary, final)
        for old in self._sequences():
            if old <= sequence - KEEP:
                with contextlib.suppress(FileNotFoundError):  # another attempt was first
                    os.remove(self._path(old))
