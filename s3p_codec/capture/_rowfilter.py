"""Display filters over rows, in the spirit of tshark's ``-Y``: ``s3p``,
``s3p and error``, ``latency_ms > 5``, ``not (s2s or durable)``,
``stream contains "ord"``.

Grammar (keywords and protocol names are case-insensitive)::

    expr       := or_expr
    or_expr    := and_expr ("or" | "||") and_expr ...
    and_expr   := unary ("and" | "&&") unary ...
    unary      := ("not" | "!") unary | "(" expr ")" | comparison | name
    comparison := COLUMN OP value          OP: == != < <= > >= contains
    name       := a protocol (s3p, rustlog, s2s, pravega, durable, unknown): protocol == name
                | error: every error row, what ``stats`` counts (``Row.is_error``: decoding
                  errors, unreadable files and the protocol's own error replies)
                | a row kind (event, gap, undecoded, capture_error, evicted): kind == name
                | a COLUMN: the column has a value (not null, not empty)
    value      := number | "quoted string" | 'quoted string' | bare word

``kind==error`` is narrower than ``error``: only the streams the decoder found broken, not the
error replies a server sent (those are well-formed events with an ``error_code``).

Columns are those of ``COLUMNS``. A number column compares with numbers only, a text column with
text (``==`` exact, ``contains`` a substring); a null never matches a comparison. Every mistake
(an unknown column, a text where a number is needed, an unbalanced parenthesis) is a
``FilterError`` naming the position, before any capture is read.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

from s3p_codec.capture._detect import PROTOCOLS
from s3p_codec.capture._rows import COLUMNS, Row, is_error

__all__ = ["FilterError", "RowFilter", "compile_filter"]

RowFilter = Callable[[Row], bool]
"""A compiled display filter: true for the rows to keep."""
KINDS = ("event", "error", "gap", "undecoded", "capture_error", "evicted")
_KINDS_OF = {c.name: c.kind for c in COLUMNS}
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<op>==|!=|<=|>=|<|>|&&|\|\||!|\(|\))
      | "(?P<dq>(?:[^"\\]|\\.)*)"
      | '(?P<sq>(?:[^'\\]|\\.)*)'
      | (?P<word>[^\s()=!<>&|"']+)
    )""",
    re.VERBOSE,
)
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "contains": lambda have, want: want in have,
}
_AND, _OR, _NOT = ("and", "&&"), ("or", "||"), ("not", "!")


class FilterError(ValueError):
    """A display filter that does not parse or names what rows do not have."""


class _Token:
    __slots__ = ("at", "kind", "text")

    def __init__(self, kind: str, text: str, at: int) -> None:
        self.kind = kind  # "op", "str" (quoted) or "word"
        self.text = text
        self.at = at


def _tokens(text: str) -> list[_Token]:
    out = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            raise FilterError(f"unexpected {text[at:].strip()[:10]!r} at column {at + 1}")
        start = match.start(match.lastgroup or 0)
        if match.group("op") is not None:
            out.append(_Token("op", match.group("op"), start))
        elif match.group("word") is not None:
            out.append(_Token("word", match.group("word"), start))
        else:
            quoted = match.group("dq") if match.group("dq") is not None else match.group("sq")
            out.append(_Token("str", re.sub(r"\\(.)", r"\1", quoted), start))
        at = match.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> _Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def is_(self, *words: str) -> bool:
        token = self.peek()
        return token is not None and token.kind != "str" and token.text.lower() in words

    def take(self) -> _Token:
        token = self.peek()
        if token is None:
            raise FilterError(f"filter {self.text!r} ends too early")
        self.pos += 1
        return token

    def parse(self) -> RowFilter:
        if not self.tokens:
            raise FilterError("empty filter")
        result = self.or_expr()
        token = self.peek()
        if token is not None:
            raise FilterError(f"unexpected {token.text!r} at column {token.at + 1}")
        return result

    def or_expr(self) -> RowFilter:
        parts = [self.and_expr()]
        while self.is_(*_OR):
            self.take()
            parts.append(self.and_expr())
        if len(parts) == 1:
            return parts[0]
        return lambda row: any(p(row) for p in parts)

    def and_expr(self) -> RowFilter:
        parts = [self.unary()]
        while self.is_(*_AND):
            self.take()
            parts.append(self.unary())
        if len(parts) == 1:
            return parts[0]
        return lambda row: all(p(row) for p in parts)

    def unary(self) -> RowFilter:
        if self.is_(*_NOT):
            self.take()
            inner = self.unary()
            return lambda row: not inner(row)
        token = self.take()
        if token.kind == "op" and token.text == "(":
            inner = self.or_expr()
            closing = self.take()
            if closing.text != ")":
                raise FilterError(f"expected ')' at column {closing.at + 1}")
            return inner
        if token.kind != "word":
            raise FilterError(f"expected a column or a protocol at column {token.at + 1}")
        if self.is_(*_COMPARE):
            return self.comparison(token)
        return self.name(token)

    def name(self, token: _Token) -> RowFilter:
        word = token.text.lower()
        if word in PROTOCOLS or word == "unknown":
            return lambda row: row.protocol == word
        if word in ("error", "errors"):
            return lambda row: is_error(row.kind, row.error_code)
        if word in KINDS:
            return lambda row: row.kind == word
        if token.text in _KINDS_OF:
            column = token.text
            return lambda row: getattr(row, column) not in (None, "")
        raise FilterError(
            f"unknown name {token.text!r} at column {token.at + 1}: use a protocol "
            f"({', '.join(PROTOCOLS)}), error (every error row), a kind ({', '.join(KINDS)}) "
            "or a column "
            f"({', '.join(_KINDS_OF)})"
        )

    def comparison(self, field: _Token) -> RowFilter:
        column = field.text
        kind = _KINDS_OF.get(column)
        if kind is None:
            raise FilterError(
                f"unknown column {column!r} at column {field.at + 1}; columns: "
                f"{', '.join(_KINDS_OF)}"
            )
        op_token = self.take()
        op = op_token.text.lower()
        value_token = self.take()
        if value_token.kind == "op":
            raise FilterError(f"expected a value at column {value_token.at + 1}")
        compare = _COMPARE[op]
        if kind in ("int", "float"):
            if op == "contains":
                raise FilterError(f"'contains' needs a text column, {column} is a number")
            try:
                number = float(value_token.text)
            except ValueError:
                raise FilterError(
                    f"{column} is a number; {value_token.text!r} at column "
                    f"{value_token.at + 1} is not"
                ) from None
            return lambda row: (v := getattr(row, column)) is not None and compare(v, number)
        text = value_token.text
        if column in ("protocol", "kind"):
            text = text.lower()
        return lambda row: (v := getattr(row, column)) is not None and compare(v, text)


def compile_filter(text: str) -> RowFilter:
    """A predicate over rows for a display filter (grammar in the module docstring).

    Raises ``FilterError`` (a ValueError) for any filter that does not parse or names something
    rows do not have.
    """
    return _Parser(text).parse()
