"""RustLog messages as typed, immutable events.

One class per ``"type"`` string of the spec. Each class carries its wire name (``TYPE``) and the
numeric identifier of the spec's enum comments (``TYPE_ID``, a ``MessageType``): "Response type =
Request type + 0x80 (except Error = 0xFF)". On the wire only the ``type`` string counts; the
numbers are identifiers, exposed for tables and captures.

Binary record payloads are ``bytes`` here and base64 on the wire. Sequences are tuples. The rows
inside responses (``Record``, ``TopicInfo``, ``PartitionInfo``) are ``NamedTuple``s: immutable and
exactly typed like the events, but built in C, which matters for a Fetch answer of a thousand
records. Free-form JSON (``Error.details``, ``MetricsFetchResponse.metrics``) is held as a
``JsonObject``: an immutable, hashable mapping whose arrays are tuples.

Each field names its JSON type in its annotation, as the spec's JSON Schema spells it:
``partition: Annotated[int, "u32"]``. That is the one place a message's fields are declared:
``schema`` derives from it the fields each ``type`` knows, the decoders, the encoders and the
constructors the parser uses (``kinds`` says what each type name means).

Events built by the parser are already valid; events built by users are checked when sent.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Annotated, ClassVar, NamedTuple, TypeAlias, TypeVar

import attrs

from s3p_codec._core.convert import as_tuple

__all__ = [
    "BY_TYPE_ID",
    "REQUEST_TYPES",
    "RESPONSE_TO",
    "RESPONSE_TYPES",
    "CreateTopic",
    "CreateTopicResponse",
    "DescribePartition",
    "DescribePartitionResponse",
    "DescribeTopic",
    "DescribeTopicResponse",
    "Error",
    "ErrorCode",
    "Event",
    "Fetch",
    "FetchResponse",
    "JsonObject",
    "JsonValue",
    "ListTopics",
    "ListTopicsResponse",
    "MessageType",
    "MetricsFetch",
    "MetricsFetchResponse",
    "OffsetCommit",
    "OffsetCommitResponse",
    "OffsetFetch",
    "OffsetFetchResponse",
    "PartitionInfo",
    "Ping",
    "Pong",
    "Produce",
    "ProduceResponse",
    "Record",
    "Request",
    "Response",
    "TopicInfo",
    "freeze_json",
    "trusted",
]

EventT = TypeVar("EventT")


class MessageType(enum.IntEnum):
    """The numeric identifiers of the spec's ``Request``/``Response`` enums."""

    PRODUCE = 0x01
    FETCH = 0x02
    OFFSET_COMMIT = 0x03
    OFFSET_FETCH = 0x04
    CREATE_TOPIC = 0x05
    LIST_TOPICS = 0x06
    DESCRIBE_TOPIC = 0x07
    DESCRIBE_PARTITION = 0x08
    METRICS_FETCH = 0x09
    PING = 0x0A
    PRODUCE_RESPONSE = 0x81
    FETCH_RESPONSE = 0x82
    OFFSET_COMMIT_RESPONSE = 0x83
    OFFSET_FETCH_RESPONSE = 0x84
    CREATE_TOPIC_RESPONSE = 0x85
    LIST_TOPICS_RESPONSE = 0x86
    DESCRIBE_TOPIC_RESPONSE = 0x87
    DESCRIBE_PARTITION_RESPONSE = 0x88
    METRICS_FETCH_RESPONSE = 0x89
    PONG = 0x8A
    ERROR = 0xFF

    @property
    def is_request(self) -> bool:
        """True for a request type (below 0x80)."""
        return self < 0x80

    @property
    def response(self) -> MessageType:
        """The response type of a request type: "Response type = Request type + 0x80".

        Raises ``ValueError`` on a response type.
        """
        if not self.is_request:
            raise ValueError(f"{self.name} is not a request type")
        return MessageType(self + 0x80)


