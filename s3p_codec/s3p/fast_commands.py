"""The former home of the command parser's fast path, which now lives in ``commands``.

``s3p_codec.s3p.fast_commands`` stays importable: this name *is* the ``commands`` module, so
``fast_commands.scan_command`` (and anything patched through it) is the one request path.
"""

from __future__ import annotations

import sys

from s3p_codec.s3p import commands
from s3p_codec.s3p.commands import scan_command

__all__ = ["scan_command"]

sys.modules[__name__] = commands
