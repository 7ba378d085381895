"""Framing: the generic wire reader, bounds from header lines, no recursion, and agreement
with ``hiredis.Reader`` on valid streams."""

from __future__ import annotations

import hiredis
import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import Role, s3p
from s3p_codec.s3p._events import ErrorCode
from s3p_codec.s3p._wire import (
    ErrorString,
    Malformed,
    SimpleString,
    WireBuffer,
    WireReader,
    WireValue,
    encode_value,
)
from s3p_codec.testing.s3p import conversations

from .support import client_error, server_error

# RESP values of S3P's subset (not only commands and replies): what hiredis and our wire
# reader must agree on.
payloads = st.binary(min_size=1, max_size=40)
text_bytes = st.binary(max_size=30).map(lambda b: bytes(x % 95 + 32 for x in b))
scalars = st.one_of(
    payloads,
    text_bytes.map(SimpleString),
    text_bytes.map(ErrorString),
)


def _uniform_arrays(children: st.SearchStrategy[WireValue]) -> st.SearchStrategy[WireValue]:
    # All elements of one array share a type (spec section 3).
    return st.one_of(
        st.lists(payloads, max_size=4).map(tuple),
        st.lists(text_bytes.map(SimpleString), max_size=4).map(tuple),
        st.lists(text_bytes.map(ErrorString), max_size=4).map(tuple),
        st.lists(children.filter(lambda v: isinstance(v, tuple)), max_size=3).map(tuple),
    )


wire_values: st.SearchStrategy[WireValue] = st.recursive(scalars, _uniform_arrays, max_leaves=12)


def read_all(data: bytes, **bounds: int) -> list[WireValue]:
    reader = WireReader(**bounds)
    reader.feed(data)
    out = []
    while (value := reader.next_value()) is not None:
        out.append(value)
    return out


def normalise_ours(value: WireValue) -> object:
    if isinstance(value, tuple):
        return [normalise_ours(item) for item in value]
    if isinstance(value, ErrorString):
        return ("error", bytes(value).decode())
    return bytes(value)  # hiredis does not tell Simple from Bulk Strings


def normalise_hiredis(value: object) -> object:
    if isinstance(value, list):
        return [normalise_hiredis(item) for item in value]
    if isinstance(value, hiredis.ReplyError):
        return ("error", str(value))
    return value


def hiredis_values(data: bytes) -> list[object]:
    reader = hiredis.Reader()
    reader.feed(data)
    out = []
    while (value := reader.gets()) is not False:
        out.append(normalise_hiredis(value))
    return out


@given(st.lists(wire_values, min_size=1, max_size=5))
def test_hiredis_and_our_wire_reader_agree_on_valid_values(values: list[WireValue]) -> None:
    data = b"".join(encode_value(value) for value in values)
    ours = read_all(data)
    assert ours == values
    assert [normalise_ours(value) for value in ours] == hiredis_values(data)


@given(conversations())
def test_hiredis_and_our_wire_reader_agree_on_s3p_conversations(conversation: list) -> None:
    client = s3p.Connection(Role.CLIENT)
    server = s3p.Connection(Role.SERVER)
    up = b"".join(client.send(request) for request, _ in conversation)
    server.receive_data(up)
    list(server.events())
    down = b"".join(server.send(reply) for _, reply in conversation)
    for data in (up, down):
        assert [normalise_ours(v) for v in read_all(data)] == hiredis_values(data)


@given(st.lists(wire_values, min_size=1, max_size=4), st.integers(1, 7))
def test_the_wire_reader_gives_the_same_values_in_any_chunk_size(
    values: list[WireValue], size: int
) -> None:
    data = b"".join(encode_value(value) for value in values)
    reader = WireReader()
    out = []
    for at in range(0, len(data), size):
        reader.feed(data[at : at + size])
        while (value := reader.next_value()) is not None:
            out.append(value)
    assert out == values
    assert not reader.in_value


