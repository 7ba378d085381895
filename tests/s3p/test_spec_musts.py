"""One test per MUST / MUST NOT of S3P v0.1.0, named after the rule it checks.

Rules about stream state (timestamp strategy, monotonic APPEND timestamps) belong to the store
behind a server, not to the codec: they are tested against the store of the runnable example
(``examples/s3p_conversation.py``), which is what a server built on this codec has to do.
"""

from __future__ import annotations

import pytest

from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, s3p
from s3p_codec.s3p import (
    Append,
    Create,
    Delete,
    ErrorCode,
    ErrorReply,
    Ok,
    Read,
    ReadReply,
    Timestamp,
    TimestampStrategy,
)

from .support import client_error, client_for, crlf, server_error, server_events

BAD = ErrorCode.BAD_FORMAT
LIMITS = ErrorCode.LIMITS


def read_cmd(options: str) -> bytes:
    return crlf("*3\n$4\nREAD\n$6\norders\n" + options)


# --- 3. Data types and framing -------------------------------------------------------------


def test_bulk_length_must_be_at_least_1_servers_must_reject_dollar_0_with_err_bad_format() -> None:
    for data in (
        crlf("*3\n$0\n\n$6\norders\n*0"),  # the command name
        crlf("*3\n$6\nDELETE\n$0\n\n*0"),  # the stream name
        crlf("*4\n$6\nAPPEND\n$6\norders\n*0\n*1\n$0\n"),  # a record
        read_cmd("*2\n$0\n\n$1\n1"),  # an option key
    ):
        assert server_error(data).code is BAD


def test_zero_length_bulk_strings_are_not_allowed_in_replies_either() -> None:
    assert client_error(crlf("$0\n"), Append(b"s", (b"x",))).code is BAD
    assert client_error(crlf("*2\n$3\n1-1\n$0\n"), Read(b"s")).code is BAD


def test_arrays_must_not_contain_mixed_types() -> None:
    # An options array holding an Array, a records array holding a Simple String.
    assert server_error(read_cmd("*2\n$5\nCOUNT\n*0")).code is BAD
    assert server_error(crlf("*4\n$6\nAPPEND\n$1\ns\n*0\n*2\n$1\na\n+b")).code is BAD
    # A READ reply mixing Bulk Strings and an Array.
    assert client_error(crlf("*2\n$3\n1-1\n*0"), Read(b"s")).code is BAD


@pytest.mark.parametrize(
    "data",
    [
        b"*3\n$6\r\nDELETE\r\n$1\r\ns\r\n*0\r\n",  # LF-only after the array header
        b"*3\r\n$6\nDELETE\r\n$1\r\ns\r\n*0\r\n",  # LF-only after a bulk header
        b"*3\r\n$6\r\nDELETE\n$1\r\ns\r\n*0\r\n",  # LF-only after a payload
        b"*3\r$6\r\nDELETE\r\n$1\r\ns\r\n*0\r\n",  # CR-only
        b"*3\r\n$6\r\nDELETE\r$1\r\ns\r\n*0\r\n",  # CR-only after a payload
    ],
)
def test_implementations_must_not_accept_lf_only_or_cr_only_separators(data: bytes) -> None:
    assert server_error(data).code is BAD


def test_implementations_must_not_accept_lf_only_separators_in_replies() -> None:
    assert client_error(b"+OK\n+OK\r\n", Delete(b"s")).code is BAD
    assert client_error(b"$3\n1-1\r\n", Append(b"s", (b"x",))).code is BAD


def test_implementations_must_use_crlf_and_must_not_emit_lf_only_or_cr_only() -> None:
    client = s3p.Connection(Role.CLIENT)
    server = s3p.Connection(Role.SERVER)
    wire = [
        client.send(Append(b"a\nb", (b"x\ry", b"\n"), Timestamp(1, 2))),
        client.send(Read(b"s", 5, 10, Timestamp(3, 4))),
    ]
    server.receive_data(b"".join(wire))
    list(server.events())
    wire.append(server.send(s3p.AppendReply(Timestamp(1, 2))))
    wire.append(server.send(ReadReply(((Timestamp(5, 0), b"r"),))))
    for data in wire:
        # Outside payloads, every CR is followed by LF and every LF preceded by CR.
        framing = data.replace(b"a\nb", b"").replace(b"x\ry", b"").replace(b"$1\r\n\n", b"$1\r\n")
        assert framing.count(b"\r") == framing.count(b"\n") == framing.count(b"\r\n")


