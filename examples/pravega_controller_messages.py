"""Protocol Buffers messages of Pravega's controller API, declared here in Python.

The official clients find segments through a gRPC controller (package
``io.pravega.controller.stream.api.grpc.v1``, service ``ControllerService``). Only the messages
of the calls a client makes are declared, with the field numbers and wire types of Pravega's
published API; names are ours. Enum fields are declared as ``int32``: an enum travels as a
varint, so the bytes are the same and no enum type is needed. Declaring the file as a
``FileDescriptorProto`` in Python means no ``.proto`` file and no code generation step:
``protobuf``'s message factory builds the classes when this module is imported.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["PACKAGE", "SERVICE", "message"]

PACKAGE = "io.pravega.controller.stream.api.grpc.v1"
"""The protobuf package of the controller API (part of every gRPC method path)."""
SERVICE = f"{PACKAGE}.ControllerService"
"""The full gRPC service name the clients call."""

_F = descriptor_pb2.FieldDescriptorProto
_KINDS = {
    "string": _F.TYPE_STRING,
    "int32": _F.TYPE_INT32,
    "int64": _F.TYPE_INT64,
    "bool": _F.TYPE_BOOL,
    "double": _F.TYPE_DOUBLE,
}

# message name -> fields as (name, number, type); "repeated " in front of a type repeats it;
# a type that is not a scalar names another message of this file.
_MESSAGES: dict[str, list[tuple[str, int, str]]] = {
    "ServerRequest": [],
    "ServerResponse": [("nodes", 1, "repeated NodeUri")],
    "NodeUri": [("endpoint", 1, "string"), ("port", 2, "int32")],
    "ScopeInfo": [("scope", 1, "string")],
    "ContinuationToken": [("token", 1, "string")],
    "ScopesRequest": [("token", 1, "ContinuationToken")],
    "ScopesResponse": [("scopes", 1, "repeated string"), ("token", 2, "ContinuationToken")],
    "StreamInfo": [("scope", 1, "string"), ("stream", 2, "string"), ("access", 3, "int32")],
    "StreamsInScopeRequest": [("scope", 1, "ScopeInfo"), ("token", 2, "ContinuationToken")],
    "StreamsInScopeWithTagRequest": [
        ("scope", 1, "ScopeInfo"),
        ("tag", 2, "string"),
        ("token", 3, "ContinuationToken"),
    ],
    "StreamsInScopeResponse": [
        ("streams", 1, "repeated StreamInfo"),
        ("token", 2, "ContinuationToken"),
        ("status", 3, "int32"),
    ],
    "Status": [("status", 1, "int32")],
    "ExistsResponse": [("exists", 1, "bool")],
    "ScalingPolicy": [
        ("scale_type", 1, "int32"),
        ("target_rate", 2, "int32"),
        ("scale_factor", 3, "int32"),
        ("min_segments", 4, "int32"),
    ],
    "RetentionPolicy": [
        ("retention_type", 1, "int32"),
        ("retention_param", 2, "int64"),
        ("retention_max", 3, "int64"),
    ],
    "Tags": [("tag", 1, "repeated string")],
    "StreamConfig": [
        ("stream", 1, "StreamInfo"),
        ("scaling", 2, "ScalingPolicy"),
        ("retention", 3, "RetentionPolicy"),
        ("tags", 4, "Tags"),
    ],
    "CutEntry": [("segment", 1, "int64"), ("offset", 2, "int64")],
    "StreamCut": [("stream", 1, "StreamInfo"), ("cut", 2, "repeated CutEntry")],
    "SegmentId": [("stream", 1, "StreamInfo"), ("segment_id", 2, "int64")],
    "SegmentRange": [
        ("segment", 1, "SegmentId"),
        ("min_key", 2, "double"),
        ("max_key", 3, "double"),
    ],
    "SegmentRanges": [("ranges", 1, "repeated SegmentRange"), ("token", 2, "string")],
    "GetEpochSegmentsRequest": [("stream", 1, "StreamInfo"), ("epoch", 2, "int32")],
    "GetSegmentsRequest": [("stream", 1, "StreamInfo"), ("timestamp", 2, "int64")],
    "SegmentLocation": [("segment", 1, "SegmentId"), ("offset", 2, "int64")],
    "SegmentsAtTime": [("segments", 1, "repeated SegmentLocation"), ("token", 2, "string")],
    "SuccessorEntry": [("segment", 1, "SegmentRange"), ("predecessors", 2, "repeated int64")],
    "SuccessorResponse": [("segments", 1, "repeated SuccessorEntry"), ("token", 2, "string")],
    "TxnId": [("high", 1, "int64"), ("low", 2, "int64")],
    "CreateTxnRequest": [("stream", 1, "StreamInfo"), ("lease", 2, "int64")],
    "CreateTxnResponse": [
        ("txn", 1, "TxnId"),
        ("segments", 2, "repeated SegmentRange"),
        ("token", 3, "string"),
    ],
    "TxnRequest": [
        ("stream", 1, "StreamInfo"),
        ("txn", 2, "TxnId"),
        ("writer", 3, "string"),
        ("timestamp", 4, "int64"),
    ],
    "PingTxnRequest": [("stream", 1, "StreamInfo"), ("txn", 2, "TxnId"), ("lease", 3, "int64")],
    "TxnState": [("state", 1, "int32")],
    "DelegationToken": [("token", 1, "string")],
}


def _build() -> dict[str, Any]:
    proto = descriptor_pb2.FileDescriptorProto(
        name="s3p_codec_examples/pravega_controller.proto", package=PACKAGE, syntax="proto3"
    )
    for name, fields in _MESSAGES.items():
        msg = proto.message_type.add(name=name)
        for field_name, number, declared in fields:
            repeated = declared.startswith("repeated ")
            kind = declared.removeprefix("repeated ")
            field = msg.field.add(name=field_name, number=number, json_name=field_name)
            field.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
            if kind in _KINDS:
                field.type = _KINDS[kind]
            else:
                field.type = _F.TYPE_MESSAGE
                field.type_name = f".{PACKAGE}.{kind}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))
        for name in _MESSAGES
    }


_CLASSES = _build()


def message(name: str, **fields: Any) -> Any:
    """Build the message ``name`` (a key of this module's table) with ``fields``.

    Raises ``KeyError`` for a name that is not declared here.
    """
    return _CLASSES[name](**fields)


def message_class(name: str) -> Any:
    """The generated class of ``name`` (for ``FromString`` / ``SerializeToString``)."""
    return _CLASSES[name]