def test_simple_strings_errors_bulk_strings_and_arrays_are_told_apart() -> None:
    values = read_all(b"+OK\r\n-ERR_LIMITS x\r\n$2\r\nOK\r\n*0\r\n")
    assert values == [b"OK", b"ERR_LIMITS x", b"OK", ()]
    assert [type(v) for v in values] == [SimpleString, ErrorString, bytes, tuple]


@pytest.mark.parametrize(
    "data",
    [
        b":1\r\n",  # RESP integer
        b"_\r\n",  # RESP3 null
        b"$-1\r\n",  # RESP2 null bulk
        b"*-1\r\n",  # RESP2 null array
        b"$0\r\n\r\n",
        b"$3\r\nabcd\r\n",  # payload longer than declared
        b"*1\r\n*2\r\n*0\r\n$1\r\nb\r\n",  # mixed types in a nested array
        b"*1\r\n*2\r\n$1\r\na\r\n+b\r\n",
        b"+caf\xc3\xa9\r\n",  # Simple Strings are ASCII
    ],
)
def test_the_wire_reader_refuses_what_s3p_excludes(data: bytes) -> None:
    with pytest.raises(Malformed) as caught:
        read_all(data)
    assert caught.value.code is ErrorCode.BAD_FORMAT


def test_the_top_level_array_may_mix_types_like_a_command() -> None:
    assert read_all(b"*2\r\n$1\r\na\r\n*0\r\n") == [(b"a", ())]


def test_a_huge_bulk_length_is_refused_from_its_header_line_without_allocating() -> None:
    for reader_data in (b"$99999999999\r\n", b"*999999999\r\n"):
        reader = WireReader(max_bulk=1 << 20, max_elements=1 << 16)
        reader.feed(reader_data)
        with pytest.raises(Malformed) as caught:
            reader.next_value()
        assert caught.value.code is ErrorCode.LIMITS
        assert len(reader.buffer) == 0  # nothing but the header was ever buffered


def test_a_header_line_that_never_ends_is_refused_once_it_is_too_long() -> None:
    buffer = WireBuffer()
    buffer.feed(b"$" + b"9" * 20)
    assert buffer.read_header() is None
    buffer.feed(b"9")
    with pytest.raises(Malformed):
        buffer.read_header()


def test_a_100000_deep_nest_is_refused_without_recursion_error() -> None:
    nest = b"*1\r\n" * 100_000
    with pytest.raises(Malformed, match="nested deeper"):
        read_all(nest, max_depth=64)
    # The typed parsers refuse it at the first level that is not in the schema.
    assert server_error(nest).code is ErrorCode.BAD_FORMAT
    assert server_error(b"*3\r\n$4\r\nREAD\r\n$1\r\ns\r\n" + nest).code is ErrorCode.BAD_FORMAT
    assert client_error(b"*2\r\n" + nest, s3p.Read(b"s")).code is ErrorCode.BAD_FORMAT


def test_a_100000_deep_nest_within_the_bound_is_read_without_recursion() -> None:
    nest = b"*1\r\n" * 100_000 + b"$1\r\nx\r\n"
    (value,) = read_all(nest, max_depth=200_000)
    assert encode_value(value) == nest  # no recursion there either
    depth = 0
    while isinstance(value, tuple):
        (value,) = value
        depth += 1
    assert depth == 100_000


def test_a_line_search_never_rereads_bytes_already_searched() -> None:
    buffer = WireBuffer()
    for byte in b"+" + b"a" * 4000:
        buffer.feed(bytes([byte]))
        assert buffer.read_line(8192) is None
        assert buffer.scan >= len(buffer.data) - 1
    buffer.feed(b"\r\n")
    assert buffer.read_line(8192) == b"+" + b"a" * 4000


