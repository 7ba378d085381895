"""A streaming source of the new objects a URL pattern names, for ``spark stream`` over object
stores (``s3://caps/day1/cap.pcap*``).

Spark's own file source lists through Hadoop's file systems, which need connector jars for an
object store (``s3a://`` and the ``hadoop-aws`` jar); this source lists through the same Arrow
filesystem the decoding step reads with, so watching a bucket needs only the ``remote`` extra.
Like the file source, it hands on paths only: the step reads the objects itself.

The plan:

- The pattern is listed at every trigger, on the driver (``capture.list_objects``);
  objects are taken oldest first by modification time, then in capture order.
- An offset is ``{"seen": [[mtime_ms, url], ...], "batch": [url, ...]}``: what
  ``capture.new_objects`` keeps (the objects taken within ``LATE_UPLOAD`` seconds of
  the newest taken: as many as that much traffic brings, whatever the query's age), and the
  objects of the micro-batch that ended at it.
- ``partitions`` gives the ``batch`` of the end offset, so a micro-batch replayed from the
  checkpoint after a failure reads exactly the objects it read the first time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxFiles

from s3p_codec.capture import LATE_UPLOAD, list_objects, new_objects

__all__ = ["NAME", "CaptureObjects"]

NAME = "s3p_capture_objects"
"""The source's format name (``spark.readStream.format(NAME).option("pattern", ...)``)."""


class CaptureObjects(DataSource):
    """The source: one column, ``path``, one row per new object."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return "path string"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return _ObjectStream(dict(self.options))


class _ObjectStream(DataSourceStreamReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.pattern = options["pattern"]
        self.max_files = int(options.get("maxFilesPerTrigger") or 0) or None
        self.late_ms = int(float(options.get("late", LATE_UPLOAD)) * 1000)

    def initialOffset(self) -> dict[str, Any]:
        return {"seen": [], "batch": []}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxFiles(self.max_files) if self.max_files else ReadAllAvailable()

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        most = limit.max_files if isinstance(limit, ReadMaxFiles) else None
        batch, seen = new_objects(list_objects(self.pattern), start["seen"], self.late_ms, most)
        if not batch:
            return start  # nothing new: no micro-batch
        return {"seen": seen, "batch": [url for _mtime, url in batch]}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        if end == start or not end["batch"]:
            return []
        return [InputPartition(list(end["batch"]))]

    def read(self, partition: InputPartition) -> Iterator[tuple[str]]:
        for url in partition.value:
            yield (url,)

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to release: the offsets hold all the source knows."""
