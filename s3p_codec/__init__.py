"""Sans-IO codecs for five append-only stream protocols.

Each protocol package (``s3p``, ``rustlog``, ``s2s``, ``pravega``, ``durable``) holds one state
machine that turns bytes into typed events and typed events into bytes. Protocol packages are
imported on first use, so ``import s3p_codec`` stays cheap::

    from s3p_codec import s3p, Role, NEED_DATA
"""

from __future__ import annotations

import importlib
from types import ModuleType

from s3p_codec._core import (
    NEED_DATA,
    Direction,
    LocalProtocolError,
    NeedData,
    ProtocolError,
    RemoteProtocolError,
    Role,
    SnapshotError,
)
from s3p_codec._version import __version__

__all__ = [
    "NEED_DATA",
    "Direction",
    "LocalProtocolError",
    "NeedData",
    "ProtocolError",
    "RemoteProtocolError",
    "Role",
    "SnapshotError",
    "__version__",
]

#: The five protocol packages, by the name ``--decode-as``, ``s3p-codec fuzz`` and the port map
#: accept: the one list every driver imports.
PROTOCOLS = ("s3p", "rustlog", "s2s", "pravega", "durable")


def __getattr__(name: str) -> ModuleType:
    # Lazy access to protocol packages: ``s3p_codec.rustlog`` works after ``import s3p_codec``.
    if name in PROTOCOLS:
        return importlib.import_module(f"s3p_codec.{name}")
    raise AttributeError(f"module 's3p_codec' has no attribute {name!r}")
