"""Snapshots of decoding state: compact, versioned, picklable, restored in another process.

Plan: a snapshot is ``MAGIC``, one format byte, then a pickle (protocol 5) of the object. The
objects are plain slots and attrs classes, so pickle's own walk is the compact encoding; what a
class cannot pickle (a zstd context, a caller's factory function) it leaves out in its
``__getstate__`` and rebuilds on first use, since none of it carries state between messages.

Restoring never runs what a pickle asks for beyond building our own objects: the unpickler
resolves only classes of this package, of the two pure-Python HTTP libraries whose state the
Observers hold (h11, hpack) and of sortedcontainers, h11's framing functions, a few containers,
and functions a module declared with ``allow``. A snapshot naming anything else is refused with
``SnapshotError``; still, a snapshot is trusted input (it can hold any number of our
objects): keep it where the decoder keeps its state, never take one from a peer.

``FORMAT`` is bumped whenever a checkpointed class changes what it keeps or the module it is
defined in (a pickle names each class by its module): a snapshot of another format is refused
rather than misread.
"""

from __future__ import annotations

import copyreg
import dataclasses
import io
import pickle
from collections.abc import Callable
from typing import Any, TypeVar

import h11

__all__ = ["FORMAT", "MAGIC", "Checkpointable", "SnapshotError", "allow", "dump", "load"]

MAGIC = b"S3PK"
FORMAT = 4
"""The layout of the checkpointed classes; a snapshot of another format is refused."""

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

_CONTAINERS = frozenset(
    {
        ("collections", "OrderedDict"),
        ("collections", "deque"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("builtins", "bytearray"),
        ("uuid", "UUID"),
    }
)
_PACKAGES = ("s3p_codec.", "h11.", "hpack.", "sortedcontainers.")
_FUNCTION_MODULES = frozenset({"h11._readers", "h11._writers"})
"""h11 keeps its current reader and writer as module functions: pure framing, nothing else."""
_ALLOWED_FUNCTIONS: set[tuple[str, str]] = set()


class SnapshotError(Exception):
    """A blob that is not a snapshot this version can restore (another format, damaged, not
    ours, or of another class than asked for)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def allow(function: F) -> F:
    """Let snapshots name ``function`` (a module-level function kept in state, or one a
    ``__reduce__`` calls to rebuild an object). Used as a decorator."""
    _ALLOWED_FUNCTIONS.add((function.__module__, function.__qualname__))
    return function


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (
            (module, name) in _CONTAINERS
            or (module, name) in _ALLOWED_FUNCTIONS
            or module in _FUNCTION_MODULES
        ):
            return super().find_class(module, name)
        if module.startswith(_PACKAGES) or module in ("h11", "hpack"):
            found = super().find_class(module, name)
            # Classes only: a class is built, never called with the pickle's arguments beyond
            # its own constructor. Enum members and sentinels are classes or their instances.
            if isinstance(found, type):
                return found
        raise SnapshotError(f"snapshot names {module}.{name}, which no snapshot may hold")


@allow
def _frozen(cls: type[T], fields: dict[str, Any]) -> T:
    """An instance of a frozen slots dataclass (h11's events) with ``fields``: pickle's own
    rebuild assigns the slots one by one, which a frozen class refuses."""
    made = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(made, name, value)
    return made


def _reduce_frozen(event: Any) -> tuple[Callable[..., Any], tuple[type, dict[str, Any]]]:
    fields = {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}
    return _frozen, (type(event), fields)


# The Observers keep h11's last request or response head (frozen dataclasses with slots):
# saved through ``_frozen``. A private table, so pickling elsewhere in the process is unchanged.
_DISPATCH = copyreg.dispatch_table.copy()
for _event in (h11.Request, h11.InformationalResponse, h11.Response, h11.Data,
               h11.EndOfMessage, h11.ConnectionClosed):  # fmt: skip
    _DISPATCH[_event] = _reduce_frozen


def dump(state: object) -> bytes:
    """``state`` as a snapshot. Raises ``SnapshotError`` for an object that cannot be saved
    (a class of ours that forgot to leave out a context)."""
    out = io.BytesIO()
    out.write(MAGIC + bytes((FORMAT,)))
    pickler = pickle.Pickler(out, protocol=5)
    pickler.dispatch_table = _DISPATCH
    try:
        pickler.dump(state)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise SnapshotError(f"cannot snapshot {type(state).__name__}: {exc}") from None
    return out.getvalue()


def load(blob: bytes, expected: type[T]) -> T:
    """The object of a snapshot made by ``dump``, checked to be an ``expected``."""
    head = len(MAGIC) + 1
    if blob[: len(MAGIC)] != MAGIC or len(blob) < head:
        raise SnapshotError("not a snapshot (no S3PK header)")
    if blob[len(MAGIC)] != FORMAT:
        raise SnapshotError(f"snapshot format {blob[len(MAGIC)]}, this version reads {FORMAT}")
    try:
        state = _Unpickler(io.BytesIO(memoryview(blob)[head:])).load()
    except SnapshotError:
        raise
    except Exception as exc:  # a damaged pickle raises anything: all of it means "damaged"
        raise SnapshotError(f"damaged snapshot: {type(exc).__name__}: {exc}") from None
    if not isinstance(state, expected):
        raise SnapshotError(
            f"snapshot holds a {type(state).__name__}, not a {expected.__name__}"
        )
    return state


class Checkpointable:
    """``snapshot()`` and ``restore(blob)`` for a class whose state pickles (an Observer)."""

    __slots__ = ()

    def snapshot(self) -> bytes:
        """This object's state, to ``restore`` later, in this process or another."""
        return dump(self)

    @classmethod
    def restore(cls: type[T], blob: bytes) -> T:
        """The object a ``snapshot`` saved. Raises ``SnapshotError`` for anything else."""
        return load(blob, cls)