# --- 4. General rules ----------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"+OK\r\n", b"$6\r\nDELETE\r\n", b"-ERR x\r\n", b":1\r\n"])
def test_commands_must_be_sent_as_a_top_level_array(data: bytes) -> None:
    assert server_error(data).code is BAD


def test_each_command_element_must_be_a_bulk_string_or_array_according_to_the_schema() -> None:
    assert server_error(crlf("*3\n$6\nDELETE\n*0\n*0")).code is BAD  # name as Array
    assert server_error(crlf("*3\n$6\nDELETE\n$1\ns\n$1\nx")).code is BAD  # options as Bulk
    assert server_error(crlf("*4\n$6\nAPPEND\n$1\ns\n*0\n$1\nx")).code is BAD  # records


def test_the_first_element_must_be_the_command_name_as_a_bulk_string() -> None:
    assert server_error(crlf("*3\n+DELETE\n$1\ns\n*0")).code is BAD
    assert server_error(crlf("*3\n*0\n$1\ns\n*0")).code is BAD
    assert server_error(crlf("*3\n$4\nDROP\n$1\ns\n*0")).reply == ErrorReply(
        BAD, "unknown command DROP"
    )


@pytest.mark.parametrize("name", ["delete", "Delete", "dElEtE"])
def test_servers_must_match_command_names_case_insensitively(name: str) -> None:
    assert server_events(crlf(f"*3\n$6\n{name}\n$6\norders\n*0")) == [Delete(b"orders")]


def test_servers_must_match_option_keys_case_insensitively() -> None:
    events = server_events(read_cmd("*4\n$5\ncount\n$1\n7\n$13\nMin_Timestamp\n$3\n1-2"))
    assert events == [Read(b"orders", count=7, min_timestamp=Timestamp(1, 2))]


def test_timestamp_strategy_values_are_case_insensitive() -> None:
    data = crlf("*3\n$6\nCREATE\n$1\ns\n*2\n$18\ntimestamp_strategy\n$6\nCLIENT")
    assert server_events(data) == [Create(b"s", TimestampStrategy.CLIENT)]


def test_values_stream_names_and_record_payloads_must_be_preserved_exactly() -> None:
    name = b"Or\x00ders\r\n"
    records = (b"\r\n", b"$3\r\n", b"\xff" * 300, b"*-1\r\n")
    client = client_for()
    wire = client.send(Append(name, records))
    assert server_events(wire) == [Append(name, records)]


def test_after_sending_any_error_reply_servers_must_close_the_connection_immediately() -> None:
    server = s3p.Connection(Role.SERVER)
    server.receive_data(client_for().send(Delete(b"s")) * 3)
    assert server.next_event() == Delete(b"s")
    server.send(ErrorReply(ErrorCode.UNKNOWN_STREAM, "no stream s"))
    assert server.state is s3p.ConnectionState.CLOSED
    assert server.finished
    # The pipelined requests behind it are dropped with the connection...
    assert server.next_event() is NEED_DATA
    # ...and nothing more may be sent.
    with pytest.raises(LocalProtocolError):
        server.send(Ok())


def test_if_an_error_is_produced_the_server_must_close_the_connection() -> None:
    server = s3p.Connection(Role.SERVER)
    server.receive_data(crlf("*3\n$6\nDELETE\n$1\ns\n*1") + client_for().send(Delete(b"t")))
    with pytest.raises(RemoteProtocolError) as caught:
        server.next_event()
    assert not server.finished  # the error reply may still be sent, once
    server.send(caught.value.reply)
    assert server.finished
    assert server.state is s3p.ConnectionState.CLOSED
    assert server.next_event() is NEED_DATA  # the pipelined DELETE t is never read
    with pytest.raises(LocalProtocolError):
        server.send(caught.value.reply)


def test_pipelined_replies_not_yet_read_are_lost_after_an_error_client_side() -> None:
    client = client_for(Delete(b"a"), Delete(b"b"), Delete(b"c"))
    client.receive_data(b"+OK\r\n-ERR_UNKNOWN_STREAM no stream b\r\n+OK\r\n")
    assert list(client.events()) == [
        Ok(),
        ErrorReply(ErrorCode.UNKNOWN_STREAM, "no stream b"),
    ]
    assert client.state is s3p.ConnectionState.CLOSED
    assert client.pending == 0
    with pytest.raises(LocalProtocolError):
        client.send(Delete(b"d"))


# --- 6. Stream naming ----------------------------------------------------------------------


