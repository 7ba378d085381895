"""Fuzz the framing of your own servers and clients with this library's codecs.

One module per protocol (``s3p``, ``rustlog``, ``pravega``, ``s2s``, ``durable``), each with the
same names:

- ``requests()``: hypothesis strategy of valid requests of every type;
- ``request_wire()``: ``(request, its exact wire bytes)``;
- ``malformed()``: ``Malformed`` byte streams aimed at the framing (lengths off by one, at and
  over every limit, truncation, wrong types, bad UTF-8, nesting, missing and repeated fields,
  illegal flags, valid frames in illegal orders...), each carrying the error a strict peer must
  answer (``code``), whether it must close (``fatal``) and whether a reply is owed (``reply``);
- ``Target``: the protocol as ``live.fuzz`` drives it against a running server;
- for fuzzing clients (see below): ``replies()`` (``responses()`` for RustLog and Durable
  Streams), ``reply_wire()`` (valid replies and their exact bytes; Durable Streams gives
  ``(request, events, bytes)``, an SSE response being several events), ``requests_for(reply)``
  (what a client must have sent first), ``malformed_replies()`` and, for Pravega and S2S,
  ``reply_edge_cases()`` (replies a strict client must still accept).

"Replies" is the word of the S3P spec and the Pravega draft; RustLog's spec and HTTP (Durable
Streams) say "responses", and those two modules keep it for their events (``responses()``)
while sharing every other name. Beyond the shared names, each module draws what its protocol
calls for, for a codec or peer of one's own: S3P ``replies_for(request)`` and
``conversations()`` (requests with the replies that answer them), RustLog ``json_values()``,
S2S ``headers()``, ``sequenced_records()``, ``terminals()`` and ``acks_for(inputs)``, Pravega
``commands()`` (any typed command, every field over its wire range).

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

The other direction, for clients: ``replies()``/``responses()`` and ``reply_wire()`` (valid
replies and the bytes our server-role codec writes for them) and ``malformed_replies()``:
``MalformedReply`` byte streams a strict client must refuse, each with the requests it has
``pending`` and the ``code`` our client-role codec raises. Test your own client by serving
``case.data`` from a loopback socket::

    import socket, threading
    import pytest
    from hypothesis import given, settings
    from s3p_codec.testing import s3p as s3p_cases

    # One request each; an extra reply after a good one would show only on a later read.
    cases = s3p_cases.malformed_replies().filter(
        lambda case: len(case.pending) == 1 and "too many" not in case.label
    )

    @settings(max_examples=50, deadline=None)
    @given(cases)
    def test_my_client_fails_cleanly_on_bad_replies(case):
        with socket.create_server(("127.0.0.1", 0)) as listener:
            def serve():
                peer, _ = listener.accept()
                with peer:
                    peer.recv(65536)               # the client's request
                    peer.sendall(case.data)        # the broken reply
                    if case.half_close:
                        peer.shutdown(socket.SHUT_WR)
                    peer.recv(1)                   # until the client hangs up
            threading.Thread(target=serve, daemon=True).start()
            client = MyClient(*listener.getsockname(), timeout=2)
            with pytest.raises(MyClient.ProtocolError):   # typed, no hang, no crash
                client.request(case.pending[0])


Needs hypothesis (``pip install s3p-codec[testing]``); importing this package alone does not
load it, so the ``s3p-codec`` command works without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from s3p_codec.testing._strategies import (
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
        importlib.import_module("s3p_codec._extras.testing")  # MissingExtra without hypothesis
        value = getattr(importlib.import_module("s3p_codec.testing._strategies"), name)
        globals()[name] = value  # looked up here from now on, and seen by help() and autodoc
        return value
    raise AttributeError(f"module 's3p_codec.testing' has no attribute {name!r}")
