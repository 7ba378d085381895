"""Tutorial: fuzz your own server (live, over loopback) and your own client (hypothesis).

Needs the ``testing`` extra. The server half starts a small blocking S3P server in a thread and
fuzzes it for two seconds, as ``s3p-codec fuzz s3p 127.0.0.1:PORT --seconds 2`` would; the
client half feeds every broken reply of ``malformed_replies()`` to a client codec and checks it
refuses each with a typed error. Run: ``python docs/samples/fuzz_server_and_client.py``.
"""

from __future__ import annotations

import threading

from hypothesis import given, settings

from s3p_codec import ProtocolError, Role, s3p
from s3p_codec.io.sync import SyncConnection, serve
from s3p_codec.testing import MalformedReply
from s3p_codec.testing import s3p as s3p_cases
from s3p_codec.testing.command import make_target
from s3p_codec.testing.live import fuzz

# --- your server ---------------------------------------------------------------------------

STREAMS: dict[bytes, int] = {}
LOCK = threading.Lock()


def handle(conn: SyncConnection[s3p.Event, s3p.Event]) -> None:
    """Answer each request; the codec and adapter answer and close on malformed bytes."""
    for request in conn:
        with LOCK:
            if isinstance(request, s3p.Create):
                created = STREAMS.setdefault(request.stream, 0) == 0
                reply: s3p.Reply = s3p.Ok() if created else s3p.ErrorReply(
                    s3p.ErrorCode.STREAM_EXISTS, "exists")  # fmt: skip
            elif request.stream not in STREAMS:
                reply = s3p.ErrorReply(s3p.ErrorCode.UNKNOWN_STREAM, "no such stream")
            elif isinstance(request, s3p.Append):
                STREAMS[request.stream] += len(request.records)
                reply = s3p.AppendReply(s3p.Timestamp(1, STREAMS[request.stream]))
            elif isinstance(request, s3p.Read):
                reply = s3p.ReadReply(())
            else:
                reply = s3p.Ok()
        conn.send(reply)


def fuzz_the_server() -> None:
    server = serve(lambda: s3p.Connection(Role.SERVER), handle, "127.0.0.1", 0, timeout=5)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        host, port = server.address
        report = fuzz(make_target("s3p"), host, port, seconds=2, seed=1)
    finally:
        server.close()
    print(report.summary())
    assert report.ok, report.summary()


# --- your client ---------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(s3p_cases.malformed_replies())
def test_the_client_refuses_every_broken_reply(case: object) -> None:
    assert isinstance(case, MalformedReply)
    client = s3p.Connection(Role.CLIENT)
    for request in case.pending:
        client.send(request)
    refused: ProtocolError | None = None
    try:
        client.receive_data(case.data)
        if case.half_close:
            client.receive_data(b"")
        list(client.events())
    except ProtocolError as error:  # the only exceptions a codec may raise
        refused = error
    assert refused is not None, f"accepted a broken reply: {case.label}"
    assert refused.code == case.code, (refused, case)


if __name__ == "__main__":
    fuzz_the_server()
    test_the_client_refuses_every_broken_reply()
    print("the client refused every broken reply")
