"""A tiny line-based codec that satisfies the ``Connection`` protocol, to test the adapters alone.

Events are ``Line`` values, one per ``\\n``-terminated line. It mimics what real codecs do at the
edges the adapters care about:

- a received line starting with ``!`` is a fatal ``RemoteProtocolError`` carrying a reply
  (``Line(b"ERR ...")``), in both roles, so tests can check that only a server answers;
- a received line starting with ``%`` is a fatal error whose reply is the whole line after
  ``ERR `` (a reply as large as the test wants);
- a received line starting with ``?`` is a recoverable error whose reply is ``Line(b"WARN ...")``;
- sending ``Line(b"BYE")`` finishes the connection (like an S3P server's error reply);
- a partial line left at end of stream is a fatal ``RemoteProtocolError``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator

import attrs

from s3p_codec import NEED_DATA, LocalProtocolError, NeedData, RemoteProtocolError, Role
from s3p_codec._core.lifecycle import ReplyAfterError, finished


@attrs.frozen
class Line:
    data: bytes


class State(enum.Enum):
    OPEN = "open"
    ERROR = "error"
    CLOSED = "closed"


class LineConnection:
    def __init__(self, role: Role) -> None:
        self._role = role
        self._state = State.OPEN
        self._buffer = bytearray()
        self._eof = False
        self._reply_gate = ReplyAfterError()
        self.sent: list[Line] = []

    @property
    def role(self) -> Role:
        return self._role

    @property
    def state(self) -> State:
        return self._state

    @property
    def finished(self) -> bool:
        return finished(self._reply_gate, ended=self._state is not State.OPEN)

    def send(self, event: Line) -> bytes:
        over = self._state is State.ERROR and not self._reply_gate.owed
        if self._state is State.CLOSED or over:
            raise LocalProtocolError("connection is over", code="closed")
        if b"\n" in event.data:
            raise LocalProtocolError("newline in a line", code="bad_line")
        self.sent.append(event)
        if self._reply_gate.pay(event):
            pass
        elif event.data == b"BYE":
            self._state = State.CLOSED
        return event.data + b"\n"

    def receive_data(self, data: bytes) -> None:
        if not data:
            self._eof = True
        self._buffer += data

    def _fail(self, message: str, *, fatal: bool, reply: Line | None = None) -> RemoteProtocolError:
        if reply is None:
            reply = Line((b"ERR " if fatal else b"WARN ") + message.encode())
        if fatal:
            self._state = State.ERROR
            self._reply_gate.owe(reply if self._role is Role.SERVER else None)
        return RemoteProtocolError(message, code="bad_line", fatal=fatal, reply=reply)

    def next_event(self) -> Line | NeedData:
        if self._state is State.ERROR:
            raise RemoteProtocolError("connection is broken", code="broken")
        index = self._buffer.find(b"\n")
        if index < 0:
            if self._eof and self._buffer:
                self._buffer.clear()
                raise self._fail("partial line at end of stream", fatal=True)
            return NEED_DATA
        data = bytes(self._buffer[:index])
        del self._buffer[: index + 1]
        if data.startswith(b"!"):
            raise self._fail("bang", fatal=True)
        if data.startswith(b"%"):
            raise self._fail("echoed", fatal=True, reply=Line(b"ERR " + data))
        if data.startswith(b"?"):
            raise self._fail("question", fatal=False)
        return Line(data)

    def events(self) -> Iterator[Line]:
        while True:
            event = self.next_event()
            if event is NEED_DATA:
                return
            yield event
