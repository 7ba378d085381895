"""Both directions of one S3P connection: pipelined requests, each with the reply it gets.

Built on ``for_servers`` (the requests) and ``for_clients`` (the replies that answer them), for
what sees both sides: a client served the replies, an observer, a proxy.
"""

from __future__ import annotations

from hypothesis import strategies as st

from s3p_codec import s3p
from s3p_codec.testing.s3p.for_clients import _codes, _errors, replies_for
from s3p_codec.testing.s3p.for_servers import requests

#: v0.2.0's recoverable codes: the server answers them and keeps the connection.
_RECOVERABLE = [
    s3p.ErrorCode.STREAM_EXISTS,
    s3p.ErrorCode.UNKNOWN_STREAM,
    s3p.ErrorCode.NON_MONOTONIC_ID,
]


def conversations(
    limits: s3p.Limits | None = None, version: str = "0.1.0"
) -> st.SearchStrategy[list[tuple[s3p.Request, s3p.Reply]]]:
    """One connection's traffic: 1-6 pipelined ``(request, reply)`` pairs, in order.

    Each reply answers its request (``replies_for``), or is an Error where ``version`` allows
    one: the last reply may be an Error of any code ("all errors result in connection closure"
    in v0.1.0; in v0.2.0 ``ERR_BAD_FORMAT`` and ``ERR_LIMITS`` close), and in v0.2.0 any
    earlier one may be a recoverable Error (``ERR_STREAM_EXISTS``, ``ERR_UNKNOWN_STREAM``,
    ``ERR_NON_MONOTONIC_ID``), after which the server goes on. Requests are drawn as
    ``requests(limits, version)``. For a client (send the requests, serve the replies), an
    observer or a proxy (both directions of one connection).
    """
    lim = limits or s3p.Limits()
    v020 = s3p.Version(version) is s3p.Version.V0_2_0

    @st.composite
    def build(draw: st.DrawFn) -> list[tuple[s3p.Request, s3p.Reply]]:
        asked = draw(st.lists(requests(lim, version), min_size=1, max_size=6))
        answers = [draw(replies_for(request, lim, version)) for request in asked]
        if v020:
            for index in range(len(answers) - 1):
                if draw(st.integers(0, 3)) == 0:
                    answers[index] = draw(_errors(_RECOVERABLE))
        if draw(st.booleans()):
            answers[-1] = draw(_errors(_codes(version)))
        return list(zip(asked, answers, strict=True))

    return build()
