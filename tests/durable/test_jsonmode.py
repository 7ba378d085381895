"""JSON mode: validation, one-level flattening (the spec's examples), response arrays."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3p_codec import RemoteProtocolError
from s3p_codec.durable import ErrorCode, ErrorResponse, jsonmode

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@pytest.mark.parametrize(
    ("body", "stored"),
    [
        # The examples of section 9.1.2, byte for byte (compact serialisation).
        (b'{"event": "created"}', [b'{"event":"created"}']),
        (b'[{"event": "a"}, {"event": "b"}]', [b'{"event":"a"}', b'{"event":"b"}']),
        (b"[[1,2], [3,4]]", [b"[1,2]", b"[3,4]"]),
        (b"[[[1,2,3]]]", [b"[[1,2,3]]"]),
    ],
)
def test_servers_must_flatten_exactly_one_level_of_a_top_level_array(
    body: bytes, stored: list[bytes]
) -> None:
    assert list(jsonmode.flatten(body)) == stored


def test_post_of_an_empty_array_must_be_rejected_with_400() -> None:
    with pytest.raises(RemoteProtocolError) as caught:
        jsonmode.flatten(b"[]")
    assert caught.value.code == ErrorCode.BAD_REQUEST
    assert not caught.value.fatal
    assert isinstance(caught.value.reply, ErrorResponse)
    assert caught.value.reply.status == 400


def test_put_with_an_empty_array_creates_an_empty_stream() -> None:
    assert jsonmode.flatten(b"[]", initial=True) == ()
    assert jsonmode.flatten(b" [ ] ", initial=True) == ()


@pytest.mark.parametrize(
    "bad", [b"", b"{", b"[1,]", b"NaN", b"[Infinity]", b"-Infinity", b"\xff", b"{'a': 1}", b"1 2"]
)
def test_servers_must_validate_that_appended_data_is_valid_json(bad: bytes) -> None:
    with pytest.raises(RemoteProtocolError) as caught:
        jsonmode.flatten(bad)
    assert caught.value.code == ErrorCode.BAD_REQUEST


def test_deep_nesting_is_a_400_not_a_crash() -> None:
    with pytest.raises(RemoteProtocolError):
        jsonmode.flatten(b"[" * 100_000 + b"]" * 100_000)


def test_a_byte_order_mark_is_skipped() -> None:
    assert jsonmode.flatten(b'\xef\xbb\xbf{"a":1}') == (b'{"a":1}',)


def test_non_ascii_text_stays_utf8_and_lone_surrogates_stay_escaped() -> None:
    assert jsonmode.flatten('"caf\u00e9"'.encode()) == ('"caf\u00e9"'.encode(),)
    assert jsonmode.flatten(b'"\\ud800"') == (b'"\\ud800"',)


def test_get_returns_a_json_array_and_an_empty_range_is_an_empty_array() -> None:
    assert jsonmode.format_messages([b'{"a":1}', b"[2]"]) == b'[{"a":1},[2]]'
    assert jsonmode.format_messages([]) == b"[]"


@pytest.mark.parametrize(
    ("content_type", "json_mode"),
    [
        ("application/json", True),
        ("Application/JSON; charset=utf-8", True),
        ("application/ndjson", False),
        ("text/plain", False),
        (None, False),
    ],
)
def test_json_mode_is_keyed_on_the_media_type(content_type: str | None, json_mode: bool) -> None:
    assert jsonmode.is_json(content_type) is json_mode


@given(st.lists(JSON, min_size=1, max_size=6))
def test_flattening_an_array_stores_each_element(values: list[object]) -> None:
    stored = jsonmode.flatten(json.dumps(values).encode())
    assert [json.loads(item) for item in stored] == values
    assert json.loads(jsonmode.format_messages(stored)) == values


@given(JSON.filter(lambda v: not isinstance(v, list)))
def test_a_single_value_is_one_message(value: object) -> None:
    (stored,) = jsonmode.flatten(json.dumps(value).encode())
    assert json.loads(stored) == value


@given(st.binary(max_size=200))
def test_random_bytes_give_messages_or_a_400(data: bytes) -> None:
    codes = []
    try:
        stored = jsonmode.flatten(data)
    except RemoteProtocolError as exc:
        codes.append(exc.code)
    else:
        assert all(json.loads(item) is not ... for item in stored)
    assert codes in ([], [ErrorCode.BAD_REQUEST])
