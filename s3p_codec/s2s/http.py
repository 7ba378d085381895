"""Build and check the HTTP requests and responses that open S2S sessions.

Real S2 (and its official SDKs): append = ``POST /v1/streams/{stream}/records``, read =
``GET /v1/streams/{stream}/records?seq_num=..&wait=..``, with ``Content-Type``/``Accept:
s2s/proto``, ``Accept-Encoding``, ``Authorization: Bearer ..`` and ``s2-basin: <basin>`` (the
basin may also be the first label of the host, ``{basin}.b.s2.dev``). "A 200 with Content-Type:
s2s/proto opens the session; errors before that are plain JSON HTTP responses." The spec text's
``/v1/basins/{basin}/streams/{stream}/read`` and ``/append`` paths are accepted too.

Everything here is plain data in, plain data out: header lists are ``(bytes, bytes)`` pairs
with lower-case names, as HTTP/2 and h11 both use them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, unquote, urlencode

import attrs

from s3p_codec._core import LocalProtocolError, RemoteProtocolError
from s3p_codec._core.convert import as_tuple
from s3p_codec.s2s._compression import Compression, negotiate
from s3p_codec.s2s._connection import Session, terminal_error
from s3p_codec.s2s._errors import SessionTerminated, status_of
from s3p_codec.s2s._events import ErrorCode, Terminal
from s3p_codec.s2s._wire import decode_terminal, terminal_body

__all__ = [
    "CONTENT_TYPE",
    "ErrorResponse",
    "Headers",
    "ReadQuery",
    "SessionRequest",
    "SessionResponse",
    "build_request",
    "build_response",
    "check_response",
    "error_response",
    "parse_request",
    "records_path",
]

#: The S2S session content type (``Content-Type`` and ``Accept``).
CONTENT_TYPE = b"s2s/proto"
#: HTTP header pairs, names and values as bytes.
Headers = list[tuple[bytes, bytes]]


@attrs.frozen(slots=True)
class ReadQuery:
    """Query parameters of a read session: one start (``seq_num``, ``timestamp`` or
    ``tail_offset``), optional limits (``count``, ``bytes``, ``until``), ``wait`` seconds and
    ``clamp``. ``None`` leaves a parameter out."""

    seq_num: int | None = None
    timestamp: int | None = None
    tail_offset: int | None = None
    count: int | None = None
    bytes: int | None = None
    wait: int | None = None
    until: int | None = None
    clamp: bool = False

    def to_params(self) -> list[tuple[str, str]]:
        """The query parameters of a read session request, in S2's names; unset ones are left out.
        """
        params = [
            (name, str(value))
            for name in ("seq_num", "timestamp", "tail_offset", "count", "bytes", "wait", "until")
            if (value := getattr(self, name)) is not None
        ]
        if self.clamp:
            params.append(("clamp", "true"))
        return params


@attrs.frozen(slots=True)
class SessionRequest:
    """A request that opens an S2S session, as a client builds it or a server parsed it.

    ``accept`` is the compression the client asked for (from ``Accept-Encoding``);
    ``compression`` the one its request body uses (``Content-Encoding`` is not used by S2S:
    each frame says how it is compressed, so this is only the client's own setting).
    """

    session: Session
    stream: str
    basin: str | None = None
    token: str | None = None
    accept: Compression = Compression.NONE
    query: ReadQuery = ReadQuery()
    extra_headers: tuple[tuple[bytes, bytes], ...] = attrs.field(default=(), converter=as_tuple)


@attrs.frozen(slots=True)
class SessionResponse:
    """The 200 response that opens a session, with the compression its frames will use."""

    compression: Compression = Compression.NONE


@attrs.frozen(slots=True)
class ErrorResponse:
    """A pre-session error: a plain HTTP response with a JSON body."""

    status: int
    code: str
    message: str = ""


def records_path(stream: str) -> str:
    """``/v1/streams/{stream}/records`` with the stream name percent-encoded."""
    return f"/v1/streams/{quote(stream, safe='')}/records"


def build_request(request: SessionRequest) -> tuple[bytes, bytes, Headers]:
    """``(method, target, headers)`` of the request opening ``request.session``."""
    target = records_path(request.stream)
    headers: Headers = [(b"content-type", CONTENT_TYPE)]
    if request.session is Session.APPEND:
        method = b"POST"
        headers.append((b"accept", CONTENT_TYPE))
    else:
        method = b"GET"
        params = request.query.to_params()
        if params:
            target += "?" + urlencode(params)
    if request.accept is not Compression.NONE:
        headers.append((b"accept-encoding", request.accept.encoding.encode()))
    if request.token is not None:
        headers.append((b"authorization", b"Bearer " + request.token.encode("utf-8")))
    if request.basin is not None:
        headers.append((b"s2-basin", request.basin.encode("utf-8")))
    headers.extend(request.extra_headers)
    return method, target.encode("ascii"), headers


def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


def _refuse(code: ErrorCode, message: str) -> RemoteProtocolError:
    return RemoteProtocolError(
        message,
        code=code,
        reply=ErrorResponse(status_of(code), code.value, message),
    )


_INT_PARAMS = ("seq_num", "timestamp", "tail_offset", "count", "bytes", "wait", "until")


def _parse_query(raw: str) -> ReadQuery:
    values: dict[str, int] = {}
    clamp = False
    try:
        pairs = parse_qsl(raw, keep_blank_values=True, strict_parsing=False, max_num_fields=32)
    except ValueError as exc:
        raise _refuse(ErrorCode.BAD_QUERY, f"bad query string: {exc}") from exc
    for name, value in pairs:
        if name in _INT_PARAMS:
            if not value.isascii() or not value.isdigit() or len(value) > 20:
                raise _refuse(ErrorCode.BAD_QUERY, f"{name} must be an unsigned integer")
            number = int(value)
            if number >= 1 << 64:
                raise _refuse(ErrorCode.BAD_QUERY, f"{name} out of range")
            values[name] = number
        elif name == "clamp":
            if value not in ("true", "false"):
                raise _refuse(ErrorCode.BAD_QUERY, "clamp must be true or false")
            clamp = value == "true"
    starts = [n for n in ("seq_num", "timestamp", "tail_offset") if n in values]
    if len(starts) > 1:
        raise _refuse(ErrorCode.BAD_QUERY, f"only one start position, not {starts}")
    return ReadQuery(**values, clamp=clamp)


def parse_request(
    method: bytes, target: bytes, headers: Iterable[tuple[bytes, bytes]]
) -> SessionRequest:
    """Check a session request on the server side.

    Raises ``RemoteProtocolError`` whose ``reply`` is the ``ErrorResponse`` to answer with
    (``bad_path`` 404 for an unknown route, ``bad_header`` 400 for a wrong content type,
    ``bad_query`` 400 for malformed read parameters).
    """
    headers = list(headers)
    try:
        text = target.decode("ascii")
    except UnicodeDecodeError as exc:
        raise _refuse(ErrorCode.BAD_PATH, "request target is not ASCII") from exc
    path, _, raw_query = text.partition("?")
    parts = path.split("/")
    basin_header = _header(headers, b"s2-basin")
    basin = basin_header.decode("utf-8", "replace") if basin_header is not None else None
    session: Session | None = None
    stream = ""
    if len(parts) == 5 and parts[:3] == ["", "v1", "streams"] and parts[4] == "records":
        stream = parts[3]
        session = {b"POST": Session.APPEND, b"GET": Session.READ}.get(method)
    elif len(parts) == 7 and parts[:3] == ["", "v1", "basins"] and parts[4] == "streams":
        basin = unquote(parts[3])
        stream = parts[5]
        wanted = {"append": (b"POST", Session.APPEND), "read": (b"GET", Session.READ)}
        if parts[6] in wanted and wanted[parts[6]][0] == method:
            session = wanted[parts[6]][1]
    if session is None or not stream:
        raise _refuse(ErrorCode.BAD_PATH, f"no S2S session at {method.decode('latin-1')} {path}")
    try:
        stream = unquote(stream, errors="strict")
    except UnicodeDecodeError as exc:
        raise _refuse(ErrorCode.BAD_PATH, "stream name is not UTF-8") from exc
    content_type = _header(headers, b"content-type")
    accept = _header(headers, b"accept")
    if session is Session.APPEND and content_type != CONTENT_TYPE:
        raise _refuse(ErrorCode.BAD_HEADER, "an append session needs Content-Type: s2s/proto")
    if CONTENT_TYPE not in (content_type, accept):
        raise _refuse(ErrorCode.BAD_HEADER, "an S2S session needs s2s/proto")
    token = None
    authorization = _header(headers, b"authorization")
    if authorization is not None:
        scheme, _, credentials = authorization.partition(b" ")
        if scheme.lower() != b"bearer" or not credentials.strip():
            raise _refuse(ErrorCode.UNAUTHORIZED, "Authorization must be 'Bearer <token>'")
        token = credentials.strip().decode("utf-8", "replace")
    query = _parse_query(raw_query) if session is Session.READ else ReadQuery()
    return SessionRequest(
        session=session,
        stream=stream,
        basin=basin,
        token=token,
        accept=negotiate(_header(headers, b"accept-encoding")),
        query=query,
    )


def build_response(response: SessionResponse) -> tuple[int, Headers]:
    """Status and headers of the 200 that opens a session."""
    headers: Headers = [(b"content-type", CONTENT_TYPE)]
    if response.compression is not Compression.NONE:
        headers.append((b"content-encoding", response.compression.encoding.encode()))
    return 200, headers


def error_response(error: ErrorResponse | Terminal) -> tuple[int, Headers, bytes]:
    """Status, headers and JSON body of a pre-session error.

    A ``Terminal`` keeps its 412/416 details in the body, as S2 sends them. Raises
    ``LocalProtocolError`` for a status that is 200 or not an HTTP status.
    """
    if isinstance(error, ErrorResponse):
        error = Terminal(status=error.status, code=error.code, message=error.message)
    if type(error.status) is not int or not 100 <= error.status <= 599 or error.status == 200:
        raise LocalProtocolError(
            "an error response needs a non-200 HTTP status", code=ErrorCode.INVALID, fatal=False
        )
    body = terminal_body(error)
    headers: Headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    return error.status, headers, body


def check_response(
    status: int, headers: Iterable[tuple[bytes, bytes]], body: bytes = b""
) -> SessionResponse:
    """Client side: a 200 with ``s2s/proto`` opens the session; anything else raises.

    A non-200 raises the same typed errors as a terminal frame (``SessionTerminated``, and
    ``AppendConditionFailed`` / ``ReadUnwritten`` for 412 / 416) built from its JSON body (pass the
    whole body). A 200 with another content type raises ``RemoteProtocolError`` (``bad_header``).
    """
    headers = list(headers)
    if status != 200:
        raise _error_from_body(status, body)
    if _header(headers, b"content-type") != CONTENT_TYPE:
        raise RemoteProtocolError(
            "a session response needs Content-Type: s2s/proto", code=ErrorCode.BAD_HEADER
        )
    encoding = _header(headers, b"content-encoding")
    compression = Compression.NONE
    if encoding is not None:
        compression = {b"zstd": Compression.ZSTD, b"gzip": Compression.GZIP}.get(
            encoding.strip().lower(), Compression.NONE
        )
    return SessionResponse(compression)


def _error_from_body(status: int, body: bytes) -> SessionTerminated:
    if not 0 <= status <= 0xFFFF:
        status = 0
    terminal = decode_terminal(status.to_bytes(2, "big") + body)
    return terminal_error(terminal)


def json_body(value: object) -> bytes:
    """Compact JSON, as S2 writes its REST bodies."""
    return json.dumps(value, separators=(",", ":")).encode("utf-8")
