"""Field rules of every message, received (RemoteProtocolError, recoverable) and sent (Local)."""

from __future__ import annotations

import base64

import attrs
import pytest

from s3p_codec import LocalProtocolError, Role, rustlog
from s3p_codec.rustlog import _kinds as kinds
from s3p_codec.rustlog import _schema as schema
from s3p_codec.rustlog._kinds import KINDS, TOPICS_SEEN_MAX, field_kinds
from s3p_codec.rustlog._limits import U32_MAX, U64_MAX
from tests.rustlog.frames import (
    frame,
    parse_request,
    parse_response,
    request_error,
    response_error,
)

B64_HELLO = base64.b64encode(b"hello").decode()


def produce(**fields: object) -> dict[str, object]:
    return {"type": "Produce", "topic": "logs", "partition": 0, "records": [B64_HELLO], **fields}


def fetch(**fields: object) -> dict[str, object]:
    base = {"type": "Fetch", "group_id": "g", "topic": "logs", "partition": 0, "offset": 0}
    return {**base, "max_bytes": 1024, **fields}


def assert_invalid(payload: dict[str, object], code: int = 400) -> str:
    error = request_error(frame(payload))
    assert not error.fatal, error
    assert error.code == code
    assert isinstance(error.reply, rustlog.Error)
    assert error.reply.code == code
    return error.message


def send_error(event: object, role: Role = Role.CLIENT, **limits: int) -> LocalProtocolError:
    conn = rustlog.Connection(role, rustlog.Limits(**limits))
    if role is Role.SERVER:
        conn.receive_data(frame({"type": "Ping"}))
        conn.next_event()
    with pytest.raises(LocalProtocolError) as info:
        conn.send(event)  # type: ignore[arg-type]
    return info.value


# --- topic names ----------------------------------------------------------------------------


@pytest.mark.parametrize("topic", ["a", "A-z_0-9", "x" * 255, "user-events", "_", "-"])
def test_topic_name_1_255_alphanumeric_underscore_hyphen_accepted(topic: str) -> None:
    assert parse_request(produce(topic=topic)) == rustlog.Produce(topic, 0, (b"hello",))
    assert rustlog.Connection(Role.CLIENT).send(rustlog.DescribeTopic(topic))


@pytest.mark.parametrize(
    "topic",
    [
        "",
        "x" * 256,
        "a.b",
        "a b",
        "a/b",
        "ログ",
        "café",
        "\uff41",
        "\u0661\u0662",
        "a\n",
        None,
        1,
        ["a"],
    ],
)
def test_topic_name_outside_the_rules_is_invalid(topic: object) -> None:
    message = assert_invalid(produce(topic=topic))
    assert "topic" in message
    send_error(rustlog.DescribeTopic(topic))  # type: ignore[arg-type]


def test_topic_field_is_checked_in_every_request_that_has_one() -> None:
    for payload in (
        fetch(topic="bad topic"),
        {"type": "OffsetCommit", "group": "g", "topic": "b@d", "partition": 0, "offset": 1},
        {"type": "OffsetFetch", "group": "g", "topic": "", "partition": 0},
        {"type": "CreateTopic", "topic": "é", "partition_count": 1},
        {"type": "DescribeTopic", "topic": "a b"},
        {"type": "DescribePartition", "topic": "a b", "partition": 0},
    ):
        assert "topic" in assert_invalid(payload)


def test_unicode_group_names_are_accepted() -> None:
    event = parse_request(fetch(group_id="分析-ä"))
    assert isinstance(event, rustlog.Fetch)
    assert event.group_id == "分析-ä"


def test_lone_surrogate_in_a_string_field_is_invalid() -> None:
    assert "group_id" in assert_invalid(fetch(group_id="\ud800"))
    send_error(rustlog.Fetch("\ud800", "t", 0, 0, 1))


# --- integers -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, U32_MAX])
def test_partition_is_a_u32(value: int) -> None:
    assert parse_request(produce(partition=value)) == rustlog.Produce("logs", value, (b"hello",))


@pytest.mark.parametrize("value", [-1, U32_MAX + 1, 1.0, 0.5, True, False, "0", None, [0]])
def test_partition_outside_u32_or_not_an_integer_is_invalid(value: object) -> None:
    assert "partition" in assert_invalid(produce(partition=value))


