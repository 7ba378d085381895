"""The server direction: S2S append inputs, their frames, and append sessions a server refuses.

Every malformed frame ends the session with a terminal frame carrying the case's ``code``; a
bad request head gets a plain HTTP error response; ``edge_cases`` holds the frames exactly at
every limit that a strict server must still accept.
"""

from __future__ import annotations

import attrs
from hypothesis import strategies as st

from s3p_codec import Role, s2s
from s3p_codec.testing._strategies import Malformed, Valid
from s3p_codec.testing.s2s._wire import (
    HEAD,
    U64,
    E,
    _bomb,
    _chunk,
    _encode,
    _frame,
    _gzip,
    _pad,
    _zstd,
    headers,
)


def append_records() -> st.SearchStrategy[s2s.AppendRecord]:
    """Strategy: an ``AppendRecord`` with a body of up to 300 bytes, up to three ``headers()``
    and an optional client timestamp (any u64)."""
    return st.builds(
        s2s.AppendRecord,
        st.binary(max_size=300),
        headers=st.lists(headers(), max_size=3).map(tuple),
        timestamp=st.none() | st.integers(0, U64),
    )


def append_inputs() -> st.SearchStrategy[s2s.AppendInput]:
    """AppendInput of 1-8 ``append_records()`` (the spec allows 1..1000 and 1 MiB), with an
    optional ``match_seq_num`` (any u64) and ``fencing_token``.

    Against a live stream those two conditions mostly fail (412): ``Target`` sends inputs
    without them, and with non-empty header names, as ``_live_inputs()`` draws them.
    """
    return st.builds(
        s2s.AppendInput,
        st.lists(append_records(), min_size=1, max_size=8).map(tuple),
        match_seq_num=st.none() | st.integers(0, U64),
        fencing_token=st.none() | st.text(max_size=20),
    )


def _live_inputs() -> st.SearchStrategy[s2s.AppendInput]:
    """``append_inputs()`` as the live target sends them: unconditional, header names
    non-empty."""

    def plain(event: s2s.AppendInput) -> s2s.AppendInput:
        records = tuple(
            attrs.evolve(record, headers=tuple(h for h in record.headers if h.name))
            for record in event.records
        )
        return s2s.AppendInput(records)

    return append_inputs().map(plain)


def requests() -> st.SearchStrategy[s2s.AppendInput]:
    """What a client sends in an append session."""
    return append_inputs()


def request_wire() -> st.SearchStrategy[tuple[s2s.AppendInput, bytes]]:
    """``(AppendInput, its exact frame)`` as a client-role session writes it."""

    def encode(event: s2s.AppendInput) -> tuple[s2s.AppendInput, bytes]:
        session = s2s.Connection(Role.CLIENT, s2s.Session.APPEND)
        return event, session.send(event)

    return append_inputs().map(encode)


def _case(label: str, body: bytes, code: E, *, end: bool = False) -> Malformed:
    data = HEAD + _chunk(body) + (b"0\r\n\r\n" if end else b"")
    return Malformed(label, data, code.value, fatal=True, reply=True)


def _framing(lim: s2s.Limits) -> st.SearchStrategy[Malformed]:
    ack = s2s.Connection(Role.CLIENT, s2s.Session.APPEND).send(
        s2s.AppendInput((s2s.AppendRecord(b"hello"),))
    )
    return st.sampled_from(
        [
            _case("frame length 0", b"\0\0\0", E.BAD_FRAME),
            _case(
                "frame length over 2 MiB (header only)",
                (lim.max_frame_length + 1).to_bytes(3, "big"),
                E.BAD_FRAME,
            ),
            _case("frame length 2^24-1 (header only)", b"\xff\xff\xff", E.BAD_FRAME),
            _case("compression value 3", _frame(0x60, b"\x0a\x00"), E.BAD_FRAME),
            _case("body ends inside a frame", ack[:-1], E.BAD_FRAME, end=True),
            _case("body ends inside a frame header", ack[:2], E.BAD_FRAME, end=True),
            _case("zstd bomb", _frame(0x20, _bomb("zstd")), E.BAD_FRAME),
            _case("gzip bomb", _frame(0x40, _bomb("gzip")), E.BAD_FRAME),
            _case("corrupt zstd", _frame(0x20, b"\x28\xb5\x2f\xfd garbage"), E.BAD_FRAME),
            _case("corrupt gzip", _frame(0x40, b"\x1f\x8b garbage"), E.BAD_FRAME),
            _case("length -1 byte", (len(ack) - 4).to_bytes(3, "big") + ack[3:], E.BAD_PROTO),
        ]
    )


def _protobuf() -> st.SearchStrategy[Malformed]:
    cases = [
        ("truncated varint", b"\x10\xff"),
        ("length-delimited field past the end", b"\x0a\x10ab"),
        ("wire type 7", b"\x0f"),
        ("field number 0", b"\x02\x00"),
        ("record body past the end", b"\x0a\x04\x1a\x09ab"),
        ("varint of 11 bytes", b"\x10" + b"\xff" * 10 + b"\x01"),
        ("fencing token not UTF-8", b"\x0a\x02\x1a\x00\x1a\x01\xff"),
    ]
    return st.sampled_from(
        [_case(f"protobuf: {label}", _frame(0, p), E.BAD_PROTO) for label, p in cases]
    )


def _rules() -> st.SearchStrategy[Malformed]:
    none = b"\x10\x05"  # match_seq_num 5, no records
    many = b"\x0a\x00" * 1001
    return st.sampled_from(
        [
            _case("AppendInput with no records", _frame(0, none), E.INVALID),
            _case("AppendInput with 1001 records", _frame(0, many), E.INVALID),
        ]
    )


