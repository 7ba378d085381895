"""The Observer with both versions (configured or detected), its bounded pending queue, linear
pairing after a gap, unpaired replies said in a row, and ``--decode-as 7500=s3p@0.2.0``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import Direction, Role, s3p
from s3p_codec._core import Observed, ObservedError
from s3p_codec.capture import decode_files, parse_decode_as
from s3p_codec.s3p import (
    Append,
    AppendReply,
    Create,
    Delete,
    ErrorCode,
    ErrorReply,
    Id,
    Ok,
    Read,
    Trim,
)
from s3p_codec.testing.s3p import conversations
from tests.capture.synth import Flow, write_capture
from tests.observer_support import fed_in_pieces

UP = Direction.CLIENT_TO_SERVER
DOWN = Direction.SERVER_TO_CLIENT


def wire(
    conversation: list[tuple[s3p.Request, s3p.Reply]], version: str
) -> tuple[list[bytes], list[bytes]]:
    client = s3p.Connection(Role.CLIENT, version=version)
    server = s3p.Connection(Role.SERVER, version=version)
    up = [client.send(request) for request, _ in conversation]
    server.receive_data(b"".join(up))
    list(server.events())
    return up, [server.send(reply) for _, reply in conversation]


def observed(observer: s3p.Observer, up: bytes, down: bytes) -> list[object]:
    return [*observer.observe(UP, up), *observer.observe(DOWN, down)]


V020_TALK: list[tuple[s3p.Request, s3p.Reply]] = [
    (Create(b"s"), Ok()),
    (Create(b"s"), ErrorReply(ErrorCode.STREAM_EXISTS, "exists")),
    (Append(b"s", (b"a",), id=9), AppendReply(Id(9, 0))),
    (Append(b"s", (b"b",), id=8), ErrorReply(ErrorCode.NON_MONOTONIC_ID, "low")),
    (Read(b"s", min_id=Id(9, 0)), s3p.ReadReply(((Id(9, 0), b"a"),))),
    (Delete(b"s"), Ok()),
]


@pytest.mark.parametrize("version", ["0.2.0", None])
def test_a_v020_conversation_is_decoded_and_paired_through_recoverable_errors(
    version: str | None,
) -> None:
    up, down = wire(V020_TALK, "0.2.0")
    observer = s3p.Observer(version=version)
    seen = observed(observer, b"".join(up), b"".join(down))
    assert all(isinstance(item, Observed) for item in seen)
    events = [item.event for item in seen if isinstance(item, Observed)]
    assert events == [r for r, _ in V020_TALK] + [reply for _, reply in V020_TALK]
    pairs = [item.pair_id for item in seen if isinstance(item, Observed)]
    assert pairs == [0, 1, 2, 3, 4, 5] * 2
    assert observer.version is s3p.Version.V0_2_0
    assert observer.detected


def test_detection_falls_back_to_0_1_0_and_holds_to_the_version_seen() -> None:
    observer = s3p.Observer()
    client = s3p.Connection(Role.CLIENT)
    observer.observe(UP, client.send(Create(b"s")))
    assert (observer.version, observer.detected) == (s3p.Version.V0_1_0, False)
    observer.observe(UP, client.send(Read(b"s", min_timestamp=Id(1, 0))))
    assert (observer.version, observer.detected) == (s3p.Version.V0_1_0, True)
    # Held to 0.1.0: an ID option is now an unknown option.
    v2 = s3p.Connection(Role.CLIENT, version="0.2.0").send(Append(b"s", (b"a",), id=1))
    item, after = observer.observe(UP, v2 + client.send(Delete(b"s")))  # reported at resync
    assert isinstance(item, ObservedError)
    assert item.error.code is ErrorCode.BAD_FORMAT
    assert isinstance(after, Observed)


def test_traffic_after_a_recoverable_error_is_v020_evidence() -> None:
    observer = s3p.Observer()
    client = s3p.Connection(Role.CLIENT)
    observer.observe(UP, client.send(Create(b"s")) + client.send(Create(b"t")))
    observer.observe(DOWN, b"-ERR_STREAM_EXISTS s\r\n")
    assert not observer.detected
    (reply,) = observer.observe(DOWN, b"+OK\r\n")
    assert isinstance(reply, Observed)
    assert reply.pair_id == 1
    assert observer.version is s3p.Version.V0_2_0


def test_unpaired_replies_after_an_error_are_no_evidence_of_v020() -> None:
    observer = s3p.Observer()
    observer.gap(DOWN, 0)  # replies to requests the capture never saw
    observer.observe(DOWN, b"-ERR_UNKNOWN_STREAM s\r\n+OK\r\n")
    assert not observer.detected
    client = s3p.Connection(Role.CLIENT)
    observer.observe(UP, client.send(Trim(b"s", Id(1, 0))))  # a v0.1.0 option: decides it
    assert (observer.version, observer.detected) == (s3p.Version.V0_1_0, True)


def test_a_strict_v010_observer_refuses_v020_options() -> None:
    up, _ = wire([(Append(b"s", (b"a",), id=9), AppendReply(Id(9, 0)))], "0.2.0")
    observer = s3p.Observer(version="0.1.0")
    out = observer.observe(UP, up[0])
    out += observer.close(UP)
    assert [type(item) for item in out] == [ObservedError]
    assert out[0].error.code is ErrorCode.BAD_FORMAT


@given(conversations(version="0.2.0"), st.lists(st.integers(1, 9), min_size=1, max_size=20))
def test_the_v020_observer_gives_the_same_output_in_any_chunking(
    conversation: list, sizes: list[int]
) -> None:
    up, down = wire(conversation, "0.2.0")
    whole = s3p.Observer(version="0.2.0")
    expected = observed(whole, b"".join(up), b"".join(down))
    observer = s3p.Observer(version="0.2.0")
    got: list[object] = []
    for direction, stream in ((UP, b"".join(up)), (DOWN, b"".join(down))):
        got += fed_in_pieces(observer, direction, stream, sizes)
    assert got == expected


# --- Pairing after a gap is linear; pending requests are bounded -----------------------------


def test_pairing_after_a_gap_is_linear_in_the_pending_requests() -> None:
    # 40,000 APPENDs pending, then 40,000 "+OK" replies after a gap: no pending request has
    # that shape. Scanning the pending queue per reply took minutes; a queue per shape, 0.3 s.
    client = s3p.Connection(Role.CLIENT)
    one = client.send(Append(b"s", (b"r",)))
    observer = s3p.Observer()
    observer.observe(UP, one * 40_000)
    observer.gap(DOWN, 0)
    started = time.process_time()
    out = observer.observe(DOWN, b"+OK\r\n" * 40_000)
    assert time.process_time() - started < 10.0  # quadratic: over 100 s
    replies = [item for item in out if isinstance(item, Observed)]
    assert len(replies) == 40_000
    assert all(item.pair_id is None for item in replies)
    # ...and the APPENDs are still pending, each paired with its own reply's shape.
    (first, *_) = observer.observe(DOWN, b"$3\r\n1-0\r\n")
    assert isinstance(first, Observed)
    assert first.pair_id == 0


def test_after_a_gap_a_reply_is_paired_with_the_oldest_request_of_its_shape() -> None:
    client = s3p.Connection(Role.CLIENT)
    requests = [Read(b"s"), Append(b"s", (b"a",)), Delete(b"s"), Append(b"s", (b"b",))]
    observer = s3p.Observer()
    observer.observe(UP, b"".join(client.send(r) for r in requests))
    observer.gap(DOWN, 0)
    out = observer.observe(DOWN, b"$3\r\n1-0\r\n+OK\r\n$3\r\n2-0\r\n*0\r\n")
    pairs = [(type(o.event).__name__, o.pair_id) for o in out if isinstance(o, Observed)]
    # The READ and the first APPEND are taken as lost when later replies answer later requests.
    assert pairs == [("AppendReply", 1), ("Ok", 2), ("AppendReply", 3), ("ReadReply", None)]


def test_pending_requests_are_bounded_and_a_row_says_when_the_oldest_are_forgotten() -> None:
    client = s3p.Connection(Role.CLIENT)
    observer = s3p.Observer(max_pending=10)
    out = observer.observe(UP, b"".join(client.send(Delete(b"%d" % n)) for n in range(25)))
    errors = [item for item in out if isinstance(item, ObservedError)]
    assert len(errors) == 1  # said once, not per request
    assert errors[0].error.code is ErrorCode.LIMITS
    assert "max_pending" in errors[0].error.message
    assert len(observer._pending) == 10
    # The 10 newest are still paired in order.
    replies = [o for o in observer.observe(DOWN, b"+OK\r\n" * 10) if isinstance(o, Observed)]
    assert [o.pair_id for o in replies] == list(range(15, 25))
    with pytest.raises(ValueError, match="max_pending"):
        s3p.Observer(max_pending=0)


def test_pending_requests_stay_within_the_default_bound() -> None:
    assert s3p._observer.MAX_PENDING == 100_000
    client = s3p.Connection(Role.CLIENT)
    observer = s3p.Observer(max_pending=1000)
    one = client.send(Delete(b"s"))
    for _ in range(30):
        observer.observe(UP, one * 100)
    assert len(observer._pending) == 1000


def test_a_reply_with_no_request_seen_is_typed_unpaired_and_said_once() -> None:
    observer = s3p.Observer()
    observer.gap(DOWN, 0)  # the capture began mid-conversation
    out = observer.observe(DOWN, b"$3\r\n1-0\r\n+OK\r\n")
    kinds = [type(item).__name__ for item in out]
    assert kinds == ["ObservedError", "Observed", "Observed"]
    said = out[0]
    assert isinstance(said, ObservedError)
    assert said.resynchronized
    assert "no request seen" in said.error.message
    assert [o.pair_id for o in out if isinstance(o, Observed)] == [None, None]


def test_the_first_reply_after_a_mid_conversation_start_is_paired_when_its_shape_allows() -> None:
    client = s3p.Connection(Role.CLIENT)
    observer = s3p.Observer()
    observer.gap(UP, 0)
    observer.gap(DOWN, 0)
    observer.observe(UP, client.send(Append(b"s", (b"a",))))
    out = observer.observe(DOWN, b"$3\r\n1-0\r\n")
    assert [type(item).__name__ for item in out] == ["Observed"]
    assert isinstance(out[0], Observed)
    assert out[0].pair_id == 0


# --- Captures: the decode-as spelling -------------------------------------------------------


def test_decode_as_names_the_s3p_version() -> None:
    assert parse_decode_as(["7500=s3p@0.2.0", "7501=S3P@0.1.0", "7502=s3p"]) == {
        7500: "s3p@0.2.0",
        7501: "s3p@0.1.0",
        7502: "s3p",
    }
    for bad in ("7500=s3p@0.3.0", "7500=rustlog@1", "7500=s3p@"):
        with pytest.raises(ValueError, match="unknown version"):
            parse_decode_as([bad])


def test_a_v020_capture_decodes_with_decode_as_and_with_detection(tmp_path: Path) -> None:
    up, down = wire(V020_TALK, "0.2.0")
    flow = Flow(server=("10.0.0.2", 7600))
    frames = flow.handshake()
    for request, reply in zip(up, down, strict=True):
        frames += flow.send(True, request) + flow.send(False, reply)
    frames += flow.close()
    path = tmp_path / "v020.pcap"
    path.write_bytes(write_capture(frames))
    strict = list(decode_files([str(path)], {7600: "s3p@0.2.0"}))
    detected = list(decode_files([str(path)], {7600: "s3p"}))
    old = list(decode_files([str(path)], {7600: "s3p@0.1.0"}))
    for rows in (strict, detected):
        assert {row.protocol for row in rows} == {"s3p"}
        assert [row.kind for row in rows] == ["event"] * 12
        assert [row.event for row in rows if row.direction == "client_to_server"] == [
            request for request, _ in V020_TALK
        ]
    assert "error" in {row.kind for row in old}  # v0.1.0 cannot read the ID option
