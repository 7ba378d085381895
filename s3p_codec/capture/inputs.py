"""What the command line's capture arguments name: files, directories and glob patterns.

A directory stands for the files directly in it, a pattern (``'cap-*.pcap*'``, quoted so the
shell leaves it alone) for the files it matches. A name that matches nothing is kept as it is,
so that decoding reports it (a missing file is an error row and a line on stderr, not silence).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable

from s3p_codec.capture.pcap import capture_order

__all__ = ["expand_inputs", "unreadable_reason"]


def expand_inputs(patterns: Iterable[str]) -> list[str]:
    """Files named by ``patterns`` in capture order (``cap2`` before ``cap10``), no duplicates;
    names that match nothing stay, for ``decode_files`` to report."""
    found: list[str] = []
    for pattern in patterns:
        if os.path.isdir(pattern):
            inside = sorted(glob.glob(os.path.join(glob.escape(pattern), "*")))
            files = [p for p in inside if os.path.isfile(p)]
            found.extend(files or [pattern])
        elif glob.has_magic(pattern) and not os.path.exists(pattern):
            matches = [p for p in sorted(glob.glob(pattern)) if os.path.isfile(p)]
            found.extend(matches or [pattern])
        else:
            found.append(pattern)
    return capture_order(dict.fromkeys(found))


def unreadable_reason(path: str) -> str | None:
    """Why ``path`` cannot be opened as a file (None if it can): said before decoding, as tshark
    says ``The file "x" doesn't exist.``"""
    if glob.has_magic(path) and not os.path.exists(path):
        return "no file matches this pattern"
    if not os.path.exists(path):
        return "no such file"
    if os.path.isdir(path):
        return "a directory without files"
    if not os.access(path, os.R_OK):
        return "permission denied"
    return None