def _heads() -> st.SearchStrategy[Malformed]:
    def head(label: str, raw: bytes, code: E) -> Malformed:
        # No session opens; HTTP/1.1 lets the server close after an error response.
        return Malformed(label, raw, code.value, fatal=True, reply=True)

    return st.sampled_from(
        [
            head(
                "append session without s2s/proto",
                HEAD.replace(b"content-type: s2s/proto", b"content-type: text/plain"),
                E.BAD_HEADER,
            ),
            head(
                "Authorization that is not Bearer",
                HEAD.replace(b"Bearer fuzz", b"Basic eA=="),
                E.UNAUTHORIZED,
            ),
        ]
    )


_ONE = s2s.AppendInput((s2s.AppendRecord(b"edge"),))


def _metered(size: int) -> s2s.AppendInput:
    """One record of exactly ``size`` metered bytes ("8 + len(body)" for no headers)."""
    return s2s.AppendInput((s2s.AppendRecord(bytes(size - 8)),))


def _limits(lim: s2s.Limits) -> st.SearchStrategy[Malformed]:
    """Sizes one over each limit: the decompressed payload (2 MiB - 1), the metered bytes of a
    batch (1 MiB). The frame length and record count are in ``_framing`` and ``_rules``."""
    message = _encode(_ONE)[4:]
    over = _pad(message, lim.max_payload + 1)
    return st.sampled_from(
        [
            _case("zstd payload inflating one byte over the cap (size declared)",
                  _frame(0x20, _zstd(over)), E.BAD_FRAME),
            _case("zstd payload inflating one byte over the cap (no size declared)",
                  _frame(0x20, _zstd(over, declare=False)), E.BAD_FRAME),
            _case("gzip payload inflating one byte over the cap", _frame(0x40, _gzip(over)),
                  E.BAD_FRAME),
            _case("zstd payload of two frames inflating one byte over the cap together",
                  _frame(0x20, _zstd(over[: len(over) // 2]) + _zstd(over[len(over) // 2 :])),
                  E.BAD_FRAME),
            _case(f"AppendInput of {lim.max_append_bytes} + 1 metered bytes",
                  _frame(0, _encode_unchecked(_metered(lim.max_append_bytes + 1))), E.INVALID),
        ]
    )  # fmt: skip


def _encode_unchecked(event: s2s.AppendInput) -> bytes:
    """The protobuf of ``event`` even when it breaks the batch limits (a bigger client limit)."""
    big = s2s.Limits(max_append_bytes=1 << 30, max_records_per_append=1 << 20)
    return s2s.Connection(Role.CLIENT, s2s.Session.APPEND, limits=big).send(event)[4:]


def malformed_rules(limits: s2s.Limits | None = None) -> dict[str, st.SearchStrategy[Malformed]]:
    """The rule families of ``malformed()`` by name: the live fuzzer runs each once before
    repeating any."""
    lim = limits or s2s.Limits()
    return {
        "framing": _framing(lim),
        "protobuf": _protobuf(),
        "append rules": _rules(),
        "session heads": _heads(),
        "limits": _limits(lim),
    }


def malformed(limits: s2s.Limits | None = None) -> st.SearchStrategy[Malformed]:
    """Malformed append sessions, each with the JSON error code it must end with."""
    return st.one_of(*malformed_rules(limits).values())


def edge_cases(limits: s2s.Limits | None = None) -> st.SearchStrategy[Valid]:
    """Append frames a strict server must accept: reserved flag bits 3-0 set ("reserved and
    ignored on decode"), an unknown protobuf field ("Unknown fields are skipped"), 1000
    records, a record with an empty body, and every size exactly at its limit: a frame length
    of 2 MiB, zstd and gzip payloads inflating to exactly 2 MiB - 1, 1 MiB of metered bytes."""
    lim = limits or s2s.Limits()
    forbidden = (E.BAD_FRAME.value, E.BAD_PROTO.value, E.INVALID.value)
    one = s2s.AppendInput((s2s.AppendRecord(b"edge"),))
    frame = s2s.Connection(Role.CLIENT, s2s.Session.APPEND).send(one)
    payload = frame[4:]
    thousand = s2s.AppendInput((s2s.AppendRecord(b""),) * 1000)
    empty = s2s.AppendInput((s2s.AppendRecord(b""),))
    cases = [
        ("reserved flag bits set", _frame(0x0F, payload), one),
        ("unknown protobuf field", _frame(0, payload + b"\xf8\x07\x01"), one),
        ("1000 records", _encode(thousand), thousand),
        ("record with an empty body", _encode(empty), empty),
    ]
    at_cap = _pad(_encode(_ONE)[4:], lim.max_payload)
    metered = _metered(lim.max_append_bytes)
    cases += [
        (f"frame length exactly {lim.max_frame_length}", _frame(0, at_cap), _ONE),
        ("zstd payload inflating to exactly the cap", _frame(0x20, _zstd(at_cap)), _ONE),
        ("zstd payload inflating to exactly the cap (no size declared)",
         _frame(0x20, _zstd(at_cap, declare=False)), _ONE),
        ("gzip payload inflating to exactly the cap", _frame(0x40, _gzip(at_cap)), _ONE),
        (f"exactly {lim.max_append_bytes} metered bytes", _encode(metered), metered),
    ]  # fmt: skip
    return st.sampled_from(
        [Valid(label, HEAD + _chunk(data), event, forbidden) for label, data, event in cases]
    )
