"""Helpers shared by the Observer tests: outputs of one direction, HTTP/1.1 chunking, two
directions fed in pieces, interleaved as a capture interleaves them, and one direction's
damaged stream (cut, garbage, a gap) decoded whole and in pieces."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from s3p_codec import Direction
from s3p_codec._core.observe import Observed, ObservedError


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


def comparable(items: Sequence[object]) -> list[object]:
    """Outputs with each error's exception as its code (exceptions compare by identity; a
    message may quote more or fewer of the bad bytes, depending on what had arrived)."""
    return [
        (item.direction, item.start, item.skipped, item.resynchronized, item.error.code)
        if isinstance(item, ObservedError)
        else item
        for item in items
    ]


@dataclass(frozen=True)
class Damage:
    """What happens to a stream on its way to the Observer: it is cut at ``cut`` (a capture
    that begins there), an optional ``gap`` is reported first (0: a start mid-stream),
    ``garbage`` is put in at ``at`` (both taken modulo the length), and it is fed in pieces of
    ``sizes`` (cycled)."""

    cut: int
    gap: int | None
    garbage: bytes
    at: int
    sizes: tuple[int, ...]


_ANY_CUT = st.integers(0, 2000)
_ANY_GARBAGE = st.binary(max_size=12)


def damages(
    cuts: st.SearchStrategy[int] = _ANY_CUT, garbage: st.SearchStrategy[bytes] = _ANY_GARBAGE
) -> st.SearchStrategy[Damage]:
    """Any ``Damage``; ``cuts`` and ``garbage`` may be narrowed to what a protocol needs."""
    return st.builds(
        Damage,
        cuts,
        st.sampled_from([None, 0, 5]),
        garbage,
        st.integers(0, 2000),
        st.lists(st.integers(1, 9), min_size=1, max_size=6).map(tuple),
    )


def damaged_decoding(
    make: Any,
    stream: bytes,
    damage: Damage,
    direction: Direction = Direction.CLIENT_TO_SERVER,
) -> tuple[list[object], list[object]]:
    """Decode ``stream`` (travelling ``direction``) so damaged by fresh Observers from
    ``make``: fed whole, then in pieces. Both outputs, comparable."""
    stream = stream[damage.cut % (len(stream) + 1) :]
    at = damage.at % (len(stream) + 1)
    damaged = stream[:at] + damage.garbage + stream[at:]
    runs = []
    for sizes in ((len(damaged),), damage.sizes):
        observer = make()
        gap = damage.gap
        out: list[object] = [] if gap is None else list(observer.gap(direction, gap))
        out += fed_in_pieces(observer, direction, damaged, sizes)
        out += observer.close(direction)
        runs.append(comparable(out))
    return runs[0], runs[1]


def fed_in_pieces(
    observer: Any, direction: Direction, data: bytes, sizes: Sequence[int]
) -> list[object]:
    """The outputs of ``data`` fed to ``observer`` in pieces of ``sizes`` (cycled)."""
    out: list[object] = []
    offset = index = 0
    while offset < len(data):
        size = sizes[index % len(sizes)]
        out += observer.observe(direction, data[offset : offset + size])
        offset, index = offset + size, index + 1
    return out
