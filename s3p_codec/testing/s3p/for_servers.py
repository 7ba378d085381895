"""The server direction: valid S3P commands, their bytes, and malformed bytes a server refuses.

Every malformed case is fatal and must get an Error reply: "After sending any Error reply,
servers MUST close the connection immediately" and, in v0.1.0, "all errors result in
connection closure"; in v0.2.0 the codes of malformed commands (``ERR_BAD_FORMAT``,
``ERR_LIMITS``) are the unrecoverable ones. The one exception is a command cut short by the end
of the stream (``half_close``): the server closes, and no reply is owed to a client that
stopped sending.

Every strategy takes ``version`` (``"0.1.0"`` default, or ``"0.2.0"``): v0.2.0 commands carry
``ID``/``MIN_ID``, a stream name length out of range, ``COUNT 0`` and negative COUNT/BLOCK are
``ERR_LIMITS`` there, and a 2-element DELETE is malformed.
"""

from __future__ import annotations

from hypothesis import strategies as st

from s3p_codec import Role, s3p
from s3p_codec.testing._strategies import Malformed, Valid
from s3p_codec.testing.s3p._wire import BAD, LIMITS, U64, timestamps


def _bulk(value: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(value), value)


def _array(*items: bytes) -> bytes:
    return b"*%d\r\n%s" % (len(items), b"".join(items))


def _command(name: bytes, stream: bytes, *options: bytes, records: tuple[bytes, ...] = ()) -> bytes:
    parts = [_bulk(name), _bulk(stream), _array(*(_bulk(o) for o in options))]
    if records:
        parts.append(_array(*(_bulk(r) for r in records)))
    return _array(*parts)


def _v020(version: str) -> bool:
    """True for v0.2.0; ValueError for a version S3P does not have."""
    return s3p.Version(version) is s3p.Version.V0_2_0


def request_rules(
    limits: s3p.Limits | None = None, version: str = "0.1.0"
) -> dict[str, st.SearchStrategy[s3p.Request]]:
    """What ``requests()`` draws from, by type name: each type is a rule of the live fuzzer."""
    lim = limits or s3p.Limits()
    names = st.binary(min_size=1, max_size=min(lim.max_stream_name, 24))
    records = st.lists(
        st.binary(min_size=1, max_size=min(lim.max_record_size, 40)),
        min_size=1,
        max_size=min(lim.max_records_per_append, 5),
    ).map(tuple)
    if _v020(version):
        return {
            "Create": st.builds(s3p.Create, names),
            "Append": st.builds(
                s3p.Append, names, records, st.none(), st.none() | st.integers(0, U64)
            ),
            "Read": st.builds(
                s3p.Read,
                names,
                st.none() | st.integers(1, lim.max_count),
                st.none() | st.integers(0, lim.max_block_ms),
                st.none(),
                st.none() | timestamps(),
            ),
            "Trim": st.builds(s3p.Trim, names, st.none(), timestamps()),
            "Delete": st.builds(s3p.Delete, names),
        }
    return {
        "Create": st.builds(s3p.Create, names, st.none() | st.sampled_from(s3p.TimestampStrategy)),
        "Append": st.builds(s3p.Append, names, records, st.none() | timestamps()),
        "Read": st.builds(
            s3p.Read,
            names,
            st.none() | st.integers(1, lim.max_count),
            st.none() | st.integers(0, lim.max_block_ms),
            st.none() | timestamps(),
        ),
        "Trim": st.builds(s3p.Trim, names, timestamps()),
        "Delete": st.builds(s3p.Delete, names),
    }


def requests(
    limits: s3p.Limits | None = None, version: str = "0.1.0"
) -> st.SearchStrategy[s3p.Request]:
    """Every command type of ``version``, within ``limits`` (default ``s3p.Limits()``)."""
    return st.one_of(*request_rules(limits, version).values())


def _send(request: s3p.Request, version: str = "0.1.0") -> bytes:
    return s3p.Connection(Role.CLIENT, version=version).send(request)


