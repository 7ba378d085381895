"""Each protocol's sample capture replayed against a fresh example server gives no difference;
against one started with one behaviour changed, the difference is reported at the request that
meets it. Real servers on 127.0.0.1, real sockets."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from s3p_codec import replay, s2s
from tests.replay.conftest import CAPTURES, StartServer

SAMPLES = {
    # protocol: (example server, flags it was recorded with, capture)
    "s3p": ("s3p_server", (), "s3p.pcap"),
    "s3p_v020": ("s3p_server", ("--s3p-version", "0.2.0"), "s3p_v020.pcap"),
    "rustlog": ("rustlog_broker", (), "rustlog.pcap"),
    "pravega": ("pravega_segment_store", (), "pravega.pcap"),
    "durable": ("durable_server", ("--long-poll-timeout", "1"), "durable.pcap.gz"),
}


def _replay(capture: Path, target: str, **options: float) -> list[replay.ConversationResult]:
    return replay.replay([str(capture)], target, options=replay.Options(timeout=5, **options))


def _differing(results: list[replay.ConversationResult]) -> dict[str, int]:
    """Conversation number (``#N`` of its id) -> index of its first differing request."""
    return {
        r.id.rsplit("#", 1)[1]: r.first_difference.index
        for r in results
        if r.first_difference is not None
    }


@pytest.mark.parametrize("name", SAMPLES)
def test_a_fresh_server_answers_the_sample_as_recorded(
    name: str, start_server: StartServer
) -> None:
    module, flags, capture = SAMPLES[name]
    results = _replay(CAPTURES / capture, start_server(module, *flags))
    assert [r.outcome for r in results] == ["identical"] * len(results), [
        (r.id, r.first_difference) for r in results
    ]
    summary = replay.summarize(results)
    assert summary.requests > 0
    assert summary.exit_status == 0


def test_s3p_a_smaller_append_limit_is_reported_at_the_first_append(
    start_server: StartServer,
) -> None:
    target = start_server("s3p_server", "--max-records-per-append", "1")
    results = _replay(CAPTURES / "s3p.pcap", target)
    # 11: APPEND hello world; 21: APPEND a b, then c on the connection ERR_LIMITS closed;
    # 33: the READ finds none of the records
    assert _differing(results) == {"11": 0, "21": 0, "33": 0}
    first = results[1].first_difference
    assert first is not None
    assert first.difference == "answer[0]: AppendReply recorded, ErrorReply live"
    assert "ERR_LIMITS" in repr(first.live)
    second = results[2].requests[1]
    assert second.difference == "no answer: the connection ended after the previous answer"
    assert replay.summarize(results).exit_status == 1


def test_rustlog_retention_is_reported_at_the_fetch_of_dropped_records(
    start_server: StartServer,
) -> None:
    target = start_server("rustlog_broker", "--segment-bytes", "1", "--retention-bytes", "1")
    results = _replay(CAPTURES / "rustlog.pcap", target)
    # 31: OffsetFetch, then Fetch at 0 (records dropped by retention), then Fetch at 2
    assert _differing(results) == {"31": 1}
    first = results[3].first_difference
    assert first is not None
    assert first.difference == "answer[0]: FetchResponse recorded, Error live"
    assert "OFFSET_OUT_OF_RANGE" in repr(first.live)


def test_pravega_an_idle_timeout_is_reported_where_the_client_paused(
    start_server: StartServer, tmp_path: Path
) -> None:
    """The sample with the client pausing 1.5 s after its Hello (packets from the CreateSegment
    on moved later), replayed as recorded: a store that closes idle connections after 0.5 s
    closes this one mid-conversation, and says so at the CreateSegment."""
    from tests.replay.pcaps import rewrite

    paused = rewrite(
        CAPTURES / "pravega.pcap", tmp_path / "paused.pcap",
        delay=lambda number: 1.5 if number >= 8 else 0.0,
    )  # fmt: skip
    fresh = _replay(paused, start_server("pravega_segment_store"), speed=1.0)
    assert _differing(fresh) == {}
    strict = start_server("pravega_segment_store", "--idle-timeout", "0.5")
    results = _replay(paused, strict, speed=1.0)
    assert _differing(results)["1"] == 1
    first = results[0].first_difference
    assert first is not None
    assert first.live == ()
    assert first.difference is not None
    assert first.difference.startswith("no answer: the target closed the connection")


def test_durable_a_shorter_sse_lifetime_is_reported_at_the_sse_read(
    start_server: StartServer,
) -> None:
    """Replayed at half speed, the SSE read waits 0.4 s for the append of the other
    conversation; a server that ends SSE responses after 0.1 s ends it before the data."""
    flags = ("--long-poll-timeout", "1", "--sse-max-seconds", "0.1")
    results = _replay(CAPTURES / "durable.pcap.gz", start_server("durable_server", *flags),
                      speed=0.5)  # fmt: skip
    assert _differing(results) == {"1": 5}
    first = results[0].first_difference
    assert first is not None
    assert "SSEData" in first.difference if first.difference else False
    assert b"order" not in b"".join(getattr(e, "data", b"") for e in first.live)


def _create_s2s_stream(target: str, basin: bytes = b"demo") -> None:
    """What the capture's first conversation did, over plain HTTP/1.1 (replay cannot send it:
    the S2S Observer reports no event for a REST call, so there is nothing typed to send)."""
    host, port = target.rsplit(":", 1)
    body = b'{"stream": "orders"}'
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/streams HTTP/1.1\r\nhost: " + target.encode() + b"\r\n"
            b"authorization: Bearer demo\r\ns2-basin: " + basin + b"\r\n"
            b"content-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body
        )
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 201"), reply


