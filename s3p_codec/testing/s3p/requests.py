"""Hypothesis strategies for S3P v0.1.0 peers: valid commands, their bytes, malformed bytes.

Every malformed case is fatal and must get an Error reply: "After sending any Error reply,
servers MUST close the connection immediately" and, in v0.1.0, "all errors result in
connection closure". The one exception is a command cut short by the end of the stream
(``half_close``): the server closes, and no reply is owed to a client that stopped sending.

Cases aimed at limits are built from the server's ``s3p.Limits`` (pass the limits the server
under test was started with); when a header alone breaks a limit, the payload
is left out, so a server that waits for it before answering hangs and is caught.

For clients: ``replies()`` and ``reply_wire()`` (valid replies and the bytes our server-role
codec writes for them) and ``malformed_replies()`` (``MalformedReply`` cases a strict client
refuses: lengths off by one, at and over the client's bounds, wrong RESP types for the request
pending, non-ASCII text, repeated or missing pairs, nesting, replies out of order, truncation).
"""

from __future__ import annotations

import attrs
from hypothesis import strategies as st

from s3p_codec import Role, s3p
from s3p_codec.testing.strategies import Malformed, MalformedReply, Valid
from s3p_codec.testing.target import CodecReader

__all__ = [
    "Target",
    "edge_cases",
    "malformed",
    "malformed_replies",
    "replies",
    "reply_wire",
    "request_for",
    "request_wire",
    "requests_for",
    "requests",
]

BAD = s3p.ErrorCode.BAD_FORMAT
LIMITS = s3p.ErrorCode.LIMITS
U64 = (1 << 64) - 1


def _bulk(value: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(value), value)


def _array(*items: bytes) -> bytes:
    return b"*%d\r\n%s" % (len(items), b"".join(items))


def _command(name: bytes, stream: bytes, *options: bytes, records: tuple[bytes, ...] = ()) -> bytes:
    parts = [_bulk(name), _bulk(stream), _array(*(_bulk(o) for o in options))]
    if records:
        parts.append(_array(*(_bulk(r) for r in records)))
    return _array(*parts)


# --- valid -------------------------------------------------------------------------------------


def timestamps() -> st.SearchStrategy[s3p.Timestamp]:
    """Any ``<ms>-<seq>`` with both parts unsigned 64-bit."""
    return st.builds(s3p.Timestamp, st.integers(0, U64), st.integers(0, U64))


def requests(limits: s3p.Limits | None = None) -> st.SearchStrategy[s3p.Request]:
    """Every command type, within ``limits`` (default ``s3p.Limits()``)."""
    lim = limits or s3p.Limits()
    names = st.binary(min_size=1, max_size=min(lim.max_stream_name, 24))
    records = st.lists(
        st.binary(min_size=1, max_size=min(lim.max_record_size, 32)),
        min_size=1,
        max_size=min(lim.max_records_per_append, 4),
    ).map(tuple)
    return st.one_of(
        st.builds(s3p.Create, names, st.none() | st.sampled_from(s3p.TimestampStrategy)),
        st.builds(s3p.Append, names, records, st.none() | timestamps()),
        st.builds(
            s3p.Read,
            names,
            st.none() | st.integers(1, lim.max_count),
            st.none() | st.integers(0, lim.max_block_ms),
            st.none() | timestamps(),
        ),
        st.builds(s3p.Trim, names, timestamps()),
        st.builds(s3p.Delete, names),
    )


def request_wire(limits: s3p.Limits | None = None) -> st.SearchStrategy[tuple[s3p.Request, bytes]]:
    """``(command, its exact wire bytes)`` as a client-role codec writes them."""
    return requests(limits).map(lambda r: (r, s3p.Connection(Role.CLIENT).send(r)))


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


def replies(limits: s3p.Limits | None = None) -> st.SearchStrategy[s3p.Reply]:
    """Every reply type (for fuzzing clients), READ replies within ``limits``."""
    return st.one_of(
        st.just(s3p.Ok()),
        st.builds(s3p.AppendReply, timestamps()),
        _read_replies(limits or s3p.Limits()),
        st.builds(
            s3p.ErrorReply,
            st.sampled_from(s3p.ErrorCode),
            st.text("abcdefghijklmnopqrstuvwxyz ", min_size=1, max_size=20),
        ),
    )