def request_wire(
    limits: s3p.Limits | None = None, version: str = "0.1.0"
) -> st.SearchStrategy[tuple[s3p.Request, bytes]]:
    """``(command, its exact wire bytes)`` as a client-role codec of ``version`` writes them."""
    return requests(limits, version).map(lambda r: (r, _send(r, version)))


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


def _limits_cases(lim: s3p.Limits, v020: bool = False) -> st.SearchStrategy[Malformed]:
    over_name = b"n" * (lim.max_stream_name + 1)
    name_code = LIMITS if v020 else BAD  # v0.2.0: name length out of range is ERR_LIMITS
    head = _bulk(b"APPEND") + _bulk(b"s") + _array()
    cases = [
        Malformed("stream name over the limit", _command(b"READ", over_name), name_code),
        Malformed(
            "stream name of 0 bytes",
            _array(_bulk(b"READ"), b"$0\r\n\r\n", _array()),
            name_code,
        ),
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
        Malformed("COUNT 0", _command(b"READ", b"s", b"COUNT", b"0"), name_code),
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
            name_code,  # it is the stream name's length
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


def _bad_numbers(v020: bool = False) -> st.SearchStrategy[Malformed]:
    def build(where: str, text: bytes) -> Malformed:
        if v020 and where in ("COUNT", "BLOCK") and text == b"-1":
            # v0.2.0: "COUNT < 1 and BLOCK < 0 are ERR_LIMITS"; -1 is such a number.
            return Malformed(f"{where} negative", _command(b"READ", b"s", where.encode(), text),
                             LIMITS)  # fmt: skip
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


def _top_count_minus_one(version: str = "0.1.0") -> st.SearchStrategy[Malformed]:
    """The top-level array declares one element fewer: the command loses its last part."""

    def build(request: s3p.Request) -> Malformed:
        wire = _send(request, version)
        count, _, rest = wire[1:].partition(b"\r\n")
        return Malformed("array count -1", b"*%d\r\n%s" % (int(count) - 1, rest), BAD)

    # v0.1.0 accepts a "DELETE" of two elements (the ABNF's form), so it is left out here
    # (v0.2.0 refuses it: see ``_schema_v020``).
    return requests(version=version).filter(lambda r: not isinstance(r, s3p.Delete)).map(build)


def _truncated(version: str = "0.1.0") -> st.SearchStrategy[Malformed]:
    """A command cut at a field boundary, then end of stream: the server closes (no reply owed)."""

    def build(request: s3p.Request, data: st.DataObject) -> Malformed:
        wire = _send(request, version)
        boundaries = [i + 2 for i in range(len(wire) - 2) if wire[i : i + 2] == b"\r\n"][:-1]
        cut = data.draw(st.sampled_from([1, *boundaries]))
        return Malformed(
            "command cut by end of stream", wire[:cut], BAD, reply=False, half_close=True
        )

    return st.builds(build, requests(version=version), st.data())


def _schema_v020() -> st.SearchStrategy[Malformed]:
    """v0.2.0's schema: ``ID`` is a bare u64 ``<ms>``, ``MIN_ID`` is mandatory for TRIM, the
    v0.1.0 options are unknown, and DELETE is an array of 3."""
    cases = [
        Malformed("unknown command", _command(b"FROB", b"s"), BAD),
        Malformed("unknown option key", _command(b"READ", b"s", b"LIMIT", b"1"), BAD),
        Malformed("odd number of option elements", _command(b"READ", b"s", b"COUNT"), BAD),
        Malformed("TRIM without MIN_ID", _command(b"TRIM", b"s"), BAD),
        Malformed("TRIM with UNTIL (v0.1.0)", _command(b"TRIM", b"s", b"UNTIL", b"1-0"), BAD),
        Malformed(
            "READ with MIN_TIMESTAMP (v0.1.0)",
            _command(b"READ", b"s", b"MIN_TIMESTAMP", b"1-0"),
            BAD,
        ),
        Malformed(
            "CREATE with TIMESTAMP_STRATEGY (v0.1.0)",
            _command(b"CREATE", b"s", b"TIMESTAMP_STRATEGY", b"server"),
            BAD,
        ),
        Malformed(
            "APPEND with TIMESTAMP (v0.1.0)",
            _command(b"APPEND", b"s", b"TIMESTAMP", b"1-0", records=(b"r",)),
            BAD,
        ),
        Malformed(
            "ID with a seq part", _command(b"APPEND", b"s", b"ID", b"1-0", records=(b"r",)), BAD
        ),
        Malformed(
            "ID over 64 bits",
            _command(b"APPEND", b"s", b"ID", b"%d" % (U64 + 1), records=(b"r",)),
            BAD,
        ),
        Malformed("MIN_ID without seq", _command(b"READ", b"s", b"MIN_ID", b"1-"), BAD),
        Malformed("DELETE of 2 elements", _array(_bulk(b"DELETE"), _bulk(b"s")), BAD),
        Malformed(
            "APPEND with no records", _array(_bulk(b"APPEND"), _bulk(b"s"), _array(), _array()), BAD
        ),
        Malformed(
            "zero-length record",
            _array(_bulk(b"APPEND"), _bulk(b"s"), _array(), b"*1\r\n$0\r\n\r\n"),
            BAD,
        ),
    ]
    return st.sampled_from(cases)


def malformed_rules(
    limits: s3p.Limits | None = None, version: str = "0.1.0"
) -> dict[str, st.SearchStrategy[Malformed]]:
    """The rule families of ``malformed()`` by name: the live fuzzer runs each once before
    repeating any."""
    lim = limits or s3p.Limits()
    v020 = _v020(version)
    names = st.binary(min_size=1, max_size=min(lim.max_stream_name, 16))
    return {
        "bulk length off by one": _off_by_one(names),
        "limits": _limits_cases(lim, v020),
        "aggregate size over the limit": st.builds(_aggregate_over, st.just(lim)),
        "numbers that are not decimal": _bad_numbers(v020),
        "wrong RESP types": _wrong_types(),
        "command schema": _schema_v020() if v020 else _schema(),
        "array count -1": _top_count_minus_one(version),
        "command cut by end of stream": _truncated(version),
    }


def malformed(
    limits: s3p.Limits | None = None, version: str = "0.1.0"
) -> st.SearchStrategy[Malformed]:
    """Malformed commands aimed at the framing and schema, each with the code it must get."""
    return st.one_of(*malformed_rules(limits, version).values())


def edge_cases(
    limits: s3p.Limits | None = None, version: str = "0.1.0"
) -> st.SearchStrategy[Valid]:
    """Requests at the edges the spec allows, which a strict server must not refuse.

    A name and a COUNT exactly at their limits, a BLOCK of 0, a repeated option key ("the
    last occurrence's value MUST be used"), lower-case command and option names ("Servers MUST
    match command names and option keys case-insensitively"), a 2-element DELETE (accepted by
    this project's decision; v0.2.0 has an ``ID`` of 0 and a ``MIN_ID`` of ``0-0`` instead).
    """
    lim = limits or s3p.Limits()
    v020 = _v020(version)
    forbidden = (BAD, LIMITS)
    cases = [
        ("stream name at the limit", _command(b"READ", b"n" * lim.max_stream_name)),
        ("COUNT at the limit", _command(b"READ", b"fuzz", b"COUNT", b"%d" % lim.max_count)),
        ("BLOCK 0", _command(b"READ", b"fuzz", b"BLOCK", b"0")),
        ("repeated option key", _command(b"READ", b"fuzz", b"COUNT", b"0", b"COUNT", b"1")),
        ("lower-case command and option", _command(b"read", b"fuzz", b"count", b"1")),
    ]
    if v020:
        cases.append(("MIN_ID 0-0", _command(b"READ", b"fuzz", b"MIN_ID", b"0-0")))
    else:
        cases.append(("DELETE of 2 elements", _array(_bulk(b"DELETE"), _bulk(b"fuzz-gone"))))
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