def test_offsets_are_absolute_across_compaction() -> None:
    buffer = WireBuffer()
    big = b"$70000\r\n" + b"x" * 70000 + b"\r\n"
    buffer.feed(big * 3)
    for index in range(3):
        assert buffer.offset == index * len(big)
        assert buffer.read_header() == (0x24, 70000)
        assert buffer.take_bulk(70000) == b"x" * 70000
        buffer.compact()
    assert buffer.offset == 3 * len(big)


def test_the_wire_buffer_is_the_core_buffer_with_s3p_readers() -> None:
    from s3p_codec._core import ReceiveBuffer

    buffer = WireBuffer()
    assert isinstance(buffer, ReceiveBuffer)
    buffer.feed(b"+OK\r\n$3\r\nab")
    assert buffer.read_header() == (0x2B, b"OK")
    assert buffer.read_header() == (0x24, 3)
    assert buffer.take_bulk(3) is None
    buffer.feed(b"c\r\n")  # joined with the unconsumed start (no longer than it): one bytes
    assert (type(buffer.data), buffer.pos) == (bytes, 0)
    assert buffer.take_bulk(3) == b"abc"
    assert buffer.offset == buffer.position == 14


def test_a_bad_crlf_after_a_large_payload_is_refused_where_a_whole_one_is() -> None:
    """Collected aside or arrived whole, a payload not followed by CRLF is refused at the
    payload's start, unread, so an Observer hunts from the same place either way."""
    size = 1 << 17
    header = b"$%d\r\n" % size
    states = []
    whole = [header + b"x" * size + b"!!"]
    for pieces in (whole, [header + b"x" * 1000, b"x" * (size - 1000) + b"!!"]):
        buffer = WireBuffer()
        buffer.feed(pieces[0])
        assert buffer.read_header() == (0x24, size)
        if len(pieces) > 1:
            assert buffer.take_bulk(size) is None  # collected aside from here
            buffer.feed(pieces[1])
        with pytest.raises(Malformed, match="not followed by CRLF"):
            buffer.take_bulk(size)
        states.append((buffer.offset, len(buffer), buffer.data[buffer.pos : buffer.pos + 3]))
    assert states[0] == states[1] == (len(header), size + 2, b"xxx")


def test_an_observer_reads_on_after_a_large_payload_with_a_bad_crlf() -> None:
    from s3p_codec import Direction
    from s3p_codec._core import Observed, ObservedError

    size = 1 << 17
    bad = b"*4\r\n$6\r\nAPPEND\r\n$1\r\ns\r\n*0\r\n*1\r\n$%d\r\n" % size
    good = s3p.Connection(Role.CLIENT).send(s3p.Append(b"t", (b"hello",)))
    observer = s3p.Observer()
    seen = list(observer.observe(Direction.CLIENT_TO_SERVER, bad + b"x" * 1000))
    seen += observer.observe(Direction.CLIENT_TO_SERVER, b"x" * (size - 1000) + b"!!\r\n")
    for at in range(len(good)):  # byte by byte: the careful path reads the next command
        seen += observer.observe(Direction.CLIENT_TO_SERVER, good[at : at + 1])
    assert [type(item) for item in seen] == [ObservedError, Observed]
    assert seen[1].event == s3p.Append(b"t", (b"hello",))  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("line", "message"),
    [(b"*0\r\x00\n*3\r\n", "CR without LF"), (b"*0\n\r\x00\r\n", "LF without CR")],
)
def test_a_bare_separator_is_refused_unread_whether_the_crlf_after_it_came_or_not(
    line: bytes, message: str
) -> None:
    """ "MUST NOT accept LF-only or CR-only separators": fed whole (a later CRLF ends the line)
    or byte by byte (refused eagerly), the same error, and the line is not consumed."""
    for size in (len(line), 1):
        buffer = WireBuffer()

        def feed_until_refused(buffer: WireBuffer = buffer, size: int = size) -> None:
            for at in range(0, len(line), size):
                buffer.feed(line[at : at + size])
                assert buffer.read_header() is None

        with pytest.raises(Malformed, match=message):
            feed_until_refused()
        assert buffer.pos == 0
