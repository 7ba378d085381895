"""A small Pravega controller (gRPC) in front of the example segment store.

::

    python -m examples.pravega_segment_store --port 12345 --controller-port 9090

The official clients (``pip install pravega``, module ``pravega_client``) never name a segment
store: they ask a controller which segments a stream has and where each one lives. This one
runs on the store's asyncio loop (``grpc.aio``) and holds, in memory:

- scopes and streams; a stream has a fixed number of segments, all of epoch 0, splitting the
  routing-key space ``[0, 1)`` evenly (scaling requests are refused: ``UNIMPLEMENTED``);
- every segment URI points at the example segment store; delegation tokens are off (empty);
- transactions: ``createTransaction`` creates one transaction segment per stream segment in the
  store, ``commitTransaction`` merges each into its parent (in order, the way a segment store
  merges a sealed source), ``abortTransaction`` deletes them; ``pingTransaction`` and
  ``checkTransactionState`` report the state;
- ``truncateStream`` truncates the segments at the cut, ``sealStream`` seals them,
  ``deleteStream`` deletes them (sealed streams only, as Pravega requires).

What the official Python client (``pravega`` 0.3.8, the Rust client) calls, per operation:

=============================  ===========================================================
operation                      controller RPCs, then segment-store wire commands
=============================  ===========================================================
create scope / stream          ``createScope``, ``createStream``
``StreamWriter`` write, flush  ``getCurrentSegments``, ``getURI`` per segment; ``Hello``,
                               ``SetupAppend``, then lone ``AppendBlockEnd`` frames
``StreamTxnWriter``            ``createTransaction``, ``getURI``; ``SetupAppend`` and
                               ``AppendBlockEnd`` on the transaction segments;
                               ``commitTransaction`` / ``abortTransaction``,
                               ``checkTransactionState`` (``is_open``), ``pingTransaction``
reader group, read             ``getSegments`` (head of the stream), ``getURI``; table
                               segment ``<group>_kvtable/0``: ``CreateTableSegment``,
                               ``UpdateTableEntries`` (conditional), ``ReadTableEntriesDelta``;
                               ``ReadSegment`` on the stream segments
``ByteStream`` write, seek,    ``getCurrentSegments``, ``getSegments``, ``getURI``;
read, truncate                 ``SetupAppend``, ``ConditionalBlockEnd``,
                               ``GetStreamSegmentInfo``, ``ReadSegment``, ``TruncateSegment``
list / seal / delete           ``listScopes``, ``listStreamsInScope``, ``sealStream``,
                               ``deleteStream``, ``deleteScope``
=============================  ===========================================================

The service is declared by hand in ``pravega_controller_messages`` (no code generation). Needs
the ``pravega-controller`` extra (``grpcio``, ``protobuf``).
"""

from __future__ import annotations

import enum
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import attrs
import grpc
from grpc import aio

from examples import pravega_names
from examples.pravega_controller_messages import SERVICE, message, message_class

__all__ = [
    "Controller",
    "ControllerLimits",
    "StreamState",
    "segment_name",
    "start",
    "transaction_segment_name",
]

log = logging.getLogger("pravega_controller")

_U64 = (1 << 64) - 1


class TxnState(enum.IntEnum):
    """Transaction states, numbered as the controller API numbers them."""

    UNKNOWN = 0
    OPEN = 1
    COMMITTING = 2
    COMMITTED = 3
    ABORTING = 4
    ABORTED = 5


class _Status(enum.IntEnum):
    """The status values shared by the controller's status replies."""

    SUCCESS = 0
    FAILURE = 1
    # CreateScope: SCOPE_EXISTS; CreateStream: STREAM_EXISTS; Update/Delete: *_NOT_FOUND
    EXISTS_OR_NOT_FOUND = 2
    SCOPE_NOT_FOUND = 3  # CreateStream, UpdateStream; DeleteStream: STREAM_NOT_SEALED


_INVALID_SCOPE_NAME = 3  # CreateScopeStatus.INVALID_SCOPE_NAME
_INVALID_STREAM_NAME = 4  # CreateStreamStatus.INVALID_STREAM_NAME


