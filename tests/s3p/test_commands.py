"""The command schema on the server side: arity, options, values, limits, decisions."""

from __future__ import annotations

import pytest

from s3p_codec.s3p import (
    Append,
    Create,
    Delete,
    ErrorCode,
    ErrorReply,
    Read,
    Timestamp,
    TimestampStrategy,
    Trim,
)

from .support import client_for, crlf, server_error, server_events

BAD = ErrorCode.BAD_FORMAT


def test_a_two_element_delete_is_accepted_as_decided() -> None:
    # Section 8.5 (three elements) is normative and what we send; the appendix ABNF's
    # array-of-2 form is accepted too, meaning the same.
    assert server_events(crlf("*2\n$6\nDELETE\n$6\norders")) == [Delete(b"orders")]
    assert client_for().send(Delete(b"orders")) == crlf("*3\n$6\nDELETE\n$6\norders\n*0")


@pytest.mark.parametrize(
    "data",
    [
        "*2\n$6\nCREATE\n$1\ns",
        "*2\n$4\nREAD\n$1\ns",
        "*4\n$4\nREAD\n$1\ns\n*0\n*0",
        "*3\n$6\nAPPEND\n$1\ns\n*0",
        "*4\n$6\nDELETE\n$1\ns\n*0\n*0",
        "*5\n",
        "*1\n",
        "*0",
    ],
)
def test_each_command_has_its_exact_arity(data: str) -> None:
    assert server_error(crlf(data)).code is BAD


def test_an_unknown_or_overlong_command_name_is_refused() -> None:
    assert server_error(crlf("*3\n$4\nPING\n$1\ns\n*0")).reply == ErrorReply(
        BAD, "unknown command PING"
    )
    assert server_error(crlf("*3\n$7\n")).code is BAD  # no command name is 7 bytes long


def test_pipelined_requests_come_out_in_order() -> None:
    client = client_for()
    asked = [
        Create(b"s", TimestampStrategy.SERVER),
        Append(b"s", (b"a", b"b")),
        Read(b"s", count=2, block_ms=0),
        Trim(b"s", Timestamp(3, 0)),
        Delete(b"s"),
    ]
    assert server_events(b"".join(client.send(event) for event in asked)) == asked


def test_trim_requires_its_until_option() -> None:
    assert server_error(crlf("*3\n$4\nTRIM\n$1\ns\n*0")).code is BAD


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("TIMESTAMP_STRATEGY", "both"),
        ("TIMESTAMP_STRATEGY", "servers"),
    ],
)
def test_an_invalid_timestamp_strategy_value_is_refused(key: str, value: str) -> None:
    data = crlf(f"*3\n$6\nCREATE\n$1\ns\n*2\n${len(key)}\n{key}\n${len(value)}\n{value}")
    error = server_error(data)
    assert error.code is BAD
    assert "TIMESTAMP_STRATEGY" in error.message


@pytest.mark.parametrize("value", ["1", "1-", "-1", "a-b", "1-2-3", "18446744073709551616-0"])
def test_timestamp_options_must_be_ms_dash_seq(value: str) -> None:
    for command, key in (("READ", "MIN_TIMESTAMP"), ("TRIM", "UNTIL")):
        data = crlf(
            f"*3\n${len(command)}\n{command}\n$1\ns\n*2\n${len(key)}\n{key}\n${len(value)}\n{value}"
        )
        assert server_error(data).code is BAD
    data = crlf(f"*4\n$6\nAPPEND\n$1\ns\n*2\n$9\nTIMESTAMP\n${len(value)}\n{value}\n*1\n$1\nx")
    assert server_error(data).code is BAD


def test_the_codec_passes_an_append_timestamp_to_the_store_whatever_the_strategy() -> None:
    data = crlf("*4\n$6\nAPPEND\n$1\ns\n*2\n$9\ntimestamp\n$3\n5-1\n*1\n$1\nx")
    assert server_events(data) == [Append(b"s", (b"x",), Timestamp(5, 1))]


def test_options_arrays_are_bounded_from_their_header() -> None:
    assert server_error(crlf("*3\n$4\nREAD\n$1\ns\n*66\n")).code is BAD
    assert server_error(crlf("*3\n$4\nREAD\n$1\ns\n*999999998\n")).code is BAD


def test_option_keys_and_values_are_bounded_from_their_header() -> None:
    assert server_error(crlf("*3\n$4\nREAD\n$1\ns\n*2\n$65\n")).code is BAD
    assert server_error(crlf("*3\n$4\nREAD\n$1\ns\n*2\n$5\nCOUNT\n$65\n")).code is BAD


def test_a_huge_count_is_err_limits_not_an_overflow() -> None:
    digits = "9" * 64
    data = crlf(f"*3\n$4\nREAD\n$1\ns\n*2\n$5\nCOUNT\n$64\n{digits}")
    assert server_error(data).code is ErrorCode.LIMITS


def test_peer_bytes_quoted_in_an_error_message_stay_printable_ascii() -> None:
    error = server_error(b"*3\r\n$4\r\nREAD\r\n$1\r\ns\r\n*2\r\n$3\r\n\x00\n\xff\r\n$1\r\n1\r\n")
    assert error.reply == ErrorReply(BAD, "unknown option \\x00\\x0a\\xff")


def test_limits_at_exactly_the_bound_are_accepted() -> None:
    from s3p_codec import s3p

    limits = s3p.Limits(max_records_per_append=3, max_record_size=4, max_append_size=10)
    client = client_for(limits=limits)
    event = Append(b"s", (b"abcd", b"efgh", b"ij"))
    assert server_events(client.send(event), limits) == [event]
    assert server_events(client.send(Read(b"s", count=10_000, block_ms=30_000))) == [
        Read(b"s", count=10_000, block_ms=30_000)
    ]