@pytest.mark.parametrize("value", [0, U64_MAX])
def test_offset_is_a_u64(value: int) -> None:
    event = parse_request(fetch(offset=value))
    assert isinstance(event, rustlog.Fetch)
    assert event.offset == value


@pytest.mark.parametrize("value", [-1, U64_MAX + 1, 1e3, True, "5", 10**40])
def test_offset_outside_u64_or_not_an_integer_is_invalid(value: object) -> None:
    assert "offset" in assert_invalid(fetch(offset=value))


@pytest.mark.parametrize("field", ["group_id", "topic", "partition", "offset", "max_bytes"])
def test_every_fetch_field_is_required(field: str) -> None:
    payload = fetch()
    del payload[field]
    assert f"missing field {field!r}" in assert_invalid(payload)


@pytest.mark.parametrize(
    "event",
    [
        rustlog.Fetch("g", "t", -1, 0, 1),
        rustlog.Fetch("g", "t", 0, U64_MAX + 1, 1),
        rustlog.Fetch("g", "t", True, 0, 1),
        rustlog.Fetch("g", "t", 0, 0, 1.5),  # type: ignore[arg-type]
        rustlog.OffsetCommit("g", "t", 0, -5),
        rustlog.OffsetFetch(b"g", "t", 0),  # type: ignore[arg-type]
        rustlog.DescribePartition("t", U32_MAX + 1),
    ],
)
def test_sending_an_out_of_range_or_ill_typed_field_is_a_local_error(event: object) -> None:
    error = send_error(event)
    assert error.code == rustlog.ErrorCode.INVALID_REQUEST


# --- records --------------------------------------------------------------------------------


def test_records_are_bytes_in_events_and_base64_on_the_wire() -> None:
    data = rustlog.Connection(Role.CLIENT).send(rustlog.Produce("t", 0, (b"\x00\xff", b"")))
    assert b'"records":["AP8=",""]' in data


def test_records_array_of_1000_elements_is_accepted() -> None:
    event = parse_request(produce(records=[B64_HELLO] * 1000))
    assert isinstance(event, rustlog.Produce)
    assert len(event.records) == 1000


def test_records_array_over_1000_elements_per_batch_is_invalid() -> None:
    message = assert_invalid(produce(records=[B64_HELLO] * 1001))
    assert "1000" in message
    send_error(rustlog.Produce("t", 0, (b"x",) * 1001))


def test_records_limit_is_configurable() -> None:
    conn = rustlog.Connection(Role.SERVER, rustlog.Limits(max_records_per_produce=2))
    conn.receive_data(frame(produce(records=[B64_HELLO] * 3)))
    with pytest.raises(rustlog_error()) as info:
        conn.next_event()
    assert not info.value.fatal


def rustlog_error() -> type[Exception]:
    from s3p_codec import RemoteProtocolError

    return RemoteProtocolError


@pytest.mark.parametrize(
    "record", ["aGVsbG8", "aGVs bG8=", "aGVsbG8==", "=", "aGVsbG8=\n", "aGVs\nbG8=", "aGV_bG8=",
               "ä", 5, None, ["aGVsbG8="], {"b": 1}],
)  # fmt: skip
def test_records_must_be_standard_padded_base64_strings(record: object) -> None:
    message = assert_invalid(produce(records=[B64_HELLO, record]))
    assert "records[1]" in message


def test_each_record_over_the_size_limit_after_base64_decoding_is_413() -> None:
    conn = rustlog.Connection(Role.SERVER, rustlog.Limits(max_record_size=5))
    conn.receive_data(frame(produce(records=[B64_HELLO, base64.b64encode(b"123456").decode()])))
    with pytest.raises(rustlog_error()) as info:
        conn.next_event()
    assert info.value.code == rustlog.ErrorCode.RECORD_TOO_LARGE
    assert not info.value.fatal
    assert isinstance(info.value.reply, rustlog.Error)
    assert info.value.reply.code == 413


def test_a_record_of_exactly_the_size_limit_is_accepted() -> None:
    conn = rustlog.Connection(Role.SERVER, rustlog.Limits(max_record_size=5))
    conn.receive_data(frame(produce()))
    assert conn.next_event() == rustlog.Produce("logs", 0, (b"hello",))


def test_sending_a_record_over_the_size_limit_is_413() -> None:
    error = send_error(rustlog.Produce("t", 0, (b"123456",)), max_record_size=5)
    assert error.code == rustlog.ErrorCode.RECORD_TOO_LARGE