# --- malformed ---------------------------------------------------------------------------------


def _numbers_that_are_not() -> st.SearchStrategy[bytes]:
    """Not "ASCII decimal digits only": signs, spaces, empty, hex, non-ASCII digits."""
    return st.sampled_from(
        [b"", b"+1", b"-1", b" 1", b"1 ", b"0x1", b"1a", b"1.0", b"\xd9\xa1", b"1e3"]
    )


def _off_by_one(names: st.SearchStrategy[bytes]) -> st.SearchStrategy[Malformed]:
    def build(name: bytes, delta: int) -> Malformed:
        declared = len(name) + delta
        wire = _array(_bulk(b"READ"), b"$%d\r\n%s\r\n" % (declared, name), _array())
        return Malformed(f"bulk length {delta:+d}", wire, BAD)

    return st.builds(build, names.filter(lambda n: len(n) >= 2), st.sampled_from((-1, 1)))


def _limits_cases(lim: s3p.Limits) -> st.SearchStrategy[Malformed]:
    over_name = b"n" * (lim.max_stream_name + 1)
    head = _bulk(b"APPEND") + _bulk(b"s") + _array()
    cases = [
        Malformed("stream name over the limit", _command(b"READ", over_name), BAD),
        Malformed("stream name of 0 bytes", _array(_bulk(b"READ"), b"$0\r\n\r\n", _array()), BAD),
        Malformed(
            "record size over the limit (header only)",
            b"*4\r\n" + head + b"*1\r\n$%d\r\n" % (lim.max_record_size + 1),
            LIMITS,
        ),
        Malformed(
            "record count over the limit (header only)",
            b"*4\r\n" + head + b"*%d\r\n" % (lim.max_records_per_append + 1),
            LIMITS,
        ),
        Malformed("COUNT 0", _command(b"READ", b"s", b"COUNT", b"0"), BAD),
        Malformed(
            "COUNT over the limit",
            _command(b"READ", b"s", b"COUNT", b"%d" % (lim.max_count + 1)),
            LIMITS,
        ),
        Malformed(
            "BLOCK over the limit",
            _command(b"READ", b"s", b"BLOCK", b"%d" % (lim.max_block_ms + 1)),
            LIMITS,
        ),
        Malformed(
            "bulk length far over every limit (header only)",
            b"*3\r\n$4\r\nREAD\r\n$99999999999999999999\r\n",
            BAD,
        ),
        Malformed("array count far over every limit", b"*99999999999999999999\r\n", BAD),
    ]
    return st.sampled_from(cases)


def _aggregate_over(lim: s3p.Limits) -> Malformed:
    """Records filling the aggregate limit exactly, then one more record header: ERR_LIMITS
    from that header alone (its payload is withheld)."""
    size = lim.max_record_size
    full, rest = divmod(lim.max_append_size, size)
    records = [size] * full + ([rest] if rest else [])
    count = len(records) + 1
    if count > lim.max_records_per_append:
        return Malformed("record count over the limit (header only)",
                         b"*4\r\n" + _bulk(b"APPEND") + _bulk(b"s") + _array()
                         + b"*%d\r\n" % (lim.max_records_per_append + 1), LIMITS)  # fmt: skip
    body = b"".join(b"$%d\r\n%s\r\n" % (n, b"r" * n) for n in records)
    head = b"*4\r\n" + _bulk(b"APPEND") + _bulk(b"s") + _array() + b"*%d\r\n" % count
    return Malformed(
        "aggregate size over the limit (last header only)", head + body + b"$1\r\n", LIMITS
    )


def _bad_numbers() -> st.SearchStrategy[Malformed]:
    def build(where: str, text: bytes) -> Malformed:
        if where == "array":
            return Malformed("array count not decimal", b"*%s\r\n" % text, BAD)
        if where == "bulk":
            return Malformed("bulk length not decimal", b"*3\r\n$%s\r\n" % text, BAD)
        return Malformed(
            f"{where} value not decimal", _command(b"READ", b"s", where.encode(), text or b"x"), BAD
        )

    return st.builds(
        build, st.sampled_from(("array", "bulk", "COUNT", "BLOCK")), _numbers_that_are_not()
    )


