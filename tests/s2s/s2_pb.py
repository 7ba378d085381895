"""The official protobuf runtime's view of the seven s2.v1 messages, for differential tests.

Built at import time from a ``FileDescriptorProto`` written out below (the field list of the s2.v1
schema: package ``s2.v1``, proto3, ``optional`` where the schema says so), in a private
descriptor pool so that it never clashes with another copy of the schema in the process. No
protoc and no generated file are needed.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
U64, BYTES, STRING, MESSAGE = _F.TYPE_UINT64, _F.TYPE_BYTES, _F.TYPE_STRING, _F.TYPE_MESSAGE
OPT, REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED

# message -> [(name, number, type, label, message type or "", proto3 optional)]
SCHEMA: dict[str, list[tuple[str, int, int, int, str, bool]]] = {
    "StreamPosition": [
        ("seq_num", 1, U64, OPT, "", False),
        ("timestamp", 2, U64, OPT, "", False),
    ],
    "Header": [("name", 1, BYTES, OPT, "", False), ("value", 2, BYTES, OPT, "", False)],
    "AppendRecord": [
        ("timestamp", 1, U64, OPT, "", True),
        ("headers", 2, MESSAGE, REP, "Header", False),
        ("body", 3, BYTES, OPT, "", False),
    ],
    "AppendInput": [
        ("records", 1, MESSAGE, REP, "AppendRecord", False),
        ("match_seq_num", 2, U64, OPT, "", True),
        ("fencing_token", 3, STRING, OPT, "", True),
    ],
    "AppendAck": [
        ("start", 1, MESSAGE, OPT, "StreamPosition", False),
        ("end", 2, MESSAGE, OPT, "StreamPosition", False),
        ("tail", 3, MESSAGE, OPT, "StreamPosition", False),
    ],
    "SequencedRecord": [
        ("seq_num", 1, U64, OPT, "", False),
        ("timestamp", 2, U64, OPT, "", False),
        ("headers", 3, MESSAGE, REP, "Header", False),
        ("body", 4, BYTES, OPT, "", False),
    ],
    "ReadBatch": [
        ("records", 1, MESSAGE, REP, "SequencedRecord", False),
        ("tail", 2, MESSAGE, OPT, "StreamPosition", True),
    ],
}


def _build() -> dict[str, Any]:
    file = descriptor_pb2.FileDescriptorProto(
        name="s3p_test/s2/v1/s2.proto", package="s2.v1", syntax="proto3"
    )
    for message_name, fields in SCHEMA.items():
        message = file.message_type.add(name=message_name)
        for name, number, kind, label, type_name, optional in fields:
            field = message.field.add(name=name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = f".s2.v1.{type_name}"
            if optional:
                field.proto3_optional = True
                field.oneof_index = len(message.oneof_decl)
                message.oneof_decl.add(name=f"_{name}")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"s2.v1.{name}"))
        for name in SCHEMA
    }


_CLASSES = _build()
StreamPosition = _CLASSES["StreamPosition"]
Header = _CLASSES["Header"]
AppendRecord = _CLASSES["AppendRecord"]
AppendInput = _CLASSES["AppendInput"]
AppendAck = _CLASSES["AppendAck"]
SequencedRecord = _CLASSES["SequencedRecord"]
ReadBatch = _CLASSES["ReadBatch"]
