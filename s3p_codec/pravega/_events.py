"""Typed events of the Pravega segment-store wire protocol, and its type codes.

One ``attrs`` class per wire command, fields in wire order, named after the real commands of
``WireCommands.java`` in snake case. Each wire field is declared once, annotated with its wire
kind (``request_id: Annotated[int, "long"]``); ``"optional"`` after the kind marks a field that
real readers treat as optional ("fields were added at the end over time; a reader treats a
missing trailing field as absent"), read as its default when absent. ``FIELDS``, the layout the
codec reads and writes by, is derived from those annotations: ``(name, kind)`` for a required
field, ``(name, kind, default)`` for an optional one.

Wire kinds: ``long`` i64, ``int`` i32, ``byte`` i8, ``bool`` one byte (non-zero reads as true),
``uuid`` 16 bytes (most significant long first), ``str`` u16 count + modified UTF-8,
``data`` i32 count + bytes, ``event`` a nested ``EVENT`` frame (i32 0, i32 count, bytes),
``rest`` every remaining byte of the frame.

Three events never travel as one frame: ``Append`` (what a server-role connection reassembles
from ``AppendBlock`` + ``AppendBlockEnd``, and what a client sends through its block writer),
``FlushAppends`` (asks the client block writer to close its open block now, like the real
client's block timeout) and ``Opaque`` (a real command this package does not type).

Names: ``Event`` is the union of all events, as in every other protocol package, and the
nested EVENT command ("Event - Request ... Only valid inside of a block") is ``EventCommand``.
"""

from __future__ import annotations

import enum
import typing
import uuid
from typing import Annotated, ClassVar, TypeAlias

import attrs

from s3p_codec._core.convert import as_tuple

__all__ = [
    "NULL_EVENT_NUMBER",
    "OLDEST_COMPATIBLE_VERSION",
    "WIRE_VERSION",
    "Append",
    "AppendBlock",
    "AppendBlockEnd",
    "AppendSetup",
    "AuthTokenCheckFailed",
    "Command",
    "CommandType",
    "ConditionalAppend",
    "ConditionalBlockEnd",
    "ConditionalCheckFailed",
    "CreateSegment",
    "DataAppended",
    "DeleteSegment",
    "ErrorCode",
    "ErrorMessage",
    "Event",
    "EventCommand",
    "FlushAppends",
    "FlushToStorage",
    "GetStreamSegmentInfo",
    "Hello",
    "InvalidEventNumber",
    "KeepAlive",
    "NoSuchSegment",
    "Opaque",
    "OperationUnsupported",
    "Padding",
    "PartialEvent",
    "ReadSegment",
    "SealSegment",
    "SegmentAlreadyExists",
    "SegmentCreated",
    "SegmentDeleted",
    "SegmentIsSealed",
    "SegmentIsTruncated",
    "SegmentRead",
    "SegmentSealed",
    "SegmentTruncated",
    "SetupAppend",
    "StreamSegmentInfo",
    "TruncateSegment",
    "WrongHost",
]

WIRE_VERSION = 17
"""The wire version this package speaks (``WireCommands.WIRE_VERSION``)."""
OLDEST_COMPATIBLE_VERSION = 5
"""The oldest peer version it still talks to (``WireCommands.OLDEST_COMPATIBLE_VERSION``)."""
NULL_EVENT_NUMBER = -(1 << 63)
"""``AppendSetup.last_event_number`` "(Long.MIN_VALUE for a writer the server has never seen)"."""


