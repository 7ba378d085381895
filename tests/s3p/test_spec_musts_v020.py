"""One test per rule of S3P v0.2.0 (``s3p-v0.2.0-notes.md``), named after the rule it checks.

v0.2.0 keeps v0.1.0's framing (RESP subset, CRLF only, four types, the ABNF): those rules are
checked again here on a v0.2.0 connection. Rules about stream state (IDs from the clock, a clock
going back, ``ERR_NON_MONOTONIC_ID``) belong to the store behind a server: they are tested
against the example server's ``Store`` in v0.2.0 mode.
"""

from __future__ import annotations

import pytest

from examples.s3p_server import Store
from s3p_codec import NEED_DATA, LocalProtocolError, RemoteProtocolError, Role, s3p
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
    ReadReply,
    Trim,
)
from s3p_codec.s3p._events import MAX_U64

from .support import crlf

V2 = "0.2.0"
BAD = ErrorCode.BAD_FORMAT
LIMITS = ErrorCode.LIMITS
RECOVERABLE = (ErrorCode.STREAM_EXISTS, ErrorCode.UNKNOWN_STREAM, ErrorCode.NON_MONOTONIC_ID)


def server(limits: s3p.Limits | None = None) -> s3p.Connection:
    return s3p.Connection(Role.SERVER, limits, version=V2)


def client(*requests: s3p.Request) -> s3p.Connection:
    conn = s3p.Connection(Role.CLIENT, version=V2)
    for request in requests:
        conn.send(request)
    return conn


def events(data: bytes, limits: s3p.Limits | None = None) -> list[s3p.Event]:
    conn = server(limits)
    conn.receive_data(data)
    return list(conn.events())


def error(data: bytes, limits: s3p.Limits | None = None) -> RemoteProtocolError:
    conn = server(limits)
    conn.receive_data(data)
    with pytest.raises(RemoteProtocolError) as caught:
        list(conn.events())
    assert caught.value.fatal
    assert isinstance(caught.value.reply, ErrorReply)
    assert caught.value.reply.code == caught.value.code
    return caught.value


def client_error(data: bytes, *requests: s3p.Request) -> RemoteProtocolError:
    conn = client(*requests)
    conn.receive_data(data)
    with pytest.raises(RemoteProtocolError) as caught:
        list(conn.events())
    return caught.value


def read_cmd(options: str) -> bytes:
    return crlf("*3\n$4\nREAD\n$6\norders\n" + options)


# --- Framing is unchanged ------------------------------------------------------------------


def test_framing_is_unchanged_dollar_0_is_err_bad_format() -> None:
    assert error(crlf("*4\n$6\nAPPEND\n$1\ns\n*0\n*1\n$0\n")).code is BAD
    assert error(read_cmd("*2\n$0\n\n$1\n1")).code is BAD


@pytest.mark.parametrize(
    "data",
    [b"*3\n$6\r\nDELETE\r\n$1\r\ns\r\n*0\r\n", b"*3\r$6\r\nDELETE\r\n$1\r\ns\r\n*0\r\n"],
)
def test_framing_is_unchanged_crlf_is_the_only_line_separator(data: bytes) -> None:
    assert error(data).code is BAD


def test_framing_is_unchanged_commands_are_a_top_level_array_of_the_command_schema() -> None:
    assert error(b"+OK\r\n").code is BAD
    assert error(read_cmd("*2\n$5\nCOUNT\n*0")).code is BAD  # mixed types in options


# --- Errors: recoverable and unrecoverable -------------------------------------------------


@pytest.mark.parametrize("code", [BAD, LIMITS])
def test_err_bad_format_and_err_limits_are_unrecoverable_the_server_closes(
    code: ErrorCode,
) -> None:
    conn = server()
    conn.receive_data(client().send(Delete(b"a")) * 2)
    assert conn.next_event() == Delete(b"a")
    conn.send(ErrorReply(code, "no"))
    assert conn.state is s3p.ConnectionState.CLOSED
    assert conn.finished
    assert conn.next_event() is NEED_DATA  # the pipelined DELETE is dropped with the connection
    assert not conn.keeps_open(code)


