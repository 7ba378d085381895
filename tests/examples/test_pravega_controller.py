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


def test_create_stream_past_the_segment_bound_is_refused_before_any_segment_is_built(
    call: Any,
) -> None:
    """One 18-byte request asking for 2^31-1 segments made the store build them in its event
    loop (300k: +400 MB; more: MemoryError). Past ``max_segments_per_stream`` (1000) the call
    ends with the status a Pravega controller gives a configuration it refuses."""
    call("createScope", "Status", message("ScopeInfo", scope="sc"))
    before = call.store.rss()
    for count in (1001, 300_000, 2**31 - 1):
        config = message(
            "StreamConfig",
            stream=stream(f"huge{count}"),
            scaling=message("ScalingPolicy", min_segments=count),
        )
        with pytest.raises(grpc.RpcError) as refused:
            call("createStream", "Status", config)
        assert refused.value.code() == grpc.StatusCode.INTERNAL
        assert call("checkStreamExists", "ExistsResponse", stream(f"huge{count}")).exists is False
    assert call.store.rss() - before < 20 << 20
    at_bound = message(
        "StreamConfig", stream=stream("wide"), scaling=message("ScalingPolicy", min_segments=1000)
    )
    assert call("createStream", "Status", at_bound).status == 0
    assert len(call("getCurrentSegments", "SegmentRanges", stream("wide")).ranges) == 1000


@pytest.mark.parametrize(
    "scope", ["a/b", "", "x" * 256, "spa ce", "é", "a\nb", "__twice", "x" * (3 << 20)]
)
def test_scope_names_outside_pravegas_rules_are_invalid(call: Any, scope: str) -> None:
    assert call("createScope", "Status", message("ScopeInfo", scope=scope)).status == 3
    assert scope not in call("listScopes", "ScopesResponse", message("ScopesRequest")).scopes


@pytest.mark.parametrize("name", ["b/c", "", "y" * 256, "tab\t", "a#b", "_x_"])
def test_stream_names_outside_pravegas_rules_are_invalid(call: Any, name: str) -> None:
    """Scope ``a`` + stream ``b/c`` and scope ``a/b`` + stream ``c`` shared one segment."""
    call("createScope", "Status", message("ScopeInfo", scope="sc"))
    config = message(
        "StreamConfig", stream=stream(name), scaling=message("ScalingPolicy", min_segments=1)
    )
    assert call("createStream", "Status", config).status == 4  # INVALID_STREAM_NAME


def test_names_pravega_accepts_are_accepted(call: Any) -> None:
    for scope in ("Sc.1-x", "_system", "z" * 255):
        assert call("createScope", "Status", message("ScopeInfo", scope=scope)).status in (0, 2)
    config = message(
        "StreamConfig",
        stream=message("StreamInfo", scope="Sc.1-x", stream="_RGgroup"),
        scaling=message("ScalingPolicy", min_segments=1),
    )
    assert call("createStream", "Status", config).status == 0
