"""Protocol choice: the port map and content sniffing for all five protocols."""

from __future__ import annotations

import json
import struct

import pytest

from s3p_codec import Role, durable, pravega, s3p
from s3p_codec.capture._detect import (
    DEFAULT_PORTS,
    Sniff,
    Verdict,
    parse_decode_as,
    sniff,
    sniff_client,
)

S3P_APPEND = s3p.Connection(Role.CLIENT).send(s3p.Append(b"orders", (b"x",)))
PRAVEGA_HELLO = pravega.Connection(Role.CLIENT).send(pravega.Hello())
DURABLE_CREATE = durable.Connection(Role.CLIENT, host="h").send(
    durable.Create("/v1/stream/orders", content_type="application/json")
)


def rustlog_frame(obj: dict[str, object]) -> bytes:
    body = json.dumps(obj).encode()
    return struct.pack(">I", len(body)) + body


RUSTLOG_PRODUCE = rustlog_frame({"type": "Produce", "topic": "logs", "partition": 0, "records": []})
RUSTLOG_REPLY = rustlog_frame({"type": "ProduceResponse", "base_offset": 0})
S2S_APPEND = (
    b"POST /v1/streams/orders/records HTTP/1.1\r\nhost: h\r\ncontent-type: s2s/proto\r\n"
    b"s2-basin: b\r\ntransfer-encoding: chunked\r\n\r\n"
)
DURABLE_RESPONSE = (
    b"HTTP/1.1 201 Created\r\nstream-next-offset: 0000000000000000_0000000000000000\r\n"
    b"content-length: 0\r\n\r\n"
)


@pytest.mark.parametrize(
    ("client", "server", "expected"),
    [
        (S3P_APPEND, b"", "s3p"),
        (RUSTLOG_PRODUCE, b"", "rustlog"),
        (PRAVEGA_HELLO, b"", "pravega"),
        (S2S_APPEND, b"", "s2s"),
        (b"GET /v1/streams/x/records?seq_num=0 HTTP/1.1\r\nhost: h\r\n\r\n", b"", "s2s"),
        (b"GET /s?offset=-1&live=sse HTTP/1.1\r\nhost: h\r\n\r\n", b"", "durable"),
        (DURABLE_CREATE, DURABLE_RESPONSE, "durable"),
        (b"GET /x HTTP/1.1\r\n\r\n", b"HTTP/1.1 200 OK\r\ncontent-type: s2s/proto\r\n\r\n", "s2s"),
    ],
)
def test_sniffing_recognises_every_protocol(client: bytes, server: bytes, expected: str) -> None:
    assert sniff(client, server, first_done=True, second_done=True) == Verdict(expected, True)


def test_sniffing_waits_for_more_bytes_of_a_plausible_start() -> None:
    assert sniff(S3P_APPEND[:5], b"") is None
    assert sniff(RUSTLOG_PRODUCE[:10], b"") is None
    assert sniff(PRAVEGA_HELLO[:3], b"") is None
    assert sniff(b"PO", b"") is None
    # a plain HTTP request needs the response head before Durable Streams can be told apart
    assert sniff(DURABLE_CREATE, b"") is None
    assert sniff(DURABLE_CREATE, DURABLE_RESPONSE) == Verdict("durable", True)


def test_sniffing_gives_up_on_what_matches_nothing() -> None:
    tls = b"\x16\x03\x01\x02\x00"
    assert sniff(tls, b"") is None  # the other side may still open with a client's bytes
    assert sniff(tls, b"", second_done=True) == Verdict(None, True)
    assert sniff(tls, tls) == Verdict(None, True)
    assert sniff(b"SSH-2.0-OpenSSH_9.2\r\n", b"SSH-2.0-x\r\n") == Verdict(None, True)
    assert sniff(DURABLE_CREATE, b"HTTP/1.1 200 OK\r\n\r\n") == Verdict(None, True)


def test_sniffing_tells_which_side_is_the_client_without_a_handshake() -> None:
    assert sniff(b"+OK\r\n", S3P_APPEND) == Verdict("s3p", False)
    # RustLog frames look alike both ways: only requests name a type without "Response"
    assert sniff(RUSTLOG_REPLY, RUSTLOG_PRODUCE) == Verdict("rustlog", False)
    assert sniff_client(RUSTLOG_REPLY, True) is Sniff.NO


def test_the_handshake_fixes_the_orientation() -> None:
    assert sniff(b"+OK\r\n", S3P_APPEND, first_is_client=True, first_done=True) == Verdict(
        None, True
    )


def test_rustlog_lengths_out_of_range_are_not_rustlog() -> None:
    huge = struct.pack(">I", 10 * 1024 * 1024 + 1) + b'{"type":"Ping"}'
    assert sniff_client(huge, True) is Sniff.NO
    assert sniff_client(struct.pack(">I", 0) + b"{", True) is Sniff.NO


def test_pravega_needs_a_client_command_and_a_sane_length() -> None:
    assert sniff_client(struct.pack(">ii", -127, 9) + bytes(9), True) is Sniff.NO
    assert sniff_client(struct.pack(">ii", 7, 40) + bytes(40), True) is Sniff.NO  # a reply
    assert sniff_client(struct.pack(">ii", 20, 0x1000000), True) is Sniff.NO
    assert sniff_client(struct.pack(">ii", 20, 30) + bytes(30), True) == "pravega"


def test_decode_as_parses_port_proto_pairs() -> None:
    assert parse_decode_as(["7500=s3p", " 9000 = Pravega"]) == {7500: "s3p", 9000: "pravega"}
    for bad in ["7500", "x=s3p", "70000=s3p", "7500=kafka", "0=s3p"]:
        with pytest.raises(ValueError, match=r"PORT=PROTO|range|unknown protocol"):
            parse_decode_as([bad])


def test_default_ports_name_real_protocols() -> None:
    assert DEFAULT_PORTS[7500] == "s3p"
    assert set(DEFAULT_PORTS.values()) <= {"s3p", "rustlog", "s2s", "pravega", "durable"}