def test_malformed_requests_stay_fatal_errors() -> None:
    conn = server()
    conn.receive_data(read_cmd("*2\n$4\nWAIT\n$1\n1") + client().send(Delete(b"t")))
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    assert caught.value.fatal
    conn.send(caught.value.reply)
    assert conn.finished


@pytest.mark.parametrize("code", RECOVERABLE)
def test_recoverable_errors_keep_the_connection_open_and_pipelined_commands_are_answered_in_order(
    code: ErrorCode,
) -> None:
    conn = server()
    conn.receive_data(client().send(Delete(b"a")) + client().send(Create(b"b")))
    assert conn.next_event() == Delete(b"a")
    assert conn.keeps_open(code)
    assert conn.send(ErrorReply(code, "recoverable")) == f"-{code.value} recoverable\r\n".encode()
    assert conn.state is s3p.ConnectionState.OPEN
    assert not conn.finished
    assert conn.next_event() == Create(b"b")  # the pipelined command is still processed
    assert conn.send(Ok()) == b"+OK\r\n"


@pytest.mark.parametrize("code", RECOVERABLE)
def test_after_a_recoverable_error_the_client_goes_on_with_pipelined_replies(
    code: ErrorCode,
) -> None:
    conn = client(Create(b"a"), Delete(b"b"), Append(b"c", (b"x",)))
    conn.receive_data(f"+OK\r\n-{code.value} no\r\n$3\r\n1-0\r\n".encode())
    assert list(conn.events()) == [Ok(), ErrorReply(code, "no"), AppendReply(Id(1, 0))]
    assert conn.state is s3p.ConnectionState.OPEN
    assert conn.pending == 0
    conn.send(Delete(b"d"))  # still usable


def test_after_an_unrecoverable_error_the_client_connection_closes() -> None:
    conn = client(Delete(b"a"), Delete(b"b"))
    conn.receive_data(b"-ERR_LIMITS no\r\n+OK\r\n")
    assert list(conn.events()) == [ErrorReply(LIMITS, "no")]
    assert conn.state is s3p.ConnectionState.CLOSED


def test_err_non_monotonic_id_is_a_v020_error_code() -> None:
    conn = client(Append(b"s", (b"x",)))
    conn.receive_data(b"-ERR_NON_MONOTONIC_ID low\r\n")
    assert list(conn.events()) == [ErrorReply(ErrorCode.NON_MONOTONIC_ID, "low")]
    # v0.1.0 knows no such code: refused on the wire, and not sendable.
    old = s3p.Connection(Role.CLIENT)
    old.send(Append(b"s", (b"x",)))
    old.receive_data(b"-ERR_NON_MONOTONIC_ID low\r\n")
    with pytest.raises(RemoteProtocolError):
        old.next_event()
    old_server = s3p.Connection(Role.SERVER)
    old_server.receive_data(s3p.Connection(Role.CLIENT).send(Delete(b"s")))
    old_server.next_event()
    with pytest.raises(LocalProtocolError):
        old_server.send(ErrorReply(ErrorCode.NON_MONOTONIC_ID, "low"))


def test_stream_name_length_outside_1_and_the_configured_max_is_err_limits() -> None:
    limits = s3p.Limits(max_stream_name=8)
    assert events(crlf("*3\n$6\nDELETE\n$8\n12345678\n*0"), limits) == [Delete(b"12345678")]
    assert error(crlf("*3\n$6\nDELETE\n$9\n"), limits).code is LIMITS  # from the header alone
    assert error(crlf("*3\n$6\nDELETE\n$0\n\n*0")).code is LIMITS  # below 1
    with pytest.raises(LocalProtocolError):
        client().send(Delete(b""))


