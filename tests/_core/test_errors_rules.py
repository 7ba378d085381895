"""ProtocolError's repr: its class, message, code, fatality and reply."""

from __future__ import annotations

from s3p_codec._core.errors import LocalProtocolError, RemoteProtocolError
from s3p_codec.s3p import ErrorCode


def test_the_repr_names_the_class_and_every_field() -> None:
    remote = RemoteProtocolError("bad", code=ErrorCode.LIMITS, fatal=False, reply=("r",))
    assert repr(remote) == (
        "RemoteProtocolError('bad', code=<ErrorCode.LIMITS: 'ERR_LIMITS'>, fatal=False,"
        " reply=('r',))"
    )
    local = LocalProtocolError("no", code=ErrorCode.BAD_FORMAT)
    assert repr(local) == (
        "LocalProtocolError('no', code=<ErrorCode.BAD_FORMAT: 'ERR_BAD_FORMAT'>, fatal=True,"
        " reply=None)"
    )