def _wrong_types() -> st.SearchStrategy[Malformed]:
    cases = [
        Malformed("top level is a Bulk String", _bulk(b"READ"), BAD),
        Malformed("top level is a Simple String", b"+READ\r\n", BAD),
        Malformed("top level is an Integer", b":1\r\n", BAD),
        Malformed("top level is an Error", b"-ERR x\r\n", BAD),
        Malformed("RESP null array", b"*-1\r\n", BAD),
        Malformed("RESP null bulk", b"*3\r\n$-1\r\n", BAD),
        Malformed("unknown type byte", b"!3\r\n", BAD),
        Malformed("Integer where a Bulk String goes", b"*3\r\n$4\r\nREAD\r\n:1\r\n*0\r\n", BAD),
        Malformed(
            "Array where the stream name goes", b"*3\r\n$4\r\nREAD\r\n*1\r\n$1\r\ns\r\n*0\r\n", BAD
        ),
        Malformed(
            "Bulk String where the options Array goes",
            _array(_bulk(b"READ"), _bulk(b"s"), _bulk(b"COUNT")),
            BAD,
        ),
        Malformed(
            "mixed types in the options array",
            _array(_bulk(b"READ"), _bulk(b"s"), _array(_bulk(b"COUNT"), _array(_bulk(b"1")))),
            BAD,
        ),
        Malformed(
            "arrays nested in the records array",
            _array(_bulk(b"APPEND"), _bulk(b"s"), _array(), _array(*([_array(_bulk(b"r"))] * 3))),
            BAD,
        ),
        Malformed("LF-only line separator", b"*3\n$4\r\nREAD\r\n$1\r\ns\r\n*0\r\n", BAD),
        Malformed("CR-only line separator", b"*3\r$4\r\nREAD\r\n$1\r\ns\r\n*0\r\n", BAD),
    ]
    return st.sampled_from(cases)


def _schema() -> st.SearchStrategy[Malformed]:
    ts = b"1-0"
    cases = [
        Malformed("unknown command", _command(b"FROB", b"s"), BAD),
        Malformed("unknown option key", _command(b"READ", b"s", b"LIMIT", b"1"), BAD),
        Malformed("odd number of option elements", _command(b"READ", b"s", b"COUNT"), BAD),
        Malformed("TRIM without UNTIL", _command(b"TRIM", b"s"), BAD),
        Malformed(
            "APPEND with no records", _array(_bulk(b"APPEND"), _bulk(b"s"), _array(), _array()), BAD
        ),
        Malformed("APPEND without its records array", _command(b"APPEND", b"s"), BAD),
        Malformed("READ with a 4th element", _command(b"READ", b"s", records=(b"x",)), BAD),
        Malformed("command with one element", _array(_bulk(b"READ")), BAD),
        Malformed("empty command array", b"*0\r\n", BAD),
        Malformed(
            "bad TIMESTAMP_STRATEGY", _command(b"CREATE", b"s", b"TIMESTAMP_STRATEGY", b"both"), BAD
        ),
        Malformed("timestamp without seq", _command(b"TRIM", b"s", b"UNTIL", b"1-"), BAD),
        Malformed("timestamp without dash", _command(b"TRIM", b"s", b"UNTIL", b"12"), BAD),
        Malformed("signed timestamp", _command(b"TRIM", b"s", b"UNTIL", b"-1-0"), BAD),
        Malformed(
            "timestamp over 64 bits", _command(b"TRIM", b"s", b"UNTIL", b"%d-0" % (U64 + 1)), BAD
        ),
        Malformed(
            "MIN_TIMESTAMP not a timestamp",
            _command(b"READ", b"s", b"MIN_TIMESTAMP", b"a-b"),
            BAD,
        ),
        Malformed("command name as UTF-8 lookalike", _command(b"RE\xc3\x85D", b"s"), BAD),
        Malformed(
            "zero-length record",
            _array(_bulk(b"APPEND"), _bulk(b"s"), _array(), b"*1\r\n$0\r\n\r\n"),
            BAD,
        ),
        Malformed(
            "TIMESTAMP option on APPEND is not a timestamp",
            _command(b"APPEND", b"s", b"TIMESTAMP", ts + b"x", records=(b"r",)),
            BAD,
        ),
    ]
    return st.sampled_from(cases)


