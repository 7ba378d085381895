"""What replay needs to know of each protocol, and nothing more.

A ``Dialect`` says how to open a client codec for a conversation, which fields the server
assigns (paired, not compared), which events are noise (keep-alives, heartbeats), which mean
that more of the same answer may follow, and which end an answer (errors, the end of a stream).
Everything else (sending, decoding, comparing) is generic.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from s3p_codec import Role, durable, pravega, rustlog, s2s, s3p
from s3p_codec.replay._compare import Assigned
from s3p_codec.replay._conversations import Conversation, Exchange

__all__ = ["DIALECTS", "Dialect"]

ClientFactory = Callable[[Conversation, str, int], Any]
"""``(conversation, host, port) -> client Connection`` for the target."""


def _by_name(names: dict[str, str]) -> Assigned:
    def assigned(name: str, value: object) -> str | None:
        return names.get(name) if isinstance(value, int | str) else None

    return assigned


def _unfolded(events: Sequence[object]) -> tuple[object, ...]:
    return tuple(events)


def _nothing_after(request: object) -> tuple[object, ...]:
    return ()


def _as_recorded(exchanges: tuple[Exchange, ...]) -> tuple[Exchange, ...]:
    return exchanges


@attrs.frozen
class Dialect:
    """The per-protocol rules of a replay."""

    name: str
    client: ClientFactory
    assigned: Assigned
    final: tuple[type, ...] = ()
    loose: frozenset[str] = frozenset()
    """Text fields compared with their numbers masked (messages quoting assigned values)."""
    """Events that end an answer whatever came before them: errors, the end of an SSE stream."""
    noise: tuple[type, ...] = ()
    streaming: tuple[type, ...] = ()
    handshake: tuple[type, ...] = ()
    fold: Callable[[Sequence[object]], tuple[object, ...]] = _unfolded
    unreplayable: Callable[[Conversation], str | None] = lambda conversation: None
    after: Callable[[object], tuple[object, ...]] = _nothing_after
    """Codec instructions that follow a request (Pravega's block writer needs a flush that the
    recording cannot show: it is not on the wire)."""
    regroup: Callable[[tuple[Exchange, ...]], tuple[Exchange, ...]] = _as_recorded
    """The recorded answers given to the requests they answer by the protocol's own
    correlation, where the capture could only give them to the latest request (a client that
    pipelined several requests of one S2S session before the first answer)."""

    def answer_done(self, recorded: Sequence[object], live: Sequence[object]) -> bool:
        """Whether the live answer is complete: as long as the recorded one and not in the
        middle of a stream, or ended by an error or an end of stream."""
        if not recorded:
            return True
        if not live:
            return False
        last = live[-1]
        if isinstance(last, self.final):
            return True
        more = isinstance(last, self.streaming) and not isinstance(recorded[-1], self.streaming)
        return len(live) >= len(recorded) and not more

    def skip_reason(self, conversation: Conversation) -> str | None:
        """Why this conversation cannot be replayed (None: it can)."""
        first = conversation.exchanges[0].request
        if self.handshake and not isinstance(first, self.handshake):
            wanted = " or ".join(t.__name__ for t in self.handshake)
            return f"does not start with its handshake ({wanted}): recorded mid-stream"
        return self.unreplayable(conversation)


# --- S3P ---------------------------------------------------------------------------------


def _s3p_version(conversation: Conversation) -> str:
    """v0.2.0 requests name IDs; S3P has no handshake that would say it."""
    for exchange in conversation.exchanges:
        request = exchange.request
        if getattr(request, "id", None) is not None or getattr(request, "min_id", None):
            return "0.2.0"
    return "0.1.0"


def _s3p_client(conversation: Conversation, host: str, port: int) -> s3p.Connection:
    return s3p.Connection(Role.CLIENT, version=_s3p_version(conversation))


def _s3p_assigned(name: str, value: object) -> str | None:
    return "timestamp" if isinstance(value, s3p.Timestamp) else None


S3P = Dialect(
    "s3p", _s3p_client, _s3p_assigned, final=(s3p.ErrorReply,), loose=frozenset({"message"})
)

# --- RustLog -----------------------------------------------------------------------------

_RUSTLOG_ASSIGNED = {
    "offset": "offset",
    "base_offset": "offset",
    "next_offset": "offset",
    "high_watermark": "offset",
    "log_start_offset": "offset",
    "timestamp": "timestamp",
}


def _rustlog_client(conversation: Conversation, host: str, port: int) -> rustlog.Connection:
    return rustlog.Connection(Role.CLIENT, pipelining=True)


RUSTLOG = Dialect("rustlog", _rustlog_client, _by_name(_RUSTLOG_ASSIGNED), final=(rustlog.Error,))

# --- Pravega -----------------------------------------------------------------------------

_PRAVEGA_ASSIGNED = {
    "current_segment_write_offset": "offset",
    "write_offset": "offset",
    "start_offset": "offset",
    "last_modified": "time",
    "server_stack_trace": "trace",
}


def _pravega_client(conversation: Conversation, host: str, port: int) -> pravega.Connection:
    return pravega.Connection(Role.CLIENT, check_acks=False)


def _pravega_after(request: object) -> tuple[object, ...]:
    return (pravega.FlushAppends(),) if isinstance(request, pravega.Append) else ()


_PRAVEGA_ERRORS = (
    pravega.WrongHost,
    pravega.SegmentIsSealed,
    pravega.SegmentIsTruncated,
    pravega.SegmentAlreadyExists,
    pravega.NoSuchSegment,
    pravega.InvalidEventNumber,
    pravega.OperationUnsupported,
    pravega.AuthTokenCheckFailed,
    pravega.ConditionalCheckFailed,
    pravega.ErrorMessage,
)

PRAVEGA = Dialect(
    "pravega",
    _pravega_client,
    _by_name(_PRAVEGA_ASSIGNED),
    final=_PRAVEGA_ERRORS,
    noise=(pravega.KeepAlive,),
    handshake=(pravega.Hello,),
    after=_pravega_after,
)

# --- Durable Streams ---------------------------------------------------------------------

_DURABLE_ASSIGNED = {
    "next_offset": "offset",
    "offset": "offset",
    "cursor": "cursor",
    "etag": "etag",
    "if_none_match": "etag",
    "location": "location",
    "expires_at": "time",
}


def _durable_client(conversation: Conversation, host: str, port: int) -> object:
    return durable.Connection(Role.CLIENT, host=f"{host}:{port}")


def _durable_fold(events: Sequence[object]) -> tuple[object, ...]:
    """An SSE answer by content: its data joined, only its last control event kept (how often
    the server sends control events between data is timing, not behaviour)."""
    data = [e.data for e in events if isinstance(e, durable.SSEData)]
    controls = [e for e in events if isinstance(e, durable.SSEControl)]
    if not data and not controls:
        return tuple(events)
    out: list[object] = [e for e in events if not isinstance(e, durable.SSEData | durable.SSEControl
                                                             | durable.SSEEnd)]  # fmt: skip
    if data:
        out.append(durable.SSEData(data=b"".join(data)))
    if controls:
        out.append(controls[-1])
    out.extend(e for e in events if isinstance(e, durable.SSEEnd))
    return tuple(out)


DURABLE = Dialect(
    "durable",
    _durable_client,
    _by_name(_DURABLE_ASSIGNED),
    final=(durable.ErrorResponse, durable.SSEEnd),
    streaming=(durable.SSEStart, durable.SSEControl, durable.SSEData),
    fold=_durable_fold,
)

# --- S2S ---------------------------------------------------------------------------------

_S2S_ASSIGNED = {"timestamp": "timestamp", "seq_num": "seq_num"}


def _s2s_client(conversation: Conversation, host: str, port: int) -> object:
    """HTTP/2 when the recorded client spoke it (the official SDKs), else HTTP/1.1."""
    if conversation.http2:
        # h2 is imported only here: it is not a runtime dependency (see _s2s_unreplayable).
        from s3p_codec.replay._h2 import Http2Client  # noqa: PLC0415

        return Http2Client(f"{host}:{port}")
    return s2s.Http1Connection(Role.CLIENT, host=f"{host}:{port}")


def _s2s_unreplayable(conversation: Conversation) -> str | None:
    if conversation.http2 and importlib.util.find_spec("h2") is None:
        return "replaying S2S over HTTP/2 needs the h2 package (pip install h2)"
    return None


def _s2s_regroup(exchanges: tuple[Exchange, ...]) -> tuple[Exchange, ...]:
    """S2S answers by the session's own order: the response head answers the session request,
    the Nth ``AppendAck`` the Nth ``AppendInput`` (acks come in order), a terminal frame the
    oldest unacknowledged append (else the request), a read's batches the request. The
    observer pairs by session, so a pipelining client's answers all fall to its last request.
    """
    answers: list[list[tuple[object, float]]] = [[] for _ in exchanges]
    opener: int | None = None
    unacked: list[int] = []
    for position, exchange in enumerate(exchanges):
        request = exchange.request
        if isinstance(request, s2s.SessionRequest):
            opener, unacked = position, []
        elif isinstance(request, s2s.AppendInput):
            unacked.append(position)
        for event, ts in zip(exchange.answer, exchange.answer_ts, strict=True):
            owner = position
            if isinstance(event, s2s.AppendAck | s2s.Terminal) and unacked:
                owner = unacked.pop(0)
            elif opener is not None and not isinstance(event, s2s.AppendAck | s2s.Terminal):
                owner = opener
            answers[owner].append((event, ts))
    return tuple(
        attrs.evolve(
            exchange,
            answer=tuple(event for event, _ in mine),
            answer_ts=tuple(ts for _, ts in mine),
        )
        for exchange, mine in zip(exchanges, answers, strict=True)
    )


def _s2s_assigned(name: str, value: object) -> str | None:
    if name in _S2S_ASSIGNED and isinstance(value, int):
        return _S2S_ASSIGNED[name]
    return None


S2S = Dialect(
    "s2s",
    _s2s_client,
    _s2s_assigned,
    final=(s2s.ErrorResponse, s2s.Terminal),
    noise=(s2s.Heartbeat, s2s.ReconnectAdvised),
    streaming=(s2s.SessionResponse, s2s.ReadBatch),
    handshake=(s2s.SessionRequest,),
    regroup=_s2s_regroup,
    unreplayable=_s2s_unreplayable,
)

DIALECTS: dict[str, Dialect] = {d.name: d for d in (S3P, RUSTLOG, PRAVEGA, DURABLE, S2S)}
"""The dialect of each protocol name the capture layer gives."""
