"""Helpers shared by the Observer offset tests of the HTTP-based protocols."""

from __future__ import annotations

from collections.abc import Sequence

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