class ErrorCode(enum.StrEnum):
    """Why a frame or a sequence of frames was refused (``ProtocolError.code``).

    Pravega has no numeric error codes for broken frames: a real segment store logs an
    ``InvalidMessageException`` and closes the connection. These codes name the cases.
    """

    BAD_FRAME = "bad_frame"
    """Negative or over-limit length, or the connection ended inside a frame."""
    UNKNOWN_COMMAND = "unknown_command"
    """A type code that Pravega does not define ("Unknown wire command")."""
    MALFORMED = "malformed"
    """A payload shorter than its required fields, or a bad nested length."""
    BAD_STRING = "bad_string"
    """A string field that is not (strict) modified UTF-8, or too long to write."""
    UNEXPECTED_COMMAND = "unexpected_command"
    """A command this end never receives (a reply sent to a server, a bare EVENT, ...)."""
    INVALID_APPEND = "invalid_append"
    """An append block or append sequence that breaks a rule (``InvalidMessageException``)."""
    INCOMPATIBLE_VERSION = "incompatible_version"
    """The peer's Hello range does not overlap ours."""
    INVALID_FIELD = "invalid_field"
    """An event built by the user holds a value its wire field cannot carry."""
    STATE = "state"
    """The connection is closed or broken and cannot do that any more."""


class CommandType(enum.IntEnum):
    """Every type code of the real protocol (``WireCommandType.java``); "all fit in -127..127"."""

    HELLO = -127
    PADDING = -1
    PARTIAL_EVENT = -2
    FLUSH_TO_STORAGE = -3
    FLUSHED_TO_STORAGE = -4
    LIST_STORAGE_CHUNKS = -5
    STORAGE_CHUNKS_LISTED = -6
    EVENT = 0
    SETUP_APPEND = 1
    APPEND_SETUP = 2
    APPEND_BLOCK = 3
    APPEND_BLOCK_END = 4
    CONDITIONAL_APPEND = 5
    DATA_APPENDED = 7
    CONDITIONAL_CHECK_FAILED = 8
    READ_SEGMENT = 9
    SEGMENT_READ = 10
    GET_STREAM_SEGMENT_INFO = 11
    STREAM_SEGMENT_INFO = 12
    CREATE_SEGMENT = 20
    SEGMENT_CREATED = 21
    SEAL_SEGMENT = 28
    SEGMENT_SEALED = 29
    DELETE_SEGMENT = 30
    SEGMENT_DELETED = 31
    UPDATE_SEGMENT_POLICY = 32
    SEGMENT_POLICY_UPDATED = 33
    GET_SEGMENT_ATTRIBUTE = 34
    SEGMENT_ATTRIBUTE = 35
    UPDATE_SEGMENT_ATTRIBUTE = 36
    SEGMENT_ATTRIBUTE_UPDATED = 37
    TRUNCATE_SEGMENT = 38
    SEGMENT_TRUNCATED = 39
    CREATE_TRANSIENT_SEGMENT = 40
    LOCATE_OFFSET = 41
    OFFSET_LOCATED = 42
    WRONG_HOST = 50
    SEGMENT_IS_SEALED = 51
    SEGMENT_ALREADY_EXISTS = 52
    NO_SUCH_SEGMENT = 53
    INVALID_EVENT_NUMBER = 55
    SEGMENT_IS_TRUNCATED = 56
    OPERATION_UNSUPPORTED = 57
    MERGE_SEGMENTS = 58
    SEGMENTS_MERGED = 59
    AUTH_TOKEN_CHECK_FAILED = 60
    ERROR_MESSAGE = 61
    GET_TABLE_SEGMENT_INFO = 68
    TABLE_SEGMENT_INFO = 69
    CREATE_TABLE_SEGMENT = 70
    DELETE_TABLE_SEGMENT = 71
    UPDATE_TABLE_ENTRIES = 74
    TABLE_ENTRIES_UPDATED = 75
    REMOVE_TABLE_KEYS = 76
    TABLE_KEYS_REMOVED = 77
    READ_TABLE = 78
    TABLE_READ = 79
    TABLE_SEGMENT_NOT_EMPTY = 80
    TABLE_KEY_DOES_NOT_EXIST = 81
    TABLE_KEY_BAD_VERSION = 82
    READ_TABLE_KEYS = 83
    TABLE_KEYS_READ = 84
    READ_TABLE_ENTRIES = 85
    TABLE_ENTRIES_READ = 86
    TABLE_ENTRIES_DELTA_READ = 87
    READ_TABLE_ENTRIES_DELTA = 88
    CONDITIONAL_BLOCK_END = 89
    MERGE_SEGMENTS_BATCH = 90
    SEGMENTS_BATCH_MERGED = 91
    KEEP_ALIVE = 100


