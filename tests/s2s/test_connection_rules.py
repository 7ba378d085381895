"""The rules of an S2S session end, each refusal in its exact words, code and fatality.

Every refusal of ``send``, ``receive_data``, ``next_event``, ``advise_reconnect`` and
``check_heartbeat`` with its code, words and fatality (a refused event is ``invalid`` and not
fatal; a send into a terminated or failed session is fatal); the frames ``send`` builds,
terminal ones included, fit ``Limits.max_frame_length`` rather than the 2 MiB default; a server
refuses to send acks out of order just as a client refuses to receive them, and an ack's count
is ``end - start`` wherever the batch starts; only a server owes a Terminal reply after a fatal
error (a client in ERROR may send nothing); a Terminal received leaves no room for our own;
zstd without its extra is one ``MissingExtra`` naming the feature, the extra and the missing
package.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

import pytest

from s3p_codec import LocalProtocolError, RemoteProtocolError, Role, s2s
from s3p_codec._extras import MissingExtra
from s3p_codec.s2s import _compression as compression

APPEND, READ = s2s.Session.APPEND, s2s.Session.READ
POS = s2s.StreamPosition
INVALID, BAD_FRAME = s2s.ErrorCode.INVALID, s2s.ErrorCode.BAD_FRAME


def exactly(words: str) -> str:
    """A ``match`` pattern for these words and nothing else."""
    return f"^{re.escape(words)}$"


def _input(count: int = 1) -> s2s.AppendInput:
    return s2s.AppendInput(tuple(s2s.AppendRecord(b"r") for _ in range(count)))


def _ack(start: int, count: int) -> s2s.AppendAck:
    return s2s.AppendAck(POS(start, 1), POS(start + count, 1), POS(start + count, 1))


def _frame(payload: bytes, flags: int = 0) -> bytes:
    return (1 + len(payload)).to_bytes(3, "big") + bytes((flags,)) + payload


def _server_with_inputs(*counts: int) -> s2s.Connection:
    """An append server that received one input of each record count."""
    client = s2s.Connection(Role.CLIENT, APPEND)
    server = s2s.Connection(Role.SERVER, APPEND)
    server.receive_data(b"".join(client.send(_input(count)) for count in counts))
    assert list(server.events()) == [_input(count) for count in counts]
    return server


def _local(
    call: Callable[[], object], *, words: str, code: s2s.ErrorCode = INVALID, fatal: bool = False
) -> LocalProtocolError:
    """Run ``call`` and check the ``LocalProtocolError`` it raises: words, code, fatality."""
    with pytest.raises(LocalProtocolError, match=exactly(words)) as info:
        call()
    assert info.value.code is code
    assert info.value.fatal is fatal
    assert info.value.reply is None
    return info.value


def _remote(conn: s2s.Connection, *, words: str, code: s2s.ErrorCode) -> RemoteProtocolError:
    """The ``RemoteProtocolError`` the next event raises, in these words and with this code."""
    with pytest.raises(RemoteProtocolError, match=exactly(words)) as info:
        conn.next_event()
    assert info.value.code is code
    assert conn.state is s2s.ConnectionState.ERROR
    return info.value


# -- refusals of send, in their words -----------------------------------------------------------


def test_only_a_server_advises_reconnection_a_refusal_that_is_not_fatal() -> None:
    client = s2s.Connection(Role.CLIENT, READ)
    _local(client.advise_reconnect, words="only a server advises reconnection")
    assert client.state is s2s.ConnectionState.OPEN


def test_a_read_client_sends_no_terminal_frame() -> None:
    client = s2s.Connection(Role.CLIENT, READ)
    _local(
        lambda: client.send(s2s.Terminal(status=499)),
        words="a read session's request carries no frames",
    )
    assert client.state is s2s.ConnectionState.OPEN


def test_events_of_the_wrong_end_are_refused_naming_role_session_and_event() -> None:
    _local(
        lambda: s2s.Connection(Role.CLIENT, READ).send(s2s.Heartbeat(POS(0, 0))),
        words="a client of a read session cannot send Heartbeat",
    )
    _local(
        lambda: s2s.Connection(Role.SERVER, READ).send(_input(1)),
        words="a server of a read session cannot send AppendInput",
    )
    _local(
        lambda: s2s.Connection(Role.CLIENT, APPEND).send(s2s.Heartbeat(POS(0, 0))),
        words="a client of an append session cannot send Heartbeat",
    )


def test_a_terminal_is_sent_only_as_a_terminal_not_a_subclass() -> None:
    class Special(s2s.Terminal):
        pass

    server = s2s.Connection(Role.SERVER, READ)
    _local(lambda: server.send(Special(status=500)), words="Terminal expected")
    assert server.state is s2s.ConnectionState.OPEN
    server.send(s2s.Terminal(status=500))  # the refusal consumed nothing


def test_an_empty_read_batch_must_carry_a_tail() -> None:
    server = s2s.Connection(Role.SERVER, READ)
    _local(
        lambda: server.send(s2s.ReadBatch(())),
        words="a ReadBatch with no records must carry a tail",
    )


def test_a_heartbeat_tail_is_checked_under_its_name() -> None:
    server = s2s.Connection(Role.SERVER, READ)
    _local(
        lambda: server.send(s2s.Heartbeat(None)),  # type: ignore[arg-type]
        words="Heartbeat.tail must be a StreamPosition, not NoneType",
    )
    _local(
        lambda: server.send(s2s.Heartbeat(POS(-1, 0))),
        words="Heartbeat.tail.seq_num must be an int in [0, 2**64), not -1",
    )


def test_after_our_terminal_nothing_more_is_sent_in_these_words() -> None:
    server = s2s.Connection(Role.SERVER, READ)
    server.send(s2s.Terminal(status=503, code="server_draining"))
    words = "a terminal frame was sent: no further frames"
    _local(lambda: server.send(s2s.Heartbeat(POS(0, 0))), words=words, fatal=True)
    _local(lambda: server.send(s2s.Terminal(status=500)), words=words, fatal=True)
    client = s2s.Connection(Role.CLIENT, APPEND)
    client.send(s2s.Terminal(status=499))
    _local(lambda: client.send(_input(1)), words=words, fatal=True)


def test_after_a_received_terminal_neither_a_frame_nor_a_terminal_is_sent() -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    client.receive_data(s2s.Connection(Role.SERVER, APPEND).send(s2s.Terminal(status=500)))
    with pytest.raises(s2s.SessionTerminated):
        client.next_event()
    words = "a terminal frame was received: no further frames"
    _local(lambda: client.send(_input(1)), words=words, fatal=True)
    _local(lambda: client.send(s2s.Terminal(status=499)), words=words, fatal=True)
    assert client.state is s2s.ConnectionState.TERMINATED


def test_a_server_in_error_sends_its_reply_then_nothing() -> None:
    server = s2s.Connection(Role.SERVER, APPEND)
    server.receive_data(b"\x00\x00\x02\x60x")  # compression 3: reserved
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    _local(
        lambda: server.send(_ack(0, 1)),
        words="after a fatal error only the error's Terminal reply may be sent",
        fatal=True,
    )
    reply = caught.value.reply
    assert isinstance(reply, s2s.Terminal)
    assert server.send(reply)[3] == 0x80
    assert server.state is s2s.ConnectionState.ERROR
    for event in (_ack(0, 1), reply):
        _local(
            partial(server.send, event),
            words="connection is in state ERROR",
            fatal=True,
        )


# -- the frames sent fit Limits.max_frame_length ------------------------------------------------


def test_a_regular_frame_over_the_configured_limit_is_refused_and_not_counted() -> None:
    limits = s2s.Limits(max_frame_length=64)
    server = s2s.Connection(Role.SERVER, READ, limits=limits)
    big = s2s.ReadBatch((s2s.SequencedRecord(0, 0, b"z" * 100),))
    _local(
        lambda: server.send(big),
        words=f"frame of {1 + len(s2s.encode_read_batch(big))} bytes exceeds the 64-byte limit",
        code=BAD_FRAME,
    )
    small = s2s.ReadBatch((s2s.SequencedRecord(0, 0, b"z"),))
    assert len(server.send(small)) <= 3 + 64
    client = s2s.Connection(Role.CLIENT, APPEND, limits=limits)
    with pytest.raises(LocalProtocolError, match="exceeds the 64-byte limit"):
        client.send(s2s.AppendInput((s2s.AppendRecord(b"y" * 100),)))
    assert client.unacked == 0


def test_a_terminal_frame_over_the_configured_limit_is_refused() -> None:
    server = s2s.Connection(Role.SERVER, READ, limits=s2s.Limits(max_frame_length=64))
    _local(
        lambda: server.send(s2s.Terminal(status=500, message="m" * 100)),
        words="terminal frame too long",
        code=BAD_FRAME,
    )
    assert server.state is s2s.ConnectionState.OPEN
    assert server.send(s2s.Terminal(status=500, message="short"))[3] == 0x80


# -- acks: the same rules sending and receiving -------------------------------------------------


def test_a_server_cannot_ack_backwards() -> None:
    server = _server_with_inputs(1, 1)
    server.send(_ack(5, 1))
    _local(lambda: server.send(_ack(0, 1)), words="AppendAck not after the previous one")
    server.send(_ack(6, 1))


def test_an_ack_count_is_end_minus_start_wherever_it_starts() -> None:
    server = _server_with_inputs(2)
    _local(lambda: server.send(_ack(5, 1)), words="AppendAck covers 1 records, the input had 2")
    _local(lambda: server.send(_ack(5, 0)), words="AppendAck covers 0 records, the input had 2")
    server.send(_ack(5, 2))


def test_a_server_cannot_ack_with_no_input_awaiting_one() -> None:
    server = s2s.Connection(Role.SERVER, APPEND)
    _local(lambda: server.send(_ack(0, 1)), words="AppendAck with no AppendInput awaiting one")


@pytest.mark.parametrize(
    ("counts", "ack", "words"),
    [
        ([], _ack(0, 1), "AppendAck with no AppendInput awaiting one"),
        ([1], _ack(3, 0), "AppendAck covers 0 records, the input had 1"),
        ([2], _ack(3, 1), "AppendAck covers 1 records, the input had 2"),
        ([1], s2s.AppendAck(POS(5, 0), POS(4, 0), POS(5, 0)), "AppendAck end < start"),
    ],
)
def test_a_client_rejects_a_bad_ack_as_invalid_and_owes_no_reply(
    counts: list[int], ack: s2s.AppendAck, words: str
) -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    for count in counts:
        client.send(_input(count))
    client.receive_data(_frame(s2s.encode_append_ack(ack)))
    error = _remote(client, words=words, code=INVALID)
    assert error.reply is None


def test_a_client_rejects_a_backwards_ack_in_these_words() -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    client.send(_input(1))
    client.send(_input(1))
    client.receive_data(_frame(s2s.encode_append_ack(_ack(5, 1))))
    assert client.next_event() == _ack(5, 1)
    client.receive_data(_frame(s2s.encode_append_ack(_ack(0, 1))))
    _remote(client, words="AppendAck not after the previous one", code=INVALID)


# -- what is received, and the end of the body --------------------------------------------------


def test_an_input_over_the_metered_bytes_is_invalid_with_a_422_reply() -> None:
    over = s2s.AppendInput((s2s.AppendRecord(b"x" * (1024 * 1024 - 7)),))
    big = s2s.Limits(max_append_bytes=2 * 1024 * 1024)
    server = s2s.Connection(Role.SERVER, APPEND)
    server.receive_data(s2s.Connection(Role.CLIENT, APPEND, limits=big).send(over))
    words = f"an AppendInput carries at most 1048576 metered bytes, not {1024 * 1024 + 1}"
    error = _remote(server, words=words, code=INVALID)
    assert error.reply == s2s.Terminal(status=422, code="invalid", message=words)


def test_a_read_request_carrying_a_frame_is_a_bad_frame_answered_with_400() -> None:
    server = s2s.Connection(Role.SERVER, READ)
    server.receive_data(s2s.Connection(Role.CLIENT, APPEND).send(_input(1)))
    words = "a read session's request carries no frames"
    error = _remote(server, words=words, code=BAD_FRAME)
    assert error.reply == s2s.Terminal(status=400, code="bad_frame", message=words)
    assert not server.finished


def test_an_empty_batch_without_a_tail_is_refused_in_these_words() -> None:
    client = s2s.Connection(Role.CLIENT, READ)
    client.receive_data(b"\x00\x00\x01\x00")
    error = _remote(client, words="a ReadBatch with no records and no tail", code=INVALID)
    assert error.reply is None


def test_an_append_body_ending_with_unacked_inputs_is_invalid() -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    client.send(_input(1))
    client.send(_input(2))
    client.receive_data(b"")
    _remote(client, words="append session ended with 2 unacknowledged inputs", code=INVALID)


def test_data_after_the_end_of_the_body_is_a_bad_frame() -> None:
    conn = s2s.Connection(Role.CLIENT, READ)
    conn.receive_data(b"")
    _local(
        lambda: conn.receive_data(b"x"),
        words="data after the end of the body",
        code=BAD_FRAME,
        fatal=True,
    )


def test_a_failed_connection_keeps_failing_in_these_words() -> None:
    client = s2s.Connection(Role.CLIENT, READ)
    client.receive_data(b"\x00\x00\x00")  # length 0
    with pytest.raises(RemoteProtocolError):
        client.next_event()
    _remote(client, words="connection is in state ERROR", code=BAD_FRAME)


def test_a_client_in_error_owes_no_reply_and_may_send_nothing() -> None:
    client = s2s.Connection(Role.CLIENT, APPEND)
    client.receive_data(b"\x00\x00\x02\x60x")
    with pytest.raises(RemoteProtocolError) as caught:
        client.next_event()
    assert caught.value.reply is None
    assert client.finished
    for event in (_input(1), s2s.Terminal(status=499)):
        _local(
            partial(client.send, event),
            words="connection is in state ERROR",
            fatal=True,
        )


# -- heartbeats -----------------------------------------------------------------------------------


def test_the_heartbeat_timeout_says_how_long_and_the_limit() -> None:
    client = s2s.Connection(Role.CLIENT, READ)
    client.check_heartbeat(100.0)
    with pytest.raises(RemoteProtocolError, match=exactly("no frame for 25.5 s (limit 20 s)")):
        client.check_heartbeat(125.5)


# -- compression --------------------------------------------------------------------------------


def test_zstd_without_its_extra_names_the_feature_the_extra_and_the_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compression, "_zstd", None)
    with pytest.raises(MissingExtra) as info:
        s2s.Connection(Role.SERVER, READ, compression=s2s.Compression.ZSTD)
    assert str(info.value) == (
        "S2S zstd compression needs the 'zstd' extra (zstandard is missing): "
        "pip install 's3p-codec[zstd]'"
    )
    assert info.value.name == "zstandard"
    assert info.value.extra == "zstd"
