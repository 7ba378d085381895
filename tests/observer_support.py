"""Helpers shared by the Observer tests of the HTTP-based protocols: outputs of one direction,
HTTP/1.1 chunking, and two directions fed in pieces, interleaved as a capture interleaves them."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

from s3p_codec import Direction
from s3p_codec._core.observe import Observed


def observed(outputs: Sequence[object], direction: Direction) -> list[Observed[object]]:
    """The decoded events of one direction, in order."""
    return [o for o in outputs if isinstance(o, Observed) and o.direction is direction]


def chunked(body: bytes, sizes: Sequence[int]) -> tuple[bytes, list[int]]:
    """``body`` in HTTP/1.1 chunks of ``sizes`` (the rest in one last chunk), and where each
    body byte lands in the result."""
    out = bytearray()
    where: list[int] = []
    at = 0
    for size in [*sizes, len(body)]:
        piece = body[at : at + size]
        if not piece:
            continue
        out += f"{len(piece):x}\r\n".encode()
        where.extend(range(len(out), len(out) + len(piece)))
        out += piece + b"\r\n"
        at += len(piece)
    out += b"0\r\n\r\n"
    return bytes(out), where


def pieces(stream: bytes, cuts: Iterable[int]) -> list[bytes]:
    """``stream`` cut at ``cuts`` (each taken modulo its length + 1); joined, it is ``stream``."""
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    return [stream[a:b] for a, b in itertools.pairwise(points) if b > a]


def interleaved(
    observer: Any, c2s: list[bytes], s2c: list[bytes], picks: Iterable[bool]
) -> list[object]:
    """Feed both directions' pieces to ``observer`` in an order ``picks`` chooses (True: the
    client's next piece), as a capture interleaves them; every output, in order."""
    queues = {Direction.CLIENT_TO_SERVER: list(c2s), Direction.SERVER_TO_CLIENT: list(s2c)}
    outputs: list[object] = []
    choices = iter(picks)
    while any(queues.values()):
        direction = (
            Direction.CLIENT_TO_SERVER if next(choices, True) else Direction.SERVER_TO_CLIENT
        )
        if not queues[direction]:
            direction = direction.reverse
        outputs += observer.observe(direction, queues[direction].pop(0))
    return outputs