Field: TypeAlias = tuple[str, str] | tuple[str, str, object]
"""(attribute, wire kind) for a required field; (attribute, wire kind, default) if optional."""

_NIL = uuid.UUID(int=0)


class _Command:
    """Base of the typed wire commands: ``TYPE`` is the code, ``FIELDS`` the layout."""

    __slots__ = ()
    TYPE: ClassVar[CommandType]
    FIELDS: ClassVar[tuple[Field, ...]]


# --- both directions -------------------------------------------------------------------------


@attrs.frozen(slots=True)
class Hello(_Command):
    """Version negotiation, sent first by both ends: "highVersion i32, lowVersion i32"."""

    TYPE: ClassVar[CommandType] = CommandType.HELLO
    high_version: Annotated[int, "int"] = WIRE_VERSION
    low_version: Annotated[int, "int"] = OLDEST_COMPATIBLE_VERSION


@attrs.frozen(slots=True)
class KeepAlive(_Command):
    """Liveness ping, echoed by the server. "KeepAlive: empty (skip any payload)"."""

    TYPE: ClassVar[CommandType] = CommandType.KEEP_ALIVE


# --- append blocks (the frames a block writer emits) -----------------------------------------


@attrs.frozen(slots=True)
class Padding(_Command):
    """Fills a block that was broken off early: "Padding: `length` zero bytes"."""

    TYPE: ClassVar[CommandType] = CommandType.PADDING
    length: int = 0


@attrs.frozen(slots=True)
class PartialEvent(_Command):
    """The first bytes of an event that did not fit into its block."""

    TYPE: ClassVar[CommandType] = CommandType.PARTIAL_EVENT
    data: Annotated[bytes, "rest"] = b""


@attrs.frozen(slots=True)
class EventCommand(_Command):
    """The EVENT command: "it appears only nested, as `i32 0, i32 len, data`"."""

    TYPE: ClassVar[CommandType] = CommandType.EVENT
    data: Annotated[bytes, "rest"] = b""


@attrs.frozen(slots=True)
class AppendBlock(_Command):
    """Opens a block: "writerId UUID, then raw block content (length = 16 + content size)"."""

    TYPE: ClassVar[CommandType] = CommandType.APPEND_BLOCK
    writer_id: Annotated[uuid.UUID, "uuid"]
    data: Annotated[bytes, "rest"] = b""


@attrs.frozen(slots=True)
class AppendBlockEnd(_Command):
    """Closes a block; ``data`` holds the rest of an event split by the block's end."""

    TYPE: ClassVar[CommandType] = CommandType.APPEND_BLOCK_END
    writer_id: Annotated[uuid.UUID, "uuid"]
    size_of_whole_events: Annotated[int, "int"]
    data: Annotated[bytes, "data"]
    num_events: Annotated[int, "int"]
    last_event_number: Annotated[int, "long"]
    request_id: Annotated[int, "long", "optional"] = -1


# --- requests ------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class SetupAppend(_Command):
    """Registers a writer for a segment before it appends."""

    TYPE: ClassVar[CommandType] = CommandType.SETUP_APPEND
    request_id: Annotated[int, "long"]
    writer_id: Annotated[uuid.UUID, "uuid"]
    segment: Annotated[str, "str"]
    delegation_token: Annotated[str, "str"] = ""