@pytest.mark.parametrize(
    ("options", "limits"),
    [
        pytest.param(
            "*2\n$5\nCOUNT\n$2\n11", s3p.Limits(max_count=10, default_count=10), id="COUNT>max"
        ),
        pytest.param("*2\n$5\nCOUNT\n$1\n0", None, id="COUNT<1"),
        pytest.param("*2\n$5\nCOUNT\n$2\n-1", None, id="COUNT negative"),
        pytest.param("*2\n$5\nBLOCK\n$2\n11", s3p.Limits(max_block_ms=10), id="BLOCK>max"),
        pytest.param("*2\n$5\nBLOCK\n$2\n-1", None, id="BLOCK<0"),
    ],
)
def test_over_limit_count_or_count_below_1_and_block_over_max_or_below_0_are_err_limits(
    options: str, limits: s3p.Limits | None
) -> None:
    assert error(read_cmd(options), limits).code is LIMITS


def test_a_client_asked_to_send_count_below_1_or_block_below_0_refuses_with_err_limits() -> None:
    for request in (Read(b"s", count=0), Read(b"s", block_ms=-1)):
        with pytest.raises(LocalProtocolError) as caught:
            client().send(request)
        assert caught.value.code is LIMITS
        with pytest.raises(LocalProtocolError) as caught:
            s3p.Connection(Role.CLIENT).send(request)
        assert caught.value.code is BAD  # v0.1.0: COUNT 0 is ERR_BAD_FORMAT


def test_count_and_block_that_are_not_numbers_stay_err_bad_format() -> None:
    assert error(read_cmd("*2\n$5\nCOUNT\n$3\nten")).code is BAD
    assert error(read_cmd("*2\n$5\nBLOCK\n$2\n+1")).code is BAD


# --- IDs instead of timestamps -------------------------------------------------------------


def test_create_defines_no_option_and_unknown_options_are_err_bad_format() -> None:
    assert events(crlf("*3\n$6\nCREATE\n$1\ns\n*0")) == [Create(b"s")]
    data = crlf("*3\n$6\nCREATE\n$1\ns\n*2\n$18\nTIMESTAMP_STRATEGY\n$6\nclient")
    assert error(data).reply == ErrorReply(BAD, "unknown option TIMESTAMP_STRATEGY")
    with pytest.raises(LocalProtocolError):
        client().send(Create(b"s", s3p.TimestampStrategy.CLIENT))


def test_append_id_option_is_the_ms_part_only_an_unsigned_64_bit_integer() -> None:
    def append(value: str) -> bytes:
        return crlf(f"*4\n$6\nAPPEND\n$1\ns\n*2\n$2\nid\n${len(value)}\n{value}\n*1\n$1\nr")

    assert events(append("1700000001234")) == [Append(b"s", (b"r",), id=1700000001234)]
    assert events(append(str(MAX_U64))) == [Append(b"s", (b"r",), id=MAX_U64)]
    for bad in ("5-0", str(MAX_U64 + 1), "-1", "x", "1.0"):
        assert error(append(bad)).code is BAD, bad
    for ms in (-1, MAX_U64 + 1, True):
        with pytest.raises(LocalProtocolError):
            client().send(Append(b"s", (b"r",), id=ms))
    assert client().send(Append(b"s", (b"r",), id=7)) == crlf(
        "*4\n$6\nAPPEND\n$1\ns\n*2\n$2\nID\n$1\n7\n*1\n$1\nr"
    )


def test_append_timestamp_option_is_not_part_of_v020() -> None:
    data = crlf("*4\n$6\nAPPEND\n$1\ns\n*2\n$9\nTIMESTAMP\n$3\n1-0\n*1\n$1\nr")
    assert error(data).reply == ErrorReply(BAD, "unknown option TIMESTAMP")
    with pytest.raises(LocalProtocolError):
        client().send(Append(b"s", (b"r",), Id(1, 0)))


