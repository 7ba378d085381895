"""Both versions side by side: the hypothesis properties every codec keeps (round trip, any
chunking, garbage in), the hiredis differential, the fast request path against the careful one,
and the eager framing errors, for v0.2.0 as ``test_connection``/``test_wire`` do for v0.1.0."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, RemoteProtocolError, Role, s3p
from s3p_codec.s3p import ErrorCode, ErrorReply
from s3p_codec.testing.s3p import conversations

from .support import feed_garbage
from .test_wire import hiredis_values, normalise_ours, read_all

VERSIONS = ("0.1.0", "0.2.0")


def run(conversation: list[tuple[s3p.Request, s3p.Reply]], version: str) -> tuple[bytes, bytes]:
    """Both byte streams of a conversation, checked event by event on the way."""
    client = s3p.Connection(Role.CLIENT, version=version)
    server = s3p.Connection(Role.SERVER, version=version)
    up = b"".join(client.send(request) for request, _ in conversation)
    server.receive_data(up)
    assert list(server.events()) == [request for request, _ in conversation]
    down = b"".join(server.send(reply) for _, reply in conversation)
    client.receive_data(down)
    assert list(client.events()) == [reply for _, reply in conversation]
    last = conversation[-1][1]
    closes = isinstance(last, ErrorReply) and not server.keeps_open(last.code)
    assert (server.state is s3p.ConnectionState.CLOSED) is closes
    assert (client.state is s3p.ConnectionState.CLOSED) is closes
    return up, down


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


def decode(role: Role, chunks: list[bytes], asked: list[s3p.Request], version: str) -> list[object]:
    conn = s3p.Connection(role, version=version)
    for request in asked:
        conn.send(request)
    out: list[object] = []
    for chunk in chunks:
        conn.receive_data(chunk)
        out.extend(conn.events())
    conn.receive_data(b"")
    assert conn.next_event() is NEED_DATA
    assert conn.state is s3p.ConnectionState.CLOSED
    return out


@given(conversations(version="0.2.0"))
def test_v020_round_trip_of_every_request_and_reply(conversation: list) -> None:
    run(conversation, "0.2.0")


@given(conversations(version="0.2.0"), st.lists(st.integers(0, 10_000), max_size=12))
def test_v020_any_chunking_of_a_pipelined_stream_yields_the_same_events(
    conversation: list, cuts: list[int]
) -> None:
    up, down = run(conversation, "0.2.0")
    asked = [request for request, _ in conversation]
    assert decode(Role.SERVER, split(up, cuts), [], "0.2.0") == asked
    answers = [reply for _, reply in conversation]
    assert decode(Role.CLIENT, split(down, cuts), asked, "0.2.0") == answers
    one_by_one = [bytes([b]) for b in down]
    assert decode(Role.CLIENT, one_by_one, asked, "0.2.0") == answers


@given(conversations(version="0.2.0"))
def test_v020_hiredis_and_our_wire_reader_agree_on_conversations(conversation: list) -> None:
    up, down = run(conversation, "0.2.0")
    for data in (up, down):
        assert [normalise_ours(v) for v in read_all(data)] == hiredis_values(data)


@given(conversations(version="0.2.0"), st.integers(1, 9))
def test_v020_the_fast_and_careful_request_parsers_agree(conversation: list, size: int) -> None:
    up, _ = run(conversation, "0.2.0")
    got = []
    for fast in (True, False):
        conn = s3p.Connection(Role.SERVER, version="0.2.0")
        assert conn._commands is not None
        conn._commands.fast = fast
        events = []
        for at in range(0, len(up), size):
            conn.receive_data(up[at : at + size])
            events.extend(conn.events())
        got.append(events)
    assert got[0] == got[1] == [request for request, _ in conversation]


@pytest.mark.parametrize("role", list(Role))
@given(data=st.binary(max_size=200), eof=st.booleans())
def test_v020_garbage_gives_events_need_data_or_a_typed_error(
    role: Role, data: bytes, eof: bool
) -> None:
    conn = s3p.Connection(role, version="0.2.0")
    if role is Role.CLIENT:
        for request in (s3p.Read(b"s"), s3p.Append(b"s", (b"r",), id=1), s3p.Delete(b"s")):
            conn.send(request)
    feed_garbage(conn, data, eof)


# --- Eager framing errors ------------------------------------------------------------------
# They rest on section 3 of v0.1.0, unchanged in v0.2.0: "Servers and clients MUST use CRLF as
# the only line separator. Implementations MUST NOT accept or emit LF-only or CR-only
# separators", and on section 15: "non-decimal values where numbers are expected" are refused.
# A line that already breaks them can never become valid, so refusing it at once is the same
# verdict, given sooner: a peer typing LF-only lines gets an error, not a silent wait.


def first_error(role: Role, version: str, chunks: list[bytes]) -> tuple[int, RemoteProtocolError]:
    """Feed ``chunks`` one at a time; the index of the chunk that raised, and the error."""
    conn = s3p.Connection(role, version=version)
    if role is Role.CLIENT:
        conn.send(s3p.Delete(b"s"))
    for index, chunk in enumerate(chunks):
        conn.receive_data(chunk)
        try:
            assert conn.next_event() is NEED_DATA
        except RemoteProtocolError as error:
            return index, error
    raise AssertionError("no error")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("role", "chunks"),
    [
        (Role.SERVER, [b"*3", b"\n"]),  # a client typing LF-only lines
        (Role.SERVER, [b"*3\r\n$6\r\nDELETE\r\n$1\r\ns\r\n*0", b"\n"]),
        (Role.SERVER, [b"*3\r\n$", b"x"]),  # not a digit after "$"
        (Role.SERVER, [b"*", b"-"]),  # a RESP null's sign after "*"
        (Role.SERVER, [b"*3\r", b"3"]),  # CR without LF
        (Role.CLIENT, [b"+OK", b"\n"]),
        (Role.CLIENT, [b"-ERR_LIMITS x\r", b"y"]),
    ],
)
def test_a_line_that_can_no_longer_become_valid_is_refused_at_once_with_err_bad_format(
    version: str, role: Role, chunks: list[bytes]
) -> None:
    index, error = first_error(role, version, chunks)
    assert index == len(chunks) - 1  # at the byte that breaks it, not at the line bound
    assert error.code is ErrorCode.BAD_FORMAT


@pytest.mark.parametrize("version", VERSIONS)
def test_valid_lines_split_anywhere_are_not_refused_eagerly(version: str) -> None:
    wire = s3p.Connection(Role.CLIENT, version=version).send(s3p.Read(b"s\r\n\nx", count=12))
    conn = s3p.Connection(Role.SERVER, version=version)
    got = []
    for byte in wire:
        conn.receive_data(bytes([byte]))
        got.extend(conn.events())
    assert got == [s3p.Read(b"s\r\n\nx", count=12)]
