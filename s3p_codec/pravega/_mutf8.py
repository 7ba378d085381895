"""Java's *modified* UTF-8, the string encoding of ``DataOutput.writeUTF`` / ``readUTF``.

Pravega writes every string field with ``writeUTF``: a u16 byte count, then modified UTF-8.
It differs from UTF-8 in three ways: "NUL as C0 80; each UTF-16 surrogate encoded separately as
3 bytes; no 4-byte forms; max 65535 bytes". Python has no codec for it, so it is written here on
top of the standard ``utf-8``/``utf-16`` codecs (which do the per-byte work in C).

Decision (strict by default, lenient on request):

- **strict** (the default) accepts exactly what ``writeUTF`` can produce: a raw 0x00 byte, an
  overlong form (other than C0 80 for NUL), a 4-byte form and a broken surrogate (a high surrogate
  not followed by a low one, or a lone low one) are rejected. Decoded supplementary characters are
  joined from their surrogate pairs, so a Python ``str`` comes out.
- **lenient** accepts what Java's ``readUTF`` accepts: any 1-byte value (raw NUL too), overlong
  2- and 3-byte forms, and unpaired surrogates (kept as lone surrogate code points in the
  ``str``). Only structurally broken input (a continuation byte where a lead is expected, a lead
  byte 0xF0-0xFF, a missing continuation, a truncated sequence) is rejected, as Java does.

Encoding is strict unless asked otherwise: a ``str`` holding lone surrogates cannot be written in
strict mode; in lenient mode each surrogate is written as its own 3-byte form, as Java does.
Errors are ``ValueError`` subclasses internal to this package (``MUTF8Error``); the wire layer
turns them into the protocol's typed errors.
"""

from __future__ import annotations

import re

__all__ = ["MAX_UTF_BYTES", "MUTF8Error", "decode", "encode"]

MAX_UTF_BYTES = 65535
"""``writeUTF`` refuses strings longer than this many encoded bytes (u16 length prefix)."""

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_NUL_FORM = b"\xc0\x80"


class MUTF8Error(ValueError):
    """Bytes that are not modified UTF-8, or a string that cannot be written as such."""


def _split_pair(match: re.Match[str]) -> str:
    code = ord(match.group()) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


def encode(text: str, *, strict: bool = True) -> bytes:
    """``text`` as modified UTF-8 (without the u16 length prefix).

    Raises ``MUTF8Error`` when the result is over 65535 bytes, or (strict mode) ``text`` holds a
    broken surrogate.
    """
    if text.isascii() and "\x00" not in text:
        data = text.encode("ascii")
    else:
        if strict:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise MUTF8Error(
                    f"broken surrogate at index {exc.start}: strict mode writes only valid text"
                ) from None
        # "each UTF-16 surrogate encoded separately as 3 bytes; no 4-byte forms"
        split = _ASTRAL.sub(_split_pair, text)
        data = split.encode("utf-8", "surrogatepass").replace(b"\x00", _NUL_FORM)
    if len(data) > MAX_UTF_BYTES:
        raise MUTF8Error(f"encoded string is {len(data)} bytes; the limit is {MAX_UTF_BYTES}")
    return data


def decode(data: bytes, *, strict: bool = True) -> str:
    """Modified UTF-8 ``data`` (without the length prefix) as a ``str``.

    Raises ``MUTF8Error`` for bytes that are not modified UTF-8 (in strict mode: a raw NUL too).
    """
    if data.isascii():
        if b"\x00" not in data:
            return data.decode("ascii")
        if strict:
            raise MUTF8Error(f"raw NUL byte at {data.index(0)}: NUL is written as C0 80")
        return data.decode("ascii")
    if strict:
        return _decode_strict(data)
    try:
        return _decode_strict(data)
    except MUTF8Error:
        return _decode_java(data)


def _decode_strict(data: bytes) -> str:
    if b"\x00" in data:
        raise MUTF8Error(f"raw NUL byte at {data.index(0)}: NUL is written as C0 80")
    for index, byte in enumerate(data):
        if byte >= 0xF0:
            raise MUTF8Error(f"byte 0x{byte:02X} at {index}: modified UTF-8 has no 4-byte forms")
    # C0 80 is the only overlong form allowed; the utf-8 codec rejects every other one.
    try:
        units = data.replace(_NUL_FORM, b"\x00").decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise MUTF8Error(f"invalid modified UTF-8 at {exc.start}: {exc.reason}") from None
    return _join_surrogates(units, strict=True)


def _join_surrogates(units: str, *, strict: bool) -> str:
    """Join UTF-16 surrogate pairs into supplementary characters."""
    try:
        wide = units.encode("utf-16-be", "surrogatepass")
        return wide.decode("utf-16-be", "strict" if strict else "surrogatepass")
    except UnicodeDecodeError as exc:
        raise MUTF8Error(f"broken surrogate at UTF-16 unit {exc.start // 2}") from None


def _decode_java(data: bytes) -> str:
    """What ``DataInputStream.readUTF`` accepts: overlongs, raw NUL and lone surrogates too."""
    units: list[str] = []
    append = units.append
    size = len(data)
    index = 0
    while index < size:
        lead = data[index]
        if lead < 0x80:
            append(chr(lead))
            index += 1
            continue
        kind = lead >> 4
        if kind in (12, 13):  # 110xxxxx 10xxxxxx
            if index + 2 > size:
                raise MUTF8Error(f"truncated 2-byte form at {index}")
            second = data[index + 1]
            if second & 0xC0 != 0x80:
                raise MUTF8Error(f"bad continuation byte at {index + 1}")
            append(chr(((lead & 0x1F) << 6) | (second & 0x3F)))
            index += 2
        elif kind == 14:  # 1110xxxx 10xxxxxx 10xxxxxx
            if index + 3 > size:
                raise MUTF8Error(f"truncated 3-byte form at {index}")
            second, third = data[index + 1], data[index + 2]
            if second & 0xC0 != 0x80 or third & 0xC0 != 0x80:
                raise MUTF8Error(f"bad continuation byte after {index}")
            append(chr(((lead & 0x0F) << 12) | ((second & 0x3F) << 6) | (third & 0x3F)))
            index += 3
        else:  # 10xxxxxx or 1111xxxx
            raise MUTF8Error(f"byte 0x{lead:02X} at {index} cannot start a character")
    return _join_surrogates("".join(units), strict=False)
