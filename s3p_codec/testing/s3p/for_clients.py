"""The client direction: valid S3P replies, their bytes, and malformed replies a client refuses.

Kept apart from ``for_servers`` because a client is fuzzed with what a server writes: each case
carries the requests the client must have sent (``pending``) before its bytes arrive.

``version`` (``"0.1.0"`` default, or ``"0.2.0"``): v0.2.0 replies may carry
``ERR_NON_MONOTONIC_ID``, and READ's default lower bound ``0-0`` is inclusive there.
"""

from __future__ import annotations

from hypothesis import strategies as st

from s3p_codec import Role, s3p
from s3p_codec.testing._strategies import MalformedReply
from s3p_codec.testing.s3p._wire import BAD, LIMITS, U64, timestamps


def _read_replies(lim: s3p.Limits) -> st.SearchStrategy[s3p.ReadReply]:
    """Records "in strictly increasing timestamp order", all after the default ``0-0``."""
    most = min(4, lim.default_count)
    stamps = st.lists(timestamps().filter(lambda t: t > (0, 0)), unique=True, max_size=most)
    size = min(16, lim.max_record_size)
    return stamps.flatmap(
        lambda ts: st.tuples(*(st.binary(min_size=1, max_size=size) for _ in ts)).map(
            lambda bodies: s3p.ReadReply(tuple(zip(sorted(ts), bodies, strict=True)))
        )
    )


def _codes(version: str) -> list[s3p.ErrorCode]:
    """The error codes of ``version`` (v0.2.0 adds ``ERR_NON_MONOTONIC_ID``)."""
    if s3p.Version(version) is s3p.Version.V0_2_0:
        return list(s3p.ErrorCode)
    return [code for code in s3p.ErrorCode if code is not s3p.ErrorCode.NON_MONOTONIC_ID]


def _messages() -> st.SearchStrategy[str]:
    """Error messages: printable ASCII (what an Error line may hold), empty included."""
    return st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)


def _errors(codes: list[s3p.ErrorCode]) -> st.SearchStrategy[s3p.ErrorReply]:
    """Error replies of one of ``codes``, with any message."""
    return st.builds(s3p.ErrorReply, st.sampled_from(codes), _messages())


def replies(
    limits: s3p.Limits | None = None, version: str = "0.1.0"
) -> st.SearchStrategy[s3p.Reply]:
    """Every reply type of ``version`` (for fuzzing clients), READ replies within ``limits``."""
    return st.one_of(
        st.just(s3p.Ok()),
        st.builds(s3p.AppendReply, timestamps()),
        _read_replies(limits or s3p.Limits()),
        _errors(_codes(version)),
    )


def _admitted(request: s3p.Read, version: str) -> tuple[s3p.Timestamp, bool]:
    """The lowest timestamp a reply to ``request`` may hold, and whether it is itself allowed:
    v0.2.0's ``MIN_ID`` (default ``0-0``) is inclusive, v0.1.0's ``MIN_TIMESTAMP`` (default
    ``0-0``) is not ("strictly greater than this value")."""
    if request.min_id is not None:
        return request.min_id, True
    if request.min_timestamp is not None:
        return request.min_timestamp, False
    return s3p.Timestamp(0, 0), s3p.Version(version) is s3p.Version.V0_2_0


def _read_reply_for(
    request: s3p.Read, lim: s3p.Limits, version: str
) -> st.SearchStrategy[s3p.ReadReply]:
    low, inclusive = _admitted(request, version)

    def admitted(stamp: s3p.Timestamp) -> bool:
        return stamp >= low if inclusive else stamp > low

    # Timestamps at and just after the bound as well as anywhere: the bound is what a client
    # checks, so the records next to it matter most.
    beside = sorted({low.ms, min(low.ms + 1, U64)})
    near = st.builds(s3p.Timestamp, st.sampled_from(beside), st.integers(0, 3))
    most = min(request.count or lim.default_count, 6)
    stamps = st.lists(timestamps() | near, unique=True, max_size=most).map(
        lambda drawn: sorted(stamp for stamp in drawn if admitted(stamp))
    )
    size = min(40, lim.max_record_size)
    return stamps.flatmap(
        lambda ts: st.tuples(*(st.binary(min_size=1, max_size=size) for _ in ts)).map(
            lambda bodies: s3p.ReadReply(tuple(zip(ts, bodies, strict=True)))
        )
    )


