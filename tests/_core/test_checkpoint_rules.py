"""The snapshot format and what restoring one refuses, in the words of ``_core.checkpoint``.

A snapshot is ``MAGIC``, the format byte, then a protocol-5 pickle. Restoring resolves only our
classes, h11's and hpack's (also by their packages' top-level names), a few containers, and
functions declared with ``allow``; h11's frozen events are saved through ``_frozen``.
"""

from __future__ import annotations

import pickle
import threading
from collections import Counter

import h11
import hpack
import pytest

from s3p_codec._core import checkpoint
from s3p_codec._core.checkpoint import FORMAT, MAGIC, SnapshotError, allow, dump, load
from s3p_codec._core.errors import LocalProtocolError, RemoteProtocolError
from s3p_codec.s3p import ErrorCode


def _header(format_byte: int = FORMAT) -> bytes:
    return MAGIC + bytes((format_byte,))


def _naming(module: str, name: str) -> bytes:
    """A protocol-5 pickle of the object ``module.name`` (the object itself, by reference)."""
    short = pickle.SHORT_BINUNICODE
    return (
        pickle.PROTO
        + b"\x05"
        + short
        + bytes((len(module),))
        + module.encode()
        + short
        + bytes((len(name),))
        + name.encode()
        + pickle.STACK_GLOBAL
        + pickle.STOP
    )


def _kept() -> str:
    return "kept"


def _not_kept() -> str:
    return "not kept"


class _Holder:
    def __init__(self) -> None:
        self.lock = threading.Lock()


def _refusal(blob: bytes, expected: type = object) -> str:
    with pytest.raises(SnapshotError) as caught:
        load(blob, expected)
    assert str(caught.value) == caught.value.message
    return caught.value.message


def test_a_snapshot_is_the_magic_the_format_byte_then_a_protocol_5_pickle() -> None:
    blob = dump([1, "two"])
    assert blob[:5] == b"S3PK" + bytes((FORMAT,))
    assert blob[5:7] == pickle.PROTO + b"\x05"
    assert pickle.loads(blob[5:]) == [1, "two"]
    assert load(blob, list) == [1, "two"]


def test_an_object_that_cannot_be_pickled_is_refused_naming_its_class() -> None:
    with pytest.raises(SnapshotError) as caught:
        dump(_Holder())
    assert caught.value.message == "cannot snapshot _Holder: cannot pickle '_thread.lock' object"
    assert str(caught.value) == caught.value.message


def test_bytes_without_the_magic_are_not_a_snapshot() -> None:
    for blob in (b"", b"S3P", pickle.dumps([1]), b"XXXX" + bytes((FORMAT,)) + pickle.dumps([1])):
        assert _refusal(blob) == "not a snapshot (no S3PK header)"


def test_the_magic_without_its_format_byte_is_not_a_snapshot() -> None:
    assert _refusal(MAGIC) == "not a snapshot (no S3PK header)"


def test_a_header_with_no_pickle_after_it_is_a_damaged_snapshot() -> None:
    assert _refusal(_header()) == "damaged snapshot: EOFError: Ran out of input"


def test_a_damaged_pickle_is_refused_naming_what_broke() -> None:
    blob = dump({"a": 1})
    assert _refusal(blob[:-3], dict).startswith("damaged snapshot: UnpicklingError: ")


def test_a_snapshot_of_another_format_is_refused_naming_both_formats() -> None:
    blob = _header(FORMAT - 1) + pickle.dumps([1], protocol=5)
    assert _refusal(blob) == f"snapshot format {FORMAT - 1}, this version reads {FORMAT}"


def test_a_snapshot_of_another_class_is_refused_naming_both() -> None:
    assert _refusal(dump([1]), tuple) == "snapshot holds a list, not a tuple"


def test_a_class_outside_the_allowed_packages_is_refused_by_name() -> None:
    blob = _header() + pickle.dumps(Counter(a=1), protocol=5)
    assert _refusal(blob, Counter) == (
        "snapshot names collections.Counter, which no snapshot may hold"
    )
    assert _refusal(_header() + _naming("subprocess", "Popen"), type) == (
        "snapshot names subprocess.Popen, which no snapshot may hold"
    )


def test_h11_and_hpack_classes_may_be_named_by_their_packages_top_level_names() -> None:
    assert load(_header() + _naming("h11", "Request"), type) is h11.Request
    assert load(_header() + _naming("hpack", "Encoder"), type) is hpack.Encoder


def test_a_function_of_our_package_not_allowed_is_refused() -> None:
    assert _refusal(_header() + _naming("s3p_codec._core.checkpoint", "dump")) == (
        "snapshot names s3p_codec._core.checkpoint.dump, which no snapshot may hold"
    )


def test_allow_lets_a_snapshot_name_that_function_and_no_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A copy of the allowed set, so that this test leaves the process as it found it.
    monkeypatch.setattr(checkpoint, "_ALLOWED_FUNCTIONS", set(checkpoint._ALLOWED_FUNCTIONS))
    refused = f"snapshot names {__name__}._kept, which no snapshot may hold"
    assert _refusal(dump({"f": _kept}), dict) == refused
    assert allow(_kept) is _kept  # what the decorator does
    assert load(dump({"f": _kept}), dict)["f"] is _kept
    assert _refusal(dump({"f": _not_kept}), dict) == (
        f"snapshot names {__name__}._not_kept, which no snapshot may hold"
    )


def test_errors_are_restored_through_their_allowed_rebuild() -> None:
    error = RemoteProtocolError("bad", code=ErrorCode.LIMITS, fatal=False, reply=("r",))
    back = load(dump(error), RemoteProtocolError)
    assert type(back) is RemoteProtocolError
    assert (back.message, back.code, back.fatal) == ("bad", ErrorCode.LIMITS, False)
    assert back.reply == ("r",)
    local = load(dump(LocalProtocolError("no", code=ErrorCode.BAD_FORMAT)), LocalProtocolError)
    assert (type(local), local.message, local.code, local.fatal) == (
        LocalProtocolError,
        "no",
        ErrorCode.BAD_FORMAT,
        True,
    )


@pytest.mark.parametrize(
    "event",
    [
        h11.Request(method="GET", target="/x", headers=[("Host", "a")]),
        h11.InformationalResponse(status_code=100, headers=[]),
        h11.Response(status_code=404, headers=[("Content-Length", "0")], reason=b"Gone"),
        h11.Data(data=b"abc", chunk_start=True, chunk_end=False),
        h11.EndOfMessage(headers=[("X-Trailer", "t")]),
        h11.ConnectionClosed(),
    ],
    ids=lambda event: type(event).__name__,
)
def test_h11_frozen_events_are_restored_field_by_field(event: object) -> None:
    back = load(dump(event), type(event))
    assert type(back) is type(event)
    assert back == event
    assert back is not event