@attrs.frozen(slots=True)
class ConditionalAppend(_Command):
    """One event, appended only if the segment's length is ``expected_offset``."""

    TYPE: ClassVar[CommandType] = CommandType.CONDITIONAL_APPEND
    writer_id: Annotated[uuid.UUID, "uuid"]
    event_number: Annotated[int, "long"]
    expected_offset: Annotated[int, "long"]
    data: Annotated[bytes, "event"]
    request_id: Annotated[int, "long", "optional"] = -1


@attrs.frozen(slots=True)
class ConditionalBlockEnd(_Command):
    """Raw bytes appended only at ``expected_offset`` (large events are sent this way)."""

    TYPE: ClassVar[CommandType] = CommandType.CONDITIONAL_BLOCK_END
    writer_id: Annotated[uuid.UUID, "uuid"]
    event_number: Annotated[int, "long"]
    expected_offset: Annotated[int, "long"]
    data: Annotated[bytes, "data"]
    request_id: Annotated[int, "long"]


@attrs.frozen(slots=True)
class ReadSegment(_Command):
    """Asks for data at ``offset``; the server answers one or more ``SegmentRead``."""

    TYPE: ClassVar[CommandType] = CommandType.READ_SEGMENT
    segment: Annotated[str, "str"]
    offset: Annotated[int, "long"]
    suggested_length: Annotated[int, "int"]
    delegation_token: Annotated[str, "str"] = ""
    request_id: Annotated[int, "long", "optional"] = -1


@attrs.frozen(slots=True)
class GetStreamSegmentInfo(_Command):
    """Asks for a segment's length, start offset and state."""

    TYPE: ClassVar[CommandType] = CommandType.GET_STREAM_SEGMENT_INFO
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    delegation_token: Annotated[str, "str"] = ""


@attrs.frozen(slots=True)
class CreateSegment(_Command):
    """Creates a segment (note the wire order: target rate before scale type)."""

    TYPE: ClassVar[CommandType] = CommandType.CREATE_SEGMENT
    NO_SCALE: ClassVar[int] = 0
    IN_KBYTES_PER_SEC: ClassVar[int] = 1
    IN_EVENTS_PER_SEC: ClassVar[int] = 2
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    target_rate: Annotated[int, "int"] = 0
    scale_type: Annotated[int, "byte"] = 0
    delegation_token: Annotated[str, "str"] = ""
    rollover_size_bytes: Annotated[int, "long", "optional"] = 0


@attrs.frozen(slots=True)
class SealSegment(_Command):
    """Makes a segment read-only."""

    TYPE: ClassVar[CommandType] = CommandType.SEAL_SEGMENT
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    delegation_token: Annotated[str, "str"] = ""


@attrs.frozen(slots=True)
class TruncateSegment(_Command):
    """Drops the data of a segment before ``truncation_offset``."""

    TYPE: ClassVar[CommandType] = CommandType.TRUNCATE_SEGMENT
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    truncation_offset: Annotated[int, "long"]
    delegation_token: Annotated[str, "str"] = ""


@attrs.frozen(slots=True)
class DeleteSegment(_Command):
    """Deletes a segment."""

    TYPE: ClassVar[CommandType] = CommandType.DELETE_SEGMENT
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    delegation_token: Annotated[str, "str"] = ""


@attrs.frozen(slots=True)
class FlushToStorage(_Command):
    """Admin request: flush a container to long-term storage."""

    TYPE: ClassVar[CommandType] = CommandType.FLUSH_TO_STORAGE
    container_id: Annotated[int, "int"]
    delegation_token: Annotated[str, "str"] = ""
    request_id: Annotated[int, "long"] = -1


# --- replies -------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class AppendSetup(_Command):
    """The writer may append; ``last_event_number`` is the last one the store has for it."""

    TYPE: ClassVar[CommandType] = CommandType.APPEND_SETUP
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    writer_id: Annotated[uuid.UUID, "uuid"]
    last_event_number: Annotated[int, "long"] = NULL_EVENT_NUMBER


