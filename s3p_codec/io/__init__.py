"""Drivers that move bytes between a transport and any codec of this library.

Three adapters share one shape: ``send(event)``, ``next_event()``, iteration, close, plus
``connect(...)`` and ``serve(...)`` helpers. Import the one you need, so that a blocking program
never imports asyncio or trio::

    from s3p_codec.io.sync import connect          # blocking sockets
    from s3p_codec.io.asyncio import connect       # asyncio streams, with drain back-pressure
    from s3p_codec.io.trio import connect          # trio streams (the ``trio`` extra)

They are typed against the ``Connection`` protocol of ``s3p_codec._core.connection`` and hold no
protocol logic: every rule lives in the codec, so a fix in a protocol never touches this package.
What they do for every codec alike:

- ``next_event()`` feeds received bytes to the codec until it completes an event; after the peer
  closed cleanly (the codec, fed EOF, returns ``NEED_DATA``) it raises :class:`ConnectionClosed`.
- When the codec raises a ``RemoteProtocolError`` on a server-role connection and the error
  carries a ``reply``, the adapter sends that reply, closes the transport if the error is
  ``fatal``, and re-raises, so the handler can log and return.
- Once the codec says ``finished`` (for example after a server sent an S3P error reply), the
  adapter closes the transport: write side first, so the peer reads every byte and then EOF.
"""

from __future__ import annotations

__all__ = ["ConnectionClosed"]


class ConnectionClosed(Exception):
    """The connection carries no more traffic: the peer closed cleanly, or it was closed here.

    Raised by ``next_event()`` at a clean end of stream (iteration simply ends there) and by
    ``send()`` on a connection that is already closed.
    """