def replies_for(
    request: s3p.Request, limits: s3p.Limits | None = None, version: str = "0.1.0"
) -> st.SearchStrategy[s3p.Reply]:
    """Valid, non-error replies to ``request``: the other direction of ``request_for``.

    ``Ok`` for CREATE, TRIM and DELETE, an ``AppendReply`` for APPEND, and for READ a
    ``ReadReply`` a strict client must accept: at most its ``COUNT`` records (``default_count``
    of ``limits`` without one), in strictly increasing timestamp order, every timestamp after
    ``MIN_TIMESTAMP`` (v0.1.0, exclusive) or from ``MIN_ID`` (v0.2.0, inclusive), timestamps
    next to that bound drawn often.
    """
    if isinstance(request, s3p.Append):
        return st.builds(s3p.AppendReply, timestamps())
    if isinstance(request, s3p.Read):
        return _read_reply_for(request, limits or s3p.Limits(), version)
    return st.just(s3p.Ok())


def request_for(reply: s3p.Reply) -> s3p.Request:
    """A request that ``reply`` answers: CREATE for ``Ok``, APPEND for a timestamp, else READ."""
    if isinstance(reply, s3p.Ok):
        return s3p.Create(b"s")
    if isinstance(reply, s3p.AppendReply):
        return s3p.Append(b"s", (b"r",))
    return s3p.Read(b"s")


def requests_for(reply: s3p.Reply) -> tuple[s3p.Request, ...]:
    """``(request_for(reply),)``: the requests to send before ``reply``, as in the other
    protocol modules."""
    return (request_for(reply),)


def _served(request: s3p.Request, reply: s3p.Reply, version: str = "0.1.0") -> bytes:
    """The bytes our server-role codec writes for ``reply`` once it has read ``request``."""
    client = s3p.Connection(Role.CLIENT, version=version)
    server = s3p.Connection(Role.SERVER, version=version)
    server.receive_data(client.send(request))
    server.next_event()
    return server.send(reply)


def reply_wire(
    limits: s3p.Limits | None = None, version: str = "0.1.0"
) -> st.SearchStrategy[tuple[s3p.Reply, bytes]]:
    """``(reply, its exact wire bytes)`` as our server-role codec writes it, in answer to
    ``request_for(reply)``."""
    return replies(limits, version).map(
        lambda reply: (reply, _served(request_for(reply), reply, version))
    )


def _refused(
    label: str,
    data: bytes,
    pending: tuple[s3p.Request, ...],
    code: s3p.ErrorCode = BAD,
    *,
    half_close: bool = False,
) -> MalformedReply:
    return MalformedReply(label, data, code, True, pending, half_close=half_close)


_READ = (s3p.Read(b"s"),)
_APPEND = (s3p.Append(b"s", (b"r",)),)
_CREATE = (s3p.Create(b"s"),)


