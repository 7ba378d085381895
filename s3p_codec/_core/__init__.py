"""Protocol-independent building blocks: buffer, errors, roles, lifecycle, state tables,
resynchronisation, and the Connection and Observer protocols.

Nothing here knows any protocol, and nothing here touches a socket, a clock or a thread.
"""

from s3p_codec._core.buffer import BufferOverflow, FrameTooLong, ReceiveBuffer
from s3p_codec._core.checkpoint import Checkpointable, SnapshotError
from s3p_codec._core.connection import Connection, Observer, drain
from s3p_codec._core.errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from s3p_codec._core.lifecycle import ReplyAfterError, finished
from s3p_codec._core.observe import Observed, ObservedError, ObservedGap, ObserverOutput
from s3p_codec._core.resync import FrameSync
from s3p_codec._core.transitions import IllegalTransition, StateEnum, Step, Transitions
from s3p_codec._core.types import NEED_DATA, Direction, NeedData, Role

__all__ = [
    "NEED_DATA",
    "BufferOverflow",
    "Checkpointable",
    "Connection",
    "Direction",
    "FrameSync",
    "FrameTooLong",
    "IllegalTransition",
    "LocalProtocolError",
    "NeedData",
    "Observed",
    "ObservedError",
    "ObservedGap",
    "Observer",
    "ObserverOutput",
    "ProtocolError",
    "ReceiveBuffer",
    "RemoteProtocolError",
    "ReplyAfterError",
    "Role",
    "SnapshotError",
    "StateEnum",
    "Step",
    "Transitions",
    "drain",
    "finished",
]
