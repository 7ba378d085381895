"""Guard: importing this checks the ``testing`` extra (raises ``MissingExtra`` without it)."""

from s3p_codec._extras import require

require("testing", "s3p_codec.testing", "hypothesis")
