"""Server-Sent Events: the encoder servers use and an incremental parser for clients.

Written here rather than taken from a library because both halves are small, the parser must be
sans-IO, linear in bytes whatever the chunking, and bounded in memory, and the encoder must make
payloads injection-proof.

Encoding (Durable Streams section 5.8, WHATWG event-stream format):

- each payload line becomes its own ``data:`` line; "\\r\\n", "\\r" and "\\n" all end a line,
  so an embedded event boundary in a payload is carried as literal data and can never start an
  event of its own (CRLF injection);
- parsers strip exactly one optional space after ``data:``; the encoder writes ``data:`` with no
  space, and adds one only when the line itself starts with a space, so no byte is lost;
- no ``id:`` or ``retry:`` fields are ever written.

Parsing: lines end at CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the
next are one terminator); ``:`` starts a comment; a field without a colon has an empty value; a
blank line dispatches the event if any ``data`` line was seen; ``data`` lines are joined with
"\\n". The stream must be UTF-8 (a leading BOM is skipped).
"""

from __future__ import annotations

import base64
import json
import re

import attrs

from s3p_codec._core.errors import RemoteProtocolError
from s3p_codec.durable._events import ConnectionErrorCode, SSEControl, SSEData
from s3p_codec.durable.offsets import is_sentinel, offset_error

__all__ = [
    "SSEParser",
    "ServerSentEvent",
    "decode_control",
    "decode_data",
    "encode_control",
    "encode_data",
    "encode_event",
    "split_lines",
]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_TERMINATOR = re.compile(rb"[\r\n]")
_BOM = b"\xef\xbb\xbf"


def split_lines(text: str) -> list[str]:
    """Split at every CRLF, CR and LF (the three SSE line terminators)."""
    return _LINE_BREAK.split(text)


def encode_event(event: str, data: str) -> bytes:
    """``event: <event>`` then one ``data:`` line per payload line, then a blank line.

    Raises ``ValueError`` when ``event`` is empty or holds a line break (it would forge events).
    """
    if _LINE_BREAK.search(event) or not event:
        raise ValueError("an SSE event type is one non-empty line")
    parts = [f"event: {event}\n"]
    for line in split_lines(data):
        parts.append("data: " + line + "\n" if line.startswith(" ") else "data:" + line + "\n")
    parts.append("\n")
    return "".join(parts).encode("utf-8")


def encode_data(payload: bytes, *, base64_encoded: bool) -> bytes:
    """An ``event: data`` for ``payload``: UTF-8 text, or standard base64 for binary streams.

    "If a data event's byte payload length is 0, the base64 text MUST be the empty string."
    Text payloads that are not valid UTF-8 are decoded with replacement characters.
    """
    if base64_encoded:
        return encode_event("data", base64.b64encode(payload).decode("ascii"))
    return encode_event("data", payload.decode("utf-8", errors="replace"))


def encode_control(control: SSEControl) -> bytes:
    """An ``event: control`` with the camelCase JSON fields, cursor and flags only when set."""
    fields: dict[str, object] = {"streamNextOffset": control.next_offset}
    if control.cursor is not None:
        fields["streamCursor"] = control.cursor
    if control.up_to_date:
        fields["upToDate"] = True
    if control.closed:
        fields["streamClosed"] = True
    return encode_event("control", json.dumps(fields, separators=(",", ":")))


@attrs.frozen(slots=True)
class ServerSentEvent:
    """One dispatched SSE event: its type (``message`` by default) and joined data."""

    event: str
    data: str