def _reply_off_by_one(lim: s3p.Limits) -> st.SearchStrategy[MalformedReply]:
    """A length one short or one long; the byte after the real payload is never a CR."""
    size = max(2, min(16, lim.max_record_size - 1))
    bodies = st.binary(min_size=2, max_size=size).map(lambda b: b.replace(b"\r", b"."))

    def record(body: bytes, delta: int) -> MalformedReply:
        data = b"*2\r\n$3\r\n1-0\r\n$%d\r\n%s\r\n" % (len(body) + delta, body)
        return _refused(f"record length {delta:+d}", data + b"\r\n", _READ)

    def stamp(ms: int, delta: int) -> MalformedReply:
        text = b"%d-0" % ms
        data = b"$%d\r\n%s\r\n" % (len(text) + delta, text)
        return _refused(f"timestamp length {delta:+d}", data + b"\r\n", _APPEND)

    def count(pairs: int, delta: int) -> MalformedReply:
        body = b"".join(b"$3\r\n%d-0\r\n$1\r\nr\r\n" % (i + 1) for i in range(pairs))
        return _refused(f"array length {delta:+d}", b"*%d\r\n" % (2 * pairs + delta) + body, _READ)

    deltas = st.sampled_from((-1, 1))
    return st.one_of(
        st.builds(record, bodies, deltas),
        st.builds(stamp, st.integers(10, 10**12), deltas),
        st.builds(count, st.integers(1, 3), deltas),
    )


def _reply_limits(lim: s3p.Limits) -> st.SearchStrategy[MalformedReply]:
    """Lengths at and just over every bound the client keeps, from the header alone.

    Besides ``limits``, the codec's fixed bounds: a ``$``/``*`` header line of 21 bytes (any
    u64), a timestamp of 64 bytes, a Simple String or Error line of 4096 bytes.
    """
    stamp = b"*2\r\n$3\r\n1-0\r\n"
    text = b"-ERR_BAD_FORMAT "
    cases = [
        _refused("timestamp length over the limit (header only)", b"$65\r\n", _APPEND),
        _refused("timestamp length at the limit, then end", b"$64\r\n", _APPEND, half_close=True),
        _refused("READ timestamp length over the limit (header only)", b"*2\r\n$65\r\n", _READ),
        _refused(
            "record length over the limit (header only)",
            stamp + b"$%d\r\n" % (lim.max_record_size + 1),
            _READ,
            LIMITS,
        ),
        _refused(
            "record length at the limit, then end",
            stamp + b"$%d\r\n" % lim.max_record_size,
            _READ,
            half_close=True,
        ),
        _refused(
            "more records than the client's max COUNT (header only)",
            b"*%d\r\n" % (2 * lim.max_count + 2),
            _READ,
        ),
        _refused(
            "records at the client's max COUNT, then end",
            b"*%d\r\n" % (2 * lim.max_count),
            _READ,
            half_close=True,
        ),
        _refused("header line over 21 bytes (no CRLF yet)", b"$" + b"0" * 21, _APPEND),
        _refused("bulk length far over every limit", b"$99999999999999999999\r\n", _APPEND),
        _refused(
            "record length far over every limit",
            stamp + b"$99999999999999999999\r\n",
            _READ,
            LIMITS,
        ),
        _refused("array length far over every limit", b"*99999999999999999998\r\n", _READ),
        _refused("Error line over 4096 bytes (no CRLF yet)", text + b"x" * (4097 - 16), _READ),
        _refused(
            "Error line at 4096 bytes, then end", text + b"x" * (4096 - 16), _READ, half_close=True
        ),
    ]

    def over_count(count: int) -> MalformedReply:
        data = b"*%d\r\n" % (2 * count + 2)
        return _refused("more records than COUNT (header only)", data, (s3p.Read(b"s", count),))

    def at_count(count: int) -> MalformedReply:
        pending = (s3p.Read(b"s", count),)
        return _refused(
            "records at COUNT, then end", b"*%d\r\n" % (2 * count), pending, half_close=True
        )

    counts = st.integers(1, min(lim.max_count, 50))
    return st.one_of(st.sampled_from(cases), counts.map(over_count), counts.map(at_count))


