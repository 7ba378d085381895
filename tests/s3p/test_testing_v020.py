"""``s3p_codec.testing.s3p`` in v0.2.0 mode, checked against our v0.2.0 codecs: every malformed
case gets exactly its code, edge cases are accepted, replies round-trip, malformed replies are
refused, and ``s3p-codec fuzz s3p --s3p-version 0.2.0`` builds a v0.2.0 target."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s3p_codec import NEED_DATA, RemoteProtocolError, Role, s3p
from s3p_codec.testing import Malformed, MalformedReply, Valid, chunkings
from s3p_codec.testing import s3p as cases
from s3p_codec.testing.command import make_target, register

V2 = "0.2.0"


def server_error(data: list[bytes], half_close: bool) -> RemoteProtocolError | None:
    conn = s3p.Connection(Role.SERVER, version=V2)
    try:
        for piece in data:
            conn.receive_data(piece)
            while conn.next_event() is not NEED_DATA:
                pass
        if half_close:
            conn.receive_data(b"")
            conn.next_event()
    except RemoteProtocolError as error:
        return error
    return None


@given(cases.malformed(version=V2), st.data())
def test_every_v020_malformed_case_gets_its_error_from_our_v020_server(
    case: Malformed, data: st.DataObject
) -> None:
    for pieces in ([case.data], data.draw(chunkings(case.data))):
        error = server_error(pieces, case.half_close)
        assert error is not None, f"{case.label}: accepted {case.data[:80]!r}"
        assert error.code == case.code, f"{case.label}: {error!r}"
        assert isinstance(error.reply, s3p.ErrorReply)


def test_the_v020_cases_differ_from_the_v010_ones_where_the_versions_do() -> None:
    labels: dict[str, set[tuple[str, str]]] = {"0.1.0": set(), V2: set()}
    for version, seen in labels.items():

        @given(cases.malformed(version=version))
        @settings(max_examples=300)
        def collect(case: Malformed) -> None:
            seen.add((case.label, str(case.code)))  # noqa: B023 - run before the next loop

        collect()
    assert ("stream name over the limit", "ERR_LIMITS") in labels[V2]
    assert ("stream name over the limit", "ERR_BAD_FORMAT") in labels["0.1.0"]
    assert ("DELETE of 2 elements", "ERR_BAD_FORMAT") in labels[V2]


@given(cases.edge_cases(version=V2))
def test_v020_edge_cases_are_accepted_by_our_v020_server(case: Valid) -> None:
    conn = s3p.Connection(Role.SERVER, version=V2)
    conn.receive_data(case.data)
    assert isinstance(conn.next_event(), s3p.Read), case.label


@given(cases.request_wire(version=V2))
def test_v020_requests_are_read_back_by_our_v020_server(pair: tuple[s3p.Request, bytes]) -> None:
    request, wire = pair
    conn = s3p.Connection(Role.SERVER, version=V2)
    conn.receive_data(wire)
    assert conn.next_event() == request


@given(cases.reply_wire(version=V2))
def test_v020_replies_round_trip_through_our_v020_client(pair: tuple[s3p.Reply, bytes]) -> None:
    reply, wire = pair
    client = s3p.Connection(Role.CLIENT, version=V2)
    client.send(cases.request_for(reply))
    client.receive_data(wire)
    assert client.next_event() == reply


@given(cases.malformed_replies(version=V2))
def test_every_v020_malformed_reply_is_refused_by_our_v020_client(case: MalformedReply) -> None:
    client = s3p.Connection(Role.CLIENT, version=V2)
    for request in case.pending:
        client.send(request)
    failure = None
    try:
        for piece in [case.data, b""] if case.half_close else [case.data]:
            client.receive_data(piece)
            list(client.events())
    except RemoteProtocolError as error:
        failure = error
    assert failure is not None, case.label
    assert failure.code == case.code, case.label


def test_the_v020_target_has_a_recoverable_case_followed_by_the_probe() -> None:
    target = cases.Target(version=V2)
    found: list[Malformed] = []

    @given(target.malformed())
    def collect(case: Malformed) -> None:
        if not case.fatal:
            found.append(case)

    collect()
    assert found
    case = found[0]
    assert case.code == s3p.ErrorCode.STREAM_EXISTS
    assert target.follow_up(case) == target.probe()
    with pytest.raises(ValueError, match=r"0\.3\.0"):
        cases.Target(version="0.3.0")


def test_the_fuzz_command_takes_an_s3p_version() -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["fuzz", "s3p", "127.0.0.1:7500", "--s3p-version", V2])
    assert args.s3p_version == V2
    target = make_target(args.protocol, args.s3p_version)
    assert isinstance(target, cases.Target)
    assert target.version == V2
    assert make_target("s3p").version == "0.1.0"  # type: ignore[attr-defined]
    with pytest.raises(SystemExit):
        parser.parse_args(["fuzz", "s3p", "127.0.0.1:7500", "--s3p-version", "0.3.0"])