@attrs.frozen(slots=True)
class DataAppended(_Command):
    """Acknowledges every event of a writer up to ``event_number``."""

    TYPE: ClassVar[CommandType] = CommandType.DATA_APPENDED
    writer_id: Annotated[uuid.UUID, "uuid"]
    event_number: Annotated[int, "long"]
    previous_event_number: Annotated[int, "long", "optional"] = -1
    request_id: Annotated[int, "long", "optional"] = -1
    current_segment_write_offset: Annotated[int, "long", "optional"] = -1


@attrs.frozen(slots=True)
class ConditionalCheckFailed(_Command):
    """A conditional append found the segment at another offset."""

    TYPE: ClassVar[CommandType] = CommandType.CONDITIONAL_CHECK_FAILED
    writer_id: Annotated[uuid.UUID, "uuid"]
    event_number: Annotated[int, "long"]
    request_id: Annotated[int, "long", "optional"] = -1


@attrs.frozen(slots=True)
class SegmentRead(_Command):
    """Data read from ``offset``; ``at_tail`` / ``end_of_segment`` are one byte each."""

    TYPE: ClassVar[CommandType] = CommandType.SEGMENT_READ
    segment: Annotated[str, "str"]
    offset: Annotated[int, "long"]
    at_tail: Annotated[bool, "bool"]
    end_of_segment: Annotated[bool, "bool"]
    data: Annotated[bytes, "data"]
    request_id: Annotated[int, "long", "optional"] = -1


@attrs.frozen(slots=True)
class StreamSegmentInfo(_Command):
    """A segment's state; ``write_offset`` is its length, ``start_offset`` its truncation."""

    TYPE: ClassVar[CommandType] = CommandType.STREAM_SEGMENT_INFO
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    exists: Annotated[bool, "bool"]
    is_sealed: Annotated[bool, "bool"]
    is_deleted: Annotated[bool, "bool"]
    last_modified: Annotated[int, "long"]
    write_offset: Annotated[int, "long"]
    start_offset: Annotated[int, "long", "optional"] = 0


@attrs.frozen(slots=True)
class SegmentCreated(_Command):
    """Reply to ``CreateSegment``."""

    TYPE: ClassVar[CommandType] = CommandType.SEGMENT_CREATED
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]


@attrs.frozen(slots=True)
class SegmentSealed(_Command):
    """Reply to ``SealSegment``."""

    TYPE: ClassVar[CommandType] = CommandType.SEGMENT_SEALED
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]


@attrs.frozen(slots=True)
class SegmentTruncated(_Command):
    """Reply to ``TruncateSegment``."""

    TYPE: ClassVar[CommandType] = CommandType.SEGMENT_TRUNCATED
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]


@attrs.frozen(slots=True)
class SegmentDeleted(_Command):
    """Reply to ``DeleteSegment``."""

    TYPE: ClassVar[CommandType] = CommandType.SEGMENT_DELETED
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]


# --- error replies -------------------------------------------------------------------------


@attrs.frozen(slots=True)
class WrongHost(_Command):
    """The segment lives on another segment store."""

    TYPE: ClassVar[CommandType] = CommandType.WRONG_HOST
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    correct_host: Annotated[str, "str"] = ""
    server_stack_trace: Annotated[str, "str", "optional"] = ""


@attrs.frozen(slots=True)
class SegmentIsSealed(_Command):
    """The segment is sealed; ``offset`` is where (-1 if the peer did not say)."""

    TYPE: ClassVar[CommandType] = CommandType.SEGMENT_IS_SEALED
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    server_stack_trace: Annotated[str, "str", "optional"] = ""
    offset: Annotated[int, "long", "optional"] = -1


@attrs.frozen(slots=True)
class SegmentIsTruncated(_Command):
    """A read fell before the segment's ``start_offset``."""

    TYPE: ClassVar[CommandType] = CommandType.SEGMENT_IS_TRUNCATED
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    start_offset: Annotated[int, "long"]
    server_stack_trace: Annotated[str, "str", "optional"] = ""
    offset: Annotated[int, "long", "optional"] = -1


