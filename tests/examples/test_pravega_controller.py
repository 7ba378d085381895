"""The example controller's gRPC API, called directly (as the official clients call it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

grpc = pytest.importorskip("grpc")

from examples.pravega_controller_messages import SERVICE, message, message_class  # noqa: E402
from tests.examples.pravega_official_support import StoreProcess  # noqa: E402

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def call() -> Iterator[Any]:
    with (
        StoreProcess() as store,
        grpc.insecure_channel(f"127.0.0.1:{store.controller_port}") as channel,
    ):

        def invoke(method: str, reply: str, request: Any) -> Any:
            stub = channel.unary_unary(
                f"/{SERVICE}/{method}",
                request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=message_class(reply).FromString,
            )
            return stub(request, timeout=5)

        invoke.store = store  # type: ignore[attr-defined]
        yield invoke


def stream(name: str = "st") -> Any:
    return message("StreamInfo", scope="sc", stream=name)


def test_segments_split_the_key_space_evenly_and_live_at_the_store(call: Any) -> None:
    assert call("createScope", "Status", message("ScopeInfo", scope="sc")).status == 0
    config = message(
        "StreamConfig", stream=stream(), scaling=message("ScalingPolicy", min_segments=4)
    )
    assert call("createStream", "Status", config).status == 0
    assert call("createStream", "Status", config).status == 2  # STREAM_EXISTS
    ranges = call("getCurrentSegments", "SegmentRanges", stream()).ranges
    assert [(r.segment.segment_id, r.min_key, r.max_key) for r in ranges] == [
        (0, 0.0, 0.25), (1, 0.25, 0.5), (2, 0.5, 0.75), (3, 0.75, 1.0),
    ]  # fmt: skip
    uri = call("getURI", "NodeUri", message("SegmentId", stream=stream(), segment_id=2))
    assert (uri.endpoint, uri.port) == ("127.0.0.1", call.store.port)
    assert call("getDelegationToken", "DelegationToken", stream()).token == ""
    got = call("getStreamConfiguration", "StreamConfig", stream())
    assert got.scaling.min_segments == 4
    with pytest.raises(grpc.RpcError) as missing:
        call("getCurrentSegments", "SegmentRanges", stream("nope"))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_transaction_states_through_commit_and_abort(call: Any) -> None:
    call("createScope", "Status", message("ScopeInfo", scope="sc"))
    config = message(
        "StreamConfig", stream=stream("tx"), scaling=message("ScalingPolicy", min_segments=1)
    )
    call("createStream", "Status", config)
    created = [
        call(
            "createTransaction",
            "CreateTxnResponse",
            message("CreateTxnRequest", stream=stream("tx"), lease=10_000),
        )
        for _ in range(2)
    ]
    assert all(c.txn.low >= 0 for c in created)  # bit 63 clear: see createTransaction
    first, second = (message("TxnRequest", stream=stream("tx"), txn=c.txn) for c in created)

    def state(request: Any) -> int:
        return int(call("checkTransactionState", "TxnState", request).state)

    def ping(txn: Any) -> int:
        request = message("PingTxnRequest", stream=stream("tx"), txn=txn, lease=10_000)
        return int(call("pingTransaction", "Status", request).status)

    assert state(first) == state(second) == 1  # OPEN
    assert ping(created[0].txn) == 0  # OK
    assert call("commitTransaction", "Status", first).status == 0
    assert call("commitTransaction", "Status", first).status == 0  # idempotent
    assert call("abortTransaction", "Status", first).status == 1  # committed: cannot abort
    assert call("abortTransaction", "Status", second).status == 0
    assert call("commitTransaction", "Status", second).status == 1  # aborted: cannot commit
    assert (state(first), state(second)) == (3, 5)  # COMMITTED, ABORTED
    assert (ping(created[0].txn), ping(created[1].txn)) == (5, 6)
    unknown = message("TxnRequest", stream=stream("tx"), txn=message("TxnId", high=1, low=2))
    assert state(unknown) == 0  # UNKNOWN
    assert call("commitTransaction", "Status", unknown).status == 3  # TRANSACTION_NOT_FOUND
