"""What every protocol's strategies share: ``Malformed``, ``MalformedReply``, ``Answer``, chunkings.

A ``Malformed`` case is the whole byte stream a client sends on a fresh connection (any valid
preamble included: a Pravega ``Hello``, an S2S session's HTTP head) plus what a strict server
must do about it: answer an error with ``code`` (when ``reply`` is true), and end the
conversation when ``fatal`` is true or keep serving when it is false.

A ``MalformedReply`` is the other direction: the bytes a server sends back to a client that has
``pending`` requests outstanding, which a strict client must refuse with ``code``.

``Answer`` is what a client-role codec made of the bytes a server sent back; the live driver
(``s3p_codec.testing.live``) compares the two.
"""

from __future__ import annotations

import itertools

import attrs
from hypothesis import strategies as st

__all__ = ["Answer", "Malformed", "MalformedReply", "Valid", "chunkings", "split_points"]


@attrs.frozen(slots=True)
class Malformed:
    """Bytes a strict peer must refuse, and how it must refuse them.

    - ``label``: the rule broken, e.g. ``"bulk length +1"`` (stable: reports group by it).
    - ``data``: every byte to send on a fresh connection, preamble included. When the rule is
      broken by a header alone (a length over a limit), the payload is left out on purpose: a
      strict peer rejects "as soon as the header is read, before any payload".
    - ``code``: the protocol's error code the answer must carry (S3P ``ERR_*``, RustLog status,
      S2S ``bad_frame``..., Durable Streams HTTP status, Pravega ``ErrorCode`` name).
    - ``fatal``: the peer must end the conversation after answering.
    - ``reply``: an error reply must be sent; ``False`` when closing is the whole answer (Pravega
      has no error reply for a broken frame; an S3P command cut short by end of stream).
    - ``half_close``: after ``data``, the sender shuts its writing side (end of stream).

    The live driver sends half of the cases in pieces cut inside the first 64 bytes (the
    headers), with a short pause between pieces, and reports the cut points with a finding.
    """

    label: str
    data: bytes
    code: str | int
    fatal: bool = True
    reply: bool = True
    half_close: bool = False


@attrs.frozen(slots=True)
class MalformedReply:
    """Bytes a strict client must refuse, for fuzzing the framing of one's own client.

    - ``label``: the rule broken (stable: reports group by it).
    - ``data``: every byte the server sends on the connection, after the client has sent each
      request of ``pending``. As in ``Malformed``, a header that alone breaks a limit is sent
      without its payload: a strict client refuses it before waiting for the rest.
    - ``code``: the error code our client-role codec raises (S3P ``ERR_*``, RustLog status,
      Durable Streams ``"http"``/``"sse"``/``"invalid_response"``).
    - ``fatal``: the client must give up on the connection; ``False`` when the reply is well
      framed but unusable, and the connection may carry on (RustLog bad fields, Durable Streams
      bad headers).
    - ``pending``: the requests the client sent first, oldest first (empty: the server spoke
      with nothing asked of it). Each protocol module names their event type.
    - ``reply``: always ``False``: a client answers a broken reply by closing, never by
      replying. Kept so that code written for ``Malformed`` reads both alike.
    - ``half_close``: after ``data``, the server ends the stream (a reply cut short).
    """

    label: str
    data: bytes
    code: str | int
    fatal: bool = True
    pending: tuple[object, ...] = ()
    reply: bool = False
    half_close: bool = False


@attrs.frozen(slots=True)
class Valid:
    """A well-formed request (its wire bytes and the event), which a server must answer.

    ``forbidden``: error codes that would mean the server wrongly refused it. Edge cases (a
    name exactly at its length limit, a repeated option key, reserved flag bits set) carry the
    framing and limit codes here: the server may answer "unknown stream", never "bad format".
    """

    label: str
    data: bytes
    event: object
    forbidden: tuple[str | int, ...] = ()


@attrs.frozen(slots=True)
class Answer:
    """What a client-role codec read from the server's bytes.

    ``complete``: an answer (reply or error) was read in full. ``code``: the error code of an
    error answer, ``None`` for a normal reply. ``finished``: the conversation is over (end of
    stream, or the end of an HTTP response that ends a session). ``problem``: the bytes broke
    the protocol (garbage, a wrong frame), described.
    """

    complete: bool = False
    code: str | int | None = None
    finished: bool = False
    problem: str | None = None
    summary: str = ""


def split_points(data: bytes) -> st.SearchStrategy[tuple[int, ...]]:
    """Sorted, distinct offsets strictly inside ``data`` at which a sender may pause."""
    if len(data) < 2:
        return st.just(())
    return st.lists(st.integers(1, len(data) - 1), max_size=8, unique=True).map(
        lambda points: tuple(sorted(points))
    )


def chunkings(data: bytes) -> st.SearchStrategy[list[bytes]]:
    """``data`` cut at arbitrary points (inside headers included); joined, it is ``data``."""

    def cut(points: tuple[int, ...]) -> list[bytes]:
        edges = (0, *points, len(data))
        return [data[a:b] for a, b in itertools.pairwise(edges)]

    return split_points(data).map(cut)