@attrs.frozen(slots=True)
class SegmentAlreadyExists(_Command):
    """``CreateSegment`` for a name that exists."""

    TYPE: ClassVar[CommandType] = CommandType.SEGMENT_ALREADY_EXISTS
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    server_stack_trace: Annotated[str, "str", "optional"] = ""


@attrs.frozen(slots=True)
class NoSuchSegment(_Command):
    """The segment does not exist; ``offset`` echoes the request's (-1 if absent)."""

    TYPE: ClassVar[CommandType] = CommandType.NO_SUCH_SEGMENT
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    server_stack_trace: Annotated[str, "str", "optional"] = ""
    offset: Annotated[int, "long", "optional"] = -1


@attrs.frozen(slots=True)
class InvalidEventNumber(_Command):
    """The writer's event numbers are inconsistent with what the store has."""

    TYPE: ClassVar[CommandType] = CommandType.INVALID_EVENT_NUMBER
    writer_id: Annotated[uuid.UUID, "uuid"]
    request_id: Annotated[int, "long"]
    server_stack_trace: Annotated[str, "str", "optional"] = ""
    event_number: Annotated[int, "long", "optional"] = -1


@attrs.frozen(slots=True)
class OperationUnsupported(_Command):
    """The server does not implement the request."""

    TYPE: ClassVar[CommandType] = CommandType.OPERATION_UNSUPPORTED
    request_id: Annotated[int, "long"]
    operation_name: Annotated[str, "str"]
    server_stack_trace: Annotated[str, "str", "optional"] = ""


@attrs.frozen(slots=True)
class AuthTokenCheckFailed(_Command):
    """The delegation token was refused; ``error_code`` -1 unspecified, 0 failed, 1 expired."""

    TYPE: ClassVar[CommandType] = CommandType.AUTH_TOKEN_CHECK_FAILED
    UNSPECIFIED: ClassVar[int] = -1
    TOKEN_CHECK_FAILED: ClassVar[int] = 0
    TOKEN_EXPIRED: ClassVar[int] = 1
    request_id: Annotated[int, "long"]
    server_stack_trace: Annotated[str, "str", "optional"] = ""
    error_code: Annotated[int, "int", "optional"] = -1


@attrs.frozen(slots=True)
class ErrorMessage(_Command):
    """A generic error; ``error_code`` -1 unspecified, 0 illegal argument."""

    TYPE: ClassVar[CommandType] = CommandType.ERROR_MESSAGE
    UNSPECIFIED: ClassVar[int] = -1
    ILLEGAL_ARGUMENT: ClassVar[int] = 0
    request_id: Annotated[int, "long"]
    segment: Annotated[str, "str"]
    message: Annotated[str, "str"]
    error_code: Annotated[int, "int"] = -1


# --- not single frames ---------------------------------------------------------------------


@attrs.frozen(slots=True)
class Opaque:
    """A real command this package does not type: its code and raw payload, kept as they were."""

    type: CommandType
    payload: bytes = b""

    @property
    def name(self) -> str:
        """The command's name in ``WireCommandType.java``."""
        return self.type.name


@attrs.frozen(slots=True)
class Append:
    """Whole events of one writer, numbered up to ``event_number`` (the last one's number).

    A server-role connection yields one per ``AppendBlock`` + ``AppendBlockEnd`` (or a lone
    ``AppendBlockEnd``), with ``request_id`` taken from the block end. A client sends them to its
    block writer, which frames them into blocks; there ``request_id`` is ignored (the block end
    carries the ``SetupAppend``'s request id, as the real client does).
    """

    writer_id: uuid.UUID
    event_number: int
    events: tuple[bytes, ...] = attrs.field(converter=as_tuple)
    request_id: int = -1


@attrs.frozen(slots=True)
class FlushAppends:
    """Close the open block now (PADDING + AppendBlockEnd) and send queued appends.

    The real client does this when its block timer fires; a sans-IO codec has no clock, so the
    caller decides when (typically when it has nothing more to write for a moment).
    """