def _error(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(message, code=ConnectionErrorCode.SSE, fatal=True)


class SSEParser:
    """Incremental ``text/event-stream`` parser: ``feed`` bytes, get complete events.

    Each byte is examined once: the search for a terminator resumes where it stopped. Raises
    ``RemoteProtocolError`` (code ``"sse"``) on invalid UTF-8, a line longer than ``max_line``
    or an event larger than ``max_event``.
    """

    __slots__ = (
        "_buffer",
        "_data",
        "_event",
        "_has_data",
        "_max_event",
        "_max_line",
        "_scan",
        "_skip_lf",
        "_started",
    )

    def __init__(self, *, max_line: int = 16 << 20, max_event: int = 32 << 20) -> None:
        self._buffer = bytearray()
        self._scan = 0
        self._skip_lf = False
        self._started = False
        self._event = ""
        # The event's data lines as UTF-8, each followed by LF: one byte per empty line, where a
        # list of strings cost about 11 bytes each (10M empty lines: 111 MiB for "10 MB").
        self._data = bytearray()
        self._has_data = False
        self._max_line = max_line
        self._max_event = max_event

    @property
    def pending(self) -> bool:
        """True if a partial line or a partial event is buffered (EOF now would cut it)."""
        return bool(self._buffer) or self._has_data or bool(self._event)

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        """Add bytes; return the events they complete."""
        buffer = self._buffer
        buffer += data
        if not self._started:
            if len(buffer) < len(_BOM) and _BOM.startswith(bytes(buffer)):
                return []  # maybe the start of a byte order mark: wait
            self._started = True
            if buffer.startswith(_BOM):
                del buffer[: len(_BOM)]
        if not buffer:
            return []
        events: list[ServerSentEvent] = []
        start = 0
        if self._skip_lf:
            self._skip_lf = False
            if buffer[0] == 0x0A:
                start = 1
        scan = max(start, self._scan)
        while True:
            found = _TERMINATOR.search(buffer, scan)
            if found is None:
                scan = len(buffer)
                if scan - start > self._max_line:
                    raise _error(f"SSE line longer than {self._max_line} bytes")
                break
            end = found.start()
            if end - start > self._max_line:
                raise _error(f"SSE line longer than {self._max_line} bytes")
            line = bytes(buffer[start:end])
            if buffer[end] == 0x0D and end + 1 == len(buffer):
                self._skip_lf = True  # a CR ends this chunk: an LF may follow in the next
                start = end + 1
            elif buffer[end] == 0x0D and buffer[end + 1] == 0x0A:
                start = end + 2
            else:
                start = end + 1
            scan = start
            event = self._line(line)
            if event is not None:
                events.append(event)
        del buffer[:start]
        self._scan = scan - start
        return events

    def _line(self, raw: bytes) -> ServerSentEvent | None:
        if raw[:5] == b"data:":
            self._add_data(raw[6:] if raw[5:6] == b" " else raw[5:])
            return None  # the commonest line, kept as bytes: checked as UTF-8 with its event
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _error("SSE stream is not valid UTF-8") from exc
        if not line:
            if not self._has_data:
                self._event = ""
                return None
            del self._data[-1:]  # the LF after the last line: lines are joined with LF
            try:
                text = self._data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _error("SSE stream is not valid UTF-8") from exc
            event = ServerSentEvent(self._event or "message", text)
            self._event = ""
            self._data = bytearray()
            self._has_data = False
            return event
        if line.startswith(":"):
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._event = value
        elif field == "data":
            self._add_data(b"")  # "data" alone: a field with an empty value
        # "id", "retry" and unknown fields carry nothing for Durable Streams.
        return None

    def _add_data(self, value: bytes) -> None:
        """Append a data line's value (its bytes after "data:" and one optional space) and the
        LF that joins it to the next."""
        data = self._data
        data += value
        data += b"\n"
        if len(data) > self._max_event:
            raise _error(f"SSE event larger than {self._max_event} bytes")
        self._has_data = True


def decode_data(event: ServerSentEvent, *, base64_encoded: bool) -> SSEData:
    """The bytes of an ``event: data``; base64 after removing every CR and LF.

    "The resulting string (after removing \\n and \\r) MUST be valid base64 text with length
    that is a multiple of 4 (or empty)."
    """
    if not base64_encoded:
        return SSEData(event.data.encode("utf-8"))
    text = event.data.replace("\n", "").replace("\r", "")
    if len(text) % 4:
        raise _error("base64 SSE data length is not a multiple of 4")
    try:
        return SSEData(base64.b64decode(text.encode("ascii"), validate=True))
    except (ValueError, UnicodeEncodeError) as exc:
        raise _error("SSE data event is not valid base64") from exc


def decode_control(event: ServerSentEvent) -> SSEControl:
    """The fields of an ``event: control`` JSON object; ``streamNextOffset`` is required."""
    try:
        fields = json.loads(event.data)
    except (ValueError, RecursionError) as exc:
        raise _error("SSE control event is not JSON") from exc
    if not isinstance(fields, dict):
        raise _error("SSE control event is not a JSON object")
    offset = fields.get("streamNextOffset")
    cursor = fields.get("streamCursor")
    up_to_date = fields.get("upToDate", False)
    closed = fields.get("streamClosed", False)
    if not isinstance(offset, str):
        raise _error("SSE control event without a string streamNextOffset")
    # Held to the rules of the Stream-Next-Offset header it stands for.
    why = offset_error(offset, 1 << 16)
    if why is not None:
        raise _error(f"SSE control streamNextOffset: {why}")
    if is_sentinel(offset):
        raise _error(f"SSE control streamNextOffset is the sentinel {offset!r}, not an offset")
    if cursor is not None and not isinstance(cursor, str):
        raise _error("SSE control streamCursor is not a string")
    if not isinstance(up_to_date, bool) or not isinstance(closed, bool):
        raise _error("SSE control upToDate/streamClosed are not booleans")
    return SSEControl(next_offset=offset, cursor=cursor, up_to_date=up_to_date, closed=closed)
