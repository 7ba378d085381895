"""Guard: importing this checks the ``spark`` extra (raises ``MissingExtra`` without it)."""

from s3p_codec._extras import require

require("spark", "s3p_codec.spark", "pyspark", "pyarrow", "pandas")
