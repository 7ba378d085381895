"""Guard: importing this checks the ``capture`` extra (raises ``MissingExtra`` without it)."""

from s3p_codec._extras import require

require("capture", "s3p_codec.capture", "dpkt", "tqdm")
