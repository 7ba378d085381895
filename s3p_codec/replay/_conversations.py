"""Recorded conversations, taken from captures through the public capture API.

A conversation is the rows of one TCP connection: the client's requests in order, each with the
server's answer (the server-to-client events that carry the request's ``pair_id``). A
conversation that cannot be replayed faithfully is kept with the reason it is skipped, so the
report can list it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from s3p_codec import capture

__all__ = ["Conversation", "Exchange", "load_conversations"]

_TCP_SYN = 0x02
"""The SYN bit of a TCP header's flags (RFC 9293): a connection whose first segment has it was
recorded from its start."""
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
"""The client connection preface of HTTP/2 with prior knowledge (RFC 9113, 3.4)."""


@attrs.frozen
class Exchange:
    """One request of a conversation and the recorded answer to it."""

    index: int
    request: object
    ts: float
    answer: tuple[object, ...] = ()
    answer_ts: tuple[float, ...] = ()


@attrs.frozen
class Conversation:
    """One recorded TCP connection; ``skipped`` says why it is not replayed (None: it is)."""

    id: str
    protocol: str
    server: str
    start: float
    exchanges: tuple[Exchange, ...]
    skipped: str | None = None
    http2: bool = False
    """The client opened with the HTTP/2 preface (S2S from the official SDKs): replayed over
    HTTP/2 too."""

    @property
    def end(self) -> float:
        """Capture time of the last request or answer event."""
        times = [self.start]
        for exchange in self.exchanges:
            times.append(exchange.ts)
            times.extend(exchange.answer_ts)
        return max(times)


@attrs.define
class _Builder:
    """Rows of one conversation, gathered in capture order."""

    id: str
    protocol: str
    server: str
    start: float
    exchanges: list[Exchange] = attrs.Factory(list)
    pairs: list[object] = attrs.Factory(list)
    problem: str | None = None

    def add(self, row: capture.Row) -> None:
        if row.kind != "event":
            if self.problem is None and row.kind != "evicted":
                self.problem = f"{row.direction} {row.kind}: {row.detail}"
            return
        if row.direction == "client_to_server":
            self.exchanges.append(Exchange(len(self.exchanges), row.event, row.ts))
            self.pairs.append(row.pair_id)
            return
        for position in range(len(self.exchanges) - 1, -1, -1):
            if self.pairs[position] == row.pair_id:
                old = self.exchanges[position]
                self.exchanges[position] = attrs.evolve(
                    old, answer=(*old.answer, row.event), answer_ts=(*old.answer_ts, row.ts)
                )
                return
        if self.problem is None:
            self.problem = f"an answer to no recorded request: {row.detail}"

    def build(self, started_clean: bool, http2: bool) -> Conversation:
        reason = self.problem
        if not started_clean:
            reason = "starts mid-stream (its TCP handshake is not in the capture)"
        elif reason is None and not self.exchanges:
            reason = "no request in it"
        elif self.protocol == "unknown":
            reason = "protocol not recognised (try --decode-as PORT=PROTO)"
        return Conversation(
            self.id, self.protocol, self.server, self.start, tuple(self.exchanges), reason,
            http2,
        )  # fmt: skip


def _openings(paths: Sequence[str], ids: set[str]) -> tuple[set[str], set[str]]:
    """Which conversation ids begin with a SYN (their ids name their first packet), and which
    of those the client opened with the HTTP/2 preface (its first payload, in whatever file of
    a rotated set it fell)."""
    clean: set[str] = set()
    http2: set[str] = set()
    waiting: dict[tuple[str, int, str, int], str] = {}  # client -> server flow -> its id
    for index, path in enumerate(capture.capture_order(paths)):
        wanted = {i.rsplit("#", 1)[1] for i in ids if i.rsplit("#", 1)[0] == path}
        if not wanted and not waiting:
            continue
        try:
            for segment in capture.read_segments(path, file_index=index):
                flow = (segment.src, segment.sport, segment.dst, segment.dport)
                if str(segment.number) in wanted and segment.flags & _TCP_SYN:
                    clean.add(f"{path}#{segment.number}")
                    waiting[flow] = f"{path}#{segment.number}"
                elif segment.payload and flow in waiting:
                    opening = segment.payload[: len(_H2_PREFACE)]
                    if _H2_PREFACE.startswith(opening):
                        http2.add(waiting[flow])
                    del waiting[flow]
        except (capture.CaptureFileError, OSError):
            continue
    return clean, http2


def load_conversations(
    paths: Iterable[str], decode_as: Mapping[int, str] | None = None
) -> list[Conversation]:
    """Every conversation of a capture (possibly rotated into several files), by start time.

    Raises ``OSError`` or ``capture.CaptureFileError`` for a file that cannot be read at all.
    """
    files = [str(p) for p in paths]
    builders: dict[str, _Builder] = {}
    for row in capture.decode_files(files, decode_as):
        if row.kind == "capture_error":
            raise capture.CaptureFileError(row.file, row.detail)
        builder = builders.get(row.conversation)
        if builder is None:
            builder = _Builder(row.conversation, row.protocol, row.server, row.ts)
            builders[row.conversation] = builder
        builder.add(row)
    clean, http2 = _openings(files, set(builders))
    conversations = [b.build(b.id in clean, b.id in http2) for b in builders.values()]
    conversations.sort(key=lambda c: c.exchanges[0].ts if c.exchanges else c.start)
    return conversations
