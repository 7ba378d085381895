"""What a replay tells its user: a capture that starts mid-stream, a target that refuses
connections, JSON lines, exit statuses, the baseline's noise filter, and the pairing rule."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import attrs
import pytest

from s3p_codec import replay
from s3p_codec.cli import main
from tests.replay.conftest import CAPTURES, StartServer
from tests.replay.pcaps import rewrite


def test_a_conversation_recorded_mid_stream_is_skipped_with_its_reason(
    start_server: StartServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # packets 53-55 are the TCP handshake of the last conversation (DELETE)
    cut = rewrite(CAPTURES / "s3p.pcap", tmp_path / "cut.pcap", keep=lambda n: not 53 <= n <= 55)
    status = main(["replay", str(cut), "--to", start_server("s3p_server")])
    out = capsys.readouterr().out.splitlines()
    assert status == 0
    assert out[-2].endswith("skipped: starts mid-stream (its TCP handshake is not in the capture)")
    assert sum("identical" in line for line in out[:-1]) == 5
    assert out[-1] == (
        "6 conversations, 6 requests: 6 identical, 0 differing, 1 skipped, 0 unreachable"
    )


def _refusing_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_target_refusing_connections_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    port = _refusing_port()
    status = main(["replay", str(CAPTURES / "rustlog.pcap"), "--to", f"127.0.0.1:{port}"])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.err == (
        f"s3p-codec replay: cannot connect to 127.0.0.1:{port}: Connection refused\n"
    )
    assert "Traceback" not in captured.out + captured.err
    assert captured.out.splitlines()[-1].endswith("0 skipped, 7 unreachable")


def test_usage_errors_exit_2_without_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["replay", str(CAPTURES / "s3p.pcap"), "--to", "nowhere"])
    assert exited.value.code == 2
    assert "target must be HOST:PORT" in capsys.readouterr().err
    status = main(["replay", str(CAPTURES / "missing.pcap"), "--to", "127.0.0.1:1"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("s3p-codec replay: ")
    assert len(err.splitlines()) == 1


def test_jsonl_lists_each_conversation_and_a_summary(
    start_server: StartServer, capsys: pytest.CaptureFixture[str]
) -> None:
    target = start_server("s3p_server", "--max-records-per-append", "1")
    status = main(["replay", str(CAPTURES / "s3p.pcap"), "--to", target, "--format", "jsonl"])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert status == 1
    assert [r["outcome"] for r in records[:-1]] == [
        "identical", "differs", "differs", "differs", "identical", "identical",
    ]  # fmt: skip
    first = records[1]["first_difference"]
    assert first["request_index"] == 0
    assert first["recorded"][0].startswith("AppendReply(")
    assert first["live"][0].startswith("ErrorReply(code=<ErrorCode.LIMITS")
    assert records[-1] == {
        "type": "summary", "conversations": 6, "requests": 7, "identical": 3,
        "differing": 4, "skipped": 0, "errors": 0, "noise": 0, "exit_status": 1,
    }  # fmt: skip


def test_the_baseline_cancels_differences_it_shows_too(start_server: StartServer) -> None:
    """A changed server compared with a fresh baseline differs; with a baseline changed the
    same way, every difference is noise."""
    changed = start_server("s3p_server", "--max-records-per-append", "1")
    fresh = start_server("s3p_server")
    options = replay.Options(timeout=5)
    capture = [str(CAPTURES / "s3p.pcap")]
    results = replay.replay(capture, changed, baseline=fresh, options=options)
    assert replay.summarize(results).exit_status == 1
    same = start_server("s3p_server", "--max-records-per-append", "1")
    again = start_server("s3p_server", "--max-records-per-append", "1")
    results = replay.replay(capture, same, baseline=again, options=options)
    summary = replay.summarize(results)
    assert (summary.differing, summary.noise, summary.exit_status) == (0, 4, 0)


def test_assigned_values_pair_once_and_must_agree_after() -> None:
    pairing = replay.Pairing()
    assert pairing.meet("offset", 5, 7) is None
    assert pairing.meet("offset", 5, 7) is None  # the same offset twice still holds
    assert pairing.meet("offset", 5, 8) == "offset 5 was paired with 7 before, now 8"
    assert pairing.meet("offset", 6, 7) == "offset 7 already stands for 5, not 6"
    assert pairing.meet("cursor", 5, 8) is None  # namespaces are apart
    assert pairing.live_for("offset", 5) == 7


def test_clock_values_keep_the_recorded_order_not_one_partner() -> None:
    """Two appends of one recorded millisecond may fall in two live ones."""
    pairing = replay.Pairing()
    assert pairing.meet("timestamp", 17, 673) is None
    assert pairing.meet("timestamp", 17, 674) is None
    assert pairing.meet("timestamp", 18, 674) is None
    assert pairing.meet("timestamp", 18, 672) == (
        "timestamp 672 is earlier than 674, though 18 was later than 17"
    )
    assert pairing.meet("timestamp", 16, 675) == (
        "timestamp 675 is later than 673, though 16 was earlier than 17"
    )


def test_a_live_answer_to_a_request_with_none_recorded_stays_at_that_request(
    start_server: StartServer,
) -> None:
    """Conversation #21 (APPEND a b, then APPEND c) as if the first answer had not been
    recorded: its live answer is waited for (a bounded grace) and reported there, and the
    second request is compared with its own answer, not with the first one's."""
    create, _, conversation, *_ = replay.load_conversations([str(CAPTURES / "s3p.pcap")])
    assert conversation.id.endswith("#21")
    first, second = conversation.exchanges
    unanswered = attrs.evolve(first, answer=(), answer_ts=())
    cut = attrs.evolve(conversation, exchanges=(unanswered, second))
    options = replay.Options(timeout=5, grace=2)
    created, result = replay.replay_conversations(
        [create, cut], start_server("s3p_server"), options=options
    )
    assert created.outcome == "identical"
    asked, then = result.requests
    assert asked.difference == "answer: 0 items recorded, 1 live"
    assert [type(e).__name__ for e in asked.live] == ["AppendReply"]
    assert then.difference is None
    assert then.live[0].timestamp > asked.live[0].timestamp  # type: ignore[attr-defined]
    assert result.first_difference is asked