class ErrorCode(enum.IntEnum):
    """The spec's ``ErrorCode`` enum; ``Error.code`` holds a plain int for codes added later."""

    # Client errors (4xx)
    TOPIC_NOT_FOUND = 404
    PARTITION_NOT_FOUND = 405
    OFFSET_OUT_OF_RANGE = 416
    RECORD_TOO_LARGE = 413
    INVALID_REQUEST = 400
    # Server errors (5xx)
    INTERNAL_SERVER_ERROR = 500
    STORAGE_ERROR = 503
    INSUFFICIENT_SPACE = 507


# --- free-form JSON -------------------------------------------------------------------------

#: A free-form JSON value as events hold it (tuples for arrays, ``JsonObject`` for objects).
JsonValue: TypeAlias = "bool | int | float | str | tuple[JsonValue, ...] | JsonObject | None"


class JsonObject(Mapping[str, "JsonValue"]):
    """An immutable JSON object: a read-only, hashable mapping; nested arrays are tuples.

    ``JsonObject({"a": [1, {"b": 2}]})`` freezes its argument deeply, so events holding one stay
    immutable and hashable. It compares equal to a ``dict`` with the same items.
    """

    __slots__ = ("_hash", "_items")

    _items: dict[str, JsonValue]
    _hash: int | None

    def __init__(self, items: Mapping[str, object] | Iterable[tuple[str, object]] = ()) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        self._items = {key: freeze_json(value) for key, value in pairs}
        self._hash = None

    @classmethod
    def _trusted(cls, items: dict[str, JsonValue]) -> JsonObject:
        # The parser has already frozen and checked every value: adopt the dict as it is.
        new = cls.__new__(cls)
        new._items = items
        new._hash = None
        return new

    def __getitem__(self, key: str) -> JsonValue:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._items.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"JsonObject({self._items!r})"

    def to_python(self) -> dict[str, object]:
        """A plain ``dict`` (arrays as lists), e.g. for ``json.dumps``."""
        return {key: _thaw(value) for key, value in self._items.items()}


def _thaw(value: object) -> object:
    if isinstance(value, JsonObject):
        return value.to_python()
    if isinstance(value, tuple):
        return [_thaw(item) for item in value]
    return value


def freeze_json(value: object, _depth: int = 0) -> JsonValue:
    """Deep-freeze a JSON-like value: mappings become ``JsonObject``, lists become tuples.

    Values of other types are left as they are (a send rejects them, with a precise error);
    so is anything nested absurdly deep, instead of recursing without end.
    """
    if isinstance(value, JsonObject) or _depth > 256:
        return value  # type: ignore[return-value]
    if isinstance(value, Mapping):
        frozen = JsonObject.__new__(JsonObject)
        frozen._items = {key: freeze_json(item, _depth + 1) for key, item in value.items()}
        frozen._hash = None
        return frozen
    if isinstance(value, list | tuple):
        return tuple(freeze_json(item, _depth + 1) for item in value)
    return value  # type: ignore[return-value]


def _freeze_object(value: Mapping[str, object]) -> JsonObject:
    frozen = freeze_json(value)
    return frozen if isinstance(frozen, JsonObject) else value  # type: ignore[return-value]


def _freeze_optional_object(value: Mapping[str, object] | None) -> JsonObject | None:
    return None if value is None else _freeze_object(value)


# --- rows inside responses ------------------------------------------------------------------


class Record(NamedTuple):
    """One record of a ``FetchResponse``."""

    offset: Annotated[int, "u64"]
    """"Logical offset of this record"."""
    timestamp: Annotated[int, "u64"]
    """"Microseconds since UNIX epoch (UTC)"."""
    payload: Annotated[bytes, "base64_string"]
    """The record data (base64 on the wire)."""


class TopicInfo(NamedTuple):
    """One topic of a ``ListTopicsResponse``."""

    name: Annotated[str, "topic"]
    partition_count: Annotated[int, "u32"]


class PartitionInfo(NamedTuple):
    """One partition of a ``DescribeTopicResponse``."""

    partition: Annotated[int, "u32"]
    high_watermark: Annotated[int, "u64"]
    """"Next offset that would be assigned"."""
    log_start_offset: Annotated[int, "u64"]
    """"Earliest available offset (after retention)"."""
    segment_count: Annotated[int, "usize"]
    """"Number of log segments (active + sealed)"."""