def test_a_zero_length_record_is_err_bad_format() -> None:
    assert error(crlf("*4\n$6\nAPPEND\n$1\ns\n*0\n*1\n$0\n\n")).code is BAD
    with pytest.raises(LocalProtocolError):
        client().send(Append(b"s", (b"",)))


def test_append_success_reply_is_a_bulk_string_with_the_id_of_the_last_record() -> None:
    conn = client(Append(b"s", (b"a", b"b"), id=5))
    conn.receive_data(b"$3\r\n5-1\r\n")
    assert list(conn.events()) == [AppendReply(Id(5, 1))]
    assert client_error(b"+OK\r\n", Append(b"s", (b"a",))).code is BAD


def test_read_min_id_replaces_min_timestamp_and_is_inclusive() -> None:
    assert events(read_cmd("*2\n$6\nmin_id\n$3\n5-0")) == [Read(b"orders", min_id=Id(5, 0))]
    assert error(read_cmd("*2\n$13\nMIN_TIMESTAMP\n$3\n5-0")).code is BAD
    with pytest.raises(LocalProtocolError):
        client().send(Read(b"s", min_timestamp=Id(5, 0)))
    # A record whose ID equals MIN_ID is returned; one below it is not.
    conn = client(Read(b"s", min_id=Id(5, 0)))
    conn.receive_data(crlf("*2\n$3\n5-0\n$1\na"))
    assert list(conn.events()) == [ReadReply(((Id(5, 0), b"a"),))]
    assert client_error(crlf("*2\n$3\n4-9\n$1\na"), Read(b"s", min_id=Id(5, 0))).code is BAD
    # The server side holds to it as well.
    conn = server()
    conn.receive_data(client().send(Read(b"s", min_id=Id(5, 0))))
    list(conn.events())
    with pytest.raises(LocalProtocolError):
        conn.send(ReadReply(((Id(4, 9), b"a"),)))
    assert conn.send(ReadReply(((Id(5, 0), b"a"),))) == crlf("*2\n$3\n5-0\n$1\na")


def test_read_min_id_defaults_to_0_0_inclusive() -> None:
    conn = client(Read(b"s"))
    conn.receive_data(crlf("*2\n$3\n0-0\n$1\na"))
    assert list(conn.events()) == [ReadReply(((Id(0, 0), b"a"),))]


def test_read_reply_ids_are_strictly_increasing() -> None:
    for reply in (
        crlf("*4\n$3\n2-0\n$1\na\n$3\n2-0\n$1\nb"),
        crlf("*4\n$3\n2-0\n$1\na\n$3\n1-0\n$1\nb"),
    ):
        assert client_error(reply, Read(b"s")).code is BAD


def test_trim_min_id_is_mandatory_and_replaces_until() -> None:
    trim = crlf("*3\n$4\nTRIM\n$1\ns\n*2\n$6\nMIN_ID\n$3\n5-0")
    assert events(trim) == [Trim(b"s", min_id=Id(5, 0))]
    assert error(crlf("*3\n$4\nTRIM\n$1\ns\n*0")).reply == ErrorReply(
        BAD, "TRIM requires the MIN_ID option"
    )
    assert error(crlf("*3\n$4\nTRIM\n$1\ns\n*2\n$5\nUNTIL\n$3\n5-0")).code is BAD
    with pytest.raises(LocalProtocolError):
        client().send(Trim(b"s", Id(5, 0)))  # UNTIL
    with pytest.raises(LocalProtocolError):
        client().send(Trim(b"s"))
    assert client().send(Trim(b"s", min_id=Id(5, 0))) == trim


def test_delete_is_an_array_of_3() -> None:
    assert events(crlf("*3\n$6\nDELETE\n$1\ns\n*0")) == [Delete(b"s")]
    assert error(crlf("*2\n$6\nDELETE\n$1\ns")).code is BAD
    assert client().send(Delete(b"s")) == crlf("*3\n$6\nDELETE\n$1\ns\n*0")