@attrs.frozen
class ControllerLimits:
    """What one ``createStream`` may ask of the store.

    ``max_segments_per_stream``: the most segments a stream may be created with (its scaling
    policy's ``min_segments``). Each segment is built in the store's event loop and listed in
    every ``getCurrentSegments`` reply, so one 18-byte request asking for millions would stall
    every client and end in MemoryError. Past the bound the call fails with gRPC ``INTERNAL``,
    the status a Pravega controller gives a stream configuration its argument checks refuse
    (``ControllerServiceImpl`` maps an ``IllegalArgumentException`` raised while starting a
    call to ``INTERNAL``).
    """

    max_segments_per_stream: int = 1000

    def __attrs_post_init__(self) -> None:
        if self.max_segments_per_stream < 1:
            raise ValueError("max_segments_per_stream must be at least 1")


_TXN_NOT_FOUND = 3  # TxnStatus.TRANSACTION_NOT_FOUND
_PING_OK, _PING_COMMITTED, _PING_ABORTED, _PING_UNKNOWN = 0, 5, 6, 7


def segment_name(scope: str, stream: str, segment_id: int) -> str:
    """The qualified name of a stream segment: ``scope/stream/<number>.#epoch.<epoch>``."""
    return f"{scope}/{stream}/{segment_id & 0xFFFFFFFF}.#epoch.{segment_id >> 32}"


def transaction_segment_name(parent: str, txn: uuid.UUID) -> str:
    """A transaction's segment: the parent's name, ``#transaction.``, the id in 32 hex digits."""
    return f"{parent}#transaction.{txn.int:032x}"


class SegmentStore(Protocol):
    """What the controller needs from the store it fronts (``pravega_segment_store.Store``)."""

    def create_segment(self, name: str) -> bool:
        """Create ``name``; False if it exists."""

    def merge_segment(self, target: str, source: str) -> int:
        """Append ``source`` to ``target`` and delete it; the new length of ``target``."""

    def delete_segment(self, name: str) -> bool:
        """Delete ``name``; False if it did not exist."""

    def seal_segment(self, name: str) -> bool:
        """Seal ``name``; False if it does not exist."""

    def truncate_segment(self, name: str, offset: int) -> bool:
        """Truncate ``name`` at ``offset``; False if it does not exist or the offset is past it."""


@attrs.define
class StreamState:
    """One stream: its configuration bytes, segment count, seal, and open transactions."""

    scope: str
    name: str
    segments: int
    config: bytes
    sealed: bool = False
    txns: dict[uuid.UUID, TxnState] = attrs.Factory(dict)

    def segment_names(self) -> list[str]:
        return [segment_name(self.scope, self.name, i) for i in range(self.segments)]


Handler = Callable[[Any, aio.ServicerContext[Any, Any]], Awaitable[Any]]


