"""One clear line when a feature's optional dependencies (its extra) are not installed.

``import s3p_codec.capture`` without the ``capture`` extra raises :class:`MissingExtra`, whose
message names the extra and the command that installs it, instead of a ``ModuleNotFoundError``
deep inside a dependency; the ``s3p-codec`` command prints that line alone. The modules of this
package (``capture``, ``spark``, ``testing``) are guards: importing one checks its
extra.
"""

from __future__ import annotations

import importlib.util

from s3p_codec._core.extras import MissingExtra

__all__ = ["MissingExtra", "require"]


def require(extra: str, feature: str, *modules: str) -> None:
    """Raise :class:`MissingExtra` naming ``extra`` unless every one of ``modules`` is importable.

    Only looks the modules up (``importlib.util.find_spec``); it imports none of them.
    """
    for module in modules:
        if importlib.util.find_spec(module) is None:
            raise MissingExtra(extra, feature, module)