# --- The version is configuration ----------------------------------------------------------


def test_the_version_is_configuration_of_both_ends_default_0_1_0() -> None:
    assert s3p.Connection(Role.CLIENT).version is s3p.Version.V0_1_0
    assert server().version is s3p.Version.V0_2_0
    with pytest.raises(ValueError, match="unknown S3P version"):
        s3p.Connection(Role.CLIENT, version="0.3.0")


def test_the_common_subset_is_identical_on_the_wire_in_both_versions() -> None:
    requests = [Create(b"n"), Append(b"n", (b"a", b"b")), Read(b"n", count=2), Delete(b"n")]
    replies = [Ok(), AppendReply(Id(9, 1)), ReadReply(((Id(9, 0), b"a"), (Id(9, 1), b"b"))), Ok()]
    wires = []
    for version in ("0.1.0", "0.2.0"):
        up = b"".join(s3p.Connection(Role.CLIENT, version=version).send(r) for r in requests)
        conn = s3p.Connection(Role.SERVER, version=version)
        conn.receive_data(up)
        assert list(conn.events()) == requests
        wires.append((up, b"".join(conn.send(reply) for reply in replies)))
    assert wires[0] == wires[1]


# --- Stream state: the example server's store in v0.2.0 mode ---------------------------------


class Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def store(clock: Clock) -> Store:
    kept = Store(s3p.Limits(), clock, version=V2)
    assert kept.execute(Create(b"s")) == Ok()
    return kept


def test_server_ids_same_millisecond_or_clock_backwards_keep_the_last_ms_and_increment_seq() -> (
    None
):
    clock = Clock(1000)
    kept = store(clock)
    assert kept.execute(Append(b"s", (b"a",))) == AppendReply(Id(1000, 0))
    assert kept.execute(Append(b"s", (b"b",))) == AppendReply(Id(1000, 1))  # same ms
    clock.now = 900  # the clock went backwards
    assert kept.execute(Append(b"s", (b"c", b"d"))) == AppendReply(Id(1000, 3))
    clock.now = 1001  # later clock: a new ms, seq 0
    assert kept.execute(Append(b"s", (b"e",))) == AppendReply(Id(1001, 0))


def test_an_append_id_lower_than_the_last_ids_ms_is_err_non_monotonic_id_equal_increments_seq() -> (
    None
):
    kept = store(Clock(1))
    assert kept.execute(Append(b"s", (b"a",), id=50)) == AppendReply(Id(50, 0))
    assert kept.execute(Append(b"s", (b"b", b"c"), id=50)) == AppendReply(Id(50, 2))
    reply = kept.execute(Append(b"s", (b"d",), id=49))
    assert isinstance(reply, ErrorReply)
    assert reply.code is ErrorCode.NON_MONOTONIC_ID
    assert kept.execute(Append(b"s", (b"e",), id=60)) == AppendReply(Id(60, 0))


def test_the_first_append_of_a_stream_may_take_id_0() -> None:
    kept = store(Clock(1))
    assert kept.execute(Append(b"s", (b"a",), id=0)) == AppendReply(Id(0, 0))
    assert kept.execute(Read(b"s")) == ReadReply(((Id(0, 0), b"a"),))


def test_store_read_from_min_id_inclusive_and_trim_before_min_id() -> None:
    kept = store(Clock(1))
    kept.execute(Append(b"s", (b"a", b"b", b"c"), id=7))
    assert kept.execute(Read(b"s", min_id=Id(7, 1))) == ReadReply(
        ((Id(7, 1), b"b"), (Id(7, 2), b"c"))
    )
    assert kept.execute(Trim(b"s", min_id=Id(7, 2))) == Ok()
    assert kept.execute(Read(b"s")) == ReadReply(((Id(7, 2), b"c"),))