def _reply_wrong_types(v020: bool = False) -> st.SearchStrategy[MalformedReply]:
    """A reply of the wrong RESP type for the request it answers, or no S3P type at all."""
    bound = s3p.Timestamp(1, 0)
    trim = (s3p.Trim(b"s", min_id=bound) if v020 else s3p.Trim(b"s", bound),)
    delete = (s3p.Delete(b"s"),)
    cases: list[tuple[str, bytes, tuple[s3p.Request, ...]]] = [
        ("READ answered by +OK", b"+OK\r\n", _READ),
        ("READ answered by a Bulk String", b"$3\r\n1-0\r\n", _READ),
        ("READ answered by a RESP null array", b"*-1\r\n", _READ),
        ("READ answered by an Integer", b":0\r\n", _READ),
        ("Simple Strings in a READ reply", b"*2\r\n+1-0\r\n+r\r\n", _READ),
        ("APPEND answered by +OK", b"+OK\r\n", _APPEND),
        ("APPEND answered by an Array", b"*0\r\n", _APPEND),
        ("APPEND answered by a RESP null bulk", b"$-1\r\n", _APPEND),
        ("APPEND answered by an Integer", b":1\r\n", _APPEND),
        ("APPEND timestamp of 0 bytes", b"$0\r\n\r\n", _APPEND),
        ("APPEND timestamp without a dash", b"$3\r\n1_0\r\n", _APPEND),
        ("APPEND timestamp over 64 bits", b"$22\r\n18446744073709551616-0\r\n", _APPEND),
        ("APPEND timestamp signed", b"$4\r\n-1-0\r\n", _APPEND),
        ("CREATE answered by a Bulk String", b"$3\r\n1-0\r\n", _CREATE),
        ("CREATE answered by an Array", b"*0\r\n", _CREATE),
        ("CREATE answered by +QUEUED", b"+QUEUED\r\n", _CREATE),
        ("TRIM answered by lower-case +ok", b"+ok\r\n", trim),
        ("DELETE answered by an Array", b"*0\r\n", delete),
        ("Error with an unknown code", b"-ERR_NOPE no\r\n", _READ),
        ("Error code in lower case", b"-err_bad_format no\r\n", _CREATE),
        ("unknown type byte", b"!1\r\n", _READ),
        ("LF-only line separator", b"+OK\n+OK\r\n", _CREATE),
        ("CR-only line separator", b"+OK\r+OK\r\n", _CREATE),
        ("Bulk String payload without CRLF", b"$3\r\n1-0xx", _APPEND),
    ]
    return st.sampled_from([_refused(label, data, pending) for label, data, pending in cases])


def _reply_bad_text() -> st.SearchStrategy[MalformedReply]:
    """Simple Strings and Errors hold printable ASCII only: UTF-8 and controls are refused."""
    cases: list[tuple[str, bytes, tuple[s3p.Request, ...]]] = [
        ("invalid UTF-8 in a Simple String", b"+O\xffK\r\n", _CREATE),
        ("UTF-8 in an Error message", b"-ERR_LIMITS caf\xc3\xa9\r\n", _READ),
        ("NUL in an Error message", b"-ERR_LIMITS a\x00b\r\n", _APPEND),
        ("modified UTF-8 NUL in a Simple String", b"+O\xc0\x80K\r\n", _CREATE),
    ]
    return st.sampled_from([_refused(label, data, pending) for label, data, pending in cases])


