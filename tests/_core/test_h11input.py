"""What an HTTP/1.1 end does with bytes before h11 reads them (``_core/h11input.py``).

The verdict on a head at h11's bound is the same whether it arrives whole or a byte at a time
(accepted up to one byte over ``max_incomplete_event_size``, refused beyond), also when the
feed's slice is exactly as large as the room left; received bytes are counted until h11 has
them, a reused ``bytearray`` is copied and ``bytes`` are not; a direction given up drops exactly
what h11 never had, and the next bytes go whole. Through a Durable Streams client: bytes after
the end of the stream refused in their words, and bytes that answer no request refused whether
they still wait for h11 or h11 already holds them behind a response.
"""

from __future__ import annotations

import h11
import pytest

from s3p_codec import LocalProtocolError, RemoteProtocolError, Role, durable
from s3p_codec._core.h11input import FEED_STEP, H11Feed


def _head(size: int) -> bytes:
    """A request head of exactly ``size`` bytes (padded in one header's value)."""
    start, end = b"GET / HTTP/1.1\r\nHost: a\r\nX: ", b"\r\n\r\n"
    return start + b"x" * (size - len(start) - len(end)) + end


def _accepts(bound: int, data: bytes, piece: int) -> bool:
    """Whether an h11 server fed through an ``H11Feed`` reads the request head in ``data``."""
    machine = h11.Connection(h11.SERVER, max_incomplete_event_size=bound)
    feed = H11Feed(machine, bound)
    for at in range(0, len(data), piece):
        feed.receive(data[at : at + piece])
    try:
        while True:
            event = machine.next_event()
            if event is not h11.NEED_DATA:
                return isinstance(event, h11.Request)
            if not feed.give(FEED_STEP):
                return False
    except h11.RemoteProtocolError:
        return False


# FEED_STEP - 2 makes a fresh feed's slice exactly one byte larger than the room h11 has left.
@pytest.mark.parametrize("bound", [FEED_STEP - 3, FEED_STEP - 2, FEED_STEP - 1, 16 * 1024])
@pytest.mark.parametrize("over", [-1, 0, 1, 2, 3])
def test_a_head_at_the_bound_gets_one_verdict_whole_or_a_byte_at_a_time(
    bound: int, over: int
) -> None:
    data = _head(bound + over)
    whole, bytewise = _accepts(bound, data, len(data)), _accepts(bound, data, 1)
    # h11 refuses an incomplete event once it holds more than the bound: one byte over.
    assert whole == bytewise == (over <= 1)


def test_received_bytes_are_counted_until_h11_has_them() -> None:
    feed = H11Feed(h11.Connection(h11.SERVER))
    assert feed.queued == 0
    feed.receive(b"GET / HT")
    feed.receive(b"TP/1.1\r\n")
    assert feed.queued == 16
    assert feed.give(5)
    assert feed.queued == 11
    assert feed.given == 5
    while feed.give(5):
        pass
    assert feed.queued == 0
    assert feed.given == 16
    assert not feed.give(5)  # nothing left, and no close yet


def test_a_bytearray_is_copied_and_bytes_are_not() -> None:
    feed = H11Feed(h11.Connection(h11.SERVER))
    reused = bytearray(b"GET / HTTP/1.1\r\n")
    feed.receive(reused)
    reused[:] = b"XXXXXXXXXXXXXXXX"  # the caller reuses its buffer
    data = b"Host: a\r\n\r\n"
    feed.receive(data)
    assert type(feed.waiting[0]) is bytes
    assert feed.waiting[0] == b"GET / HTTP/1.1\r\n"
    assert feed.waiting[1] is data
    while feed.give(FEED_STEP):
        pass
    assert isinstance(feed.machine.next_event(), h11.Request)


def test_a_direction_given_up_drops_what_h11_never_had_and_the_next_bytes_go_whole() -> None:
    feed = H11Feed(h11.Connection(h11.SERVER))
    feed.receive(b"GET / HTTP/1.1\r\n")
    feed.receive(b"junk")
    assert feed.give(3)  # h11 has b"GET"; 17 bytes wait
    assert feed.drop_waiting() == 17
    assert (feed.queued, feed.at, len(feed.waiting)) == (0, 0, 0)
    feed.receive(b"abc")
    assert feed.give(FEED_STEP)
    assert feed.machine.trailing_data[0] == b"GETabc"  # from the first byte of the new chunk
    assert feed.drop_waiting() == 0


def test_bytes_after_the_end_of_the_stream_are_refused_in_their_words() -> None:
    client = durable.Connection(Role.CLIENT)
    client.receive_data(b"")
    client.receive_data(b"")  # a second end is no error
    with pytest.raises(LocalProtocolError, match=r"^data received after end of stream$") as caught:
        client.receive_data(b"x")
    assert caught.value.code is durable.ConnectionErrorCode.EOF


def test_bytes_that_answer_no_request_are_refused_while_they_wait_for_h11() -> None:
    client = durable.Connection(Role.CLIENT)
    client.receive_data(b"HTTP/1.1 200 OK\r\n")
    with pytest.raises(RemoteProtocolError, match="the server sent bytes that answer no request"):
        client.next_event()


def test_bytes_behind_a_response_that_answer_no_request_are_refused() -> None:
    client = durable.Connection(Role.CLIENT)
    client.send(durable.Head("/v1/stream/x"))
    # One chunk: h11 gets it in one slice, so the extra bytes are already in h11's buffer.
    client.receive_data(
        b"HTTP/1.1 200 OK\r\nStream-Next-Offset: 0000000000000000_0000000000000000\r\n"
        b"Content-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n"
    )
    assert isinstance(client.next_event(), durable.StreamInfo)
    with pytest.raises(RemoteProtocolError, match="the server sent bytes that answer no request"):
        client.next_event()
