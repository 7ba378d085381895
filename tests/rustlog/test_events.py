"""Event classes, numeric type ids, error codes and frozen JSON."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given

from s3p_codec import rustlog
from s3p_codec.rustlog._events import REQUEST_TYPES, RESPONSE_TYPES, trusted
from s3p_codec.testing.rustlog import requests, responses

SPEC_IDS = {
    "Produce": 0x01, "Fetch": 0x02, "OffsetCommit": 0x03, "OffsetFetch": 0x04,
    "CreateTopic": 0x05, "ListTopics": 0x06, "DescribeTopic": 0x07, "DescribePartition": 0x08,
    "MetricsFetch": 0x09, "Ping": 0x0A, "ProduceResponse": 0x81, "FetchResponse": 0x82,
    "OffsetCommitResponse": 0x83, "OffsetFetchResponse": 0x84, "CreateTopicResponse": 0x85,
    "ListTopicsResponse": 0x86, "DescribeTopicResponse": 0x87,
    "DescribePartitionResponse": 0x88, "MetricsFetchResponse": 0x89, "Pong": 0x8A, "Error": 0xFF,
}  # fmt: skip


def test_numeric_type_ids_are_the_spec_enum_comments() -> None:
    classes = {cls.TYPE: cls for cls in (*REQUEST_TYPES, *RESPONSE_TYPES)}
    assert {name: int(cls.TYPE_ID) for name, cls in classes.items()} == SPEC_IDS
    assert classes.keys() == {cls.__name__ for cls in classes.values()}


def test_response_type_is_request_type_plus_0x80() -> None:
    for request, response in rustlog.RESPONSE_TO.items():
        assert response.TYPE_ID == request.TYPE_ID + 0x80
        assert request.TYPE_ID.response is response.TYPE_ID
    assert len(rustlog.RESPONSE_TO) == 10
    assert rustlog.BY_TYPE_ID[rustlog.MessageType(0x82)] is rustlog.FetchResponse
    assert len(rustlog.BY_TYPE_ID) == 21
    with pytest.raises(ValueError, match="not a request"):
        _ = rustlog.MessageType.ERROR.response


def test_error_codes_are_the_spec_values() -> None:
    assert {c.name: int(c) for c in rustlog.ErrorCode} == {
        "TOPIC_NOT_FOUND": 404, "PARTITION_NOT_FOUND": 405, "OFFSET_OUT_OF_RANGE": 416,
        "RECORD_TOO_LARGE": 413, "INVALID_REQUEST": 400, "INTERNAL_SERVER_ERROR": 500,
        "STORAGE_ERROR": 503, "INSUFFICIENT_SPACE": 507,
    }  # fmt: skip


def test_events_are_frozen_and_slotted() -> None:
    event = rustlog.Fetch("g", "t", 0, 1, 2)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        event.offset = 5  # type: ignore[misc]
    for cls in (*REQUEST_TYPES, *RESPONSE_TYPES):
        assert attrs.has(cls)
        assert "__slots__" in cls.__dict__
    assert hash(rustlog.Produce("t", 0, (b"a",))) == hash(rustlog.Produce("t", 0, [b"a"]))  # type: ignore[arg-type]


def test_json_object_is_deeply_frozen_and_hashable() -> None:
    source = {"a": [1, {"b": [2]}], "c": None}
    frozen = rustlog.JsonObject(source)
    source["a"].append(3)  # type: ignore[attr-defined]
    assert frozen == {"a": (1, {"b": (2,)}), "c": None}
    assert isinstance(frozen["a"], tuple)
    assert isinstance(frozen["a"][1], rustlog.JsonObject)  # type: ignore[index]
    assert hash(frozen) == hash(rustlog.JsonObject({"c": None, "a": (1, {"b": [2]})}))
    with pytest.raises(TypeError):
        frozen["x"] = 1  # type: ignore[index]
    assert frozen.to_python() == {"a": [1, {"b": [2]}], "c": None}
    assert "JsonObject" in repr(frozen)


def test_free_form_fields_are_frozen_on_construction() -> None:
    error = rustlog.Error(404, "x", {"available_topics": ["a"]})
    assert isinstance(error.details, rustlog.JsonObject)
    assert error.details["available_topics"] == ("a",)
    assert rustlog.Error(404, "x").details is None
    assert hash(rustlog.MetricsFetchResponse({"k": [1]}))


@given(requests() | responses())
def test_trusted_construction_makes_the_same_event_as_the_class(event: rustlog.Event) -> None:
    values = [getattr(event, field.name) for field in attrs.fields(type(event))]
    made = trusted(type(event))(*values)
    assert type(made) is type(event)
    assert made == event
    assert hash(made) == hash(event)
    assert repr(made) == repr(event)
    if values:
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            made.__setattr__(attrs.fields(type(event))[0].name, values[0])