def test_records_must_be_bytes_when_sent() -> None:
    send_error(rustlog.Produce("t", 0, ("text",)))  # type: ignore[arg-type]
    send_error(rustlog.Produce("t", 0, (bytearray(b"x"),)))  # type: ignore[arg-type]


def test_records_given_as_a_list_become_a_tuple() -> None:
    assert rustlog.Produce("t", 0, [b"a"]).records == (b"a",)  # type: ignore[arg-type]


# --- CreateTopic ----------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 1000])
def test_partition_count_1_to_1000_is_accepted(count: int) -> None:
    event = parse_request({"type": "CreateTopic", "topic": "t", "partition_count": count})
    assert event == rustlog.CreateTopic("t", count)


@pytest.mark.parametrize("count", [0, 1001, -1, 2.0, True])
def test_partition_count_outside_1_to_1000_is_invalid(count: object) -> None:
    message = assert_invalid({"type": "CreateTopic", "topic": "t", "partition_count": count})
    assert "Partition count" in message
    if type(count) is int:
        send_error(rustlog.CreateTopic("t", count))


# --- evolution ------------------------------------------------------------------------------


def test_unknown_extra_fields_are_ignored() -> None:
    event = parse_request(produce(compression="none", trace={"id": [1, 2]}, priority=5))
    assert event == rustlog.Produce("logs", 0, (b"hello",))
    response = parse_response(
        {"type": "FetchResponse", "records": [{"offset": 1, "timestamp": 2, "payload": "",
         "headers": {"k": "v"}}], "next_offset": 2, "high_watermark": 9},
        rustlog.Fetch("g", "t", 0, 1, 10),
    )  # fmt: skip
    assert response == rustlog.FetchResponse((rustlog.Record(1, 2, b""),), 2)


def test_unknown_error_codes_are_kept_as_ints() -> None:
    event = parse_response({"type": "Error", "code": 429, "message": "slow down", "details": None})
    assert event == rustlog.Error(429, "slow down")
    assert isinstance(event, rustlog.Error)
    assert type(event.code) is int
    known = parse_response({"type": "Error", "code": 404, "message": "x", "details": None})
    assert isinstance(known, rustlog.Error)
    assert known.code is rustlog.ErrorCode.TOPIC_NOT_FOUND


def test_absent_nullable_fields_read_as_null() -> None:
    assert parse_response({"type": "Error", "code": 500, "message": "x"}) == rustlog.Error(
        500, "x", None
    )
    request = rustlog.OffsetFetch("g", "t", 0)
    assert parse_response({"type": "OffsetFetchResponse"}, request) == (
        rustlog.OffsetFetchResponse(None)
    )
    assert parse_response({"type": "OffsetFetchResponse", "offset": None}, request) == (
        rustlog.OffsetFetchResponse(None)
    )
    assert parse_response({"type": "OffsetFetchResponse", "offset": 7}, request) == (
        rustlog.OffsetFetchResponse(7)
    )


# --- responses ------------------------------------------------------------------------------

FETCH = rustlog.Fetch("g", "t", 0, 0, 100)


def fetch_response(records: list[object], next_offset: int) -> dict[str, object]:
    return {"type": "FetchResponse", "records": records, "next_offset": next_offset}


def rec(offset: object, timestamp: object = 1, payload: object = "") -> dict[str, object]:
    return {"offset": offset, "timestamp": timestamp, "payload": payload}


def test_fetch_response_records_in_offset_order_monotonic() -> None:
    error = response_error(fetch_response([rec(5), rec(4)], 5), FETCH)
    assert "monotonic" in error.message
    assert not error.fatal
    error = response_error(fetch_response([rec(5), rec(5)], 6), FETCH)
    assert "monotonic" in error.message
    send_local = rustlog.FetchResponse((rustlog.Record(5, 1, b""), rustlog.Record(4, 1, b"")), 5)
    send_error(send_local, Role.SERVER)


def test_fetch_response_next_offset_is_last_record_offset_plus_one() -> None:
    error = response_error(fetch_response([rec(5), rec(6)], 9), FETCH)
    assert "next_offset" in error.message
    send_error(rustlog.FetchResponse((rustlog.Record(5, 1, b""),), 9), Role.SERVER)
    # Empty records array if no data available: then next_offset is free.
    assert parse_response(fetch_response([], 77), FETCH) == rustlog.FetchResponse((), 77)