Command: TypeAlias = (
    Hello
    | KeepAlive
    | Padding
    | PartialEvent
    | EventCommand
    | AppendBlock
    | AppendBlockEnd
    | SetupAppend
    | ConditionalAppend
    | ConditionalBlockEnd
    | ReadSegment
    | GetStreamSegmentInfo
    | CreateSegment
    | SealSegment
    | TruncateSegment
    | DeleteSegment
    | FlushToStorage
    | AppendSetup
    | DataAppended
    | ConditionalCheckFailed
    | SegmentRead
    | StreamSegmentInfo
    | SegmentCreated
    | SegmentSealed
    | SegmentTruncated
    | SegmentDeleted
    | WrongHost
    | SegmentIsSealed
    | SegmentIsTruncated
    | SegmentAlreadyExists
    | NoSuchSegment
    | InvalidEventNumber
    | OperationUnsupported
    | AuthTokenCheckFailed
    | ErrorMessage
)
"""Every typed single-frame command."""

Event: TypeAlias = Command | Opaque | Append | FlushAppends
"""Everything a connection sends or yields."""

TYPED: dict[CommandType, type[_Command]] = {cls.TYPE: cls for cls in typing.get_args(Command)}
"""The class of each typed code; other real codes decode to ``Opaque``."""


def _wire_fields(cls: type[_Command]) -> tuple[Field, ...]:
    """``cls.FIELDS``: its attributes annotated with a wire kind, in order (the others, such as
    ``Padding.length``, are not payload fields)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    fields: list[Field] = []
    for field in attrs.fields(typing.cast("type[attrs.AttrsInstance]", cls)):
        kind, *flags = getattr(hints[field.name], "__metadata__", (None,))
        if kind is not None:
            fields.append((field.name, kind, field.default) if flags else (field.name, kind))
    return tuple(fields)


for _cls in TYPED.values():
    _cls.FIELDS = _wire_fields(_cls)

_BOTH = frozenset({CommandType.HELLO, CommandType.KEEP_ALIVE})
_REPLY_NAMES = (
    "FLUSHED_TO_STORAGE STORAGE_CHUNKS_LISTED APPEND_SETUP DATA_APPENDED CONDITIONAL_CHECK_FAILED "
    "SEGMENT_READ STREAM_SEGMENT_INFO SEGMENT_CREATED SEGMENT_SEALED SEGMENT_DELETED "
    "SEGMENT_POLICY_UPDATED SEGMENT_ATTRIBUTE SEGMENT_ATTRIBUTE_UPDATED SEGMENT_TRUNCATED "
    "OFFSET_LOCATED WRONG_HOST SEGMENT_IS_SEALED SEGMENT_ALREADY_EXISTS NO_SUCH_SEGMENT "
    "INVALID_EVENT_NUMBER SEGMENT_IS_TRUNCATED OPERATION_UNSUPPORTED SEGMENTS_MERGED "
    "AUTH_TOKEN_CHECK_FAILED ERROR_MESSAGE TABLE_SEGMENT_INFO TABLE_ENTRIES_UPDATED "
    "TABLE_KEYS_REMOVED TABLE_READ TABLE_SEGMENT_NOT_EMPTY TABLE_KEY_DOES_NOT_EXIST "
    "TABLE_KEY_BAD_VERSION TABLE_KEYS_READ TABLE_ENTRIES_READ TABLE_ENTRIES_DELTA_READ "
    "SEGMENTS_BATCH_MERGED"
)
REPLIES = frozenset(CommandType[name] for name in _REPLY_NAMES.split()) | _BOTH
"""Codes a server sends (a client receives)."""
REQUESTS = (frozenset(CommandType) - REPLIES - {CommandType.EVENT}) | _BOTH
"""Codes a client sends (a server receives). ``EVENT`` travels only nested."""
