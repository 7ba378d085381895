"""``MissingExtra``, here so that the protocol packages (which import only ``_core``) raise the
same one-line error as the drivers when an optional package (orjson, zstandard, cryptography)
is not installed. Its public home is ``s3p_codec._extras``."""

from __future__ import annotations

__all__ = ["MissingExtra"]


class MissingExtra(ModuleNotFoundError):
    """A feature was used without the extra that installs its dependencies.

    A ``ModuleNotFoundError`` (so existing handlers still catch it) whose one-line message says
    which feature, which module is missing and what to run: ``pip install 's3p-codec[EXTRA]'``.
    """

    def __init__(self, extra: str, feature: str, missing: str) -> None:
        super().__init__(
            f"{feature} needs the '{extra}' extra ({missing} is missing): "
            f"pip install 's3p-codec[{extra}]'",
            name=missing,
        )
        self.extra = extra


# Tracebacks and the API reference name it where users import it from.
MissingExtra.__module__ = "s3p_codec._extras"
