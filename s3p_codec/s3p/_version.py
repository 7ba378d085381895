"""Which S3P version a connection speaks, and the rules that differ between v0.1.0 and v0.2.0.

S3P has no handshake: both ends are configured with the same version (``Connection(role,
version="0.2.0")``). Framing is the same in both; what differs is gathered in ``Rules`` so the
parsers and encoders ask one object instead of testing the version everywhere:

- option keys per command (v0.2.0: CREATE has none, APPEND ``ID``, READ ``MIN_ID`` instead of
  ``MIN_TIMESTAMP``, TRIM ``MIN_ID`` instead of ``UNTIL``);
- DELETE's arity (v0.1.0 also accepts the appendix's 2 elements; v0.2.0's ABNF says 3);
- the code for a stream name length outside ``[1, max]`` and for ``COUNT 0`` (``ERR_BAD_FORMAT``
  in v0.1.0, ``ERR_LIMITS`` in v0.2.0);
- the error codes on the wire (v0.2.0 adds ``ERR_NON_MONOTONIC_ID``) and which of them leave
  the connection open (v0.2.0: ``ERR_STREAM_EXISTS``, ``ERR_UNKNOWN_STREAM``,
  ``ERR_NON_MONOTONIC_ID``; v0.1.0: none);
- whether READ's lower bound is inclusive (v0.2.0 ``MIN_ID``: records >= it; v0.1.0
  ``MIN_TIMESTAMP``: records > it).

``DETECT`` is the rule set of an Observer that does not know the version yet: it accepts what
either version accepts, so a capture decodes whichever version it holds.
"""

from __future__ import annotations

import enum

import attrs

from s3p_codec.s3p._events import ErrorCode

__all__ = ["DETECT", "RULES", "Rules", "Version", "rules_for"]


class Version(enum.StrEnum):
    """The S3P versions this codec speaks (the value is the spelling users pass)."""

    V0_1_0 = "0.1.0"
    V0_2_0 = "0.2.0"


V010_CODES = frozenset(
    {ErrorCode.BAD_FORMAT, ErrorCode.STREAM_EXISTS, ErrorCode.UNKNOWN_STREAM, ErrorCode.LIMITS}
)
RECOVERABLE_V020 = frozenset(
    {ErrorCode.STREAM_EXISTS, ErrorCode.UNKNOWN_STREAM, ErrorCode.NON_MONOTONIC_ID}
)


@attrs.frozen(slots=True)
class Rules:
    """What one version (or the Observer's version detection) accepts and how it answers."""

    version: Version | None
    """None: the union of both versions, for an Observer still detecting."""
    options: dict[bytes, tuple[bytes, ...]]
    """Known option keys per command, upper case ("Unknown option keys MUST be rejected")."""
    delete_arities: frozenset[int]
    name_length_code: ErrorCode
    count_zero_code: ErrorCode
    codes: frozenset[ErrorCode]
    """Error codes that may appear on the wire."""
    recoverable: frozenset[ErrorCode]
    """Error codes after which the connection stays open."""
    min_inclusive: bool
    """READ returns records >= its lower bound (v0.2.0 MIN_ID), not > (v0.1.0 MIN_TIMESTAMP)."""

    def keeps_open(self, code: ErrorCode) -> bool:
        """True if an Error reply with ``code`` leaves the connection open."""
        return code in self.recoverable


_V010_OPTIONS = {
    b"CREATE": (b"TIMESTAMP_STRATEGY",),
    b"APPEND": (b"TIMESTAMP",),
    b"READ": (b"COUNT", b"BLOCK", b"MIN_TIMESTAMP"),
    b"TRIM": (b"UNTIL",),
    b"DELETE": (),
}
_V020_OPTIONS: dict[bytes, tuple[bytes, ...]] = {
    b"CREATE": (),
    b"APPEND": (b"ID",),
    b"READ": (b"COUNT", b"BLOCK", b"MIN_ID"),
    b"TRIM": (b"MIN_ID",),
    b"DELETE": (),
}

RULES: dict[Version, Rules] = {
    Version.V0_1_0: Rules(
        Version.V0_1_0,
        _V010_OPTIONS,
        frozenset({2, 3}),
        ErrorCode.BAD_FORMAT,
        ErrorCode.BAD_FORMAT,
        V010_CODES,
        frozenset(),
        min_inclusive=False,
    ),
    Version.V0_2_0: Rules(
        Version.V0_2_0,
        _V020_OPTIONS,
        frozenset({3}),
        ErrorCode.LIMITS,
        ErrorCode.LIMITS,
        frozenset(ErrorCode),
        RECOVERABLE_V020,
        min_inclusive=True,
    ),
}
"""The rules of each version, looked up once per connection."""

DETECT = Rules(
    None,
    {name: _V010_OPTIONS[name] + _V020_OPTIONS[name] for name in _V010_OPTIONS},
    frozenset({2, 3}),
    ErrorCode.BAD_FORMAT,
    ErrorCode.BAD_FORMAT,
    frozenset(ErrorCode),
    RECOVERABLE_V020,
    min_inclusive=True,
)
"""Both versions at once: an Observer that has not yet seen which one a conversation speaks."""


def rules_for(version: str | Version) -> Rules:
    """The rules of ``version`` (``"0.1.0"`` or ``"0.2.0"``); ValueError for anything else."""
    try:
        return RULES[Version(version)]
    except ValueError:
        raise ValueError(
            f"unknown S3P version {version!r}; use one of {[v.value for v in Version]}"
        ) from None