def test_servers_must_reject_names_that_exceed_the_configured_limit() -> None:
    limits = s3p.Limits(max_stream_name=8)
    assert server_events(crlf("*3\n$6\nDELETE\n$8\n12345678\n*0"), limits) == [Delete(b"12345678")]
    error = server_error(crlf("*3\n$6\nDELETE\n$9\n"), limits)  # from the header alone
    assert error.code is BAD
    assert "[1, 8]" in error.message


# --- 7. Options encoding -------------------------------------------------------------------


def test_implementations_must_reject_any_options_array_with_an_odd_number_of_elements() -> None:
    error = server_error(read_cmd("*3\n"))  # refused from its header
    assert error.code is BAD
    assert "odd" in error.message


def test_unknown_option_keys_must_be_rejected() -> None:
    assert server_error(read_cmd("*2\n$5\nUNTIL\n$3\n1-1")).code is BAD  # known, not for READ
    assert server_error(read_cmd("*2\n$4\nWAIT\n$1\n1")).reply == ErrorReply(
        BAD, "unknown option WAIT"
    )
    assert server_error(crlf("*3\n$6\nDELETE\n$1\ns\n*2\n$5\nCOUNT\n$1\n1")).code is BAD


def test_if_a_key_appears_multiple_times_the_last_occurrences_value_must_be_used() -> None:
    events = server_events(read_cmd("*6\n$5\nCOUNT\n$1\n1\n$5\ncount\n$1\n2\n$5\nCOUNT\n$1\n3"))
    assert events == [Read(b"orders", count=3)]
    # An over-limit value that is overridden does not count.
    events = server_events(read_cmd("*4\n$5\nCOUNT\n$6\n999999\n$5\nCOUNT\n$1\n5"))
    assert events == [Read(b"orders", count=5)]


# --- 8. Commands ---------------------------------------------------------------------------


def test_records_must_contain_at_least_1_element() -> None:
    assert server_error(crlf("*4\n$6\nAPPEND\n$1\ns\n*0\n*0")).code is BAD
    with pytest.raises(LocalProtocolError):
        client_for().send(Append(b"s", ()))


def test_each_element_of_records_must_be_a_bulk_string() -> None:
    assert server_error(crlf("*4\n$6\nAPPEND\n$1\ns\n*0\n*1\n*0")).code is BAD
    assert server_error(crlf("*4\n$6\nAPPEND\n$1\ns\n*0\n*1\n-x")).code is BAD
    with pytest.raises(LocalProtocolError):
        client_for().send(Append(b"s", ("text",)))  # type: ignore[arg-type]


def test_block_must_be_at_most_the_configured_maximum() -> None:
    limits = s3p.Limits(max_block_ms=1000)
    assert server_events(read_cmd("*2\n$5\nBLOCK\n$4\n1000"), limits) == [
        Read(b"orders", block_ms=1000)
    ]
    assert server_error(read_cmd("*2\n$5\nBLOCK\n$4\n1001"), limits).code is LIMITS


def test_returned_records_must_be_in_strictly_increasing_timestamp_order() -> None:
    for reply in (
        crlf("*4\n$3\n2-0\n$1\na\n$3\n1-0\n$1\nb"),  # decreasing
        crlf("*4\n$3\n2-0\n$1\na\n$3\n2-0\n$1\nb"),  # equal
        crlf("*4\n$4\n10-0\n$1\na\n$3\n9-9\n$1\nb"),  # integer order, not string order
    ):
        assert client_error(reply, Read(b"s")).code is BAD
    server = s3p.Connection(Role.SERVER)
    server.receive_data(client_for().send(Read(b"s")))
    list(server.events())
    with pytest.raises(LocalProtocolError):
        server.send(ReadReply(((Timestamp(2, 0), b"a"), (Timestamp(1, 0), b"b"))))


def test_read_returns_only_records_strictly_greater_than_min_timestamp() -> None:
    reply = crlf("*2\n$3\n5-0\n$1\na")
    assert client_error(reply, Read(b"s", min_timestamp=Timestamp(5, 0))).code is BAD
    assert client_error(crlf("*2\n$3\n0-0\n$1\na"), Read(b"s")).code is BAD  # default 0-0


# --- 9, 11, 13, 15 -------------------------------------------------------------------------


def test_after_an_error_is_written_the_server_must_close_the_connection() -> None:
    server = s3p.Connection(Role.SERVER)
    server.receive_data(client_for().send(Create(b"s")))
    list(server.events())
    assert server.send(ErrorReply(ErrorCode.STREAM_EXISTS, "s exists")) == (
        b"-ERR_STREAM_EXISTS s exists\r\n"
    )
    assert server.finished


