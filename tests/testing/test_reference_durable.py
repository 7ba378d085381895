"""``live.fuzz`` against the official Node Durable Streams reference server.

It shows the fuzzer finding real disagreements. Today the reference server (npm
``@durable-streams/server``) differs from the strict expectations of ``s3p_codec.testing``
in exactly these ways, recorded here so that a change on either side is noticed:

- ``live=push`` (neither ``long-poll`` nor ``sse``) is served as a catch-up read (200) instead of
  refused (400);
- a ``Content-Length`` over the body limit gets no early 413: the server waits for the body
  (it has no configured body limit), so the case times out.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from s3p_codec.testing import live
from s3p_codec.testing.command import make_target
from tests.durable._servers import reference_server

EXPECTED_DISAGREEMENTS = {
    ("malformed input refused", "live not long-poll or sse"),
    ("error reply sent", "body over the limit (Content-Length only)"),
}


def test_fuzz_reports_the_reference_servers_disagreements() -> None:
    with reference_server() as url:
        port = urlsplit(url).port
        assert port is not None
        report = live.fuzz(
            make_target("durable"), "127.0.0.1", port, seconds=4, seed=1, case_timeout=1.0
        )
    assert report.aborted is None, report.summary()
    assert set(report.findings) <= EXPECTED_DISAGREEMENTS, report.summary()
    assert report.findings, "the known disagreements were not seen: " + report.summary()
    assert report.malformed > 10