@pytest.mark.parametrize(
    "record",
    [rec(-1), rec(1, -1), rec(1, 2.5), rec(True), rec(1, 1, "a"), rec(1, 1, 5), [1, 2, ""],
     "x", {"offset": 1, "timestamp": 1}, {"offset": 1, "payload": ""}],
)  # fmt: skip
def test_fetch_response_bad_records_are_invalid(record: object) -> None:
    error = response_error(fetch_response([rec(0), record], 2), FETCH)
    assert not error.fatal
    assert "records[1]" in error.message


def test_fetch_response_timestamp_is_a_u64_of_microseconds() -> None:
    response = parse_response(fetch_response([rec(0, U64_MAX)], 1), FETCH)
    assert isinstance(response, rustlog.FetchResponse)
    assert response.records[0].timestamp == U64_MAX


@pytest.mark.parametrize(
    ("payload", "request_", "expected"),
    [
        ({"type": "OffsetCommitResponse", "success": True}, rustlog.OffsetCommit("g", "t", 0, 1),
         rustlog.OffsetCommitResponse(True)),
        ({"type": "CreateTopicResponse", "success": False, "partitions_created": 0},
         rustlog.CreateTopic("t", 1), rustlog.CreateTopicResponse(False, 0)),
        ({"type": "ListTopicsResponse", "topics": [{"name": "a", "partition_count": 3}]},
         rustlog.ListTopics(), rustlog.ListTopicsResponse((rustlog.TopicInfo("a", 3),))),
        ({"type": "DescribeTopicResponse", "topic": "a", "partitions": [
            {"partition": 0, "high_watermark": 10, "log_start_offset": 2, "segment_count": 3}]},
         rustlog.DescribeTopic("a"),
         rustlog.DescribeTopicResponse("a", (rustlog.PartitionInfo(0, 10, 2, 3),))),
        ({"type": "Pong"}, rustlog.Ping(), rustlog.Pong()),
    ],
)  # fmt: skip
def test_response_schemas(
    payload: dict[str, object], request_: rustlog.Request, expected: rustlog.Response
) -> None:
    assert parse_response(payload, request_) == expected


@pytest.mark.parametrize(
    ("payload", "request_"),
    [
        ({"type": "OffsetCommitResponse", "success": 1}, rustlog.OffsetCommit("g", "t", 0, 1)),
        ({"type": "OffsetCommitResponse", "success": "true"}, rustlog.OffsetCommit("g", "t", 0, 1)),
        ({"type": "CreateTopicResponse", "success": True}, rustlog.CreateTopic("t", 1)),
        ({"type": "ListTopicsResponse", "topics": [{"name": "a b", "partition_count": 1}]},
         rustlog.ListTopics()),
        ({"type": "ListTopicsResponse", "topics": {}}, rustlog.ListTopics()),
        ({"type": "ListTopicsResponse", "topics": [1]}, rustlog.ListTopics()),
        ({"type": "DescribeTopicResponse", "topic": "a", "partitions": [{"partition": 0}]},
         rustlog.DescribeTopic("a")),
        ({"type": "ProduceResponse", "base_offset": -1, "record_count": 0},
         rustlog.Produce("t", 0, ())),
        ({"type": "OffsetFetchResponse", "offset": "1"}, rustlog.OffsetFetch("g", "t", 0)),
        ({"type": "Error", "code": 70000, "message": "x"}, rustlog.Ping()),
        ({"type": "Error", "code": 500, "message": 5}, rustlog.Ping()),
        ({"type": "Error", "code": 500, "message": "x", "details": [1]}, rustlog.Ping()),
    ],
)  # fmt: skip
def test_bad_response_fields_are_recoverable_errors(
    payload: dict[str, object], request_: rustlog.Request
) -> None:
    error = response_error(payload, request_)
    assert not error.fatal
    assert error.code == 400


# --- decided schemas ------------------------------------------------------------------------


def test_describe_partition_decided_schema() -> None:
    request = {"type": "DescribePartition", "topic": "logs", "partition": 3}
    assert parse_request(request) == rustlog.DescribePartition("logs", 3)
    assert rustlog.Connection(Role.CLIENT).send(rustlog.DescribePartition("logs", 3)) == frame(
        request
    )
    response = {"type": "DescribePartitionResponse", "topic": "logs", "partition": 3,
                "high_watermark": 10, "log_start_offset": 4, "segment_count": 2}  # fmt: skip
    event = rustlog.DescribePartitionResponse("logs", 3, 10, 4, 2)
    assert parse_response(response, rustlog.DescribePartition("logs", 3)) == event
    server = rustlog.Connection(Role.SERVER)
    server.receive_data(frame(request))
    server.next_event()
    assert server.send(event) == frame(response)