def _top_count_minus_one() -> st.SearchStrategy[Malformed]:
    """The top-level array declares one element fewer: the command loses its last part."""

    def build(request: s3p.Request) -> Malformed:
        wire = s3p.Connection(Role.CLIENT).send(request)
        count, _, rest = wire[1:].partition(b"\r\n")
        return Malformed("array count -1", b"*%d\r\n%s" % (int(count) - 1, rest), BAD)

    # "DELETE" of two elements is accepted (the ABNF's form), so it is left out here.
    return requests().filter(lambda r: not isinstance(r, s3p.Delete)).map(build)


def _truncated() -> st.SearchStrategy[Malformed]:
    """A command cut at a field boundary, then end of stream: the server closes (no reply owed)."""

    def build(request: s3p.Request, data: st.DataObject) -> Malformed:
        wire = s3p.Connection(Role.CLIENT).send(request)
        boundaries = [i + 2 for i in range(len(wire) - 2) if wire[i : i + 2] == b"\r\n"][:-1]
        cut = data.draw(st.sampled_from([1, *boundaries]))
        return Malformed(
            "command cut by end of stream", wire[:cut], BAD, reply=False, half_close=True
        )

    return st.builds(build, requests(), st.data())


def malformed(limits: s3p.Limits | None = None) -> st.SearchStrategy[Malformed]:
    """Malformed commands aimed at the framing and schema, each with the code it must get."""
    lim = limits or s3p.Limits()
    names = st.binary(min_size=1, max_size=min(lim.max_stream_name, 16))
    return st.one_of(
        _off_by_one(names),
        _limits_cases(lim),
        st.builds(_aggregate_over, st.just(lim)),
        _bad_numbers(),
        _wrong_types(),
        _schema(),
        _top_count_minus_one(),
        _truncated(),
    )


def edge_cases(limits: s3p.Limits | None = None) -> st.SearchStrategy[Valid]:
    """Requests at the edges the spec allows, which a strict server must not refuse.

    A name and a COUNT exactly at their limits, a BLOCK of 0, a repeated option key ("the
    last occurrence's value MUST be used"), lower-case command and option names ("Servers MUST
    match command names and option keys case-insensitively"), a 2-element DELETE (accepted by
    this project's decision).
    """
    lim = limits or s3p.Limits()
    forbidden = (BAD, LIMITS)
    cases = [
        ("stream name at the limit", _command(b"READ", b"n" * lim.max_stream_name)),
        ("COUNT at the limit", _command(b"READ", b"fuzz", b"COUNT", b"%d" % lim.max_count)),
        ("BLOCK 0", _command(b"READ", b"fuzz", b"BLOCK", b"0")),
        ("repeated option key", _command(b"READ", b"fuzz", b"COUNT", b"0", b"COUNT", b"1")),
        ("lower-case command and option", _command(b"read", b"fuzz", b"count", b"1")),
        ("DELETE of 2 elements", _array(_bulk(b"DELETE"), _bulk(b"fuzz-gone"))),
    ]
    events: dict[str, s3p.Request] = {
        "DELETE of 2 elements": s3p.Delete(b"fuzz-gone"),
        "stream name at the limit": s3p.Read(b"n" * lim.max_stream_name),
    }
    return st.sampled_from(
        [
            Valid(label, data, events.get(label, s3p.Read(b"fuzz")), forbidden)
            for label, data in cases
        ]
    )


# --- replies, for fuzzing clients ---------------------------------------------------------------


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


def _served(request: s3p.Request, reply: s3p.Reply) -> bytes:
    """The bytes our server-role codec writes for ``reply`` once it has read ``request``."""
    client = s3p.Connection(Role.CLIENT)
    server = s3p.Connection(Role.SERVER)
    server.receive_data(client.send(request))
    server.next_event()
    return server.send(reply)


def reply_wire(limits: s3p.Limits | None = None) -> st.SearchStrategy[tuple[s3p.Reply, bytes]]:
    """``(reply, its exact wire bytes)`` as our server-role codec writes it, in answer to
    ``request_for(reply)``."""
    return replies(limits).map(lambda reply: (reply, _served(request_for(reply), reply)))


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


def _reply_wrong_types() -> st.SearchStrategy[MalformedReply]:
    """A reply of the wrong RESP type for the request it answers, or no S3P type at all."""
    trim = (s3p.Trim(b"s", s3p.Timestamp(1, 0)),)
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


