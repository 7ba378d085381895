"""``python -m s3p_codec``: the same command line as ``s3p-codec``."""

from __future__ import annotations

import sys

from s3p_codec.cli import main

if __name__ == "__main__":
    sys.exit(main())