def trusted(cls: type[EventT]) -> Callable[..., EventT]:
    """A constructor of ``cls`` for values the parser has already checked and made exact.

    It fills the slots directly: attrs' frozen ``__init__`` goes through
    ``object.__setattr__`` for each field and runs the converters, which costs more than all the
    checks of a small request. The instance is the same as ``cls(*values)`` (equal, same hash);
    sequences must already be tuples and free-form values ``JsonObject`` instances.
    """
    new = object.__new__
    setters = [cls.__dict__[field.name].__set__ for field in attrs.fields(cls)]  # type: ignore[arg-type]
    if not setters:
        instance = cls()
        return lambda: instance
    if len(setters) == 1:
        (set_a,) = setters

        def make1(a: object) -> EventT:
            event = new(cls)
            set_a(event, a)
            return event

        return make1
    if len(setters) == 2:
        set_a, set_b = setters

        def make2(a: object, b: object) -> EventT:
            event = new(cls)
            set_a(event, a)
            set_b(event, b)
            return event

        return make2
    if len(setters) == 3:
        set_a, set_b, set_c = setters

        def make3(a: object, b: object, c: object) -> EventT:
            event = new(cls)
            set_a(event, a)
            set_b(event, b)
            set_c(event, c)
            return event

        return make3
    if len(setters) == 4:
        set_a, set_b, set_c, set_d = setters

        def make4(a: object, b: object, c: object, d: object) -> EventT:
            event = new(cls)
            set_a(event, a)
            set_b(event, b)
            set_c(event, c)
            set_d(event, d)
            return event

        return make4
    set_a, set_b, set_c, set_d, set_e = setters  # no event has more than five fields

    def make5(a: object, b: object, c: object, d: object, e: object) -> EventT:
        event = new(cls)
        set_a(event, a)
        set_b(event, b)
        set_c(event, c)
        set_d(event, d)
        set_e(event, e)
        return event

    return make5


# --- requests -------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class Produce:
    """ "Append records to a partition log"."""

    TYPE: ClassVar[str] = "Produce"
    TYPE_ID: ClassVar[MessageType] = MessageType.PRODUCE

    topic: Annotated[str, "topic"]
    partition: Annotated[int, "u32"]
    records: Annotated[tuple[bytes, ...], "[base64_string]"] = attrs.field(converter=as_tuple)


@attrs.frozen(slots=True)
class Fetch:
    """ "Read records from a partition starting at specified offset"."""

    TYPE: ClassVar[str] = "Fetch"
    TYPE_ID: ClassVar[MessageType] = MessageType.FETCH

    group_id: Annotated[str, "string"]
    topic: Annotated[str, "topic"]
    partition: Annotated[int, "u32"]
    offset: Annotated[int, "u64"]
    max_bytes: Annotated[int, "usize"]


@attrs.frozen(slots=True)
class OffsetCommit:
    """ "Store consumer group's committed offset for a partition"."""

    TYPE: ClassVar[str] = "OffsetCommit"
    TYPE_ID: ClassVar[MessageType] = MessageType.OFFSET_COMMIT

    group: Annotated[str, "string"]
    topic: Annotated[str, "topic"]
    partition: Annotated[int, "u32"]
    offset: Annotated[int, "u64"]


@attrs.frozen(slots=True)
class OffsetFetch:
    """ "Retrieve consumer group's committed offset for a partition"."""

    TYPE: ClassVar[str] = "OffsetFetch"
    TYPE_ID: ClassVar[MessageType] = MessageType.OFFSET_FETCH

    group: Annotated[str, "string"]
    topic: Annotated[str, "topic"]
    partition: Annotated[int, "u32"]


@attrs.frozen(slots=True)
class CreateTopic:
    """ "Create new topic with specified partition count"."""

    TYPE: ClassVar[str] = "CreateTopic"
    TYPE_ID: ClassVar[MessageType] = MessageType.CREATE_TOPIC

    topic: Annotated[str, "topic"]
    partition_count: Annotated[int, "partition count"]


@attrs.frozen(slots=True)
class ListTopics:
    """Request: every topic of the broker."""
    TYPE: ClassVar[str] = "ListTopics"
    TYPE_ID: ClassVar[MessageType] = MessageType.LIST_TOPICS


