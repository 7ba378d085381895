"""What the command line's capture arguments name: files, directories and glob patterns,
or URLs of objects (``s3://bucket/prefix/``, ``s3://bucket/cap-*.pcap*``, ``file://...``).

A directory stands for the capture files directly in it (files that start like a pcap, pcapng
or gzip file; anything else beside them is passed over), a pattern (``'cap-*.pcap*'``, quoted so the
shell leaves it alone) for the files it matches. A name that matches nothing is kept as it is,
so that decoding reports it (a missing file is an error row and a line on stderr, not silence).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable

from s3p_codec.capture._pcap import capture_order
from s3p_codec.capture._remote import expand_url, is_remote, local_path

__all__ = ["expand_inputs", "unreadable_reason"]


def expand_inputs(patterns: Iterable[str]) -> list[str]:
    """Files named by ``patterns`` in capture order (``cap2`` before ``cap10``), no duplicates;
    names that match nothing stay, for ``decode_files`` to report."""
    found: list[str] = []
    for name in patterns:
        if is_remote(name):
            found.extend(expand_url(name))
            continue
        pattern = local_path(name)
        if os.path.isdir(pattern):
            inside = sorted(glob.glob(os.path.join(glob.escape(pattern), "*")))
            files = [p for p in inside if os.path.isfile(p) and _looks_like_capture(p)]
            found.extend(files or [pattern])
        elif glob.has_magic(pattern) and not os.path.exists(pattern):
            matches = [p for p in sorted(glob.glob(pattern)) if os.path.isfile(p)]
            found.extend(matches or [pattern])
        else:
            found.append(pattern)
    return capture_order(dict.fromkeys(found))


_MAGICS = (
    b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d",  # pcap
    b"\x0a\x0d\x0d\x0a",  # pcapng
)  # fmt: skip


def _looks_like_capture(path: str) -> bool:
    """A directory's member is taken when it starts like a capture (or gzip): notes, scripts
    and JSON beside the captures are passed over, as a reader of the directory expects."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return True  # let decoding say why it cannot be read
    return head.startswith(b"\x1f\x8b") or head in _MAGICS


def unreadable_reason(path: str) -> str | None:
    """Why ``path`` cannot be opened as a file (None if it can): said before decoding, as tshark
    says ``The file "x" doesn't exist.``; None for a URL, whose store's own words are said."""
    if is_remote(path):
        return None
    if glob.has_magic(path) and not os.path.exists(path):
        return "no file matches this pattern"
    if not os.path.exists(path):
        return "no such file"
    if os.path.isdir(path):
        return "a directory without capture files"
    if not os.access(path, os.R_OK):
        return "permission denied"
    return None
