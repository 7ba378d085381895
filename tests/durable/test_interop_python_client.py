"""The official Python client (PyPI ``durable-streams``) against our example server.

The example server runs in its own process on 127.0.0.1 (OS-chosen port). Live reads are
bounded by the client's request timeout and by a stop condition on the data.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator

import pytest
from durable_streams import (
    DurableStream,
    SeqConflictError,
    StreamExistsError,
    StreamNotFoundError,
    stream,
)

from tests.durable._servers import example_server

pytestmark = [pytest.mark.network]

_ids = itertools.count()


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with example_server() as url:
        yield url


def _url(base_url: str, name: str) -> str:
    return f"{base_url}/v1/stream/python-{name}-{next(_ids)}"


def test_json_stream_create_append_head_and_read(base_url: str) -> None:
    url = _url(base_url, "json")
    with DurableStream.create(url, content_type="application/json") as handle:
        first = handle.append({"a": 1})
        second = handle.append({"b": [1, 2]})
        assert first.next_offset < second.next_offset
        head = handle.head()
        assert head.offset == second.next_offset
        assert head.content_type == "application/json"
        assert head.cache_control == "no-store"
    with stream(url, live=False) as response:
        assert response.read_json() == [{"a": 1}, {"b": [1, 2]}]
        assert response.up_to_date


def test_text_stream_with_stream_seq_conflict(base_url: str) -> None:
    url = _url(base_url, "text")
    with DurableStream.create(url, content_type="text/plain") as handle:
        handle.append("hello ", seq="001")
        handle.append("world", seq="002")
        with pytest.raises(SeqConflictError):
            handle.append("again", seq="002")
    with stream(url, live=False) as response:
        assert response.read_text() == "hello world"


def test_binary_stream_round_trips_bytes(base_url: str) -> None:
    url = _url(base_url, "bin")
    payload = bytes(range(256)) * 8
    with DurableStream.create(url, content_type="application/octet-stream", body=payload):
        pass
    with stream(url, live=False) as response:
        assert response.read_bytes() == payload


def test_create_with_another_config_is_stream_exists(base_url: str) -> None:
    url = _url(base_url, "exists")
    with DurableStream.create(url, content_type="text/plain"):
        pass
    with pytest.raises(StreamExistsError):
        DurableStream.create(url, content_type="application/json")


def test_head_and_delete_of_a_missing_stream_are_not_found(base_url: str) -> None:
    url = _url(base_url, "missing")
    with pytest.raises(StreamNotFoundError):
        DurableStream.head_static(url)
    with DurableStream.create(url, content_type="text/plain") as handle:
        handle.delete()
    with pytest.raises(StreamNotFoundError):
        DurableStream.head_static(url)


@pytest.mark.parametrize("live", ["long-poll", "sse"])
def test_live_reads_receive_appends_made_while_waiting(base_url: str, live: str) -> None:
    url = _url(base_url, live)
    handle = DurableStream.create(url, content_type="text/plain", body=b"start")

    def append_later() -> None:
        for word in (" one", " two"):
            time.sleep(0.2)
            handle.append(word)

    writer = threading.Thread(target=append_later)
    writer.start()
    received = ""
    try:
        with stream(url, offset="-1", live=live, timeout=5) as response:  # type: ignore[arg-type]
            for text in response.iter_text():
                received += text
                if received.endswith(" two"):
                    break
    finally:
        writer.join(timeout=5)
        handle.close()
    assert received == "start one two"
