"""Every example of the S3P v0.1.0 text, byte for byte, in both directions.

Each request example is what our client emits for the typed command and what our server parses
into it; each reply example is what our server emits and what our client parses.
"""

from __future__ import annotations

import pytest

from s3p_codec import RemoteProtocolError, Role, s3p
from s3p_codec.s3p import (
    Append,
    AppendReply,
    Create,
    Delete,
    ErrorCode,
    ErrorReply,
    Ok,
    Read,
    ReadReply,
    Timestamp,
    TimestampStrategy,
    Trim,
)

from .support import crlf, server_error

EXAMPLES = [
    pytest.param(
        crlf("*3\n$6\nCREATE\n$6\norders\n*2\n$18\nTIMESTAMP_STRATEGY\n$6\nclient"),
        Create(b"orders", TimestampStrategy.CLIENT),
        crlf("+OK"),
        Ok(),
        id="8.1 create with client timestamps",
    ),
    pytest.param(
        crlf("*4\n$6\nAPPEND\n$6\norders\n*0\n*2\n$5\nhello\n$5\nworld"),
        Append(b"orders", (b"hello", b"world")),
        crlf("$15\n1700000001234-0"),
        AppendReply(Timestamp(1700000001234, 0)),
        id="8.2 append, server timestamps",
    ),
    pytest.param(
        crlf(
            "*4\n$6\nAPPEND\n$6\norders\n*2\n$9\nTIMESTAMP\n$15\n1700000001235-0\n*1\n$7\npayload"
        ),
        Append(b"orders", (b"payload",), Timestamp(1700000001235, 0)),
        crlf("$15\n1700000001235-0"),
        AppendReply(Timestamp(1700000001235, 0)),
        id="8.2 append, client timestamps",
    ),
    pytest.param(
        crlf("*3\n$4\nREAD\n$6\norders\n*4\n$5\nCOUNT\n$2\n10\n$13\nMIN_TIMESTAMP\n$3\n0-0"),
        Read(b"orders", count=10, min_timestamp=Timestamp(0, 0)),
        crlf("*4\n$15\n1700000001234-0\n$5\nhello\n$15\n1700000001235-0\n$5\nworld"),
        ReadReply(
            ((Timestamp(1700000001234, 0), b"hello"), (Timestamp(1700000001235, 0), b"world"))
        ),
        id="8.3 non-blocking read",
    ),
    pytest.param(
        crlf("*3\n$4\nTRIM\n$6\norders\n*2\n$5\nUNTIL\n$15\n1700000001235-0"),
        Trim(b"orders", Timestamp(1700000001235, 0)),
        crlf("+OK"),
        Ok(),
        id="8.4 trim",
    ),
    pytest.param(
        crlf("*3\n$6\nDELETE\n$6\norders\n*0"),
        Delete(b"orders"),
        crlf("+OK"),
        Ok(),
        id="8.5 delete",
    ),
]


@pytest.mark.parametrize(("request_bytes", "command", "reply_bytes", "reply"), EXAMPLES)
def test_the_spec_example_is_what_we_send_and_parse(
    request_bytes: bytes, command: s3p.Request, reply_bytes: bytes, reply: s3p.Reply
) -> None:
    client = s3p.Connection(Role.CLIENT)
    server = s3p.Connection(Role.SERVER)
    assert client.send(command) == request_bytes
    server.receive_data(request_bytes)
    assert list(server.events()) == [command]
    assert server.send(reply) == reply_bytes
    client.receive_data(reply_bytes)
    assert list(client.events()) == [reply]


def test_the_spec_unknown_option_example_gets_the_spec_error_reply_byte_for_byte() -> None:
    request = crlf("*3\n$6\nCREATE\n$6\norders\n*2\n$8\nMAX_SIZE\n$4\n1000")
    error = server_error(request)
    assert error.code is ErrorCode.BAD_FORMAT
    assert error.reply == ErrorReply(ErrorCode.BAD_FORMAT, "unknown option MAX_SIZE")
    server = s3p.Connection(Role.SERVER)
    server.receive_data(request)
    with pytest.raises(RemoteProtocolError):
        server.next_event()
    assert server.send(error.reply) == crlf("-ERR_BAD_FORMAT unknown option MAX_SIZE")
    client = s3p.Connection(Role.CLIENT)
    client.send(Create(b"orders"))
    client.receive_data(crlf("-ERR_BAD_FORMAT unknown option MAX_SIZE"))
    assert client.next_event() == error.reply