def _reply_records(v020: bool = False) -> st.SearchStrategy[MalformedReply]:
    """READ replies whose pairs repeat, go back, miss a part or nest."""
    after = (s3p.Read(b"s", min_timestamp=s3p.Timestamp(5, 0)),)
    if v020:
        after = (s3p.Read(b"s", min_id=s3p.Timestamp(5, 0)),)

    def pairs(*stamps: bytes) -> bytes:
        body = b"".join(b"$%d\r\n%s\r\n$1\r\nr\r\n" % (len(t), t) for t in stamps)
        return b"*%d\r\n%s" % (2 * len(stamps), body)

    cases: list[tuple[str, bytes, tuple[s3p.Request, ...]]] = [
        ("repeated timestamp", pairs(b"1-0", b"1-0"), _READ),
        ("timestamps going back", pairs(b"2-0", b"1-9"), _READ),
        ("timestamp before MIN_TIMESTAMP", pairs(b"4-99"), after),
        ("record of 0 bytes", b"*2\r\n$3\r\n1-0\r\n$0\r\n\r\n", _READ),
        ("timestamp without its record", b"*1\r\n$3\r\n1-0\r\n", _READ),
        ("record where the timestamp goes", b"*2\r\n$1\r\nr\r\n$1\r\nr\r\n", _READ),
        ("Array nested in a READ reply", b"*2\r\n*2\r\n$3\r\n1-0\r\n$1\r\nr\r\n*0\r\n", _READ),
        ("Error nested in a READ reply", b"*2\r\n$3\r\n1-0\r\n-ERR_LIMITS x\r\n", _READ),
    ]
    if not v020:  # v0.2.0's MIN_ID (default 0-0) is inclusive: these are valid there
        cases += [
            ("timestamp 0-0 (not after the default MIN_TIMESTAMP)", pairs(b"0-0"), _READ),
            ("timestamp equal to MIN_TIMESTAMP", pairs(b"5-0"), after),
        ]
    return st.sampled_from([_refused(label, data, pending) for label, data, pending in cases])


def _reply_orders(lim: s3p.Limits) -> st.SearchStrategy[MalformedReply]:
    """Valid replies in illegal orders: none asked for, one too many, answers swapped."""
    read_then_create = (s3p.Read(b"s"), s3p.Create(b"s"))
    append_then_read = (s3p.Append(b"s", (b"r",)), s3p.Read(b"s"))

    def unasked(reply: s3p.Reply) -> MalformedReply:
        return _refused("a reply with no request pending", _served(request_for(reply), reply), ())

    def extra(reply: s3p.Reply, other: s3p.Reply) -> MalformedReply:
        data = _served(request_for(reply), reply) + _served(request_for(other), other)
        return _refused("one reply too many", data, (request_for(reply),))

    valid = replies(lim).filter(lambda reply: not isinstance(reply, s3p.ErrorReply))
    return st.one_of(
        valid.map(unasked),
        st.builds(extra, valid, replies(lim)),
        st.just(_refused("replies swapped (+OK for READ)", b"+OK\r\n*0\r\n", read_then_create)),
        st.just(
            _refused("replies swapped (Array for APPEND)", b"*0\r\n$3\r\n1-0\r\n", append_then_read)
        ),
    )


def _reply_truncated(lim: s3p.Limits) -> st.SearchStrategy[MalformedReply]:
    """A valid reply cut at a field boundary (or inside a header), then end of stream."""

    def build(pair: tuple[s3p.Reply, bytes], data: st.DataObject) -> MalformedReply:
        reply, wire = pair
        boundaries = [i + 2 for i in range(len(wire) - 2) if wire[i : i + 2] == b"\r\n"][:-1]
        cut = data.draw(st.sampled_from([1, *boundaries]) | st.integers(1, len(wire) - 1))
        pending = (request_for(reply),)
        return _refused("reply cut by end of stream", wire[:cut], pending, half_close=True)

    return st.builds(build, reply_wire(lim), st.data())


def malformed_replies(
    limits: s3p.Limits | None = None, version: str = "0.1.0"
) -> st.SearchStrategy[MalformedReply]:
    """Server bytes a strict S3P client refuses, each with the ``ErrorCode`` it raises.

    ``pending`` holds ``s3p.Request`` events, to send (pipelined, in order) before ``data``
    arrives. Every case is fatal: a client cannot pair later replies with their requests once
    one is broken. Limits are the client's (``s3p.Limits``; COUNT bounds a READ reply).
    """
    lim = limits or s3p.Limits()
    v020 = s3p.Version(version) is s3p.Version.V0_2_0
    return st.one_of(
        _reply_off_by_one(lim),
        _reply_limits(lim),
        _reply_wrong_types(v020),
        _reply_bad_text(),
        _reply_records(v020),
        _reply_orders(lim),
        _reply_truncated(lim),
    )