class Controller:
    """Scopes, streams and transactions in memory; segment data lives in ``store``."""

    def __init__(
        self,
        store: SegmentStore,
        store_host: str,
        store_port: int,
        limits: ControllerLimits | None = None,
    ) -> None:
        self.store = store
        self.limits = ControllerLimits() if limits is None else limits
        self.store_host = store_host
        self.store_port = store_port
        self.scopes: set[str] = set()
        self.streams: dict[tuple[str, str], StreamState] = {}
        self.calls: dict[str, int] = {}  # RPC name -> times called, for tests and logs

    # --- lookups ----------------------------------------------------------------------------

    def _stream(self, info: Any) -> StreamState | None:
        return self.streams.get((info.scope, info.stream))

    def _ranges(self, state: StreamState) -> Any:
        n = state.segments
        info = message("StreamInfo", scope=state.scope, stream=state.name)
        return [
            message(
                "SegmentRange",
                segment=message("SegmentId", stream=info, segment_id=i),
                min_key=i / n,
                max_key=(i + 1) / n,
            )
            for i in range(n)
        ]

    @staticmethod
    async def _found(state: StreamState | None, context: Any, what: str) -> StreamState:
        """``state``, or end the call with ``NOT_FOUND`` (``abort`` raises)."""
        if state is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no such {what}")
            raise AssertionError("unreachable: abort raises")
        return state

    @staticmethod
    def _txn_id(txn: Any) -> uuid.UUID:
        return uuid.UUID(int=((txn.high & _U64) << 64) | (txn.low & _U64))

    # --- scopes ----------------------------------------------------------------------------

    async def getControllerServerList(self, request: Any, context: Any) -> Any:
        return message("ServerResponse")

    async def createScope(self, request: Any, context: Any) -> Any:
        why = pravega_names.check_name(request.scope)
        if why is not None:
            log.info("createScope refused: %s", why)
            return message("Status", status=_INVALID_SCOPE_NAME)
        if request.scope in self.scopes:
            return message("Status", status=_Status.EXISTS_OR_NOT_FOUND)
        self.scopes.add(request.scope)
        return message("Status", status=_Status.SUCCESS)

    async def checkScopeExists(self, request: Any, context: Any) -> Any:
        return message("ExistsResponse", exists=request.scope in self.scopes)

    async def listScopes(self, request: Any, context: Any) -> Any:
        if request.token.token:  # one page holds them all
            return message("ScopesResponse", token=request.token)
        return message(
            "ScopesResponse",
            scopes=sorted(self.scopes),
            token=message("ContinuationToken", token="end"),
        )

    async def deleteScope(self, request: Any, context: Any) -> Any:
        if request.scope not in self.scopes:
            return message("Status", status=_Status.EXISTS_OR_NOT_FOUND)
        if any(scope == request.scope for scope, _ in self.streams):
            return message("Status", status=3)  # SCOPE_NOT_EMPTY
        self.scopes.discard(request.scope)
        return message("Status", status=_Status.SUCCESS)

    async def listStreamsInScope(self, request: Any, context: Any) -> Any:
        if request.scope.scope not in self.scopes:
            return message("StreamsInScopeResponse", status=2)
        if request.token.token:
            return message("StreamsInScopeResponse", token=request.token)
        streams = [
            message("StreamInfo", scope=s.scope, stream=s.name)
            for s in self.streams.values()
            if s.scope == request.scope.scope
        ]
        return message(
            "StreamsInScopeResponse",
            streams=streams,
            token=message("ContinuationToken", token="end"),
        )

    async def listStreamsInScopeForTag(self, request: Any, context: Any) -> Any:
        if request.scope.scope not in self.scopes:
            return message("StreamsInScopeResponse", status=2)
        if request.token.token:
            return message("StreamsInScopeResponse", token=request.token)
        config_class = message_class("StreamConfig")
        streams = [
            message("StreamInfo", scope=s.scope, stream=s.name)
            for s in self.streams.values()
            if s.scope == request.scope.scope
            and request.tag in config_class.FromString(s.config).tags.tag
        ]
        return message(
            "StreamsInScopeResponse",
            streams=streams,
            token=message("ContinuationToken", token="end"),
        )

    # --- streams ---------------------------------------------------------------------------

    async def createStream(self, request: Any, context: Any) -> Any:
        info = request.stream
        if info.scope not in self.scopes:
            return message("Status", status=_Status.SCOPE_NOT_FOUND)
        why = pravega_names.check_name(info.stream)
        if why is not None:
            log.info("createStream refused: %s", why)
            return message("Status", status=_INVALID_STREAM_NAME)
        if (info.scope, info.stream) in self.streams:
            return message("Status", status=_Status.EXISTS_OR_NOT_FOUND)
        count = max(1, request.scaling.min_segments)
        bound = self.limits.max_segments_per_stream
        if count > bound:
            await context.abort(
                grpc.StatusCode.INTERNAL,
                f"min_segments {count} is over this controller's bound of {bound} per stream",
            )
        state = StreamState(info.scope, info.stream, count, request.SerializeToString())
        for name in state.segment_names():
            self.store.create_segment(name)
        self.streams[(info.scope, info.stream)] = state
        return message("Status", status=_Status.SUCCESS)

    async def checkStreamExists(self, request: Any, context: Any) -> Any:
        return message("ExistsResponse", exists=self._stream(request) is not None)

    async def getStreamConfiguration(self, request: Any, context: Any) -> Any:
        state = await self._found(self._stream(request), context, "stream")
        return message_class("StreamConfig").FromString(state.config)

    async def updateStream(self, request: Any, context: Any) -> Any:
        state = self._stream(request.stream)
        if state is None:
            return message("Status", status=_Status.EXISTS_OR_NOT_FOUND)
        if max(1, request.scaling.min_segments) != state.segments:
            return message("Status", status=_Status.FAILURE)  # no scaling here
        state.config = request.SerializeToString()
        return message("Status", status=_Status.SUCCESS)

    async def truncateStream(self, request: Any, context: Any) -> Any:
        state = self._stream(request.stream)
        if state is None:
            return message("Status", status=_Status.EXISTS_OR_NOT_FOUND)
        for entry in request.cut:
            name = segment_name(state.scope, state.name, entry.segment)
            if not self.store.truncate_segment(name, entry.offset):
                return message("Status", status=_Status.FAILURE)
        return message("Status", status=_Status.SUCCESS)

    async def sealStream(self, request: Any, context: Any) -> Any:
        state = self._stream(request)
        if state is None:
            return message("Status", status=_Status.EXISTS_OR_NOT_FOUND)
        for name in state.segment_names():
            self.store.seal_segment(name)
        state.sealed = True
        return message("Status", status=_Status.SUCCESS)

    async def deleteStream(self, request: Any, context: Any) -> Any:
        state = self._stream(request)
        if state is None:
            return message("Status", status=_Status.EXISTS_OR_NOT_FOUND)
        if not state.sealed:
            return message("Status", status=3)  # STREAM_NOT_SEALED
        for name in state.segment_names():
            self.store.delete_segment(name)
        del self.streams[(state.scope, state.name)]
        return message("Status", status=_Status.SUCCESS)

    async def getCurrentSegments(self, request: Any, context: Any) -> Any:
        state = await self._found(self._stream(request), context, "stream")
        if state.sealed:
            return message("SegmentRanges")  # a sealed stream has no current segments
        return message("SegmentRanges", ranges=self._ranges(state))

    async def getEpochSegments(self, request: Any, context: Any) -> Any:
        state = await self._found(self._stream(request.stream), context, "stream")
        if request.epoch != 0:
            await context.abort(grpc.StatusCode.NOT_FOUND, "streams here have epoch 0 only")
        return message("SegmentRanges", ranges=self._ranges(state))

    async def getSegments(self, request: Any, context: Any) -> Any:
        state = await self._found(self._stream(request.stream), context, "stream")
        locations = [
            message("SegmentLocation", segment=r.segment, offset=0) for r in self._ranges(state)
        ]
        return message("SegmentsAtTime", segments=locations)

    async def getSegmentsImmediatelyFollowing(self, request: Any, context: Any) -> Any:
        # Fixed streams never scale: a sealed segment has no successors.
        return message("SuccessorResponse")

    async def getURI(self, request: Any, context: Any) -> Any:
        return message("NodeUri", endpoint=self.store_host, port=self.store_port)

    async def getDelegationToken(self, request: Any, context: Any) -> Any:
        return message("DelegationToken", token="")

    # --- transactions ----------------------------------------------------------------------

    async def createTransaction(self, request: Any, context: Any) -> Any:
        state = await self._found(self._stream(request.stream), context, "stream")
        if state.sealed:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the stream is sealed")
        # Bit 63 of the low half stays clear: the Rust client widens the low half to 128 bits
        # with sign extension ("low_bits as u128"), so a negative one would turn its high
        # half into all ones and it would name segments of a transaction that does not exist.
        txn = uuid.UUID(int=uuid.uuid4().int & ~(1 << 63))
        for parent in state.segment_names():
            self.store.create_segment(transaction_segment_name(parent, txn))
        state.txns[txn] = TxnState.OPEN
        high, low = txn.int >> 64, txn.int & _U64
        return message(
            "CreateTxnResponse",
            txn=message(
                "TxnId",
                high=high - (1 << 64) if high >= 1 << 63 else high,
                low=low - (1 << 64) if low >= 1 << 63 else low,
            ),
            segments=self._ranges(state),
        )

    async def commitTransaction(self, request: Any, context: Any) -> Any:
        state = self._stream(request.stream)
        if state is None:
            return message("Status", status=2)  # STREAM_NOT_FOUND
        txn = self._txn_id(request.txn)
        current = state.txns.get(txn)
        if current is None:
            return message("Status", status=_TXN_NOT_FOUND)
        if current is TxnState.OPEN:
            for parent in state.segment_names():
                self.store.merge_segment(parent, transaction_segment_name(parent, txn))
            state.txns[txn] = TxnState.COMMITTED
        elif current is not TxnState.COMMITTED:
            return message("Status", status=_Status.FAILURE)
        return message("Status", status=_Status.SUCCESS)

    async def abortTransaction(self, request: Any, context: Any) -> Any:
        state = self._stream(request.stream)
        if state is None:
            return message("Status", status=2)
        txn = self._txn_id(request.txn)
        current = state.txns.get(txn)
        if current is None:
            return message("Status", status=_TXN_NOT_FOUND)
        if current is TxnState.OPEN:
            for parent in state.segment_names():
                self.store.delete_segment(transaction_segment_name(parent, txn))
            state.txns[txn] = TxnState.ABORTED
        elif current is not TxnState.ABORTED:
            return message("Status", status=_Status.FAILURE)
        return message("Status", status=_Status.SUCCESS)

    async def pingTransaction(self, request: Any, context: Any) -> Any:
        state = self._stream(request.stream)
        current = None if state is None else state.txns.get(self._txn_id(request.txn))
        status = {
            TxnState.OPEN: _PING_OK,
            TxnState.COMMITTED: _PING_COMMITTED,
            TxnState.ABORTED: _PING_ABORTED,
        }.get(current, _PING_UNKNOWN)  # type: ignore[arg-type]
        return message("Status", status=status)

    async def checkTransactionState(self, request: Any, context: Any) -> Any:
        state = self._stream(request.stream)
        current = None if state is None else state.txns.get(self._txn_id(request.txn))
        return message("TxnState", state=current or TxnState.UNKNOWN)

    # --- gRPC plumbing ---------------------------------------------------------------------

    _RPCS: tuple[tuple[str, str], ...] = (
        ("getControllerServerList", "ServerRequest"),
        ("createScope", "ScopeInfo"),
        ("checkScopeExists", "ScopeInfo"),
        ("listScopes", "ScopesRequest"),
        ("deleteScope", "ScopeInfo"),
        ("listStreamsInScope", "StreamsInScopeRequest"),
        ("listStreamsInScopeForTag", "StreamsInScopeWithTagRequest"),
        ("createStream", "StreamConfig"),
        ("checkStreamExists", "StreamInfo"),
        ("getStreamConfiguration", "StreamInfo"),
        ("updateStream", "StreamConfig"),
        ("truncateStream", "StreamCut"),
        ("sealStream", "StreamInfo"),
        ("deleteStream", "StreamInfo"),
        ("getCurrentSegments", "StreamInfo"),
        ("getEpochSegments", "GetEpochSegmentsRequest"),
        ("getSegments", "GetSegmentsRequest"),
        ("getSegmentsImmediatelyFollowing", "SegmentId"),
        ("getSegmentsImmediatlyFollowing", "SegmentId"),  # the API's older, misspelt name
        ("getURI", "SegmentId"),
        ("getDelegationToken", "StreamInfo"),
        ("createTransaction", "CreateTxnRequest"),
        ("commitTransaction", "TxnRequest"),
        ("abortTransaction", "TxnRequest"),
        ("pingTransaction", "PingTxnRequest"),
        ("checkTransactionState", "TxnRequest"),
    )

    def _counted(self, name: str, method: Handler) -> Handler:
        async def call(request: Any, context: aio.ServicerContext[Any, Any]) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            log.debug("%s(%s)", name, str(request).replace("\n", " "))
            return await method(request, context)

        return call

    def handler(self) -> grpc.GenericRpcHandler:
        """The gRPC handler serving every RPC above (others answer ``UNIMPLEMENTED``)."""
        handlers = {}
        for name, request_type in self._RPCS:
            target = (
                "getSegmentsImmediatelyFollowing" if name.startswith("getSegmentsImm") else name
            )
            handlers[name] = grpc.unary_unary_rpc_method_handler(
                self._counted(name, getattr(self, target)),
                request_deserializer=message_class(request_type).FromString,
                response_serializer=lambda reply: reply.SerializeToString(),
            )
        return grpc.method_handlers_generic_handler(SERVICE, handlers)


async def start(
    controller: Controller, host: str = "127.0.0.1", port: int = 0
) -> tuple[aio.Server, int]:
    """Start serving ``controller`` on ``host:port`` (plaintext); return the server and port."""
    server = aio.server()
    server.add_generic_rpc_handlers((controller.handler(),))
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot listen on {host}:{port}")
    await server.start()
    return server, bound
