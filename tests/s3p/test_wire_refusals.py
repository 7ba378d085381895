"""Wire refusals in their words and at their moment: bare separators, lengths, text, CRLF.

"Implementations MUST NOT accept or emit LF-only or CR-only separators": the refusal names the
first bare separator in the stream, whatever follows it and wherever it sits (the first byte of
the storage included, right before the CRLF, after lines already read), in the same words whether
the line is complete or not. A length that can no longer be digits is refused as soon as it is
seen ("Errors are eager"), a Simple String or Error that is not printable ASCII when it is read.
A payload collected aside that waits on the second byte of its CRLF answers "need data" as often
as it is asked, then reads whole; a payload, whole or aside, followed by something else is
refused in the same words.
"""

from __future__ import annotations

import pytest

from s3p_codec import NEED_DATA, RemoteProtocolError
from s3p_codec.s3p import ErrorCode, Read, ReadReply, Timestamp
from s3p_codec.s3p._wire import BIG_BULK, Malformed, WireBuffer, WireReader

from .support import client_for

LF = "LF without CR: CRLF is the only line separator"
CR = "CR without LF: CRLF is the only line separator"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"+a\nb\rc\nd", LF),  # an LF, then a CR, then another LF
        (b"+a\rb\nc\rd", CR),  # a CR, then an LF, then another CR
        (b"\rx\ny", CR),  # a CR at the very first byte, then an LF
        (b"\nx\ry", LF),
        (b"+a\nb\rc\nd\r\n", LF),  # the same, the line complete
        (b"+a\rb\nc\rd\r\n", CR),
        (b"\rx\ny\r\n", CR),
        (b"+a\nb\r\n", LF),  # a complete line with one kind of bare separator only
        (b"+a\rb\r\n", CR),
        (b"\nx\r\n", LF),  # an LF at the very first byte, the line complete
        (b"\rx\r\n", CR),
        (b"+a\n\r\n", LF),  # the bare separator right before the CRLF
        (b"+a\r\r\n", CR),
    ],
)
def test_the_first_bare_separator_is_named_in_full_words(data: bytes, message: str) -> None:
    buffer = WireBuffer()
    buffer.feed(data)
    with pytest.raises(Malformed) as caught:
        buffer.read_line(64)
    assert caught.value.code is ErrorCode.BAD_FORMAT
    assert caught.value.message == message


@pytest.mark.parametrize(("line", "message"), [(b"+a\nb\r\n", LF), (b"+a\rb\r\n", CR)])
def test_lines_read_before_do_not_change_the_separator_named(line: bytes, message: str) -> None:
    buffer = WireBuffer()
    buffer.feed(b"+ok\r\n+fine\r\n" + line)
    assert buffer.read_line(64) == b"+ok"
    assert buffer.read_line(64) == b"+fine"
    with pytest.raises(Malformed) as caught:
        buffer.read_line(64)
    assert caught.value.message == message


HEAD = b"*2\r\n$3\r\n1-0\r\n$%d\r\n" % BIG_BULK


def test_a_payload_aside_waiting_on_half_its_crlf_needs_data_each_time_it_is_asked() -> None:
    client = client_for(Read(b"s"))
    client.receive_data(HEAD + b"x" * 100)
    assert client.next_event() is NEED_DATA
    client.receive_data(b"x" * (BIG_BULK - 100) + b"\r")
    for _ in range(3):
        assert client.next_event() is NEED_DATA
    client.receive_data(b"\n")
    assert client.next_event() == ReadReply(((Timestamp(1, 0), b"x" * BIG_BULK),))


@pytest.mark.parametrize("trailer", [b"!!", b"\r!", b"!\n"])
def test_a_payload_aside_not_followed_by_crlf_is_refused_in_words(trailer: bytes) -> None:
    client = client_for(Read(b"s"))
    client.receive_data(HEAD + b"x" * 100)
    assert client.next_event() is NEED_DATA
    client.receive_data(b"x" * (BIG_BULK - 100))
    assert client.next_event() is NEED_DATA
    client.receive_data(trailer)
    with pytest.raises(RemoteProtocolError) as caught:
        client.next_event()
    assert caught.value.code is ErrorCode.BAD_FORMAT
    assert caught.value.message == "Bulk String payload not followed by CRLF"


@pytest.mark.parametrize("trailer", [b"!!", b"\r!", b"!\n"])
def test_a_whole_payload_not_followed_by_crlf_is_refused_in_words(trailer: bytes) -> None:
    reader = WireReader()
    reader.feed(b"$3\r\nabc" + trailer)
    with pytest.raises(Malformed) as caught:
        reader.next_value()
    assert caught.value.code is ErrorCode.BAD_FORMAT
    assert caught.value.message == "Bulk String payload not followed by CRLF"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"$12x\r", "bulk string length must be ASCII decimal digits, got b'12x'"),
        (b"*12x\r", "array length must be ASCII decimal digits, got b'12x'"),
        (b"$x\r", "bulk string length must be ASCII decimal digits, got b'x'"),
        (b"*1 ", "array length must be ASCII decimal digits, got b'1 '"),
    ],
)
def test_a_length_that_can_no_longer_be_digits_is_refused_before_its_line_ends(
    data: bytes, message: str
) -> None:
    reader = WireReader()
    reader.feed(data)
    with pytest.raises(Malformed) as caught:
        reader.next_value()
    assert caught.value.code is ErrorCode.BAD_FORMAT
    assert caught.value.message == message


@pytest.mark.parametrize("line", [b"+a\x01b\r\n", b"-\x7f\r\n", b"+\xc3\xa9\r\n"])
def test_text_that_is_not_printable_ascii_is_refused_in_words(line: bytes) -> None:
    reader = WireReader()
    reader.feed(line)
    with pytest.raises(Malformed) as caught:
        reader.next_value()
    assert caught.value.code is ErrorCode.BAD_FORMAT
    assert caught.value.message == "Simple Strings and Errors hold printable ASCII only"