def test_s2s_sessions_replay_identically_once_the_stream_exists(
    start_server: StartServer,
) -> None:
    target = start_server("s2_server", "--heartbeat", "1")
    _create_s2s_stream(target)
    results = _replay(CAPTURES / "s2s.pcap", target)
    assert [r.outcome for r in results] == ["skipped", "identical", "identical"], [
        (r.id, r.skipped, r.first_difference) for r in results
    ]
    assert results[0].skipped is not None
    assert "undecoded" in results[0].skipped


def test_s2s_a_missing_stream_is_reported_at_the_session_request(
    start_server: StartServer,
) -> None:
    results = _replay(CAPTURES / "s2s.pcap", start_server("s2_server", "--heartbeat", "1"))
    assert _differing(results) == {"13": 0, "31": 0}
    first = results[1].first_difference
    assert first is not None
    assert first.difference is not None
    assert "404" in first.difference


def _first_bytes_sent(capture: Path, conversation: int) -> bytes:
    """The first bytes replay sends for one conversation, caught by a listener that closes."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(10)
        port = listener.getsockname()[1]
        received: list[bytes] = []

        def accept() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.settimeout(5)
                received.append(conn.recv(65536))

        catcher = threading.Thread(target=accept)
        catcher.start()
        loaded = replay.load_conversations([str(capture)])
        replay.replay_conversations(
            [loaded[conversation]], f"127.0.0.1:{port}", options=replay.Options(timeout=2)
        )
        catcher.join(15)
    return received[0]


def test_s2s_sdk_sessions_are_replayed_over_http2() -> None:
    """The SDK's capture opened with the HTTP/2 preface, and so does its replay."""
    conversations = replay.load_conversations([str(CAPTURES / "s2s_h2.pcap")])
    assert [c.http2 for c in conversations] == [True] * 5
    assert not any(c.http2 for c in replay.load_conversations([str(CAPTURES / "s2s.pcap")]))
    assert _first_bytes_sent(CAPTURES / "s2s_h2.pcap", 1).startswith(
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    )
    assert _first_bytes_sent(CAPTURES / "s2s.pcap", 1).startswith(b"POST /v1/streams/orders/")


def test_s2s_http2_sample_replays_identically(start_server: StartServer) -> None:
    target = start_server("s2_server", "--heartbeat", "1")
    _create_s2s_stream(target, b"demo-basin")
    results = _replay(CAPTURES / "s2s_h2.pcap", target)
    assert [r.outcome for r in results] == ["skipped"] + ["identical"] * 4, [
        (r.id, r.skipped, r.first_difference) for r in results
    ]
    # The SDK sent its two appends before the session's answer came: each answer is still
    # compared at the request it answers (the response head, then one ack per append).
    first = results[1].requests
    assert [[type(e).__name__ for e in r.recorded] for r in first] == [
        ["SessionResponse"], ["AppendAck"], ["AppendAck"],
    ]  # fmt: skip
    assert [len(r.live) for r in first] == [1, 1, 1]
    assert replay.summarize(results).requests == 9


def test_s2s_http2_a_connection_cap_is_reported_at_the_append_of_the_shed_session(
    start_server: StartServer, tmp_path: Path
) -> None:
    """The SDK sample with the first session pausing 1 s before its appends (and the next
    session's appends after them, so the stream's order is kept), replayed as recorded: the
    second session connects during the pause. A server capped at one connection closes the
    waiting session for it, which is reported at that session's first append; the read then
    misses those two records."""
    from tests.replay.pcaps import rewrite

    paused = rewrite(
        CAPTURES / "s2s_h2.pcap", tmp_path / "paused.pcap",
        delay=lambda number: 1.0 if 33 <= number <= 45 or number >= 59 else 0.0,
    )  # fmt: skip
    fresh = start_server("s2_server", "--heartbeat", "1")
    _create_s2s_stream(fresh, b"demo-basin")
    assert _differing(_replay(paused, fresh, speed=1.0)) == {}
    capped = start_server("s2_server", "--heartbeat", "1", "--max-connections", "1")
    _create_s2s_stream(capped, b"demo-basin")
    results = _replay(paused, capped, speed=1.0)
    assert _differing(results) == {"22": 1, "90": 0}
    shed = results[1].first_difference
    assert shed is not None
    assert shed.live == ()
    assert shed.difference is not None
    assert shed.difference.startswith("no answer: the target closed the connection")


def test_s2s_http2_a_missing_stream_is_an_error_response_at_the_session_request(
    start_server: StartServer,
) -> None:
    results = _replay(CAPTURES / "s2s_h2.pcap", start_server("s2_server", "--heartbeat", "1"))
    assert _differing(results) == {"22": 0, "46": 0, "69": 0, "90": 0}
    first = results[1].first_difference
    assert first is not None
    assert first.difference == "answer[0]: SessionResponse recorded, ErrorResponse live"
    assert first.live == (s2s.ErrorResponse(404, "stream_not_found", first.live[0].message),)  # type: ignore[attr-defined]
