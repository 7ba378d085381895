"""Every sequence field of every event accepts a list (issue 31, item 1).

The API documents them as tuples; a user passing ``[b"hello"]`` must not be told the list has
no element. A single ``bytes`` is not split into its characters: the send check names the type
it wanted.
"""

from __future__ import annotations

import typing
import uuid

import attrs
import pytest

from s3p_codec import LocalProtocolError, Role, durable, pravega, rustlog, s2s, s3p

PACKAGES = (s3p, rustlog, s2s, pravega, durable)


def _sequence_fields() -> list[tuple[str, type, attrs.Attribute[object]]]:
    found = []
    for package in PACKAGES:
        for name in package.__all__:
            cls = getattr(package, name)
            if not (isinstance(cls, type) and attrs.has(cls)):
                continue
            hints = typing.get_type_hints(cls, include_extras=True)
            for field in attrs.fields(cls):
                hint = hints.get(field.name)
                if typing.get_origin(hint) is typing.Annotated:
                    hint = typing.get_args(hint)[0]
                if typing.get_origin(hint) is tuple and ... in typing.get_args(hint):
                    found.append((f"{package.__name__}.{name}", cls, field))
    return found


SEQUENCE_FIELDS = _sequence_fields()


def test_the_scan_finds_the_fields_users_fill() -> None:
    names = {f"{owner}.{field.name}" for owner, _, field in SEQUENCE_FIELDS}
    assert {
        "s3p_codec.s3p.Append.records",
        "s3p_codec.s3p.ReadReply.records",
        "s3p_codec.rustlog.Produce.records",
        "s3p_codec.s2s.AppendInput.records",
        "s3p_codec.s2s.AppendRecord.headers",
        "s3p_codec.pravega.Append.events",
    } <= names


@pytest.mark.parametrize(
    ("owner", "field"),
    [(owner, field) for owner, _, field in SEQUENCE_FIELDS],
    ids=[f"{owner}.{field.name}" for owner, _, field in SEQUENCE_FIELDS],
)
def test_every_sequence_field_converts_a_list(owner: str, field: attrs.Attribute[object]) -> None:
    assert field.converter is not None, f"{owner}.{field.name} keeps a list as a list"
    assert field.converter([1, 2]) == (1, 2)
    assert field.converter(iter([3])) == (3,)
    assert field.converter(b"ab") == b"ab"  # not (97, 98): refused with its type at send


def test_s3p_append_with_a_list_is_sent() -> None:
    client = s3p.Connection(Role.CLIENT)
    event = s3p.Append(stream=b"orders", records=[b"hello"])
    assert event.records == (b"hello",)
    assert client.send(event) == s3p.Connection(Role.CLIENT).send(
        s3p.Append(stream=b"orders", records=(b"hello",))
    )


def test_s3p_append_with_one_bytes_value_says_what_it_wanted() -> None:
    wanted = r"sequence of bytes values, such as \(b'hello',\)"
    with pytest.raises(LocalProtocolError, match=wanted):
        s3p.Connection(Role.CLIENT).send(s3p.Append(stream=b"orders", records=b"hello"))


def test_rustlog_s2s_and_pravega_take_lists() -> None:
    assert rustlog.Produce(topic="t", partition=0, records=[b"x"]).records == (b"x",)
    batch = s2s.AppendInput(records=[s2s.AppendRecord(b"x", headers=[s2s.Header(b"k", b"v")])])
    assert isinstance(batch.records, tuple)
    assert batch.records[0].headers == (s2s.Header(b"k", b"v"),)
    assert s2s.Connection(Role.CLIENT, s2s.Session.APPEND).send(batch)
    append = pravega.Append(uuid.UUID(int=1), 1, [b"e1"])
    assert append.events == (b"e1",)
