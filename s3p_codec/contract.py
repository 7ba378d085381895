"""The shared contract every codec keeps, under a public name.

What code that drives codecs or reads Observer output names: the typing Protocols the drivers
are written against (``Connection``, ``Observer``), the records every Observer returns
(``Observed``, ``ObservedError``, ``ObservedGap``), the buffer the length-prefixed codecs read
from (``ReceiveBuffer`` and its ``BufferOverflow``), and checkpoints (``Checkpointable``,
``SnapshotError``). They are implemented in ``s3p_codec._core``; import them from here::

    from s3p_codec.contract import Connection, Observed
"""

from s3p_codec._core.buffer import BufferOverflow, ReceiveBuffer
from s3p_codec._core.checkpoint import Checkpointable, SnapshotError
from s3p_codec._core.connection import Connection, Observer
from s3p_codec._core.observe import Observed, ObservedError, ObservedGap, ObserverOutput

__all__ = [
    "BufferOverflow",
    "Checkpointable",
    "Connection",
    "Observed",
    "ObservedError",
    "ObservedGap",
    "Observer",
    "ObserverOutput",
    "ReceiveBuffer",
    "SnapshotError",
]
