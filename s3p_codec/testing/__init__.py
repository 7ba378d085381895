"""Fuzz the framing of your own servers and clients with this library's codecs.

One module per protocol (``s3p``, ``rustlog``, ``pravega``, ``s2s``, ``durable``), each with the
same names:

- ``requests()``: hypothesis strategy of valid requests of every type;
- ``request_wire()``: ``(request, its exact wire bytes)``;
- ``malformed()``: ``Malformed`` byte streams aimed at the framing (lengths off by one, at and
  over every limit, truncation, wrong types, bad UTF-8, nesting, missing and repeated fields,
  illegal flags, valid frames in illegal orders...), each carrying the error a strict peer must
  answer (``code``), whether it must close (``fatal``) and whether a reply is owed (``reply``);
- ``Target``: the protocol as ``live.fuzz`` drives it against a running server.

Test your own S3P server in a few lines::

    import socket
    from hypothesis import given, settings
    from s3p_codec.testing import s3p as s3p_cases

    @settings(max_examples=50, deadline=None)
    @given(s3p_cases.malformed().filter(lambda case: case.reply))
    def test_my_server_refuses_bad_framing(case):
        with socket.create_connection(("127.0.0.1", 7500), timeout=2) as sock:
            sock.sendall(case.data)
            answer = sock.recv(4096)
        assert answer.startswith(b"-" + case.code.encode())

or let the driver do the checks and write the report::

    from s3p_codec.testing import live, s3p as s3p_cases
    report = live.fuzz(s3p_cases.Target(), "127.0.0.1", 7500, seconds=10, seed=1)
    print(report.summary())

The same from the shell: ``s3p-codec fuzz s3p 127.0.0.1:7500 --seconds 10 --seed 1``.


Needs hypothesis (``pip install s3p-codec[testing]``); importing this package alone does not
load it, so the ``s3p-codec`` command works without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from s3p_codec.testing.strategies import (
        Answer,
        Malformed,
        MalformedReply,
        Valid,
        chunkings,
        split_points,
    )

__all__ = ["Answer", "Malformed", "MalformedReply", "Valid", "chunkings", "split_points"]


def __getattr__(name: str) -> Any:
    # Lazy: hypothesis loads only when a strategy is asked for.
    if name in __all__:
        return getattr(importlib.import_module("s3p_codec.testing.strategies"), name)
    raise AttributeError(f"module 's3p_codec.testing' has no attribute {name!r}")
