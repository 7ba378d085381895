"""Frames and connections the RustLog tests share."""

from __future__ import annotations

import json
import struct

import pytest

from s3p_codec import NEED_DATA, RemoteProtocolError, Role, rustlog

BACKENDS = ["json", *(["orjson"] if rustlog.ORJSON is not None else [])]


def frame(payload: object) -> bytes:
    """A frame around ``payload``: bytes as they are, anything else as compact JSON."""
    if not isinstance(payload, bytes):
        text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
        try:
            payload = text.encode()
        except UnicodeEncodeError:  # a lone surrogate: only an escape can carry it
            payload = json.dumps(payload, separators=(",", ":")).encode()
    return struct.pack(">I", len(payload)) + payload


def server(json_backend: str = "json", **kwargs: object) -> rustlog.Connection:
    return rustlog.Connection(Role.SERVER, json=json_backend, **kwargs)  # type: ignore[arg-type]


def client_awaiting(
    request: rustlog.Request | None = None, json_backend: str = "json", **kwargs: object
) -> rustlog.Connection:
    """A client with one request in flight (Ping unless given)."""
    conn = rustlog.Connection(Role.CLIENT, json=json_backend, **kwargs)  # type: ignore[arg-type]
    conn.send(request if request is not None else rustlog.Ping())
    return conn


def request_error(data: bytes, json_backend: str = "json") -> RemoteProtocolError:
    """The error a server raises for ``data``."""
    conn = server(json_backend)
    conn.receive_data(data)
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    return info.value


def parse_request(payload: object, json_backend: str = "json") -> rustlog.Event:
    conn = server(json_backend)
    conn.receive_data(frame(payload))
    event = conn.next_event()
    assert event is not NEED_DATA
    return event


def parse_response(
    payload: object, request: rustlog.Request | None = None, json_backend: str = "json"
) -> rustlog.Event:
    conn = client_awaiting(request, json_backend)
    conn.receive_data(frame(payload))
    event = conn.next_event()
    assert event is not NEED_DATA
    return event


def response_error(
    payload: object, request: rustlog.Request | None = None, json_backend: str = "json"
) -> RemoteProtocolError:
    conn = client_awaiting(request, json_backend)
    conn.receive_data(frame(payload))
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    return info.value