@pytest.mark.parametrize(
    ("data", "limits"),
    [
        pytest.param(
            read_cmd("*2\n$5\nCOUNT\n$2\n11"),
            s3p.Limits(max_count=10, default_count=10),
            id="COUNT",
        ),
        pytest.param(read_cmd("*2\n$5\nBLOCK\n$2\n11"), s3p.Limits(max_block_ms=10), id="BLOCK"),
        pytest.param(
            crlf("*4\n$6\nAPPEND\n$1\ns\n*0\n*1\n$5\n"),
            s3p.Limits(max_record_size=4),
            id="record size",
        ),
        pytest.param(
            crlf("*4\n$6\nAPPEND\n$1\ns\n*0\n*3\n"),
            s3p.Limits(max_records_per_append=2),
            id="record count",
        ),
        pytest.param(
            crlf("*4\n$6\nAPPEND\n$1\ns\n*0\n*3\n$3\nabc\n$3\ndef\n$3\n"),
            s3p.Limits(max_append_size=8),
            id="aggregate",
        ),
    ],
)
def test_servers_must_return_err_limits_for_count_block_record_size_count_and_aggregate(
    data: bytes, limits: s3p.Limits
) -> None:
    assert server_error(data, limits).code is LIMITS


def test_servers_must_return_err_bad_format_for_stream_name_length_violations() -> None:
    assert server_error(crlf("*3\n$6\nDELETE\n$257\n")).code is BAD
    assert server_error(crlf("*3\n$6\nDELETE\n$0\n\n*0")).code is BAD


def test_servers_must_reply_in_order() -> None:
    server = s3p.Connection(Role.SERVER)
    client = client_for()
    server.receive_data(client.send(Read(b"s")) + client.send(Delete(b"s")))
    assert list(server.events()) == [Read(b"s"), Delete(b"s")]
    with pytest.raises(LocalProtocolError):
        server.send(Ok())  # the READ is answered first
    assert server.send(ReadReply(())) == b"*0\r\n"
    assert server.send(Ok()) == b"+OK\r\n"
    with pytest.raises(LocalProtocolError):
        server.send(Ok())  # nothing left to answer


def test_implementations_must_bound_memory_usage_by_enforcing_configured_limits() -> None:
    # Huge lengths and counts are refused from their header line, before any payload.
    assert server_error(crlf("*4\n$6\nAPPEND\n$1\ns\n*0\n*1\n$99999999999\n")).code is LIMITS
    assert server_error(crlf("*4\n$6\nAPPEND\n$1\ns\n*0\n*999999999\n")).code is LIMITS
    assert server_error(crlf("*999999999\n")).code is BAD
    assert client_error(crlf("*999999999\n"), Read(b"s")).code is BAD
    assert client_error(crlf("*2\n$3\n1-1\n$99999999999\n"), Read(b"s")).code is LIMITS


@pytest.mark.parametrize(
    "header",
    ["$-1", "*-1", "$+5", "$ 5", "$5 ", "$", "*", "$0x5", "$5.0", "$\u0665", "*1e3"],
)
def test_inputs_must_be_validated_malformed_lengths_negative_numbers_non_decimal(
    header: str,
) -> None:
    assert server_error(crlf(f"*3\n{header}\n")).code is BAD
    assert server_error(crlf(header)).code is BAD


@pytest.mark.parametrize("value", ["-1", "+1", "1.5", " 1", "ten", "0x10", "1_0"])
def test_count_and_block_must_be_ascii_decimal_numbers(value: str) -> None:
    for key in ("COUNT", "BLOCK"):
        data = read_cmd(f"*2\n${len(key)}\n{key}\n${len(value)}\n{value}")
        assert server_error(data).code is BAD


def test_count_zero_is_err_bad_format() -> None:
    assert server_error(read_cmd("*2\n$5\nCOUNT\n$1\n0")).code is BAD


def test_connections_must_be_closed_upon_error() -> None:
    client = client_for(Delete(b"s"))
    client.receive_data(b"+NOPE\r\n")
    with pytest.raises(RemoteProtocolError):
        client.next_event()
    assert client.finished
    with pytest.raises(RemoteProtocolError):
        client.next_event()  # later calls raise too
    with pytest.raises(LocalProtocolError):
        client.send(Delete(b"t"))