@attrs.frozen(slots=True)
class DescribeTopic:
    """Request: a topic's partitions and their offsets."""
    TYPE: ClassVar[str] = "DescribeTopic"
    TYPE_ID: ClassVar[MessageType] = MessageType.DESCRIBE_TOPIC

    topic: Annotated[str, "topic"]


@attrs.frozen(slots=True)
class DescribePartition:
    """One partition's offsets (schema decided here: the spec gives none)."""

    TYPE: ClassVar[str] = "DescribePartition"
    TYPE_ID: ClassVar[MessageType] = MessageType.DESCRIBE_PARTITION

    topic: Annotated[str, "topic"]
    partition: Annotated[int, "u32"]


@attrs.frozen(slots=True)
class MetricsFetch:
    """Request: the broker's metrics."""
    TYPE: ClassVar[str] = "MetricsFetch"
    TYPE_ID: ClassVar[MessageType] = MessageType.METRICS_FETCH


@attrs.frozen(slots=True)
class Ping:
    """Request: a liveness check, answered by ``Pong``."""
    TYPE: ClassVar[str] = "Ping"
    TYPE_ID: ClassVar[MessageType] = MessageType.PING


# --- responses ------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class ProduceResponse:
    """The answer to ``Produce``: the offset of the first record and how many were appended."""
    TYPE: ClassVar[str] = "ProduceResponse"
    TYPE_ID: ClassVar[MessageType] = MessageType.PRODUCE_RESPONSE

    base_offset: Annotated[int, "u64"]
    """"Logical offset assigned to first record"."""
    record_count: Annotated[int, "usize"]
    """"Number of successfully appended records"."""


@attrs.frozen(slots=True)
class FetchResponse:
    """The answer to ``Fetch``: the records read and the offset to fetch from next."""
    TYPE: ClassVar[str] = "FetchResponse"
    TYPE_ID: ClassVar[MessageType] = MessageType.FETCH_RESPONSE

    records: Annotated[tuple[Record, ...], "[Record]"] = attrs.field(converter=as_tuple)
    next_offset: Annotated[int, "u64"]
    """"Offset to use for next fetch request"."""


@attrs.frozen(slots=True)
class OffsetCommitResponse:
    """The answer to ``OffsetCommit``: whether the offset was stored."""
    TYPE: ClassVar[str] = "OffsetCommitResponse"
    TYPE_ID: ClassVar[MessageType] = MessageType.OFFSET_COMMIT_RESPONSE

    success: Annotated[bool, "bool"]


@attrs.frozen(slots=True)
class OffsetFetchResponse:
    """The answer to ``OffsetFetch``: the committed offset, or None."""
    TYPE: ClassVar[str] = "OffsetFetchResponse"
    TYPE_ID: ClassVar[MessageType] = MessageType.OFFSET_FETCH_RESPONSE

    offset: Annotated[int | None, "u64 | null"]
    """The committed offset, or None: "No commit found for this group/topic/partition"."""


@attrs.frozen(slots=True)
class CreateTopicResponse:
    """The answer to ``CreateTopic``: whether it succeeded and how many partitions were created."""
    TYPE: ClassVar[str] = "CreateTopicResponse"
    TYPE_ID: ClassVar[MessageType] = MessageType.CREATE_TOPIC_RESPONSE

    success: Annotated[bool, "bool"]
    partitions_created: Annotated[int, "u32"]


@attrs.frozen(slots=True)
class ListTopicsResponse:
    """The answer to ``ListTopics``: one ``TopicInfo`` per topic."""
    TYPE: ClassVar[str] = "ListTopicsResponse"
    TYPE_ID: ClassVar[MessageType] = MessageType.LIST_TOPICS_RESPONSE

    topics: Annotated[tuple[TopicInfo, ...], "[TopicInfo]"] = attrs.field(converter=as_tuple)


