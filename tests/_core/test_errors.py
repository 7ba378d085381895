"""Error classes: fields, pickling (Spark ships them between processes), and the hierarchy."""

from __future__ import annotations

import pickle

from s3p_codec import LocalProtocolError, ProtocolError, RemoteProtocolError
from s3p_codec._core.types import NEED_DATA, Direction, Role


def test_errors_carry_code_fatal_and_reply() -> None:
    err = RemoteProtocolError("bad", code="ERR_BAD_FORMAT", reply=("reply",))
    assert isinstance(err, ProtocolError)
    assert (err.code, err.fatal, err.reply, str(err)) == ("ERR_BAD_FORMAT", True, ("reply",), "bad")
    assert LocalProtocolError("no", code=400, fatal=False).fatal is False


def test_errors_survive_pickling() -> None:
    err = RemoteProtocolError("bad", code=413, fatal=False, reply={"x": 1})
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is RemoteProtocolError
    assert (back.message, back.code, back.fatal, back.reply) == ("bad", 413, False, {"x": 1})


def test_roles_and_directions_are_each_others_inverse() -> None:
    assert Role.CLIENT.peer is Role.SERVER
    assert Direction.sent_by(Role.SERVER) is Direction.SERVER_TO_CLIENT
    assert Direction.CLIENT_TO_SERVER.reverse.sender is Role.SERVER
    assert repr(NEED_DATA) == "NEED_DATA"
