"""The contract of DESIGN.md, checked across all five protocol packages at once.

Every protocol package offers the same names, its ``Connection`` satisfies the ``Connection``
typing Protocol the drivers are written against, its ``Observer`` the ``Observer`` Protocol, and
all of them keep the same end-of-stream contract, so a driver written once works for each.
"""

from __future__ import annotations

import enum
import importlib
from types import ModuleType
from typing import Any

import pytest

import s3p_codec
from s3p_codec import NEED_DATA, RemoteProtocolError, Role
from s3p_codec._core.connection import Connection, Observer

# A request cut short: the first bytes of a valid frame, so EOF arrives mid-frame.
PARTIAL_REQUEST = {
    "s3p": b"*3\r\n$6\r\nCRE",
    "rustlog": b"\x00\x00\x00\x10{",
    "s2s": b"\x00\x00",
    "pravega": b"\x00\x00\x00\x01\x00",
    "durable": b"POST /v1/stream/x HTTP/1.1\r\nHost: a\r\n",
}


def _package(name: str) -> ModuleType:
    return importlib.import_module(f"s3p_codec.{name}")


def _connection(name: str, role: Role) -> Any:
    package = _package(name)
    if name == "s2s":  # S2S sessions are typed by kind: append or read
        return package.Connection(role, package.Session.APPEND)
    return package.Connection(role)


def test_every_protocol_has_a_partial_request_here() -> None:
    assert set(PARTIAL_REQUEST) == set(s3p_codec.PROTOCOLS)


@pytest.mark.parametrize("name", s3p_codec.PROTOCOLS)
def test_every_package_offers_the_same_names(name: str) -> None:
    package = _package(name)
    for public in ("Connection", "Limits", "ErrorCode", "Observer"):
        assert public in package.__all__, f"{name} does not export {public}"
    assert issubclass(package.ErrorCode, enum.Enum)
    assert getattr(s3p_codec, name) is package  # lazy attribute access on the top package


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize("name", s3p_codec.PROTOCOLS)
def test_connections_satisfy_the_protocol_drivers_use(name: str, role: Role) -> None:
    conn = _connection(name, role)
    assert isinstance(conn, Connection)
    assert conn.role is role
    assert isinstance(conn.state, enum.Enum)
    assert conn.finished is False


@pytest.mark.parametrize("name", s3p_codec.PROTOCOLS)
def test_observers_satisfy_the_protocol_captures_use(name: str) -> None:
    assert isinstance(_package(name).Observer(), Observer)


@pytest.mark.parametrize("name", s3p_codec.PROTOCOLS)
def test_a_clean_end_of_stream_gives_need_data_and_a_final_state(name: str) -> None:
    conn = _connection(name, Role.SERVER)
    conn.receive_data(b"")
    assert conn.next_event() is NEED_DATA
    assert conn.finished is True
    assert conn.next_event() is NEED_DATA  # and for ever after


@pytest.mark.parametrize("name", s3p_codec.PROTOCOLS)
def test_an_end_of_stream_mid_frame_is_a_fatal_remote_error(name: str) -> None:
    conn = _connection(name, Role.SERVER)
    conn.receive_data(PARTIAL_REQUEST[name])
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"")
    with pytest.raises(RemoteProtocolError) as caught:
        conn.next_event()
    error = caught.value
    assert error.fatal is True
    if error.reply is not None:
        # A server may still answer with the error's reply once; then the connection is done.
        assert conn.finished is False
        conn.send(error.reply)
    assert conn.finished is True
