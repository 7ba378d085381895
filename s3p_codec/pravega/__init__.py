"""The Pravega segment-store wire protocol (the real format, append blocks included).

    from s3p_codec import pravega, Role
    client = pravega.Connection(Role.CLIENT)
    wire = client.send(pravega.Hello())
    wire += client.send(pravega.SetupAppend(1, writer_id, "scope/stream/0.#epoch.0"))
    wire += client.send(pravega.Append(writer_id, 0, (b"event",)))   # opens a block
    wire += client.send(pravega.FlushAppends())                      # closes it

The project's draft text (an early, 2017 version of this protocol) maps onto the real commands
like this:

==========================  =======================================================================
draft message               real command (type code) and layout used here
==========================  =======================================================================
8-byte header               i32 type code + i32 payload length (excluding the header), big-endian;
                            "Max payload 0xFFFFFF"
Partial Message (B/M/E)     ``PartialEvent`` (-2): raw bytes; the Begin/Middle/End byte never
                            shipped: only the end of an append block is ever split
KeepAlive                   ``KeepAlive`` (100): empty payload (any payload is skipped)
Read Segment                ``ReadSegment`` (9): segment, offset, suggestedLength, plus
                            delegationToken and requestId
Segment Read                ``SegmentRead`` (10): segment, offset, atTail and endOfSegment as one
                            byte each (the 1-bit booleans never shipped), i32 data length, data,
                            requestId
Setup Append                ``SetupAppend`` (1): requestId, writerId (the draft's ConnectionId),
                            segment, delegationToken
Append Setup                ``AppendSetup`` (2): requestId, segment, writerId, lastEventNumber (the
                            draft's ConnectionOffsetAckLevel, counted in events, not bytes;
                            Long.MIN_VALUE for a new writer)
BeginAppendBlock            ``AppendBlock`` (3): writerId, then the block content inside the same
                            frame (length = 16 + content); no offset or length fields
EndAppendBlock              ``AppendBlockEnd`` (4): writerId, sizeOfWholeEvents (the draft's
                            "Block Length"), the rest of a split event, numEvents,
                            lastEventNumber, requestId
Event                       ``EventCommand`` (0): only nested, as ``i32 0, i32 len, data``
Data Appended               ``DataAppended`` (7): writerId, eventNumber (the ack level, in
                            events), previousEventNumber, requestId, currentSegmentWriteOffset
==========================  =======================================================================

The real protocol adds ``Hello`` (-127, version negotiation), ``Padding`` (-1, fills a block
broken off early), ``ConditionalAppend`` / ``ConditionalBlockEnd`` / ``ConditionalCheckFailed``,
the segment lifecycle (create, info, seal, truncate, delete) and typed error replies; every other
real code decodes to ``Opaque`` with the code's name, and an undefined code is an error.

``Event`` is the union of everything a connection sends or yields, as in the other protocol
packages; the nested EVENT command is ``EventCommand``.
"""

from s3p_codec.pravega._appends import DEFAULT_BLOCK_SIZE
from s3p_codec.pravega._connection import Connection
from s3p_codec.pravega._events import (
    NULL_EVENT_NUMBER,
    OLDEST_COMPATIBLE_VERSION,
    WIRE_VERSION,
    Append,
    AppendBlock,
    AppendBlockEnd,
    AppendSetup,
    AuthTokenCheckFailed,
    Command,
    CommandType,
    ConditionalAppend,
    ConditionalBlockEnd,
    ConditionalCheckFailed,
    CreateSegment,
    DataAppended,
    DeleteSegment,
    ErrorCode,
    ErrorMessage,
    Event,
    EventCommand,
    FlushAppends,
    FlushToStorage,
    GetStreamSegmentInfo,
    Hello,
    InvalidEventNumber,
    KeepAlive,
    NoSuchSegment,
    Opaque,
    OperationUnsupported,
    Padding,
    PartialEvent,
    ReadSegment,
    SealSegment,
    SegmentAlreadyExists,
    SegmentCreated,
    SegmentDeleted,
    SegmentIsSealed,
    SegmentIsTruncated,
    SegmentRead,
    SegmentSealed,
    SegmentTruncated,
    SetupAppend,
    StreamSegmentInfo,
    TruncateSegment,
    WrongHost,
)
from s3p_codec.pravega._limits import Limits
from s3p_codec.pravega._observer import Observer
from s3p_codec.pravega._state import ConnectionState
from s3p_codec.pravega._wire import MAX_FRAME, encode

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "MAX_FRAME",
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
    "Connection",
    "ConnectionState",
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
    "Limits",
    "NoSuchSegment",
    "Observer",
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
    "encode",
]
