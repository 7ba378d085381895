"""The S2S HTTP/2 Observer's module under its old name: it is ``s3p_codec.s2s.observer_h2`` now,
named as the other Observer modules are. Kept so that
``from s3p_codec.s2s.observe_h2 import Http2Observer`` still works: every public name of the new
module, and only those.
"""

from s3p_codec.s2s import observer_h2 as _current
from s3p_codec.s2s.observer_h2 import *  # noqa: F403 - the alias is exactly the new module's names

__all__ = _current.__all__
