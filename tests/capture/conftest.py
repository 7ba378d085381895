"""Shared builders: S3P conversations as wire bytes, written into synthetic captures."""

from __future__ import annotations

from s3p_codec import Role, s3p

Exchange = tuple[bytes, bytes]


def s3p_exchanges() -> list[Exchange]:
    """A short S3P conversation: (request bytes, reply bytes) pairs from the real codec."""
    client = s3p.Connection(Role.CLIENT)
    server = s3p.Connection(Role.SERVER)
    ts = s3p.Timestamp
    script: list[tuple[s3p.Request, s3p.Reply]] = [
        (s3p.Create(b"orders"), s3p.Ok()),
        (s3p.Append(b"orders", (b"hello", b"world")), s3p.AppendReply(ts(1700000000000, 1))),
        (s3p.Read(b"orders", count=10), s3p.ReadReply(((ts(1700000000000, 0), b"hello"),))),
        (s3p.Trim(b"orders", ts(1700000000000, 0)), s3p.Ok()),
        (s3p.Delete(b"orders"), s3p.Ok()),
    ]
    out = []
    for request, reply in script:
        wire = client.send(request)
        server.receive_data(wire)
        assert list(server.events()) == [request]
        answer = server.send(reply)
        client.receive_data(answer)
        assert list(client.events()) == [reply]
        out.append((wire, answer))
    return out