@attrs.frozen(slots=True)
class DescribeTopicResponse:
    """The answer to ``DescribeTopic``: one ``PartitionInfo`` per partition."""
    TYPE: ClassVar[str] = "DescribeTopicResponse"
    TYPE_ID: ClassVar[MessageType] = MessageType.DESCRIBE_TOPIC_RESPONSE

    topic: Annotated[str, "topic"]
    partitions: Annotated[tuple[PartitionInfo, ...], "[PartitionInfo]"] = attrs.field(
        converter=as_tuple
    )


@attrs.frozen(slots=True)
class DescribePartitionResponse:
    """One partition's offsets (schema decided here: the spec gives none)."""

    TYPE: ClassVar[str] = "DescribePartitionResponse"
    TYPE_ID: ClassVar[MessageType] = MessageType.DESCRIBE_PARTITION_RESPONSE

    topic: Annotated[str, "topic"]
    partition: Annotated[int, "u32"]
    high_watermark: Annotated[int, "u64"]
    log_start_offset: Annotated[int, "u64"]
    segment_count: Annotated[int, "usize"]


@attrs.frozen(slots=True)
class MetricsFetchResponse:
    """Broker metrics as one free-form JSON object (schema decided here: the spec gives none)."""

    TYPE: ClassVar[str] = "MetricsFetchResponse"
    TYPE_ID: ClassVar[MessageType] = MessageType.METRICS_FETCH_RESPONSE

    metrics: Annotated[JsonObject, "object"] = attrs.field(converter=_freeze_object)


@attrs.frozen(slots=True)
class Pong:
    """The answer to ``Ping``."""
    TYPE: ClassVar[str] = "Pong"
    TYPE_ID: ClassVar[MessageType] = MessageType.PONG


@attrs.frozen(slots=True)
class Error:
    """The spec's ``ErrorResponse``; it answers any request.

    ``code`` is an ``ErrorCode`` when the spec names it, else the plain int ("Add new error
    codes" is a backward compatible change, so unknown codes are kept, not rejected).
    """

    TYPE: ClassVar[str] = "Error"
    TYPE_ID: ClassVar[MessageType] = MessageType.ERROR

    code: Annotated[ErrorCode | int, "u16"]
    message: Annotated[str, "string"]
    details: Annotated[JsonObject | None, "object | null"] = attrs.field(
        default=None, converter=_freeze_optional_object
    )


#: The requests a client sends.
Request: TypeAlias = (
    Produce
    | Fetch
    | OffsetCommit
    | OffsetFetch
    | CreateTopic
    | ListTopics
    | DescribeTopic
    | DescribePartition
    | MetricsFetch
    | Ping
)
#: The responses a server sends (``Error`` included).
Response: TypeAlias = (
    ProduceResponse
    | FetchResponse
    | OffsetCommitResponse
    | OffsetFetchResponse
    | CreateTopicResponse
    | ListTopicsResponse
    | DescribeTopicResponse
    | DescribePartitionResponse
    | MetricsFetchResponse
    | Pong
    | Error
)
#: Any RustLog message.
Event: TypeAlias = Request | Response

#: The request classes, in the order of the spec's ``Request`` enum.
REQUEST_TYPES: tuple[type[Request], ...] = (
    Produce,
    Fetch,
    OffsetCommit,
    OffsetFetch,
    CreateTopic,
    ListTopics,
    DescribeTopic,
    DescribePartition,
    MetricsFetch,
    Ping,
)
#: The response classes, in the order of the spec's ``Response`` enum.
RESPONSE_TYPES: tuple[type[Response], ...] = (
    ProduceResponse,
    FetchResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    CreateTopicResponse,
    ListTopicsResponse,
    DescribeTopicResponse,
    DescribePartitionResponse,
    MetricsFetchResponse,
    Pong,
    Error,
)
BY_TYPE_ID: dict[MessageType, type[Event]] = {
    cls.TYPE_ID: cls for cls in (*REQUEST_TYPES, *RESPONSE_TYPES)
}
"""The event class of each numeric type id."""
RESPONSE_TO: dict[type[Request], type[Response]] = {
    request: response
    for request in REQUEST_TYPES
    for response in RESPONSE_TYPES
    if request.TYPE_ID.response == response.TYPE_ID
}
"""The response class that answers each request class (``Error`` answers any)."""