def _reply_records() -> st.SearchStrategy[MalformedReply]:
    """READ replies whose pairs repeat, go back, miss a part or nest."""
    after = (s3p.Read(b"s", min_timestamp=s3p.Timestamp(5, 0)),)

    def pairs(*stamps: bytes) -> bytes:
        body = b"".join(b"$%d\r\n%s\r\n$1\r\nr\r\n" % (len(t), t) for t in stamps)
        return b"*%d\r\n%s" % (2 * len(stamps), body)

    cases: list[tuple[str, bytes, tuple[s3p.Request, ...]]] = [
        ("repeated timestamp", pairs(b"1-0", b"1-0"), _READ),
        ("timestamps going back", pairs(b"2-0", b"1-9"), _READ),
        ("timestamp 0-0 (not after the default MIN_TIMESTAMP)", pairs(b"0-0"), _READ),
        ("timestamp equal to MIN_TIMESTAMP", pairs(b"5-0"), after),
        ("timestamp before MIN_TIMESTAMP", pairs(b"4-99"), after),
        ("record of 0 bytes", b"*2\r\n$3\r\n1-0\r\n$0\r\n\r\n", _READ),
        ("timestamp without its record", b"*1\r\n$3\r\n1-0\r\n", _READ),
        ("record where the timestamp goes", b"*2\r\n$1\r\nr\r\n$1\r\nr\r\n", _READ),
        ("Array nested in a READ reply", b"*2\r\n*2\r\n$3\r\n1-0\r\n$1\r\nr\r\n*0\r\n", _READ),
        ("Error nested in a READ reply", b"*2\r\n$3\r\n1-0\r\n-ERR_LIMITS x\r\n", _READ),
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


def malformed_replies(limits: s3p.Limits | None = None) -> st.SearchStrategy[MalformedReply]:
    """Server bytes a strict S3P client refuses, each with the ``ErrorCode`` it raises.

    ``pending`` holds ``s3p.Request`` events, to send (pipelined, in order) before ``data``
    arrives. Every case is fatal: a client cannot pair later replies with their requests once
    one is broken. Limits are the client's (``s3p.Limits``; COUNT bounds a READ reply).
    """
    lim = limits or s3p.Limits()
    return st.one_of(
        _reply_off_by_one(lim),
        _reply_limits(lim),
        _reply_wrong_types(),
        _reply_bad_text(),
        _reply_records(),
        _reply_orders(lim),
        _reply_truncated(lim),
    )


# --- live target -------------------------------------------------------------------------------


class _Reader(CodecReader):
    def __init__(self, sent: Malformed | Valid) -> None:
        conn = s3p.Connection(Role.CLIENT)
        request = sent.event if isinstance(sent, Valid) else s3p.Read(b"s")
        assert isinstance(request, s3p.Create | s3p.Append | s3p.Read | s3p.Trim | s3p.Delete)
        conn.send(request)
        super().__init__(conn)

    def code_of(self, event: object) -> str | None:
        return event.code if isinstance(event, s3p.ErrorReply) else None


def _no_block(request: s3p.Request) -> s3p.Request:
    """READs never block in live fuzzing (an empty stream would hold the answer back)."""
    if isinstance(request, s3p.Read) and request.block_ms:
        return attrs.evolve(request, block_ms=0)
    return request


class Target:
    """S3P as the live fuzzer drives it (give the limits of the server under test)."""

    name = "s3p"
    default_port = 7500

    def __init__(self, limits: s3p.Limits | None = None) -> None:
        self.limits = limits or s3p.Limits()

    def _valid(self, event: s3p.Request) -> Valid:
        return Valid(type(event).__name__, s3p.Connection(Role.CLIENT).send(event), event)

    def setup(self) -> list[Valid]:
        return [self._valid(s3p.Create(b"fuzz"))]

    def malformed(self) -> st.SearchStrategy[Malformed]:
        return malformed(self.limits)

    def valid(self) -> st.SearchStrategy[Valid]:
        plain = requests(self.limits).map(lambda r: self._valid(_no_block(r)))
        return st.one_of(plain, edge_cases(self.limits))

    def probe(self) -> Valid:
        return self._valid(s3p.Read(b"fuzz", count=1))

    def reader(self, sent: Malformed | Valid) -> _Reader:
        return _Reader(sent)

    def follow_up(self, sent: Malformed | Valid) -> Valid | None:
        return None
