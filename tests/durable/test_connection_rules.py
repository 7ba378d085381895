"""The role rules of ``durable.Connection``, each refusal in its exact words.

A client's ``Host`` is ``localhost`` unless given; each role refuses the other's events in words
naming the event, as a ``STATE`` error that is not fatal; ``spans`` with the server role is a
``TypeError``; a member of the other role is an ``AttributeError`` that names the member and the
object, as a missing attribute's would.
"""

from __future__ import annotations

import re

import pytest

from s3p_codec import LocalProtocolError, Role, durable


def exactly(words: str) -> str:
    """A ``match`` pattern for these words and nothing else."""
    return f"^{re.escape(words)}$"


def test_a_client_says_host_localhost_unless_given_another() -> None:
    client = durable.Connection(Role.CLIENT)
    assert client.host == "localhost"
    wire = client.send(durable.Head("/v1/stream/x"))
    assert b"\r\nhost: localhost\r\n" in wire.lower()
    assert durable.Connection(Role.CLIENT, host="h:1").send(durable.Head("/s")).count(b"h:1") == 1


def test_a_client_refuses_a_response_in_words_naming_it_and_stays_usable() -> None:
    client = durable.Connection(Role.CLIENT)
    with pytest.raises(
        LocalProtocolError, match=exactly("a client sends requests, not SSEEnd")
    ) as caught:
        client.send(durable.SSEEnd())
    assert caught.value.code is durable.ConnectionErrorCode.STATE
    assert caught.value.fatal is False
    assert client.send(durable.Head("/v1/stream/x"))  # nothing broke


def test_a_server_refuses_a_request_in_words_naming_it_and_stays_usable() -> None:
    server = durable.Connection(Role.SERVER)
    server.receive_data(b"HEAD /v1/stream/x HTTP/1.1\r\nHost: a\r\n\r\n")
    assert isinstance(server.next_event(), durable.Head)
    with pytest.raises(
        LocalProtocolError, match=exactly("a server sends responses, not Head")
    ) as caught:
        server.send(durable.Head("/v1/stream/x"))
    assert caught.value.code is durable.ConnectionErrorCode.STATE
    assert caught.value.fatal is False
    assert server.send(durable.StreamInfo(next_offset="0000000000000000_0000000000000000"))


def test_spans_with_the_server_role_is_a_type_error_in_its_words() -> None:
    words = "spans measure the responses a client reads; a server reads none"
    with pytest.raises(TypeError, match=exactly(words)):
        durable.Connection(Role.SERVER, spans=durable.EventSpans())


@pytest.mark.parametrize("name", ["message_start", "request_line"])
def test_a_servers_member_on_a_client_is_a_missing_attribute_naming_it(name: str) -> None:
    client = durable.Connection(Role.CLIENT)
    with pytest.raises(AttributeError) as caught:
        getattr(client, name)
    assert str(caught.value) == f"{name} is a server-role connection's only"
    assert caught.value.name == name
    assert caught.value.obj is client


@pytest.mark.parametrize("name", ["host", "queued"])
def test_a_clients_member_on_a_server_is_a_missing_attribute_naming_it(name: str) -> None:
    server = durable.Connection(Role.SERVER)
    with pytest.raises(AttributeError) as caught:
        getattr(server, name)
    assert str(caught.value) == f"{name} is a client-role connection's only"
    assert caught.value.name == name
    assert caught.value.obj is server


def test_expect_response_on_a_server_is_a_missing_attribute_naming_it() -> None:
    server = durable.Connection(Role.SERVER)
    with pytest.raises(AttributeError) as caught:
        server.expect_response(None, b"GET", b"/")
    assert str(caught.value) == "expect_response is a client-role connection's only"
    assert caught.value.name == "expect_response"
    assert caught.value.obj is server