def test_metrics_fetch_response_decided_schema_is_one_free_form_object() -> None:
    metrics = {"requests": 5, "rate": 1.5, "topics": ["a"], "by": {"x": None}}
    payload = {"type": "MetricsFetchResponse", "metrics": metrics}
    event = parse_response(payload, rustlog.MetricsFetch())
    assert event == rustlog.MetricsFetchResponse(
        {"requests": 5, "rate": 1.5, "topics": ("a",), "by": {"x": None}}
    )
    assert isinstance(event, rustlog.MetricsFetchResponse)
    assert isinstance(event.metrics, rustlog.JsonObject)
    assert event.metrics["topics"] == ("a",)
    for bad in ({"type": "MetricsFetchResponse"}, {"type": "MetricsFetchResponse", "metrics": 1}):
        assert not response_error(bad, rustlog.MetricsFetch()).fatal


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), 1 << 64, -(1 << 63) - 1, "\udc00", {1: "x"}, {"a": object()},
     b"bytes"],
)  # fmt: skip
def test_free_form_values_must_be_portable_json_when_sent(value: object) -> None:
    send_error(rustlog.MetricsFetchResponse({"v": value}), Role.SERVER)


def test_free_form_received_values_must_be_portable_json() -> None:
    for text in (b'{"v":1e400}', b'{"v":18446744073709551616}', b'{"v":"\\ud800"}'):
        payload = b'{"type":"MetricsFetchResponse","metrics":' + text + b"}"
        error = response_error(payload, rustlog.MetricsFetch())
        assert not error.fatal


def test_error_code_must_be_a_u16_when_sent() -> None:
    send_error(rustlog.Error(70000, "x"), Role.SERVER)
    send_error(rustlog.Error("404", "x"), Role.SERVER)  # type: ignore[arg-type]


# --- each connection's memo of topic names keeps the rule, stays bounded, is its own -------


def test_topic_names_are_checked_by_the_rule_even_when_remembered() -> None:
    server = rustlog.Connection(Role.SERVER)
    seen = server._context.topics
    server.receive_data(frame(produce(topic="user-events")))
    assert server.next_event() == rustlog.Produce("user-events", 0, (b"hello",))
    assert seen == {"user-events"}
    for bad in ("", "a b", "ünïcode", "x" * 256, "logs\n"):
        error = request_error(frame(produce(topic=bad)))
        assert not error.fatal
        assert "topic name" in error.message
    assert seen == {"user-events"}


def test_the_memo_of_topic_names_is_bounded_and_per_connection() -> None:
    server, other = rustlog.Connection(Role.SERVER), rustlog.Connection(Role.SERVER)
    count = TOPICS_SEEN_MAX + 10
    server.receive_data(b"".join(frame(produce(topic=f"t{n}")) for n in range(count)))
    assert [event.topic for event in server.events()] == [f"t{n}" for n in range(count)]  # type: ignore[union-attr]
    assert 0 < len(server._context.topics) <= TOPICS_SEEN_MAX
    assert other._context.topics == set()  # nothing is kept for the whole process
    assert not hasattr(kinds, "_TOPICS_SEEN")


# --- the declaration: one annotation per field ----------------------------------------------


@pytest.mark.parametrize("cls", [*rustlog.REQUEST_TYPES, *rustlog.RESPONSE_TYPES])
def test_every_field_names_its_json_type_once_and_the_tables_follow(cls: type) -> None:
    names = [field.name for field in attrs.fields(cls)]
    kinds = field_kinds(cls)
    assert [name for name, _ in kinds] == names
    assert all(kind is KINDS[kind.name] for _, kind in kinds)
    assert schema.KNOWN_FIELDS[cls.TYPE] == {"type", *names}  # type: ignore[attr-defined]
    optional = any(kind.optional for _, kind in kinds)
    assert (cls.TYPE in schema.OPTIONAL_FIELDS) is optional  # type: ignore[attr-defined]
    assert "def decode(obj, ctx):" in schema.source(cls)
    assert "def encode(event, limits):" in schema.source(cls)
